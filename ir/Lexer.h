// The lexer of the .fir text form (internal to the parser): turns source text
// into tokens with 1-based line and column, on demand; lookahead re-lexes.
//
// Token classes: bare identifiers (keywords, op names, dtypes, dim and
// attribute names), `%value` and `@graph` names, integer and float literals
// (unsigned: a leading '-' is its own token), double-quoted strings, and
// punctuation. Problems (a malformed number, an unterminated string, a stray
// character) come back as an Error token carrying the message, so that the
// parser reports them at the token's position like any other syntax error.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fusec {

enum class Tok : uint8_t {
  Eof,
  Error,
  Ident,     // func, add, f32, batch, true, inf, ...
  ValueName, // %x
  GraphName, // @main
  Integer,   // 42
  Float,     // 1.5, 1e-05
  String,    // "tanh" (spelling includes the quotes)
  LParen,
  RParen,
  LBrace,
  RBrace,
  LSquare,
  RSquare,
  Less,
  Greater,
  Comma,
  Colon,
  Equal,
  Question,
  Minus,
  Arrow
};

struct Token {
  Tok kind = Tok::Eof;
  std::string_view spelling; // the exact source text
  unsigned line = 1, col = 1;
  std::string error; // the message of an Error token

  bool is(Tok k) const { return kind == k; }
  bool isIdent(std::string_view word) const { return kind == Tok::Ident && spelling == word; }
  /// The name without its '%' or '@' sigil.
  std::string_view name() const { return spelling.substr(1); }
};

/// Decodes the body of a String token (escapes \" \\ \n \t \XX). The lexer
/// has already rejected malformed escapes.
std::string decodeString(std::string_view spelling);

/// Characters allowed after the first in identifiers and value names.
bool isNameChar(char c);

class Lexer {
public:
  explicit Lexer(std::string_view text) : src(text) {}

  /// Lexes and consumes the next token.
  Token next();
  /// The token that the `ahead`-th call of next() would return, without
  /// consuming anything.
  Token peek(unsigned ahead = 1);

private:
  struct Pos {
    size_t offset = 0;
    unsigned line = 1, col = 1;
  };

  char at(size_t offset) const { return offset < src.size() ? src[offset] : '\0'; }
  char cur() const { return at(pos.offset); }
  void advance();
  void skipTrivia();
  Token make(Tok kind, Pos start) const;
  Token fail(Pos start, std::string message) const;
  Token lexName(Tok kind, Pos start);
  Token lexIdentifier(Pos start);
  Token lexNumber(Pos start);
  Token lexString(Pos start);
  bool skipDigits();

  std::string_view src;
  Pos pos;
};

} // namespace fusec
