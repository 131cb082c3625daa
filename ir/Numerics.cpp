// Bit-exact conversions between double and the narrow float formats.
//
// Both narrow formats are handled by one routine parameterised by the
// format's exponent and mantissa widths. It works on the double's bits: the
// 53-bit significand is shifted right to the target's precision (more for
// results in the target's subnormal range) and rounded to nearest even from
// the bits shifted out. A carry out of the mantissa bumps the exponent for
// free because exponent and mantissa fields are adjacent, and a result whose
// exponent field reaches all ones is infinity; so every value at or beyond
// max + half an ulp overflows, exactly as IEEE 754 specifies. NaNs keep their
// sign and the top bits of their payload and are made quiet.
#include "ir/Numerics.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace fusec {

namespace {

/// A binary interchange format narrower than double.
struct NarrowFormat {
  unsigned expBits, mantBits;

  int bias() const { return (1 << (expBits - 1)) - 1; }
  uint64_t expAllOnes() const { return ((uint64_t(1) << expBits) - 1) << mantBits; }
  uint64_t signBit() const { return uint64_t(1) << (expBits + mantBits); }
  uint64_t quietBit() const { return uint64_t(1) << (mantBits - 1); }
};

constexpr NarrowFormat kHalf{5, 10};
constexpr NarrowFormat kBFloat16{8, 7};

constexpr unsigned kDoubleMantBits = 52;
constexpr int kDoubleBias = 1023;
constexpr uint64_t kDoubleMantMask = (uint64_t(1) << kDoubleMantBits) - 1;

/// sig >> shift, rounded to nearest with ties to even.
uint64_t shiftRightRoundEven(uint64_t sig, unsigned shift) {
  if (shift == 0)
    return sig;
  if (shift >= 64)
    return 0; // sig < 2^53, far below half of one unit
  uint64_t kept = sig >> shift;
  uint64_t rest = sig & ((uint64_t(1) << shift) - 1);
  uint64_t half = uint64_t(1) << (shift - 1);
  if (rest > half || (rest == half && (kept & 1)))
    ++kept;
  return kept;
}

uint64_t narrowFromDouble(double v, NarrowFormat f) {
  uint64_t bits = std::bit_cast<uint64_t>(v);
  uint64_t sign = (bits >> 63) ? f.signBit() : 0;
  int expField = int((bits >> kDoubleMantBits) & 0x7ff);
  uint64_t mant = bits & kDoubleMantMask;
  unsigned dropped = kDoubleMantBits - f.mantBits;

  if (expField == 0x7ff) {
    if (mant == 0)
      return sign | f.expAllOnes();
    return sign | f.expAllOnes() | f.quietBit() | (mant >> dropped);
  }
  // Zero, and double subnormals (< 2^-1022), which are far below half of the
  // smallest subnormal of either narrow format, become a signed zero.
  if (expField == 0)
    return sign;

  int exp = expField - kDoubleBias; // v = 1.mant * 2^exp
  uint64_t sig = mant | (uint64_t(1) << kDoubleMantBits);
  int minNormalExp = 1 - f.bias();
  if (exp < minNormalExp) {
    // Subnormal target: count units of 2^(minNormalExp - mantBits). A result
    // of 2^mantBits units is the smallest normal, which the encoding gives
    // as it stands.
    unsigned extra = unsigned(minNormalExp - exp);
    return sign | shiftRightRoundEven(sig, dropped + extra);
  }
  if (exp > f.bias())
    return sign | f.expAllOnes();
  // The significand keeps its implicit bit, so biasing the exponent by one
  // less makes the sum the encoding, with a mantissa carry rippling in.
  uint64_t rounded = shiftRightRoundEven(sig, dropped);
  uint64_t enc = (uint64_t(exp + f.bias() - 1) << f.mantBits) + rounded;
  if (enc >= f.expAllOnes())
    return sign | f.expAllOnes();
  return sign | enc;
}

double narrowToDouble(uint64_t bits, NarrowFormat f) {
  bool negative = (bits & f.signBit()) != 0;
  uint64_t mantMask = (uint64_t(1) << f.mantBits) - 1;
  uint64_t mant = bits & mantMask;
  uint64_t expField = (bits & f.expAllOnes()) >> f.mantBits;
  uint64_t expMax = (uint64_t(1) << f.expBits) - 1;

  if (expField == expMax) {
    uint64_t out = (uint64_t(negative) << 63) | (uint64_t(0x7ff) << kDoubleMantBits) |
                   (mant << (kDoubleMantBits - f.mantBits));
    return std::bit_cast<double>(out); // infinity when mant == 0, else NaN
  }
  int minNormalExp = 1 - f.bias();
  double magnitude = expField == 0 ? std::ldexp(double(mant), minNormalExp - int(f.mantBits))
                                   : std::ldexp(double(mant | (mantMask + 1)),
                                                int(expField) - f.bias() - int(f.mantBits));
  return negative ? -magnitude : magnitude;
}

} // namespace

uint16_t doubleToHalf(double v) { return uint16_t(narrowFromDouble(v, kHalf)); }
double halfToDouble(uint16_t bits) { return narrowToDouble(bits, kHalf); }
uint16_t doubleToBFloat16(double v) { return uint16_t(narrowFromDouble(v, kBFloat16)); }
double bfloat16ToDouble(uint16_t bits) { return narrowToDouble(bits, kBFloat16); }
float doubleToFloat(double v) { return static_cast<float>(v); }

namespace {

/// Truncates toward zero into T's range; NaN → 0.
template <typename T> T saturatingTrunc(double v) {
  constexpr T lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  if (std::isnan(v))
    return 0;
  if (v <= double(lo))
    return lo;
  if (v >= double(hi)) // double(hi) of int64 is 2^63, itself out of range
    return hi;
  return T(v);
}
} // namespace

double loadElement(DType dtype, const uint8_t *p) {
  switch (dtype) {
  case DType::F32:
    return loadRaw<float>(p);
  case DType::F16:
    return halfToDouble(loadRaw<uint16_t>(p));
  case DType::BF16:
    return bfloat16ToDouble(loadRaw<uint16_t>(p));
  case DType::F64:
    return loadRaw<double>(p);
  case DType::I32:
    return loadRaw<int32_t>(p);
  case DType::I64:
    return double(loadRaw<int64_t>(p));
  case DType::I8:
    return loadRaw<int8_t>(p);
  case DType::Bool:
    return loadRaw<uint8_t>(p) != 0;
  }
  return 0;
}

void storeElement(DType dtype, double v, uint8_t *p) {
  switch (dtype) {
  case DType::F32:
    return storeRaw(p, doubleToFloat(v));
  case DType::F16:
    return storeRaw(p, doubleToHalf(v));
  case DType::BF16:
    return storeRaw(p, doubleToBFloat16(v));
  case DType::F64:
    return storeRaw(p, v);
  case DType::I32:
    return storeRaw(p, saturatingTrunc<int32_t>(v));
  case DType::I64:
    return storeRaw(p, saturatingTrunc<int64_t>(v));
  case DType::I8:
    return storeRaw(p, saturatingTrunc<int8_t>(v));
  case DType::Bool:
    return storeRaw(p, uint8_t(v != 0));
  }
}

} // namespace fusec
