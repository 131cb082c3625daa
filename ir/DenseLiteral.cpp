// Materializes a `dense<...>` literal into DenseData once the constant's
// type is known: a splat gives the element every element repeats, a list
// gives every element (exactly as many as the type has), hex gives the raw
// little-endian bytes (exactly as many as the type needs, or one element's,
// a splat: how the printer spells a splat of a NaN with a payload).
//
// Memory: a list or hex literal allocates in proportion to its own length,
// which the input bounds. A splat is held as its one element (Note [Splat
// constants] in ir/Attribute.h), whatever its type; it is still refused above
// kMaxSplatBytes, so that a hostile type such as f32[99999999999] is refused
// where it is written, not where a run expands it.
#include "ir/Parser.h"
#include "ir/TextLiterals.h"

#include "llvm/ADT/StringExtras.h"

namespace fusec {

namespace {

/// A hex digit's value, or -1 (llvm::hexDigitValue answers ~0U).
int hexDigit(char c) { return int(llvm::hexDigitValue(c)); }

class Materializer {
public:
  Materializer(const TensorType &type, const std::string &file, Diagnostics &diags)
      : type(type), file(file), diags(diags), elementSize(dtypeSize(type.dtype)) {}

  bool splat(const ScalarLiteral &e, uint64_t numel, DenseData &out);
  bool list(const DenseLiteral &lit, uint64_t numel, DenseData &out);
  bool hex(const DenseLiteral &lit, uint64_t numel, DenseData &out);
  bool checkSplatSize(unsigned line, unsigned col, uint64_t numel);
  bool error(unsigned line, unsigned col, std::string message) {
    diags.error(Loc::text(file, line, col), std::move(message));
    return false;
  }

private:
  bool encode(const ScalarLiteral &e, uint8_t *dst);
  bool encodeInteger(const ScalarLiteral &e, uint8_t *dst);

  const TensorType &type;
  const std::string &file;
  Diagnostics &diags;
  unsigned elementSize;
};

void storeLittleEndian(uint64_t bits, unsigned size, uint8_t *dst) {
  for (unsigned k = 0; k < size; ++k)
    dst[k] = uint8_t(bits >> (8 * k));
}

} // namespace

bool Materializer::encodeInteger(const ScalarLiteral &e, uint8_t *dst) {
  std::string_view name = dtypeName(type.dtype);
  if (e.kind != ScalarLiteral::Integer)
    return error(e.line, e.col,
                 "expected an integer for " + std::string(name) + ", got '" + e.text() + "'");
  std::optional<int64_t> v = parseInt64(e.text());
  int64_t lo = INT64_MIN, hi = INT64_MAX;
  if (type.dtype == DType::I8)
    lo = INT8_MIN, hi = INT8_MAX;
  if (type.dtype == DType::I32)
    lo = INT32_MIN, hi = INT32_MAX;
  if (!v || *v < lo || *v > hi)
    return error(e.line, e.col,
                 "value '" + e.text() + "' is out of range for " + std::string(name));
  storeLittleEndian(uint64_t(*v), elementSize, dst);
  return true;
}

bool Materializer::encode(const ScalarLiteral &e, uint8_t *dst) {
  bool isBoolLiteral = e.kind == ScalarLiteral::True || e.kind == ScalarLiteral::False;
  if (type.dtype == DType::Bool) {
    if (!isBoolLiteral)
      return error(e.line, e.col, "expected true or false for bool, got '" + e.text() + "'");
    *dst = e.kind == ScalarLiteral::True;
    return true;
  }
  if (isInteger(type.dtype))
    return encodeInteger(e, dst);
  std::string name(dtypeName(type.dtype));
  if (isBoolLiteral)
    return error(e.line, e.col, "expected a number for " + name + ", got '" + e.text() + "'");
  uint64_t bits = 0;
  if (parseFloatBits(e.text(), type.dtype, bits) != FloatParse::Ok)
    return error(e.line, e.col, "value '" + e.text() + "' is out of range for " + name);
  storeLittleEndian(bits, elementSize, dst);
  return true;
}

bool Materializer::checkSplatSize(unsigned line, unsigned col, uint64_t numel) {
  if (numel <= kMaxSplatBytes / elementSize)
    return true;
  return error(line, col,
               "dense splat into " + type.str() + " exceeds the 1 GiB limit on constant data");
}

bool Materializer::splat(const ScalarLiteral &e, uint64_t numel, DenseData &out) {
  uint8_t element[8];
  if (!encode(e, element) || !checkSplatSize(e.line, e.col, numel))
    return false;
  out = DenseData::makeSplat(out.dtype, std::move(out.shape),
                             std::vector<uint8_t>(element, element + elementSize));
  return true;
}

bool Materializer::list(const DenseLiteral &lit, uint64_t numel, DenseData &out) {
  if (lit.elements.size() != numel)
    return error(lit.line, lit.col,
                 "dense literal has " + std::to_string(lit.elements.size()) + " elements but " +
                     type.str() + " has " + std::to_string(numel));
  std::vector<uint8_t> bytes(numel * elementSize);
  for (size_t i = 0; i < lit.elements.size(); ++i)
    if (!encode(lit.elements[i], bytes.data() + i * elementSize))
      return false;
  out = DenseData(out.dtype, std::move(out.shape), std::move(bytes));
  return true;
}

bool Materializer::hex(const DenseLiteral &lit, uint64_t numel, DenseData &out) {
  std::string text = decodeString(lit.hex);
  unsigned line = lit.hexLine, col = lit.hexCol;
  if (text.size() < 2 || text[0] != '0' || text[1] != 'x')
    return error(line, col, "dense hex literal must start with '0x'");
  std::string_view digits = std::string_view(text).substr(2);
  if (digits.size() % 2 != 0)
    return error(line, col, "dense hex literal has an odd number of digits");
  uint64_t bytes = digits.size() / 2;
  bool splat = bytes == elementSize && numel > 1;
  if (splat && !checkSplatSize(line, col, numel))
    return false;
  if (!splat && (bytes / elementSize != numel || bytes % elementSize != 0)) {
    bool representable = numel <= UINT64_MAX / elementSize;
    return error(line, col,
                 "dense hex literal has " + std::to_string(bytes) + " bytes but " + type.str() +
                     " needs " +
                     (representable ? std::to_string(numel * elementSize) : "more than 2^64"));
  }
  std::vector<uint8_t> data(bytes);
  for (size_t i = 0; i < bytes; ++i) {
    int hi = hexDigit(digits[2 * i]), lo = hexDigit(digits[2 * i + 1]);
    if (hi < 0 || lo < 0)
      return error(line, col, "invalid hex digit in dense literal");
    data[i] = uint8_t(hi * 16 + lo);
    if (type.dtype == DType::Bool && data[i] > 1)
      return error(line, col, "dense hex literal for bool has a byte other than 00 or 01");
  }
  out = splat ? DenseData::makeSplat(out.dtype, std::move(out.shape), std::move(data))
              : DenseData(out.dtype, std::move(out.shape), std::move(data));
  return true;
}

DenseRef materializeDense(const DenseLiteral &lit, const TensorType &type, const std::string &file,
                          Diagnostics &diags) {
  Materializer m(type, file, diags);
  if (!isStatic(type.shape)) {
    m.error(lit.line, lit.col, "dense literal needs a static type, not " + type.str());
    return nullptr;
  }
  std::optional<int64_t> numel = staticNumElements(type.shape);
  if (!numel) {
    m.error(lit.line, lit.col, "dense literal type " + type.str() + " has too many elements");
    return nullptr;
  }
  auto data = std::make_shared<DenseData>();
  data->dtype = type.dtype;
  for (const Dim &d : type.shape)
    data->shape.push_back(d.size);
  bool ok = false;
  switch (lit.form) {
  case DenseLiteral::Splat:
    ok = m.splat(lit.elements.front(), uint64_t(*numel), *data);
    break;
  case DenseLiteral::List:
    ok = m.list(lit, uint64_t(*numel), *data);
    break;
  case DenseLiteral::Hex:
    ok = m.hex(lit, uint64_t(*numel), *data);
    break;
  }
  if (!ok)
    return nullptr;
  return data;
}

} // namespace fusec
