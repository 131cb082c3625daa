// Parsing of attribute literals: op attribute dictionaries, the attribute
// signatures of Ops.def, and the public parseAttributeLiteral and
// parseAttrSignature.
//
// Literals are read without knowing the attribute's kind: an integer is an
// Int, a list of integers is Ints and a list with a name or '?' is a Shape;
// checkAttributes (ir/Verifier.h) coerces Int to Float and Ints to Shape
// where the op's signature asks for it. Numbers are range-checked here, so
// that nothing overflows silently.
#include "ir/Assert.h"
#include "ir/Parser.h"
#include "ir/TextLiterals.h"

#include <bit>

namespace fusec {

std::string ScalarLiteral::text() const {
  switch (kind) {
  case True:
    return "true";
  case False:
    return "false";
  case Inf:
    return negative ? "-inf" : "inf";
  case NaN:
    return "nan";
  case Integer:
  case Float:
    break;
  }
  return (negative ? "-" : "") + std::string(digits);
}

// attrs := '{' (name '=' attr (',' name '=' attr)*)? '}'
bool Parser::parseAttrDict(OpText &op) {
  consume();
  return parseCommaList(Tok::RBrace, "expected '}' after attributes", [&] {
    if (!tok.is(Tok::Ident))
      return fail("expected attribute name");
    std::string name(tok.spelling); // a repeated name is the verifier's to report
    consume();
    if (!expect(Tok::Equal, "expected '=' after attribute name"))
      return false;
    Attribute value;
    std::optional<DenseLiteral> dense;
    if (!parseAttrValue(value, &dense))
      return false;
    if (dense)
      op.dense.push_back({op.attrs.size(), std::move(*dense)});
    op.attrs.push_back({std::move(name), std::move(value)});
    return true;
  });
}

bool Parser::parseAttrValue(Attribute &out, std::optional<DenseLiteral> *dense) {
  if (tok.is(Tok::String)) {
    out = Attribute(decodeString(tok.spelling));
    consume();
    return true;
  }
  if (tok.is(Tok::LSquare))
    return parseList(out);
  if (tok.isIdent("dense")) {
    if (!dense)
      return fail("dense literals are not allowed here");
    DenseLiteral lit;
    if (!parseDense(lit))
      return false;
    *dense = std::move(lit);
    return true;
  }
  if (tok.isIdent("true") || tok.isIdent("false")) {
    out = Attribute(tok.spelling == "true");
    consume();
    return true;
  }
  if (tok.is(Tok::Ident) && !tok.isIdent("inf") && !tok.isIdent("nan")) {
    std::optional<DType> dtype = parseDType(tok.spelling);
    if (!dtype)
      return fail("unknown attribute value '" + std::string(tok.spelling) + "'");
    out = Attribute(*dtype);
    consume();
    return true;
  }
  ScalarLiteral lit;
  return parseScalar(lit, /*allowBool=*/false) && scalarToAttribute(lit, out);
}

// scalar := '-'? (integer | float | inf) | nan | true | false (when allowed)
bool Parser::parseScalar(ScalarLiteral &lit, bool allowBool) {
  lit.line = tok.line;
  lit.col = tok.col;
  if (allowBool && (tok.isIdent("true") || tok.isIdent("false"))) {
    lit.kind = tok.spelling == "true" ? ScalarLiteral::True : ScalarLiteral::False;
    consume();
    return true;
  }
  if (tok.is(Tok::Minus)) {
    lit.negative = true;
    consume();
  }
  if (tok.is(Tok::Integer) || tok.is(Tok::Float)) {
    lit.kind = tok.is(Tok::Integer) ? ScalarLiteral::Integer : ScalarLiteral::Float;
    lit.digits = tok.spelling;
  } else if (tok.isIdent("inf")) {
    lit.kind = ScalarLiteral::Inf;
  } else if (tok.isIdent("nan") && !lit.negative) {
    lit.kind = ScalarLiteral::NaN;
  } else if (lit.negative) {
    return fail("expected a number after '-'");
  } else {
    return fail(allowBool ? "expected a number, true or false" : "expected attribute value");
  }
  consume();
  return true;
}

bool Parser::scalarToAttribute(const ScalarLiteral &lit, Attribute &out) {
  Loc loc = locOf(lit.line, lit.col);
  if (lit.kind == ScalarLiteral::Integer) {
    std::optional<int64_t> v = parseInt64(lit.text());
    if (!v) {
      diags.error(loc, "integer '" + lit.text() + "' does not fit in int64");
      return false;
    }
    out = Attribute(*v);
    return true;
  }
  uint64_t bits = 0;
  if (parseFloatBits(lit.text(), DType::F64, bits) != FloatParse::Ok) {
    diags.error(loc, "float '" + lit.text() + "' is out of range for f64");
    return false;
  }
  out = Attribute(std::bit_cast<double>(bits));
  return true;
}

// '-'? integer, as a list element.
bool Parser::parseListInt(int64_t &value) {
  static constexpr const char *expected = "expected an integer, a name or '?' in list";
  if (!tok.is(Tok::Minus) && !tok.is(Tok::Integer))
    return fail(expected);
  ScalarLiteral lit;
  Attribute v;
  if (!parseScalar(lit, /*allowBool=*/false))
    return false;
  if (lit.kind != ScalarLiteral::Integer) {
    diags.error(locOf(lit.line, lit.col), expected);
    return false;
  }
  if (!scalarToAttribute(lit, v))
    return false;
  value = v.get<int64_t>();
  return true;
}

// '[' (elem (',' elem)*)? ']' with elem := '-'? integer | name | '?'
bool Parser::parseList(Attribute &out) {
  consume();
  std::vector<int64_t> ints;
  Shape shape;
  bool symbolic = false;
  bool ok = parseCommaList(Tok::RSquare, "expected ']' after list elements", [&] {
    if (tok.is(Tok::Question) || tok.is(Tok::Ident)) {
      symbolic = true;
      shape.push_back(tok.is(Tok::Question) ? Dim::anonymous()
                                            : Dim::named(std::string(tok.spelling)));
      consume();
      return true;
    }
    int64_t value = 0;
    if (!parseListInt(value))
      return false;
    ints.push_back(value);
    shape.push_back(Dim::fixed(value));
    return true;
  });
  if (!ok)
    return false;
  out = symbolic ? Attribute(std::move(shape)) : Attribute(std::move(ints));
  return true;
}

// dense := 'dense' '<' (scalar | '[' (scalar (',' scalar)*)? ']' | string) '>'
bool Parser::parseDense(DenseLiteral &lit) {
  lit.line = tok.line;
  lit.col = tok.col;
  consume();
  if (!expect(Tok::Less, "expected '<' after 'dense'"))
    return false;
  if (tok.is(Tok::String)) {
    lit.form = DenseLiteral::Hex;
    lit.hex = tok.spelling;
    lit.hexLine = tok.line;
    lit.hexCol = tok.col;
    consume();
  } else if (tok.is(Tok::LSquare)) {
    lit.form = DenseLiteral::List;
    consume();
    bool ok = parseCommaList(Tok::RSquare, "expected ']' after dense elements", [&] {
      lit.elements.emplace_back();
      return parseScalar(lit.elements.back(), /*allowBool=*/true);
    });
    if (!ok)
      return false;
  } else {
    lit.form = DenseLiteral::Splat;
    lit.elements.emplace_back();
    if (!parseScalar(lit.elements.back(), /*allowBool=*/true))
      return false;
  }
  return expect(Tok::Greater, "expected '>' after dense literal");
}

// The signature grammar of Ops.def: (['?'] name ':' kind ['=' attr]),*
bool Parser::parseSignature(std::vector<AttrSpec> &specs) {
  while (!atEnd()) {
    AttrSpec spec;
    spec.optional = tok.is(Tok::Question);
    if (spec.optional)
      consume();
    if (!tok.is(Tok::Ident))
      return fail("expected attribute name");
    spec.name = std::string(tok.spelling);
    consume();
    if (!expect(Tok::Colon, "expected ':' after attribute name") || !tok.is(Tok::Ident))
      return fail("expected attribute kind");
    std::optional<AttrKind> kind;
    for (unsigned k = 0; k <= unsigned(AttrKind::Dense); ++k)
      if (attrKindName(AttrKind(k)) == tok.spelling)
        kind = AttrKind(k);
    if (!kind)
      return fail("unknown attribute kind '" + std::string(tok.spelling) + "'");
    spec.kind = *kind;
    consume();
    if (tok.is(Tok::Equal)) {
      consume();
      Attribute value;
      if (!parseAttrValue(value, nullptr) || !value.coerceTo(spec.kind))
        return fail("bad default for attribute '" + spec.name + "'");
      spec.deflt = std::move(value);
      spec.optional = true;
    }
    specs.push_back(std::move(spec));
    if (!atEnd() && !expect(Tok::Comma, "expected ',' between attributes"))
      return false;
  }
  return true;
}

std::optional<Attribute> parseAttributeLiteral(std::string_view text) {
  Diagnostics diags;
  Parser parser(text, "<attribute>", diags);
  Attribute value;
  if (!parser.parseAttrValue(value, nullptr) || !parser.atEnd())
    return std::nullopt;
  return value;
}

std::vector<AttrSpec> parseAttrSignature(std::string_view sig) {
  Diagnostics diags;
  Parser parser(sig, "<signature>", diags);
  std::vector<AttrSpec> specs;
  bool ok = parser.parseSignature(specs);
  FUSEC_ASSERT(ok, "malformed attribute signature in ir/Ops.def");
  return specs;
}

} // namespace fusec
