// The recursive-descent parser of the .fir text form (internal header; the
// public entry points are in ir/TextFormat.h and ir/OpTable.h).
//
// The grammar has no recursive productions (lists are flat; a nested list is
// a syntax error; a kernel's body may not hold a kernel), so parsing uses
// bounded stack depth on any input. Each
// function is parsed into a Graph as it is read; the first error in a
// function stops it, and the parser skips to the next `func` to report
// errors there too. Dense literals are read as text and materialized only
// once the op's result type is known (ir/DenseLiteral.cpp).
#pragma once

#include "ir/Attribute.h"
#include "ir/Diagnostics.h"
#include "ir/Graph.h"
#include "ir/Lexer.h"

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace fusec {

/// One scalar as written: an element of a dense literal or a numeric attribute.
struct ScalarLiteral {
  enum Kind : uint8_t { Integer, Float, Inf, NaN, True, False };
  Kind kind = Integer;
  bool negative = false;
  std::string_view digits; // Integer and Float: the spelling without the sign
  unsigned line = 0, col = 0;

  /// The literal as text, sign included: "-1.5", "inf", "true".
  std::string text() const;
};

/// `dense<...>` as written, before the element type is known.
struct DenseLiteral {
  enum Form : uint8_t { Splat, List, Hex };
  Form form = Splat;
  std::vector<ScalarLiteral> elements; // one for a splat
  std::string_view hex;                // the string token's spelling
  unsigned line = 0, col = 0;          // of `dense`
  unsigned hexLine = 0, hexCol = 0;
};

/// Builds the constant data of `lit` for `type` (static shape required),
/// reporting problems at the literal's positions in `file`. Null on error.
DenseRef materializeDense(const DenseLiteral &lit, const TensorType &type, const std::string &file,
                          Diagnostics &diags);

class Parser {
public:
  Parser(std::string_view text, std::string file, Diagnostics &diags)
      : lex(text), file(std::move(file)), diags(diags) {
    tok = lex.next();
  }

  std::unique_ptr<Module> parseModule();

  /// attr := scalar | string | true | false | dtype | '[' list ']' | dense.
  /// Dense literals are accepted only when `dense` is non-null; they are
  /// returned there and `out` is left empty.
  bool parseAttrValue(Attribute &out, std::optional<DenseLiteral> *dense);
  /// The signature grammar of Ops.def: (['?'] name ':' kind ['=' attr]),*
  bool parseSignature(std::vector<AttrSpec> &specs);
  bool atEnd() const { return tok.is(Tok::Eof); }

private:
  using Scope = std::map<std::string, Value *, std::less<>>;
  struct PendingDense {
    size_t attrIndex;
    DenseLiteral literal;
  };
  struct OpText {
    std::vector<Token> names;
    Token opTok;
    OpKind kind{};
    std::vector<Value *> operands;
    AttrList attrs;
    std::vector<PendingDense> dense;
    std::vector<TensorType> types;
    std::unique_ptr<Graph> body;
  };

  // Tokens and errors.
  void consume() { tok = lex.next(); }
  Loc locOf(const Token &t) const { return Loc::text(file, t.line, t.col); }
  Loc locOf(unsigned line, unsigned col) const { return Loc::text(file, line, col); }
  /// Reports `message` at the current token (or the lexer's own message if
  /// the token is malformed) and returns false.
  bool fail(std::string message);
  bool failAt(const Token &t, std::string message);
  bool expect(Tok kind, std::string_view message);
  /// list := (elem (',' elem)*)? close, the opening bracket already consumed.
  /// `message` is reported when neither ',' nor `close` follows an element.
  template <typename ParseElement>
  bool parseCommaList(Tok close, std::string_view message, ParseElement parseElement) {
    if (tok.is(close)) {
      consume();
      return true;
    }
    while (true) {
      if (!parseElement())
        return false;
      if (!tok.is(Tok::Comma))
        return expect(close, message);
      consume();
    }
  }
  void skipToNextFunc();

  // Functions and ops (Parser.cpp).
  bool parseFuncName(std::unique_ptr<Graph> &g);
  bool parseFunc(std::unique_ptr<Graph> &g);
  bool parseArguments(Graph &g, Scope &scope, std::string_view openMessage);
  bool parseResultTypes(std::vector<TensorType> &types);
  /// `inBody`: the op is in a kernel's body, where a kernel may not nest.
  bool parseOp(Graph &g, Scope &scope, bool inBody);
  bool startsBody();
  bool parseBody(OpText &op);
  bool parseBodyReturn(Graph &body, const Scope &scope);
  bool parseOpHead(OpText &op, const Scope &scope);
  bool parseOperands(OpText &op, const Scope &scope);
  bool buildOp(Graph &g, Scope &scope, OpText &op);
  bool resolveDense(OpText &op);
  bool parseReturnValue(const Graph &g, const Scope &scope, const std::vector<TensorType> &declared,
                        std::vector<Value *> &values);
  bool parseReturn(Graph &g, const Scope &scope, const std::vector<TensorType> &declared);
  bool defineName(const Token &name, const Scope &scope);

  // Types (ParseType.cpp).
  bool parseType(TensorType &type);
  bool parseDim(Dim &dim);
  bool parseLayout(TensorType &type);

  // Attributes (ParseAttribute.cpp).
  bool parseAttrDict(OpText &op);
  bool parseScalar(ScalarLiteral &lit, bool allowBool);
  bool scalarToAttribute(const ScalarLiteral &lit, Attribute &out);
  bool parseListInt(int64_t &value);
  bool parseList(Attribute &out);
  bool parseDense(DenseLiteral &lit);

  Lexer lex;
  Token tok;
  std::string file;
  Diagnostics &diags;
  std::set<std::string, std::less<>> funcNames;
};

} // namespace fusec
