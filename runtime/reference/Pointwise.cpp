// Reference kernels of the pointwise ops: unary math, casts, broadcasting
// binary arithmetic, comparisons and `where`.
//
// Float ops compute in double on the operands widened once and round once on
// store. Integer ops compute in int64 with wrapping (uint64 arithmetic, so no
// signed overflow), and the store wraps to the dtype; an integer division by
// zero, or zero raised to a negative power, is a run-time error. Broadcasting
// walks the output once with each operand's broadcast strides.
#include "ir/Assert.h"
#include "runtime/reference/Ops.h"

#include <cmath>
#include <cstring>
#include <numbers>

namespace fusec::ref {

namespace {

using Offsets2 = std::array<int64_t, 2>;

template <typename F> void mapAll(std::vector<double> &v, F f) {
  for (double &x : v)
    x = f(x);
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

double gelu(double x, bool tanhApprox) {
  if (!tanhApprox)
    return 0.5 * x * (1.0 + std::erf(x / std::numbers::sqrt2));
  double k = std::sqrt(2.0 / std::numbers::pi);
  return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
}

void applyUnaryFloat(const Op &op, std::vector<double> &v) {
  switch (op.kind()) {
  case OpKind::Neg:
    return mapAll(v, [](double x) { return -x; });
  case OpKind::Abs:
    return mapAll(v, [](double x) { return std::fabs(x); });
  case OpKind::Relu: // NaN stays NaN
    return mapAll(v, [](double x) { return x < 0 ? 0.0 : x; });
  case OpKind::Exp:
    return mapAll(v, [](double x) { return std::exp(x); });
  case OpKind::Log:
    return mapAll(v, [](double x) { return std::log(x); });
  case OpKind::Sqrt:
    return mapAll(v, [](double x) { return std::sqrt(x); });
  case OpKind::Rsqrt:
    return mapAll(v, [](double x) { return 1.0 / std::sqrt(x); });
  case OpKind::Tanh:
    return mapAll(v, [](double x) { return std::tanh(x); });
  case OpKind::Erf:
    return mapAll(v, [](double x) { return std::erf(x); });
  case OpKind::Sigmoid:
    return mapAll(v, [](double x) { return sigmoid(x); });
  case OpKind::Silu:
    return mapAll(v, [](double x) { return x * sigmoid(x); });
  case OpKind::Sin:
    return mapAll(v, [](double x) { return std::sin(x); });
  case OpKind::Cos:
    return mapAll(v, [](double x) { return std::cos(x); });
  case OpKind::Floor:
    return mapAll(v, [](double x) { return std::floor(x); });
  case OpKind::Ceil:
    return mapAll(v, [](double x) { return std::ceil(x); });
  case OpKind::Round: // ties to even: nearbyint in the default rounding mode
    return mapAll(v, [](double x) { return std::nearbyint(x); });
  case OpKind::Sign: // a zero keeps its sign bit, a NaN stays NaN
    return mapAll(v, [](double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : x; });
  case OpKind::Gelu: {
    bool tanhApprox = op.getString("approximate") == "tanh";
    return mapAll(v, [&](double x) { return gelu(x, tanhApprox); });
  }
  default:
    FUSEC_ASSERT(false, "not a unary float op");
  }
}

int64_t wrapNeg(int64_t x) { return int64_t(0 - uint64_t(x)); }

void applyUnaryInt(OpKind kind, std::vector<int64_t> &v) {
  for (int64_t &x : v) {
    if (kind == OpKind::Neg || (kind == OpKind::Abs && x < 0))
      x = wrapNeg(x);
    else if (kind == OpKind::Relu && x < 0)
      x = 0;
    else if (kind == OpKind::Sign)
      x = x > 0 ? 1 : x < 0 ? -1 : 0;
  }
}

/// The broadcast output shape of all operands, or an error naming them.
std::optional<Sizes> broadcastOperands(const OpContext &ctx) {
  std::vector<Sizes> shapes;
  for (unsigned i = 0; i < ctx.numOperands(); ++i)
    shapes.push_back(ctx.in(i).shape);
  std::optional<Sizes> out = broadcastSizes(shapes);
  if (!out)
    ctx.error("'" + std::string(ctx.op.name()) + "' operand shapes " + operandTypes(ctx) +
              " do not broadcast");
  return out;
}

/// out[i] = f(a[ia], b[ib]) over the broadcast shape.
template <typename T, typename R, typename F>
std::vector<R> zipBroadcast(const std::vector<T> &a, const Sizes &aShape, const std::vector<T> &b,
                            const Sizes &bShape, const Sizes &outShape, F f) {
  Sizes sa = broadcastStrides(aShape, outShape), sb = broadcastStrides(bShape, outShape);
  std::vector<R> out(size_t(product(outShape)));
  forEachStrided<2>(outShape, {&sa, &sb},
                    [&](int64_t i, const Offsets2 &at) { out[i] = f(a[at[0]], b[at[1]]); });
  return out;
}

/// max and min that propagate a NaN operand.
double floatMax(double a, double b) { return std::isnan(a) ? a : std::isnan(b) || a < b ? b : a; }
double floatMin(double a, double b) { return std::isnan(a) ? a : std::isnan(b) || b < a ? b : a; }

std::vector<double> binaryFloat(OpKind kind, const std::vector<double> &a, const Sizes &as,
                                const std::vector<double> &b, const Sizes &bs, const Sizes &os) {
  auto zip = [&](auto f) { return zipBroadcast<double, double>(a, as, b, bs, os, f); };
  switch (kind) {
  case OpKind::Add:
    return zip([](double x, double y) { return x + y; });
  case OpKind::Sub:
    return zip([](double x, double y) { return x - y; });
  case OpKind::Mul:
    return zip([](double x, double y) { return x * y; });
  case OpKind::Div:
    return zip([](double x, double y) { return x / y; });
  case OpKind::Pow:
    return zip([](double x, double y) { return std::pow(x, y); });
  case OpKind::Max:
    return zip([](double x, double y) { return floatMax(x, y); });
  case OpKind::Min:
    return zip([](double x, double y) { return floatMin(x, y); });
  default:
    FUSEC_ASSERT(false, "not a binary arithmetic op");
  }
}

/// x^y in wrapped int64; a negative y gives the integer part of the real
/// result. Sets `undefined` for 0^negative.
int64_t intPow(int64_t x, int64_t y, bool &undefined) {
  if (y < 0) {
    if (x == 0)
      undefined = true;
    if (x == 1 || x == -1)
      return x == 1 || (y & 1) == 0 ? 1 : -1;
    return 0;
  }
  uint64_t result = 1, base = uint64_t(x);
  for (uint64_t e = uint64_t(y); e; e >>= 1, base *= base)
    if (e & 1)
      result *= base;
  return int64_t(result);
}

/// Integer arithmetic; `problem` is set for a division by zero and friends.
std::vector<int64_t> binaryInt(OpKind kind, const std::vector<int64_t> &a, const Sizes &as,
                               const std::vector<int64_t> &b, const Sizes &bs, const Sizes &os,
                               std::string &problem) {
  auto zip = [&](auto f) { return zipBroadcast<int64_t, int64_t>(a, as, b, bs, os, f); };
  bool undefined = false;
  std::vector<int64_t> out;
  switch (kind) {
  case OpKind::Add:
    return zip([](int64_t x, int64_t y) { return int64_t(uint64_t(x) + uint64_t(y)); });
  case OpKind::Sub:
    return zip([](int64_t x, int64_t y) { return int64_t(uint64_t(x) - uint64_t(y)); });
  case OpKind::Mul:
    return zip([](int64_t x, int64_t y) { return int64_t(uint64_t(x) * uint64_t(y)); });
  case OpKind::Max:
    return zip([](int64_t x, int64_t y) { return std::max(x, y); });
  case OpKind::Min:
    return zip([](int64_t x, int64_t y) { return std::min(x, y); });
  case OpKind::Div:
    out = zip([&](int64_t x, int64_t y) -> int64_t {
      undefined |= y == 0;
      return y == 0 ? 0 : y == -1 ? wrapNeg(x) : x / y;
    });
    problem = undefined ? "integer division by zero" : "";
    return out;
  case OpKind::Pow:
    out = zip([&](int64_t x, int64_t y) { return intPow(x, y, undefined); });
    problem = undefined ? "integer zero raised to a negative power" : "";
    return out;
  default:
    FUSEC_ASSERT(false, "not a binary arithmetic op");
  }
}

template <typename T>
std::vector<uint8_t> compareAll(OpKind kind, const std::vector<T> &a, const Sizes &as,
                                const std::vector<T> &b, const Sizes &bs, const Sizes &os) {
  auto zip = [&](auto f) { return zipBroadcast<T, uint8_t>(a, as, b, bs, os, f); };
  switch (kind) {
  case OpKind::Eq:
    return zip([](T x, T y) { return uint8_t(x == y); });
  case OpKind::Ne:
    return zip([](T x, T y) { return uint8_t(x != y); });
  case OpKind::Lt:
    return zip([](T x, T y) { return uint8_t(x < y); });
  case OpKind::Le:
    return zip([](T x, T y) { return uint8_t(x <= y); });
  case OpKind::Gt:
    return zip([](T x, T y) { return uint8_t(x > y); });
  case OpKind::Ge:
    return zip([](T x, T y) { return uint8_t(x >= y); });
  default:
    FUSEC_ASSERT(false, "not a comparison");
  }
}

template <typename T>
void selectAs(const Tensor &cond, const Tensor &a, const Tensor &b, Tensor &out) {
  const Sizes &os = out.shape;
  Sizes sc = broadcastStrides(cond.shape, os), sa = broadcastStrides(a.shape, os),
        sb = broadcastStrides(b.shape, os);
  const uint8_t *c = cond.bytes.data(), *pa = a.bytes.data(), *pb = b.bytes.data();
  uint8_t *po = out.bytes.data();
  forEachStrided<3>(os, {&sc, &sa, &sb}, [&](int64_t i, const std::array<int64_t, 3> &at) {
    const uint8_t *from = c[at[0]] ? pa + at[1] * sizeof(T) : pb + at[2] * sizeof(T);
    std::memcpy(po + i * sizeof(T), from, sizeof(T));
  });
}

} // namespace

bool runUnary(const OpContext &ctx, Tensor &out) {
  const Tensor &x = ctx.in(0);
  if (!isFloat(x.dtype)) {
    std::vector<int64_t> v = toInt64s(x);
    applyUnaryInt(ctx.op.kind(), v);
    out = fromInt64s(x.dtype, x.shape, v);
    return true;
  }
  std::vector<double> v = x.toDoubles();
  applyUnaryFloat(ctx.op, v);
  out = Tensor::fromDoubles(x.dtype, x.shape, v);
  return true;
}

bool runCast(const OpContext &ctx, Tensor &out) {
  const Tensor &x = ctx.in(0);
  DType to = ctx.op.getDType("to");
  if (isFloat(x.dtype))
    out = Tensor::fromDoubles(to, x.shape, x.toDoubles());
  else
    out = fromInt64s(to, x.shape, toInt64s(x));
  return true;
}

bool runBinary(const OpContext &ctx, Tensor &out) {
  std::optional<Sizes> shape = broadcastOperands(ctx);
  if (!shape)
    return false;
  const Tensor &a = ctx.in(0), &b = ctx.in(1);
  if (isFloat(a.dtype)) {
    std::vector<double> r =
        binaryFloat(ctx.op.kind(), a.toDoubles(), a.shape, b.toDoubles(), b.shape, *shape);
    out = Tensor::fromDoubles(a.dtype, *shape, r);
    return true;
  }
  std::string problem;
  std::vector<int64_t> r =
      binaryInt(ctx.op.kind(), toInt64s(a), a.shape, toInt64s(b), b.shape, *shape, problem);
  if (!problem.empty())
    return ctx.error("'" + std::string(ctx.op.name()) + "' " + problem);
  out = fromInt64s(a.dtype, *shape, r);
  return true;
}

bool runCompare(const OpContext &ctx, Tensor &out) {
  std::optional<Sizes> shape = broadcastOperands(ctx);
  if (!shape)
    return false;
  const Tensor &a = ctx.in(0), &b = ctx.in(1);
  OpKind kind = ctx.op.kind();
  std::vector<uint8_t> r =
      isFloat(a.dtype) ? compareAll(kind, a.toDoubles(), a.shape, b.toDoubles(), b.shape, *shape)
                       : compareAll(kind, toInt64s(a), a.shape, toInt64s(b), b.shape, *shape);
  out = Tensor(DType::Bool, *shape);
  out.bytes = std::move(r);
  return true;
}

bool runWhere(const OpContext &ctx, Tensor &out) {
  std::optional<Sizes> shape = broadcastOperands(ctx);
  if (!shape)
    return false;
  const Tensor &cond = ctx.in(0), &a = ctx.in(1), &b = ctx.in(2);
  out = Tensor(a.dtype, *shape);
  switch (dtypeSize(a.dtype)) {
  case 1:
    selectAs<uint8_t>(cond, a, b, out);
    return true;
  case 2:
    selectAs<uint16_t>(cond, a, b, out);
    return true;
  case 4:
    selectAs<uint32_t>(cond, a, b, out);
    return true;
  case 8:
    selectAs<uint64_t>(cond, a, b, out);
    return true;
  }
  FUSEC_ASSERT(false, "unexpected element size");
}

} // namespace fusec::ref
