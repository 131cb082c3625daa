// Bit-exact f16 / bf16 conversions (ir/Numerics.h): rounding to nearest
// even including exact ties, subnormals, overflow, NaN, infinities and
// signed zero; and every f16 bit pattern through double and back.
#include "ir/Numerics.h"

#include <bit>
#include <cmath>
#include <gtest/gtest.h>
#include <limits>

using namespace fusec;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// f16: 1 sign, 5 exponent (bias 15), 10 mantissa bits.
constexpr uint16_t kHalfInf = 0x7c00, kHalfMax = 0x7bff, kHalfMinNormal = 0x0400;
constexpr uint16_t kHalfMinSub = 0x0001, kHalfOne = 0x3c00, kHalfNegZero = 0x8000;
// bf16: 1 sign, 8 exponent (bias 127), 7 mantissa bits.
constexpr uint16_t kBfInf = 0x7f80, kBfMax = 0x7f7f, kBfOne = 0x3f80;

bool isHalfNaN(uint16_t b) { return (b & 0x7c00) == 0x7c00 && (b & 0x03ff) != 0; }
bool isBfNaN(uint16_t b) { return (b & 0x7f80) == 0x7f80 && (b & 0x007f) != 0; }

} // namespace

TEST(Numerics, HalfExactValues) {
  EXPECT_EQ(doubleToHalf(1.0), kHalfOne);
  EXPECT_EQ(doubleToHalf(-2.0), 0xc000);
  EXPECT_EQ(doubleToHalf(0.5), 0x3800);
  EXPECT_EQ(doubleToHalf(65504.0), kHalfMax);
  EXPECT_EQ(doubleToHalf(std::ldexp(1.0, -14)), kHalfMinNormal);
  EXPECT_EQ(doubleToHalf(std::ldexp(1.0, -24)), kHalfMinSub);
  EXPECT_EQ(doubleToHalf(std::ldexp(1023.0, -24)), 0x03ff); // largest subnormal
  EXPECT_EQ(halfToDouble(kHalfMax), 65504.0);
  EXPECT_EQ(halfToDouble(kHalfMinSub), std::ldexp(1.0, -24));
  EXPECT_EQ(halfToDouble(0x3555), 0.25 + 341.0 / 4096); // (1 + 341/1024) · 2^-2
}

TEST(Numerics, HalfTiesRoundToEven) {
  // Between 1 and 1 + 2^-10 the tie 1 + 2^-11 goes to the even 1.0; between
  // 1 + 2^-10 (odd) and 1 + 2^-9 the tie goes up.
  EXPECT_EQ(doubleToHalf(1.0 + std::ldexp(1.0, -11)), kHalfOne);
  EXPECT_EQ(doubleToHalf(1.0 + 3 * std::ldexp(1.0, -11)), kHalfOne + 2);
  // Just off the tie: the nearest wins either way.
  EXPECT_EQ(doubleToHalf(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)), kHalfOne + 1);
  EXPECT_EQ(doubleToHalf(1.0 + 3 * std::ldexp(1.0, -11) - std::ldexp(1.0, -40)), kHalfOne + 1);
  // Negative values round by magnitude.
  EXPECT_EQ(doubleToHalf(-(1.0 + std::ldexp(1.0, -11))), 0x8000 | kHalfOne);
  // A carry out of the mantissa bumps the exponent: 2 - 2^-12 → 2.0.
  EXPECT_EQ(doubleToHalf(2.0 - std::ldexp(1.0, -12)), 0x4000);
}

TEST(Numerics, HalfNoDoubleRounding) {
  // 1 + 2^-11 + 2^-30 is above the f16 tie; rounding to f32 first would land
  // on 1 + 2^-11 exactly (f32 keeps 23 bits) and then round to even (1.0).
  double v = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -30);
  EXPECT_EQ(doubleToHalf(v), kHalfOne + 1);
  EXPECT_EQ(doubleToHalf(double(float(v))), kHalfOne);
}

TEST(Numerics, HalfSubnormals) {
  double minSub = std::ldexp(1.0, -24);
  EXPECT_EQ(doubleToHalf(minSub / 2), 0x0000);                  // tie to even: 0
  EXPECT_EQ(doubleToHalf(-minSub / 2), kHalfNegZero);           // sign kept
  EXPECT_EQ(doubleToHalf(minSub / 2 * 1.0000001), kHalfMinSub); // above the tie
  EXPECT_EQ(doubleToHalf(minSub * 1.5), 0x0002);                // tie 1.5 → even 2
  EXPECT_EQ(doubleToHalf(minSub * 2.5), 0x0002);                // tie 2.5 → even 2
  EXPECT_EQ(doubleToHalf(minSub * 0.49), 0x0000);
  EXPECT_EQ(doubleToHalf(std::ldexp(1.0, -1074)), 0x0000); // a double subnormal
  // Rounding out of the subnormal range into the smallest normal.
  EXPECT_EQ(doubleToHalf(std::ldexp(1.0, -14) - std::ldexp(1.0, -26)), kHalfMinNormal);
  // Rounding from just below the smallest normal stays subnormal.
  EXPECT_EQ(doubleToHalf(std::ldexp(1023.25, -24)), 0x03ff);
  // Rounding from the normal range down into a subnormal is not possible
  // (subnormals are below every normal), but values between the two round
  // correctly: 1023.5 units is a tie between odd 1023 and even 1024.
  EXPECT_EQ(doubleToHalf(std::ldexp(1023.5, -24)), kHalfMinNormal);
}

TEST(Numerics, HalfOverflow) {
  double max = 65504.0, halfUlp = 16.0; // ulp at the top binade is 32
  EXPECT_EQ(doubleToHalf(max + halfUlp - 1e-9), kHalfMax);
  EXPECT_EQ(doubleToHalf(max + halfUlp), kHalfInf); // the tie goes to even = inf
  EXPECT_EQ(doubleToHalf(-(max + halfUlp)), 0x8000 | kHalfInf);
  EXPECT_EQ(doubleToHalf(1e300), kHalfInf);
  EXPECT_EQ(doubleToHalf(kInf), kHalfInf);
  EXPECT_EQ(doubleToHalf(-kInf), 0xfc00);
  EXPECT_EQ(halfToDouble(kHalfInf), kInf);
  EXPECT_EQ(halfToDouble(0xfc00), -kInf);
}

TEST(Numerics, HalfNaNAndZero) {
  uint16_t qnan = doubleToHalf(std::numeric_limits<double>::quiet_NaN());
  EXPECT_TRUE(isHalfNaN(qnan));
  EXPECT_TRUE(qnan & 0x0200) << "quiet bit";
  uint16_t negNaN = doubleToHalf(-std::numeric_limits<double>::quiet_NaN());
  EXPECT_TRUE(isHalfNaN(negNaN));
  EXPECT_TRUE(negNaN & 0x8000) << "sign kept";
  // A signalling NaN whose payload lies below the kept bits is still a NaN.
  double snan = std::bit_cast<double>(uint64_t(0x7ff0000000000001));
  EXPECT_TRUE(isHalfNaN(doubleToHalf(snan)));
  EXPECT_TRUE(std::isnan(halfToDouble(0x7e00)));
  EXPECT_EQ(doubleToHalf(0.0), 0x0000);
  EXPECT_EQ(doubleToHalf(-0.0), kHalfNegZero);
  EXPECT_TRUE(std::signbit(halfToDouble(kHalfNegZero)));
  EXPECT_EQ(halfToDouble(kHalfNegZero), 0.0);
}

TEST(Numerics, EveryHalfRoundTrips) {
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    uint16_t bits = uint16_t(b);
    uint16_t back = doubleToHalf(halfToDouble(bits));
    if (isHalfNaN(bits))
      EXPECT_EQ(back, bits | 0x0200) << "NaN " << std::hex << b << ": payload and sign, quieted";
    else
      EXPECT_EQ(back, bits) << std::hex << b;
  }
}

TEST(Numerics, HalfDecodeIsMonotone) {
  // Consecutive positive finite patterns decode to increasing values, and the
  // midpoint of two neighbours rounds to the even one of them.
  for (uint16_t b = 0; b < kHalfMax; ++b) {
    double lo = halfToDouble(b), hi = halfToDouble(uint16_t(b + 1));
    ASSERT_LT(lo, hi) << std::hex << b;
    uint16_t even = (b & 1) ? uint16_t(b + 1) : b;
    ASSERT_EQ(doubleToHalf((lo + hi) / 2), even) << std::hex << b;
  }
}

TEST(Numerics, BFloat16Rounding) {
  EXPECT_EQ(doubleToBFloat16(1.0), kBfOne);
  EXPECT_EQ(doubleToBFloat16(1.0 + std::ldexp(1.0, -8)), kBfOne);         // tie → even
  EXPECT_EQ(doubleToBFloat16(1.0 + 3 * std::ldexp(1.0, -8)), kBfOne + 2); // tie → even
  EXPECT_EQ(doubleToBFloat16(1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30)), kBfOne + 1);
  // No double rounding through f32: f32 would keep 1 + 2^-8 exactly.
  EXPECT_EQ(doubleToBFloat16(1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40)), kBfOne + 1);
  EXPECT_EQ(bfloat16ToDouble(kBfMax), std::ldexp(255.0, 127 - 7));
  EXPECT_EQ(doubleToBFloat16(std::ldexp(255.0, 120)), kBfMax);
  EXPECT_EQ(doubleToBFloat16(std::ldexp(255.5, 120)), kBfInf); // max + half ulp
  EXPECT_EQ(doubleToBFloat16(std::ldexp(255.49, 120)), kBfMax);
  EXPECT_EQ(doubleToBFloat16(-kInf), 0xff80);
  EXPECT_EQ(doubleToBFloat16(-0.0), 0x8000);
}

TEST(Numerics, BFloat16Subnormals) {
  double minSub = std::ldexp(1.0, -133);
  EXPECT_EQ(doubleToBFloat16(minSub), 0x0001);
  EXPECT_EQ(doubleToBFloat16(minSub / 2), 0x0000);
  EXPECT_EQ(doubleToBFloat16(-minSub / 2), 0x8000);
  EXPECT_EQ(doubleToBFloat16(minSub * 1.5), 0x0002);
  EXPECT_EQ(doubleToBFloat16(std::ldexp(127.5, -133)), 0x0080); // rounds up to min normal
  EXPECT_EQ(bfloat16ToDouble(0x0080), std::ldexp(1.0, -126));
  EXPECT_EQ(bfloat16ToDouble(0x007f), std::ldexp(127.0, -133));
}

TEST(Numerics, BFloat16NaNAndRoundTrip) {
  uint16_t nan = doubleToBFloat16(-std::numeric_limits<double>::quiet_NaN());
  EXPECT_TRUE(isBfNaN(nan));
  EXPECT_TRUE(nan & 0x8000);
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    uint16_t bits = uint16_t(b);
    uint16_t back = doubleToBFloat16(bfloat16ToDouble(bits));
    EXPECT_EQ(back, isBfNaN(bits) ? uint16_t(bits | 0x0040) : bits) << std::hex << b;
  }
}

TEST(Numerics, BFloat16AgreesWithFloatTruncationRule) {
  // For values exactly representable in f32, RNE to bf16 equals the
  // well-known f32 bit trick: add 0x7fff + lsb and truncate.
  for (uint32_t i = 0; i < 200000; ++i) {
    uint32_t f = i * 2654435761u; // spread over all patterns
    float x = std::bit_cast<float>(f);
    if (std::isnan(x))
      continue;
    uint32_t rounded = f + 0x7fff + ((f >> 16) & 1);
    uint16_t expect = uint16_t(rounded >> 16);
    ASSERT_EQ(doubleToBFloat16(x), expect) << std::hex << f;
  }
}

TEST(Numerics, DoubleToFloat) {
  EXPECT_EQ(doubleToFloat(1.0 + std::ldexp(1.0, -24)), 1.0f); // tie → even
  EXPECT_EQ(doubleToFloat(1e39), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::signbit(doubleToFloat(-0.0)));
}
