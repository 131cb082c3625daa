// Parsing of tensor types: dtype '[' dims ']' ('{' layout '}')?
//
// Static dims must be >= 0 and fit int64; nothing is allocated from a dim's
// value. A function's body opens with '{' right after its result type, so
// a '{' after a type starts a layout tag only when a name other than
// `return` and then '}' follow it.
#include "ir/Parser.h"
#include "ir/TextLiterals.h"

namespace fusec {

bool Parser::parseType(TensorType &type) {
  if (!tok.is(Tok::Ident))
    return fail("expected type");
  std::optional<DType> dtype = parseDType(tok.spelling);
  if (!dtype)
    return fail("unknown dtype '" + std::string(tok.spelling) + "'");
  type.dtype = *dtype;
  consume();
  if (!expect(Tok::LSquare, "expected '[' after dtype"))
    return false;
  bool ok = parseCommaList(Tok::RSquare, "expected ']' after dims", [&] {
    type.shape.emplace_back();
    return parseDim(type.shape.back());
  });
  if (!ok || !tok.is(Tok::LBrace))
    return ok;
  Token name = lex.peek(1);
  if (!name.is(Tok::Ident) || name.spelling == "return" || !lex.peek(2).is(Tok::RBrace))
    return true;
  return parseLayout(type);
}

// dim := integer | identifier | '?'
bool Parser::parseDim(Dim &dim) {
  if (tok.is(Tok::Question)) {
    dim = Dim::anonymous();
  } else if (tok.is(Tok::Ident)) {
    dim = Dim::named(std::string(tok.spelling));
  } else if (tok.is(Tok::Integer)) {
    std::optional<int64_t> size = parseInt64(tok.spelling);
    if (!size)
      return fail("dimension '" + std::string(tok.spelling) + "' does not fit in int64");
    dim = Dim::fixed(*size);
  } else if (tok.is(Tok::Minus)) {
    return fail("dimension must not be negative");
  } else {
    return fail("expected dimension (an integer, a name or '?')");
  }
  consume();
  return true;
}

// '{' layout '}', the current token being the '{' (and the caller having
// seen the name and the '}').
bool Parser::parseLayout(TensorType &type) {
  consume();
  std::optional<Layout> layout = fusec::parseLayout(tok.spelling);
  if (!layout || *layout == Layout::None)
    return fail("unknown layout '" + std::string(tok.spelling) + "'");
  if (type.rank() != 4)
    return fail("layout '" + std::string(tok.spelling) + "' needs a rank-4 type, not " +
                type.str());
  type.layout = *layout;
  consume();
  consume();
  return true;
}

} // namespace fusec
