// The CPU reference executor on the pointwise, cast, reduction and movement
// ops, and its run-time errors. Graphs are built with the Builder; every
// expected value is computed here from the op's docs/ir.md formula.
#include "ReferenceTestUtil.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace fusec;
using namespace fusec::testing;

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
} // namespace

TEST(Reference, AddBroadcastsAndRoundsOnce) {
  GraphRunner r;
  Value *a = r.input("a", DType::F32, {2, 3}), *b = r.input("b", DType::F32, {3});
  Tensor ta = randomTensor(DType::F32, {2, 3}, 1), tb = randomTensor(DType::F32, {3}, 2);
  auto out = r.run({r.b.add(a, b)}, {ta, tb});
  std::vector<double> want;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      want.push_back(float(ta.getDouble(i * 3 + j) + tb.getDouble(j)));
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{2, 3}));
  expectExact(out[0], want);
}

TEST(Reference, HalfArithmeticRoundsToNearestEven) {
  GraphRunner r;
  Value *a = r.input("a", DType::F16, {3}), *b = r.input("b", DType::F16, {3});
  double ulp = std::ldexp(1.0, -10), half = ulp / 2;
  Tensor ta = makeTensor(DType::F16, {3}, {1.0, 1.0 + ulp, 65504.0});
  Tensor tb = makeTensor(DType::F16, {3}, {half, half, 16.0});
  auto out = r.run({r.b.add(a, b)}, {ta, tb});
  // Ties: 1 + ulp/2 → 1 (even); 1 + 3ulp/2 → 1 + 2ulp (even); max + 16 → inf.
  expectExact(out[0], {1.0, 1.0 + 2 * ulp, kInf});
}

TEST(Reference, UnaryFloatOps) {
  std::vector<double> xs = {-2.5, -0.75, 0.0, 0.3, 1.0, 4.0};
  struct Case {
    OpKind kind;
    double (*f)(double);
  };
  Case cases[] = {
      {OpKind::Neg, [](double x) { return -x; }},
      {OpKind::Abs, [](double x) { return std::fabs(x); }},
      {OpKind::Relu, [](double x) { return x > 0 ? x : 0.0; }},
      {OpKind::Exp, [](double x) { return std::exp(x); }},
      {OpKind::Log, [](double x) { return std::log(x); }},
      {OpKind::Sqrt, [](double x) { return std::sqrt(x); }},
      {OpKind::Rsqrt, [](double x) { return 1 / std::sqrt(x); }},
      {OpKind::Tanh, [](double x) { return std::tanh(x); }},
      {OpKind::Erf, [](double x) { return std::erf(x); }},
      {OpKind::Sigmoid, [](double x) { return 1 / (1 + std::exp(-x)); }},
      {OpKind::Silu, [](double x) { return x / (1 + std::exp(-x)); }},
      {OpKind::Sin, [](double x) { return std::sin(x); }},
      {OpKind::Cos, [](double x) { return std::cos(x); }},
      {OpKind::Floor, [](double x) { return std::floor(x); }},
      {OpKind::Ceil, [](double x) { return std::ceil(x); }},
  };
  for (const Case &c : cases) {
    GraphRunner r;
    Value *x = r.input("x", DType::F32, {6});
    Tensor tx = makeTensor(DType::F32, {6}, xs);
    auto out = r.run({r.op(c.kind, {x})}, {tx});
    std::vector<double> want;
    for (double v : xs)
      want.push_back(c.f(float(v)));
    SCOPED_TRACE(std::string(opInfo(c.kind).spelling));
    expectExact(out[0], want); // NaN for log/sqrt of negatives, inf for rsqrt(0)
  }
}

// round takes ties to even (ONNX Round); sign keeps a zero's sign bit and a NaN, and works on
// integers.
TEST(Reference, RoundAndSign) {
  double nan = std::numeric_limits<double>::quiet_NaN(), inf = HUGE_VAL;
  std::vector<double> xs = {-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.7, -0.0, inf, nan};
  GraphRunner r;
  Value *x = r.input("x", DType::F32, {10});
  Tensor tx = makeTensor(DType::F32, {10}, xs);
  auto out = r.run({r.op(OpKind::Round, {x}), r.op(OpKind::Sign, {x})}, {tx});
  expectExact(out[0], {-2.0, -2.0, -0.0, 0.0, 2.0, 2.0, 3.0, -0.0, inf, nan});
  expectExact(out[1], {-1.0, -1.0, -1.0, 1.0, 1.0, 1.0, 1.0, -0.0, 1.0, nan});
  EXPECT_TRUE(std::signbit(out[0].getDouble(2)) && std::signbit(out[1].getDouble(7)));

  GraphRunner ri;
  Value *i = ri.input("i", DType::I8, {4});
  auto signs = ri.run({ri.op(OpKind::Sign, {i})}, {makeTensor(DType::I8, {4}, {-128, -3, 0, 127})});
  expectExact(signs[0], {-1, -1, 0, 1});
}

TEST(Reference, GeluBothApproximations) {
  GraphRunner r;
  Value *x = r.input("x", DType::F64, {3});
  Value *exact = r.op(OpKind::Gelu, {x});
  Value *approx = r.op(OpKind::Gelu, {x}, {{"approximate", "tanh"}});
  auto out = r.run({exact, approx}, {makeTensor(DType::F64, {3}, {1.0, -0.5, 2.0})});
  // From Python's math module: 0.5·x·(1 + erf(x/√2)) and the tanh form.
  expectNear(out[0], {0.8413447460685429, -0.15426876936299344, 1.9544997361036416}, 1e-15);
  expectNear(out[1], {0.8411919906082768, -0.15428599017485606, 1.954597694087775}, 1e-15);
}

TEST(Reference, IntegerArithmeticWraps) {
  GraphRunner r;
  Value *a = r.input("a", DType::I8, {5}), *b = r.input("b", DType::I8, {5});
  Tensor ta = makeTensor(DType::I8, {5}, {100, -128, -7, 7, 3});
  Tensor tb = makeTensor(DType::I8, {5}, {100, -1, 2, -2, 5});
  auto out = r.run(
      {r.b.add(a, b), r.b.mul(a, b), r.b.div(a, b), r.op(OpKind::Neg, {a}), r.op(OpKind::Abs, {a})},
      {ta, tb});
  expectExact(out[0], {-56, 127, -5, 5, 8});     // 200 wraps to -56; -129 to 127
  expectExact(out[1], {16, -128, -14, -14, 15}); // 10000 mod 256 = 16; 128 → -128
  expectExact(out[2], {1, -128, -3, -3, 0});     // truncation; -128 / -1 wraps
  expectExact(out[3], {-100, -128, 7, -7, -3});  // -(-128) wraps
  expectExact(out[4], {100, -128, 7, 7, 3});
}

TEST(Reference, IntegerPowAndMinMax) {
  GraphRunner r;
  Value *a = r.input("a", DType::I32, {6}), *b = r.input("b", DType::I32, {6});
  Tensor ta = makeTensor(DType::I32, {6}, {2, -3, 2, 1, -1, 7});
  Tensor tb = makeTensor(DType::I32, {6}, {10, 3, -1, -5, -3, 0});
  auto out = r.run({r.op(OpKind::Pow, {a, b}), r.b.max(a, b), r.b.min(a, b)}, {ta, tb});
  expectExact(out[0], {1024, -27, 0, 1, -1, 1}); // negative exponents: integer part
  expectExact(out[1], {10, 3, 2, 1, -1, 7});
  expectExact(out[2], {2, -3, -1, -5, -3, 0});
}

TEST(Reference, IntegerDivisionByZeroIsAnErrorAtTheOp) {
  GraphRunner r;
  Value *a = r.input("a", DType::I32, {2}), *b = r.input("b", DType::I32, {2});
  r.b.setLoc(Loc::text("t.fir", 4, 8));
  Value *q = r.b.div(a, b);
  std::string err =
      r.runError({q}, {makeTensor(DType::I32, {2}, {1, 2}), makeTensor(DType::I32, {2}, {1, 0})});
  EXPECT_NE(err.find("t.fir:4:8: error: 'div' integer division by zero"), std::string::npos) << err;
}

TEST(Reference, FloatMaxMinPropagateNaNAndComparisons) {
  GraphRunner r;
  Value *a = r.input("a", DType::F32, {4}), *b = r.input("b", DType::F32, {4});
  Tensor ta = makeTensor(DType::F32, {4}, {1, kNaN, 3, -kInf});
  Tensor tb = makeTensor(DType::F32, {4}, {2, 0, kNaN, -1});
  auto out = r.run({r.b.max(a, b), r.b.min(a, b), r.op(OpKind::Eq, {a, a}),
                    r.op(OpKind::Ne, {a, b}), r.op(OpKind::Lt, {a, b}), r.op(OpKind::Ge, {a, b})},
                   {ta, tb});
  expectExact(out[0], {2, kNaN, kNaN, -1});
  expectExact(out[1], {1, kNaN, kNaN, -kInf});
  EXPECT_EQ(out[2].dtype, DType::Bool);
  expectExact(out[2], {1, 0, 1, 1}); // NaN == NaN is false
  expectExact(out[3], {1, 1, 1, 1});
  expectExact(out[4], {1, 0, 0, 1});
  expectExact(out[5], {0, 0, 0, 0});
}

TEST(Reference, WhereBroadcastsAllThree) {
  GraphRunner r;
  Value *c = r.input("c", DType::Bool, {2, 1}), *a = r.input("a", DType::I64, {3});
  Value *b = r.input("b", DType::I64, {});
  int64_t big = (int64_t(1) << 62) + 1; // not exact as a double: must move as bytes
  Tensor tb(DType::I64, {});
  tb.setInt(0, big);
  auto out = r.run({r.op(OpKind::Where, {c, a, b})}, {makeTensor(DType::Bool, {2, 1}, {1, 0}),
                                                      makeTensor(DType::I64, {3}, {1, 2, 3}), tb});
  ASSERT_EQ(out[0].shape, (std::vector<int64_t>{2, 3}));
  std::vector<int64_t> want = {1, 2, 3, big, big, big};
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_EQ(out[0].getInt(i), want[i]) << i;
}

TEST(Reference, CastRules) {
  GraphRunner r;
  Value *f = r.input("f", DType::F32, {8}), *i = r.input("i", DType::I32, {3});
  Tensor tf = makeTensor(DType::F32, {8}, {300, -300, 2.9, -2.9, kNaN, -0.0, 0.5, kInf});
  Tensor ti = makeTensor(DType::I32, {3}, {200, -129, 16777217});
  auto out = r.run({r.b.cast(f, DType::I8), r.b.cast(f, DType::Bool), r.b.cast(i, DType::I8),
                    r.b.cast(i, DType::F32), r.b.cast(r.b.cast(f, DType::Bool), DType::F16),
                    r.b.cast(f, DType::I64)},
                   {tf, ti});
  expectExact(out[0], {127, -128, 2, -2, 0, 0, 0, 127}); // truncate, saturate, NaN → 0
  expectExact(out[1], {1, 1, 1, 1, 1, 0, 1, 1});         // x != 0 (NaN is != 0)
  expectExact(out[2], {-56, 127, 1});                    // integers wrap
  expectExact(out[3], {200, -129, 16777216});            // 2^24 + 1 rounds to even
  expectExact(out[4], {1, 1, 1, 1, 1, 0, 1, 1});
  EXPECT_EQ(out[5].getInt(7), std::numeric_limits<int64_t>::max());
}

TEST(Reference, CastFloatToFloatRoundsOnce) {
  GraphRunner r;
  Value *x = r.input("x", DType::F64, {2});
  double v = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -30); // just above an f16 tie
  auto out = r.run({r.b.cast(x, DType::F16), r.b.cast(x, DType::BF16)},
                   {makeTensor(DType::F64, {2}, {v, -v})});
  expectExact(out[0], {1.0 + std::ldexp(1.0, -10), -(1.0 + std::ldexp(1.0, -10))});
  expectExact(out[1], {1.0, -1.0});
}

TEST(Reference, Reductions) {
  GraphRunner r;
  Value *x = r.input("x", DType::F32, {2, 3, 4});
  Tensor tx = randomTensor(DType::F32, {2, 3, 4}, 7);
  AttrList axes02 = {{"axes", std::vector<int64_t>{0, -1}}};
  Value *sum = r.op(OpKind::ReduceSum, {x}, axes02);
  Value *mean =
      r.op(OpKind::ReduceMean, {x}, {{"axes", std::vector<int64_t>{1}}, {"keepdims", true}});
  Value *max = r.op(OpKind::ReduceMax, {x});
  Value *min = r.op(OpKind::ReduceMin, {x}, axes02);
  auto out = r.run({sum, mean, max, min}, {tx});
  auto at = [&](int i, int j, int k) { return tx.getDouble((i * 3 + j) * 4 + k); };
  std::vector<double> wantSum(3, 0), wantMin(3, kInf), wantMean;
  double wantMax = -kInf;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) {
        wantSum[j] += at(i, j, k);
        wantMin[j] = std::min(wantMin[j], at(i, j, k));
        wantMax = std::max(wantMax, at(i, j, k));
      }
  for (int i = 0; i < 2; ++i)
    for (int k = 0; k < 4; ++k)
      wantMean.push_back((at(i, 0, k) + at(i, 1, k) + at(i, 2, k)) / 3);
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{3}));
  EXPECT_EQ(out[1].shape, (std::vector<int64_t>{2, 1, 4}));
  EXPECT_EQ(out[2].shape, (std::vector<int64_t>{}));
  expectNear(out[0], wantSum, 1e-6);
  expectNear(out[1], wantMean, 1e-6);
  expectExact(out[2], {wantMax});
  expectExact(out[3], wantMin);
}

TEST(Reference, ReductionEdgeCases) {
  GraphRunner r;
  Value *x = r.input("x", DType::F32, {2, 0}), *i = r.input("i", DType::I32, {3});
  Value *n = r.input("n", DType::F32, {3});
  AttrList axis1 = {{"axes", std::vector<int64_t>{1}}};
  auto out = r.run({r.op(OpKind::ReduceSum, {x}, axis1), r.op(OpKind::ReduceMean, {x}, axis1),
                    r.op(OpKind::ReduceSum, {i}), r.op(OpKind::ReduceMax, {n})},
                   {Tensor(DType::F32, {2, 0}), makeTensor(DType::I32, {3}, {2147483647, 1, 1}),
                    makeTensor(DType::F32, {3}, {1, kNaN, 2})});
  expectExact(out[0], {0, 0});
  expectExact(out[1], {kNaN, kNaN});
  expectExact(out[2], {-2147483647}); // wraps like int32 addition
  expectExact(out[3], {kNaN});

  GraphRunner e;
  Value *y = e.input("y", DType::F32, {2, 0});
  e.b.setLoc(Loc::text("m.fir", 2, 5));
  Value *bad = e.op(OpKind::ReduceMax, {y}, axis1);
  std::string err = e.runError({bad}, {Tensor(DType::F32, {2, 0})});
  EXPECT_NE(err.find("m.fir:2:5: error: 'reduce_max' of f32[2,0] reduces an empty extent"),
            std::string::npos)
      << err;
}

// reduce_prod: a product in double (floats), a wrapping int64 product (integers), 1 over an empty
// extent.
TEST(Reference, ReduceProd) {
  GraphRunner r;
  Value *x = r.input("x", DType::F32, {2, 3}), *i = r.input("i", DType::I32, {3});
  Value *l = r.input("l", DType::I64, {2}), *e = r.input("e", DType::F16, {2, 0});
  AttrList axis1 = {{"axes", std::vector<int64_t>{1}}};
  auto out = r.run({r.op(OpKind::ReduceProd, {x}, axis1),
                    r.op(OpKind::ReduceProd, {x}, {{"axes", std::vector<int64_t>{0}}}),
                    r.op(OpKind::ReduceProd, {i}), r.op(OpKind::ReduceProd, {l}),
                    r.op(OpKind::ReduceProd, {e}, axis1)},
                   {makeTensor(DType::F32, {2, 3}, {1, -2, 3, 0.5, kInf, kNaN}),
                    makeTensor(DType::I32, {3}, {65536, 32768, 3}),
                    makeTensor(DType::I64, {2}, {-4294967296.0, 4294967296.0}),
                    Tensor(DType::F16, {2, 0})});
  expectExact(out[0], {-6, kNaN});
  expectExact(out[1], {0.5, -kInf, kNaN});
  expectExact(out[2], {-2147483648.0}); // 3 · 2^31 wraps to -2^31 in i32
  expectExact(out[3], {0});             // -2^64 wraps to 0 in int64
  expectExact(out[4], {1, 1});
}

// gather along each axis of an iota, negative indices counting from the end; an index outside
// [-d, d) is an error at the op, even where no output element reads it.
TEST(Reference, Gather) {
  GraphRunner r;
  Value *x = r.input("x", DType::F16, {2, 3}), *i = r.input("i", DType::I64, {2, 2});
  Value *s = r.input("s", DType::I32, {});
  Value *rows = r.op(OpKind::Gather, {x, i});
  Value *cols = r.op(OpKind::Gather, {x, s}, {{"axis", 1}});
  Value *idx = r.op(OpKind::Gather, {i, s});
  auto out = r.run({rows, cols, idx}, {makeTensor(DType::F16, {2, 3}, {0, 1, 2, 3, 4, 5}),
                                       makeTensor(DType::I64, {2, 2}, {1, -2, -1, 0}),
                                       makeTensor(DType::I32, {}, {-1})});
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{2, 2, 3}));
  expectExact(out[0], {3, 4, 5, 0, 1, 2, 3, 4, 5, 0, 1, 2});
  EXPECT_EQ(out[1].shape, (std::vector<int64_t>{2}));
  expectExact(out[1], {2, 5});
  expectExact(out[2], {-1, 0});

  GraphRunner e;
  Value *y = e.input("y", DType::F32, {0, 3}), *j = e.input("j", DType::I32, {2});
  e.b.setLoc(Loc::text("g.fir", 4, 8));
  Value *bad = e.op(OpKind::Gather, {y, j}, {{"axis", 1}});
  std::string err =
      e.runError({bad}, {Tensor(DType::F32, {0, 3}), makeTensor(DType::I32, {2}, {2, -4})});
  EXPECT_NE(err.find("g.fir:4:8: error: 'gather' index -4 (element 1 of i32[2]) is out of range "
                     "for axis 1 of f32[0,3]"),
            std::string::npos)
      << err;
}

// gather_elements along each axis, negative indices counting from the end, indices shorter than
// the data along the other axis; an index outside [-d, d) is an error at the op.
TEST(Reference, GatherElements) {
  GraphRunner r;
  Value *x = r.input("x", DType::F16, {2, 3}), *i = r.input("i", DType::I64, {1, 3});
  Value *j = r.input("j", DType::I32, {2, 2});
  Value *rows = r.op(OpKind::GatherElements, {x, i});
  Value *cols = r.op(OpKind::GatherElements, {x, j}, {{"axis", -1}});
  auto out = r.run({rows, cols}, {makeTensor(DType::F16, {2, 3}, {0, 1, 2, 3, 4, 5}),
                                  makeTensor(DType::I64, {1, 3}, {1, -2, -1}),
                                  makeTensor(DType::I32, {2, 2}, {2, -3, 0, 0})});
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{1, 3}));
  expectExact(out[0], {3, 1, 5});
  EXPECT_EQ(out[1].shape, (std::vector<int64_t>{2, 2}));
  expectExact(out[1], {2, 0, 3, 3});

  GraphRunner e;
  Value *y = e.input("y", DType::F32, {2, 3}), *k = e.input("k", DType::I32, {2, 1});
  e.b.setLoc(Loc::text("g.fir", 3, 6));
  Value *bad = e.op(OpKind::GatherElements, {y, k}, {{"axis", 1}});
  std::string err =
      e.runError({bad}, {Tensor(DType::F32, {2, 3}), makeTensor(DType::I32, {2, 1}, {0, 3})});
  EXPECT_NE(err.find("g.fir:3:6: error: 'gather_elements' index 3 (element 1 of i32[2,1]) is out "
                     "of range for axis 1 of f32[2,3]"),
            std::string::npos)
      << err;
}

// top_k: largest and smallest along each axis, ties in index order, NaN above +inf, integers
// compared exactly; a k above the axis's extent at run time is an error.
TEST(Reference, TopK) {
  GraphRunner r;
  Value *x = r.input("x", DType::F32, {2, 4}), *l = r.input("l", DType::I64, {3});
  Value *top = r.op(OpKind::TopK, {x}, {{"k", 3}});
  Value *low = r.op(OpKind::TopK, {x}, {{"k", 4}, {"largest", false}});
  Value *cols = r.op(OpKind::TopK, {x}, {{"k", 1}, {"axis", 0}});
  Value *ints = r.op(OpKind::TopK, {l}, {{"k", 2}, {"largest", false}});
  Tensor tl(DType::I64, {3});
  std::vector<int64_t> big{int64_t(1) << 62, (int64_t(1) << 62) - 1, int64_t(1) << 62};
  std::memcpy(tl.bytes.data(), big.data(), 3 * sizeof(int64_t));
  auto out = r.run({top, low, cols, ints},
                   {makeTensor(DType::F32, {2, 4}, {2, kNaN, 2, -kInf, 0, kInf, -1, kNaN}), tl});
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{2, 3}));
  expectExact(out[0], {1, 0, 2, 3, 1, 0});
  expectExact(out[1], {3, 0, 2, 1, 2, 0, 1, 3});
  expectExact(out[2], {0, 0, 0, 1});
  expectExact(out[3], {1, 0});

  GraphRunner e;
  Value *y = e.input("y", TensorType{DType::F32, {Dim::fixed(2), Dim::anonymous()}, Layout::None});
  e.b.setLoc(Loc::text("t.fir", 5, 7));
  Value *bad = e.op(OpKind::TopK, {y}, {{"k", 4}});
  std::string err = e.runError({bad}, {Tensor(DType::F32, {2, 3})});
  EXPECT_NE(err.find("t.fir:5:7: error: 'top_k' k 4 is larger than axis 1 of f32[2,3]"),
            std::string::npos)
      << err;
}

// cumsum along each axis, inclusive and exclusive, forward and reversed; integers wrap.
TEST(Reference, CumSum) {
  GraphRunner r;
  Value *x = r.input("x", DType::F64, {2, 3}), *i = r.input("i", DType::I32, {3});
  Value *rows = r.op(OpKind::CumSum, {x}, {{"axis", -1}});
  Value *cols = r.op(OpKind::CumSum, {x}, {{"axis", 0}, {"exclusive", true}});
  Value *back = r.op(OpKind::CumSum, {x}, {{"axis", 1}, {"reverse", true}, {"exclusive", true}});
  Value *wrap = r.op(OpKind::CumSum, {i}, {{"axis", 0}, {"reverse", true}});
  auto out = r.run({rows, cols, back, wrap}, {makeTensor(DType::F64, {2, 3}, {1, 2, 3, 4, 5, 6}),
                                              makeTensor(DType::I32, {3}, {1, 2147483647, 5})});
  expectExact(out[0], {1, 3, 6, 4, 9, 15});
  expectExact(out[1], {0, 0, 0, 1, 2, 3});
  expectExact(out[2], {5, 3, 0, 11, 6, 0});
  expectExact(out[3], {-2147483643, -2147483644, 5});
}

TEST(Reference, Movement) {
  GraphRunner r;
  Value *x = r.input("x", DType::I32, {2, 3, 4});
  std::vector<double> iota;
  for (int k = 0; k < 24; ++k)
    iota.push_back(k);
  Value *t = r.b.transpose(x, {2, 0, 1});
  Value *s = r.op(OpKind::Slice, {x}, {{"axis", 2}, {"start", -3}, {"end", 100}, {"step", 2}});
  Value *c = r.op(OpKind::Concat, {x, s}, {{"axis", -1}});
  Value *m = r.b.reshape(x, {Dim::fixed(-1), Dim::fixed(6)});
  Value *bc = r.op(OpKind::Broadcast, {s}, {{"shape", staticShape({2, 2, 3, 2})}});
  auto out = r.run({t, s, c, m, bc}, {makeTensor(DType::I32, {2, 3, 4}, iota)});
  auto at = [](int i, int j, int k) { return double((i * 3 + j) * 4 + k); };
  std::vector<double> wantT, wantS, wantC;
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j)
        wantT.push_back(at(i, j, k));
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) {
      wantS.insert(wantS.end(), {at(i, j, 1), at(i, j, 3)}); // x[..., 1::2]
      for (int k = 0; k < 4; ++k)
        wantC.push_back(at(i, j, k));
      wantC.insert(wantC.end(), {at(i, j, 1), at(i, j, 3)});
    }
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{4, 2, 3}));
  expectExact(out[0], wantT);
  EXPECT_EQ(out[1].shape, (std::vector<int64_t>{2, 3, 2}));
  expectExact(out[1], wantS);
  EXPECT_EQ(out[2].shape, (std::vector<int64_t>{2, 3, 6}));
  expectExact(out[2], wantC);
  EXPECT_EQ(out[3].shape, (std::vector<int64_t>{4, 6}));
  expectExact(out[3], iota);
  std::vector<double> wantB = wantS;
  wantB.insert(wantB.end(), wantS.begin(), wantS.end());
  expectExact(out[4], wantB);
}

TEST(Reference, SymbolicDimsAreCheckedAtRunTime) {
  GraphRunner r;
  Value *a = r.input("a", TensorType{DType::F32, {Dim::anonymous()}, Layout::None});
  Value *b = r.input("b", TensorType{DType::F32, {Dim::anonymous()}, Layout::None});
  r.b.setLoc(Loc::text("s.fir", 3, 8));
  Value *sum = r.b.add(a, b);
  std::string err = r.runError({sum}, {Tensor(DType::F32, {3}), Tensor(DType::F32, {4})});
  EXPECT_NE(err.find("s.fir:3:8: error: 'add' operand shapes f32[3] and f32[4] do not broadcast"),
            std::string::npos)
      << err;
}

TEST(Reference, NamedDimsBindAcrossInputs) {
  GraphRunner r;
  Shape bs = {Dim::named("batch"), Dim::fixed(2)};
  Value *a = r.input("a", TensorType{DType::F32, bs, Layout::None});
  Value *b = r.input("b", TensorType{DType::F32, bs, Layout::None});
  Value *sum = r.b.add(a, b);
  auto ok = r.run({sum}, {Tensor(DType::F32, {5, 2}), Tensor(DType::F32, {5, 2})});
  EXPECT_EQ(ok[0].shape, (std::vector<int64_t>{5, 2}));

  std::vector<Tensor> outs;
  Diagnostics diags;
  EXPECT_FALSE(
      runReference(r.g, {Tensor(DType::F32, {5, 2}), Tensor(DType::F32, {4, 2})}, outs, diags));
  EXPECT_NE(diagText(diags).find("'batch' is already 5"), std::string::npos) << diagText(diags);
  Diagnostics wrongType;
  EXPECT_FALSE(
      runReference(r.g, {Tensor(DType::F16, {5, 2}), Tensor(DType::F32, {5, 2})}, outs, wrongType));
  EXPECT_NE(diagText(wrongType).find("input '%a' of type f32[batch,2] was given f16[5,2]"),
            std::string::npos)
      << diagText(wrongType);
  DimBindings bindings;
  Diagnostics d2;
  ASSERT_TRUE(
      bindInputs(r.g, {Tensor(DType::F32, {7, 2}), Tensor(DType::F32, {7, 2})}, bindings, d2));
  EXPECT_EQ(resolveShape(bs, bindings), (std::vector<int64_t>{7, 2}));
}

TEST(Reference, OutputsMayRepeatAndBeInputs) {
  GraphRunner r;
  Value *x = r.input("x", DType::F32, {2});
  Value *y = r.b.exp(x);
  Value *z = r.b.add(y, y); // y's last use; it is freed after this op
  auto out = r.run({z, x, z, r.b.neg(z)}, {makeTensor(DType::F32, {2}, {0, 1})});
  ASSERT_EQ(out.size(), 4u);
  expectExact(out[0], {2, float(2 * double(float(std::exp(1.0))))});
  expectExact(out[1], {0, 1});
  expectExact(out[2], out[0].toDoubles());
  expectExact(out[3], {-2, -out[0].getDouble(1)});
}
