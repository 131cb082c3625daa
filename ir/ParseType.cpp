// Parsing of tensor types: dtype '[' dims ']' ('{' layout '}')?
//
// Static dims must be >= 0 and fit int64; nothing is allocated from a dim's
// value. A '{' after a type is a layout tag only when a name other than
// `return` follows it, since a function's body also opens with '{' right
// after its result type.
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
  while (!tok.is(Tok::RSquare)) {
    type.shape.emplace_back();
    if (!parseDim(type.shape.back()))
      return false;
    if (tok.is(Tok::RSquare))
      break;
    if (!expect(Tok::Comma, "expected ']' after dims"))
      return false;
  }
  consume();
  if (!tok.is(Tok::LBrace))
    return true;
  Token next = lex.peek();
  if (!next.is(Tok::Ident) || next.spelling == "return")
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

// '{' layout '}', the current token being the '{'.
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
  return expect(Tok::RBrace, "expected '}' after layout");
}

} // namespace fusec
