// The .fir lexer. Hand-written, one character of lookahead, no allocation
// except for error messages. A number glued to name characters (`12ab`,
// `1.2.3`, `1e`) is one malformed token rather than two valid ones, so that
// the error names what the user wrote.
#include "ir/Lexer.h"

#include <cctype>

#include "llvm/ADT/StringExtras.h"

namespace fusec {

static bool isDigit(char c) { return c >= '0' && c <= '9'; }
static bool isIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
/// A hex digit's value, or -1 (llvm::hexDigitValue answers ~0U).
static int hexValue(char c) { return int(llvm::hexDigitValue(c)); }

bool isNameChar(char c) { return isIdentStart(c) || isDigit(c) || c == '.' || c == '$'; }

std::string decodeString(std::string_view spelling) {
  std::string out;
  std::string_view body = spelling.substr(1, spelling.size() - 2);
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (c != '\\') {
      out += c;
      continue;
    }
    char e = body[++i];
    if (e == 'n')
      out += '\n';
    else if (e == 't')
      out += '\t';
    else if (e == '"' || e == '\\')
      out += e;
    else
      out += char(hexValue(e) * 16 + hexValue(body[++i]));
  }
  return out;
}

void Lexer::advance() {
  if (cur() == '\n') {
    ++pos.line;
    pos.col = 1;
  } else {
    ++pos.col;
  }
  ++pos.offset;
}

void Lexer::skipTrivia() {
  while (pos.offset < src.size()) {
    char c = cur();
    if (c == '/' && at(pos.offset + 1) == '/') {
      while (pos.offset < src.size() && cur() != '\n')
        advance();
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      advance();
    } else {
      return;
    }
  }
}

Token Lexer::make(Tok kind, Pos start) const {
  return Token{
      kind, src.substr(start.offset, pos.offset - start.offset), start.line, start.col, {}};
}

Token Lexer::fail(Pos start, std::string message) const {
  Token t = make(Tok::Error, start);
  t.error = std::move(message);
  return t;
}

Token Lexer::peek(unsigned ahead) {
  Pos saved = pos;
  Token t;
  for (unsigned i = 0; i < ahead; ++i)
    t = next();
  pos = saved;
  return t;
}

Token Lexer::next() {
  skipTrivia();
  Pos start = pos;
  if (pos.offset >= src.size())
    return make(Tok::Eof, start);
  char c = cur();
  if (c == '%' || c == '@')
    return lexName(c == '%' ? Tok::ValueName : Tok::GraphName, start);
  if (isIdentStart(c))
    return lexIdentifier(start);
  if (isDigit(c))
    return lexNumber(start);
  if (c == '"')
    return lexString(start);
  advance();
  switch (c) {
  case '(':
    return make(Tok::LParen, start);
  case ')':
    return make(Tok::RParen, start);
  case '{':
    return make(Tok::LBrace, start);
  case '}':
    return make(Tok::RBrace, start);
  case '[':
    return make(Tok::LSquare, start);
  case ']':
    return make(Tok::RSquare, start);
  case '<':
    return make(Tok::Less, start);
  case '>':
    return make(Tok::Greater, start);
  case ',':
    return make(Tok::Comma, start);
  case ':':
    return make(Tok::Colon, start);
  case '=':
    return make(Tok::Equal, start);
  case '?':
    return make(Tok::Question, start);
  case '-':
    if (cur() != '>')
      return make(Tok::Minus, start);
    advance();
    return make(Tok::Arrow, start);
  default:
    break;
  }
  if (std::isprint(static_cast<unsigned char>(c)))
    return fail(start, "unexpected character '" + std::string(1, c) + "'");
  return fail(start, "unexpected byte in input");
}

Token Lexer::lexName(Tok kind, Pos start) {
  char sigil = cur();
  advance();
  if (!isNameChar(cur()))
    return fail(start, "expected a name after '" + std::string(1, sigil) + "'");
  while (isNameChar(cur()))
    advance();
  return make(kind, start);
}

Token Lexer::lexIdentifier(Pos start) {
  while (isNameChar(cur()))
    advance();
  return make(Tok::Ident, start);
}

bool Lexer::skipDigits() {
  if (!isDigit(cur()))
    return false;
  while (isDigit(cur()))
    advance();
  return true;
}

// number := digits ('.' digits)? ([eE] [+-]? digits)?
Token Lexer::lexNumber(Pos start) {
  skipDigits();
  bool isFloat = false, ok = true;
  if (cur() == '.') {
    advance();
    isFloat = true;
    ok = skipDigits();
  }
  if (ok && (cur() == 'e' || cur() == 'E')) {
    advance();
    if (cur() == '+' || cur() == '-')
      advance();
    isFloat = true;
    ok = skipDigits();
  }
  if (ok && !isNameChar(cur()))
    return make(isFloat ? Tok::Float : Tok::Integer, start);
  while (isNameChar(cur()) || cur() == '+' || cur() == '-')
    advance();
  return fail(start, "malformed number '" + std::string(make(Tok::Error, start).spelling) + "'");
}

Token Lexer::lexString(Pos start) {
  advance(); // the opening quote
  while (cur() != '"') {
    if (pos.offset >= src.size() || cur() == '\n')
      return fail(start, "unterminated string");
    if (cur() != '\\') {
      advance();
      continue;
    }
    Pos escape = pos;
    advance();
    char e = cur();
    if (e == 'n' || e == 't' || e == '"' || e == '\\') {
      advance();
    } else if (hexValue(e) >= 0 && hexValue(at(pos.offset + 1)) >= 0) {
      advance();
      advance();
    } else {
      return fail(escape, "invalid escape sequence in string");
    }
  }
  advance(); // the closing quote
  return make(Tok::String, start);
}

} // namespace fusec
