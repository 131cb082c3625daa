// Host tensors (runtime/reference/Tensor.h): the conversion rules of element access,
// the reproducible random fill, and the printed form of --print-values.
#include "runtime/reference/Tensor.h"

#include <cmath>
#include <gtest/gtest.h>
#include <limits>
#include <sstream>

using namespace fusec;

namespace {

std::string printed(const Tensor &t, size_t maxElements = 100) {
  std::ostringstream os;
  printTensor(t, os, maxElements);
  return os.str();
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

} // namespace

TEST(Tensor, SetDoubleFollowsCastRules) {
  Tensor i8(DType::I8, {5}), i64(DType::I64, {3}), b(DType::Bool, {3});
  double in8[] = {127.9, -128.9, 1e9, kNaN, -0.5};
  for (size_t i = 0; i < 5; ++i)
    i8.setDouble(i, in8[i]);
  EXPECT_EQ(i8.getInt(0), 127);
  EXPECT_EQ(i8.getInt(1), -128);
  EXPECT_EQ(i8.getInt(2), 127);
  EXPECT_EQ(i8.getInt(3), 0);
  EXPECT_EQ(i8.getInt(4), 0);
  i64.setDouble(0, 9.3e18);
  i64.setDouble(1, -kInf);
  i64.setDouble(2, -9.2e18);
  EXPECT_EQ(i64.getInt(0), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(i64.getInt(1), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(i64.getInt(2), int64_t(-9.2e18));
  b.setDouble(0, kNaN);
  b.setDouble(1, -0.0);
  b.setDouble(2, 0.25);
  EXPECT_EQ(b.bytes, (std::vector<uint8_t>{1, 0, 1}));
}

TEST(Tensor, SetIntWrapsAndRoundsOnce) {
  Tensor i32(DType::I32, {1}), f32(DType::F32, {1}), bf(DType::BF16, {1}), h(DType::F16, {1});
  i32.setInt(0, (int64_t(1) << 32) + 5);
  EXPECT_EQ(i32.getInt(0), 5);
  f32.setInt(0, (int64_t(1) << 24) + 1); // tie → even
  EXPECT_EQ(f32.getDouble(0), 16777216.0);
  // 2^60 + 2^52 + 1 is just above a bf16 tie; through double it would land on
  // the tie (the +1 is below double's precision) and round down to 2^60.
  bf.setInt(0, (int64_t(1) << 60) + (int64_t(1) << 52) + 1);
  EXPECT_EQ(bf.getDouble(0), std::ldexp(1.0, 60) + std::ldexp(1.0, 53));
  h.setInt(0, 65520); // max + half ulp → inf
  EXPECT_EQ(h.getDouble(0), kInf);
  h.setInt(0, -2049); // tie between -2048 and -2050 → even mantissa -2048
  EXPECT_EQ(h.getDouble(0), -2048.0);
}

TEST(Tensor, DoublesRoundTrip) {
  std::vector<double> v = {1.5, -2.25, 0.1};
  for (DType dt : {DType::F32, DType::F16, DType::BF16, DType::F64}) {
    Tensor t = Tensor::fromDoubles(dt, {3}, v);
    std::vector<double> back = t.toDoubles();
    EXPECT_EQ(back[0], 1.5);
    EXPECT_EQ(back[1], -2.25);
    EXPECT_EQ(Tensor::fromDoubles(dt, {3}, back).bytes, t.bytes) << dtypeName(dt);
  }
  EXPECT_EQ(Tensor(DType::F16, {2, 0, 3}).numElements(), 0u);
  EXPECT_EQ(Tensor(DType::F16, {2, 3}).typeStr(), "f16[2,3]");
  EXPECT_EQ(Tensor(DType::Bool, {}).typeStr(), "bool[]");
}

TEST(Tensor, FillRandomIsReproducibleAndInRange) {
  Tensor a(DType::F32, {1000}), b(DType::F32, {1000}), c(DType::F32, {1000});
  fillRandom(a, 42, -2, 3);
  fillRandom(b, 42, -2, 3);
  fillRandom(c, 43, -2, 3);
  EXPECT_EQ(a.bytes, b.bytes);
  EXPECT_NE(a.bytes, c.bytes);
  double lo = 10, hi = -10, sum = 0;
  for (double x : a.toDoubles()) {
    lo = std::min(lo, x);
    hi = std::max(hi, x);
    sum += x;
  }
  EXPECT_GE(lo, -2);
  EXPECT_LT(hi, 3);
  EXPECT_NEAR(sum / 1000, 0.5, 0.15); // uniform mean (lo + hi) / 2
  Tensor ints(DType::I8, {1000}), bools(DType::Bool, {1000});
  fillRandom(ints, 1, -3, 3);
  fillRandom(bools, 1);
  std::vector<int> seen(7, 0);
  for (size_t i = 0; i < 1000; ++i) {
    int64_t v = ints.getInt(i);
    ASSERT_TRUE(v >= -3 && v <= 3) << v;
    ++seen[size_t(v + 3)];
  }
  for (int count : seen)
    EXPECT_GT(count, 80); // every value of [-3, 3] turns up
  size_t trues = 0;
  for (uint8_t x : bools.bytes)
    trues += x;
  EXPECT_GT(trues, 400u);
  EXPECT_LT(trues, 600u);
}

TEST(Tensor, PrintsShortestFloats) {
  Tensor f = Tensor::fromDoubles(DType::F32, {2, 3}, {1, 2.5, -0.0, kNaN, -kInf, 0.1});
  EXPECT_EQ(printed(f), "[[1.0, 2.5, -0.0], [nan, -inf, 0.1]]\n");
  Tensor h = Tensor::fromDoubles(DType::F16, {3}, {0.1, 1e-5, 65504});
  EXPECT_EQ(printed(h), "[0.1, 1e-05, 65500.0]\n"); // 65500 reads back as 65504
  Tensor bf = Tensor::fromDoubles(DType::BF16, {2}, {3.0e38, -1.0 / 3});
  EXPECT_EQ(printed(bf), "[3e+38, -0.334]\n"); // bf16 -1/3 is -0.333984375
  Tensor d = Tensor::fromDoubles(DType::F64, {2}, {0.1, 1.0 / 3});
  EXPECT_EQ(printed(d), "[0.1, 0.3333333333333333]\n");
  Tensor big = Tensor::fromDoubles(DType::F32, {3}, {123456, 200, 1e20});
  EXPECT_EQ(printed(big), "[123456.0, 200.0, 1e+20]\n");
}

TEST(Tensor, PrintsIntegersBoolsScalarsAndElides) {
  EXPECT_EQ(printed(Tensor::fromDoubles(DType::I32, {2}, {-1, 7})), "[-1, 7]\n");
  EXPECT_EQ(printed(Tensor::fromDoubles(DType::Bool, {2}, {1, 0})), "[true, false]\n");
  EXPECT_EQ(printed(Tensor::fromDoubles(DType::F32, {}, {3})), "3.0\n");
  EXPECT_EQ(printed(Tensor::fromDoubles(DType::F32, {}, {3}), 0), "3.0\n");
  Tensor m = Tensor::fromDoubles(DType::F32, {2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(printed(m, 3), "[[1.0, 2.0], [3.0, ...]]\n");
  EXPECT_EQ(printed(m, 2), "[[1.0, 2.0], ...]\n");
  EXPECT_EQ(printed(m, 0), "[...]\n");
  EXPECT_EQ(printed(Tensor(DType::F32, {2, 0})), "[[], []]\n");
}
