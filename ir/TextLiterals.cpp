// Literal spellings of the text form. Printing searches for the shortest
// decimal that parses back to the same bits; parsing rounds decimal text to
// the target dtype in one step with llvm::APFloat. Together they make dense
// data and float attributes round-trip bit for bit, NaN payloads excepted
// (the printer writes those as hex).
#include "ir/TextLiterals.h"

#include "ir/Assert.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace fusec {

static const llvm::fltSemantics &semanticsOf(DType dt) {
  switch (dt) {
  case DType::F16:
    return llvm::APFloat::IEEEhalf();
  case DType::BF16:
    return llvm::APFloat::BFloat();
  case DType::F32:
    return llvm::APFloat::IEEEsingle();
  case DType::F64:
    return llvm::APFloat::IEEEdouble();
  default:
    break;
  }
  FUSEC_ASSERT(false, "float semantics requested for a non-float dtype");
  return llvm::APFloat::IEEEdouble();
}

static llvm::APFloat fromBits(DType dt, uint64_t bits) {
  return llvm::APFloat(semanticsOf(dt), llvm::APInt(dtypeSize(dt) * 8, bits));
}

// Shortest forms lack a '.' for integral values ("100"); the text form
// always marks a float literal as one.
static std::string withPoint(std::string s) {
  if (s.find_first_of(".e") == std::string::npos)
    s += ".0";
  return s;
}

template <typename T> static std::string shortest(T v) {
  if (std::isnan(v))
    return "nan";
  if (std::isinf(v))
    return v < 0 ? "-inf" : "inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return withPoint(std::string(buf, r.ptr));
}

std::string formatDouble(double v) { return shortest(v); }

static bool readsBackAs(const std::string &s, DType dt, uint64_t bits) {
  uint64_t back = 0;
  return parseFloatBits(s, dt, back) == FloatParse::Ok && back == bits;
}

// f16 and bf16 have no std::to_chars: round the exact value to 1, 2, ...
// significant digits until one reads back to the same bits, then spell that
// decimal the way to_chars would (fixed or scientific, whichever is shorter).
static std::string formatNarrowFloat(DType dt, uint64_t bits) {
  llvm::APFloat f = fromBits(dt, bits);
  bool lost = false;
  f.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven, &lost);
  double v = f.convertToDouble();
  if (std::isnan(v) || std::isinf(v))
    return shortest(v);
  char buf[64];
  for (int digits = 1; digits <= 17; ++digits) {
    auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific, digits - 1);
    std::string s(buf, r.ptr);
    if (!readsBackAs(s, dt, bits))
      continue;
    double rounded = 0;
    std::from_chars(s.data(), s.data() + s.size(), rounded);
    std::string nicer = shortest(rounded);
    return readsBackAs(nicer, dt, bits) ? nicer : s;
  }
  return shortest(v); // exact, so it always reads back
}

FloatParse parseFloatBits(std::string_view text, DType dt, uint64_t &bits) {
  const llvm::fltSemantics &sem = semanticsOf(dt);
  bool negative = !text.empty() && text[0] == '-';
  std::string_view body = negative ? text.substr(1) : text;
  if (body == "inf") {
    bits = llvm::APFloat::getInf(sem, negative).bitcastToAPInt().getZExtValue();
    return FloatParse::Ok;
  }
  if (body == "nan" && !negative) {
    bits = canonicalNaNBits(dt);
    return FloatParse::Ok;
  }
  if (body.empty() || !(body[0] >= '0' && body[0] <= '9'))
    return FloatParse::Invalid;
  llvm::APFloat f(sem);
  auto status = f.convertFromString(llvm::StringRef(text.data(), text.size()),
                                    llvm::APFloat::rmNearestTiesToEven);
  if (!status) {
    llvm::consumeError(status.takeError());
    return FloatParse::Invalid;
  }
  if (*status & llvm::APFloat::opOverflow)
    return FloatParse::Overflow;
  bits = f.bitcastToAPInt().getZExtValue();
  return FloatParse::Ok;
}

std::optional<int64_t> parseInt64(std::string_view text) {
  bool negative = !text.empty() && text[0] == '-';
  llvm::StringRef body(text.data() + negative, text.size() - negative);
  uint64_t magnitude = 0;
  if (body.empty() || body[0] == '+' || body.getAsInteger(10, magnitude))
    return std::nullopt;
  constexpr uint64_t maxPositive = uint64_t(INT64_MAX);
  if (magnitude > maxPositive + (negative ? 1 : 0))
    return std::nullopt;
  if (!negative)
    return int64_t(magnitude);
  // 0 - magnitude in unsigned arithmetic, then reinterpret: exact for -2^63.
  return int64_t(uint64_t(0) - magnitude);
}

uint64_t elementBits(const DenseData &d, size_t i) {
  unsigned size = dtypeSize(d.dtype);
  const uint8_t *p = d.element(i);
  uint64_t bits = 0;
  for (unsigned k = 0; k < size; ++k)
    bits |= uint64_t(p[k]) << (8 * k);
  return bits;
}

uint64_t canonicalNaNBits(DType dt) {
  return llvm::APFloat::getQNaN(semanticsOf(dt)).bitcastToAPInt().getZExtValue();
}

bool isNaNBits(DType dt, uint64_t bits) { return isFloat(dt) && fromBits(dt, bits).isNaN(); }

std::string formatElement(const DenseData &d, size_t i) {
  uint64_t bits = elementBits(d, i);
  switch (d.dtype) {
  case DType::Bool:
    return bits ? "true" : "false";
  case DType::I8:
    return std::to_string(int8_t(uint8_t(bits)));
  case DType::I32:
    return std::to_string(int32_t(uint32_t(bits)));
  case DType::I64:
    return std::to_string(int64_t(bits));
  case DType::F64:
    return shortest(std::bit_cast<double>(bits));
  case DType::F32:
    return shortest(std::bit_cast<float>(uint32_t(bits)));
  case DType::F16:
  case DType::BF16:
    return formatNarrowFloat(d.dtype, bits);
  }
  return "?";
}

std::string quoteString(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c >= 0x20 && c < 0x7f) {
      out += c;
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "\\%02X", unsigned(uint8_t(c)));
      out += buf;
    }
  }
  return out + "\"";
}

} // namespace fusec
