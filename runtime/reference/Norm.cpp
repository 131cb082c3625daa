// Reference kernels of the reductions, the normalization composites and the scans.
//
// Reductions walk the input once, adding each element into its output slot
// (the output's strides with 0 along reduced axes), in double for floats and
// wrapped int64 for integers and bool. Max and min propagate NaN. An empty
// extent gives sum 0 and mean NaN; max/min of one is a run-time error.
//
// The normalizations are computed as one formula in double from the stored
// inputs and rounded once: statistics by two passes (mean, then the biased
// variance of x − mean), exactly as docs/ir.md writes them.
//
// cumsum runs along each line of its axis in double (floats) or wrapped int64
// (integers) and rounds every running sum once on store. top_k sorts each
// line's (value, index) pairs in its total order (docs/ir.md): doubles for
// floats (exact for every float dtype), int64 for integers.
#include "ir/Assert.h"
#include "runtime/reference/Ops.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

namespace fusec::ref {

namespace {

using Offsets1 = std::array<int64_t, 1>;

/// Where each input element lands in a reduction's output.
struct ReduceLayout {
  Sizes outShape;     // as the result type has it (keepdims or not)
  Sizes outStrides;   // per input dim, 0 along reduced axes
  int64_t extent = 1; // elements per output slot
};

ReduceLayout reduceLayout(const OpContext &ctx) {
  const Sizes &shape = ctx.in(0).shape;
  std::vector<bool> reduced(shape.size(), ctx.op.getInts("axes").empty());
  for (int64_t axis : ctx.op.getInts("axes"))
    reduced[*normalizeAxis(axis, shape.size())] = true;
  bool keepdims = ctx.op.getBool("keepdims");
  ReduceLayout layout;
  Sizes kept(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    kept[d] = reduced[d] ? 1 : shape[d];
    layout.extent *= reduced[d] ? shape[d] : 1;
    if (!reduced[d] || keepdims)
      layout.outShape.push_back(kept[d]);
  }
  layout.outStrides = broadcastStrides(kept, shape);
  return layout;
}

template <typename T, typename F>
std::vector<T> accumulate(const std::vector<T> &x, const Sizes &shape, const ReduceLayout &layout,
                          T init, F combine) {
  std::vector<T> acc(size_t(product(layout.outShape)), init);
  forEachStrided<1>(shape, {&layout.outStrides},
                    [&](int64_t i, const Offsets1 &at) { acc[at[0]] = combine(acc[at[0]], x[i]); });
  return acc;
}

std::vector<double> reduceFloat(OpKind kind, const std::vector<double> &x, const Sizes &shape,
                                const ReduceLayout &layout) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  auto nanOr = [](double a, double b, bool takeB) { return std::isnan(a) ? a : takeB ? b : a; };
  switch (kind) {
  case OpKind::ReduceSum:
    return accumulate(x, shape, layout, 0.0, [](double a, double b) { return a + b; });
  case OpKind::ReduceProd:
    return accumulate(x, shape, layout, 1.0, [](double a, double b) { return a * b; });
  case OpKind::ReduceMean: {
    auto sums = accumulate(x, shape, layout, 0.0, [](double a, double b) { return a + b; });
    for (double &s : sums)
      s /= double(layout.extent); // 0/0 = NaN for an empty extent
    return sums;
  }
  case OpKind::ReduceMax:
    return accumulate(x, shape, layout, -inf,
                      [&](double a, double b) { return nanOr(a, b, !(b <= a)); });
  case OpKind::ReduceMin:
    return accumulate(x, shape, layout, inf,
                      [&](double a, double b) { return nanOr(a, b, !(b >= a)); });
#define FUSEC_CASES_Reduction(Id)
#include "ir/OpCases.def"
    break;
  }
  FUSEC_ASSERT(false, "not a reduction");
}

std::vector<int64_t> reduceInt(OpKind kind, const std::vector<int64_t> &x, const Sizes &shape,
                               const ReduceLayout &layout) {
  using Lim = std::numeric_limits<int64_t>;
  switch (kind) {
  case OpKind::ReduceSum:
    return accumulate(x, shape, layout, int64_t(0),
                      [](int64_t a, int64_t b) { return int64_t(uint64_t(a) + uint64_t(b)); });
  case OpKind::ReduceProd:
    return accumulate(x, shape, layout, int64_t(1),
                      [](int64_t a, int64_t b) { return int64_t(uint64_t(a) * uint64_t(b)); });
  case OpKind::ReduceMax:
    return accumulate(x, shape, layout, Lim::min(),
                      [](int64_t a, int64_t b) { return std::max(a, b); });
  case OpKind::ReduceMin:
    return accumulate(x, shape, layout, Lim::max(),
                      [](int64_t a, int64_t b) { return std::min(a, b); });
  case OpKind::ReduceMean: // of floats only (the verifier refuses an integer one)
#define FUSEC_CASES_Reduction(Id)
#include "ir/OpCases.def"
    break;
  }
  FUSEC_ASSERT(false, "not an integer reduction");
}

/// Checks that a parameter operand has exactly the shape `want`.
bool checkParamShape(const OpContext &ctx, unsigned i, const Sizes &want, const char *what) {
  if (ctx.in(i).shape == want)
    return true;
  return ctx.error("'" + std::string(ctx.op.name()) + "' " + what + " has shape " +
                   sizesStr(ctx.in(i).shape) + " but needs " + sizesStr(want) + " for input " +
                   ctx.in(0).typeStr());
}

/// Mean and biased variance of n values.
std::pair<double, double> meanVariance(const double *x, int64_t n) {
  double sum = 0, sq = 0;
  for (int64_t j = 0; j < n; ++j)
    sum += x[j];
  double mean = sum / double(n);
  for (int64_t j = 0; j < n; ++j)
    sq += (x[j] - mean) * (x[j] - mean);
  return {mean, sq / double(n)};
}

double meanSquare(const double *x, int64_t n) {
  double sq = 0;
  for (int64_t j = 0; j < n; ++j)
    sq += x[j] * x[j];
  return sq / double(n);
}

} // namespace

bool runReduce(const OpContext &ctx, Tensor &out) {
  const Tensor &x = ctx.in(0);
  OpKind kind = ctx.op.kind();
  ReduceLayout layout = reduceLayout(ctx);
  bool isMaxMin = kind == OpKind::ReduceMax || kind == OpKind::ReduceMin;
  if (isMaxMin && layout.extent == 0 && product(layout.outShape) > 0)
    return ctx.error("'" + std::string(ctx.op.name()) + "' of " + x.typeStr() +
                     " reduces an empty extent");
  if (isFloat(x.dtype))
    out = Tensor::fromDoubles(x.dtype, layout.outShape,
                              reduceFloat(kind, x.toDoubles(), x.shape, layout));
  else
    out = fromInt64s(x.dtype, layout.outShape, reduceInt(kind, toInt64s(x), x.shape, layout));
  return true;
}

bool runLayerNorm(const OpContext &ctx, Tensor &out) {
  const Tensor &x = ctx.in(0);
  size_t axis = *normalizeAxis(ctx.op.getInt("axis"), x.shape.size());
  Sizes normShape(x.shape.begin() + axis, x.shape.end());
  bool isRms = ctx.op.kind() == OpKind::RmsNorm;
  for (unsigned i = 1; i < ctx.numOperands(); ++i)
    if (!checkParamShape(ctx, i, normShape, i == 1 ? "gamma" : "beta"))
      return false;
  int64_t cols = product(normShape), rows = cols ? product(x.shape) / cols : 0;
  double eps = ctx.op.getFloat("epsilon");
  std::vector<double> v = x.toDoubles(), gamma, beta;
  if (ctx.numOperands() > 1)
    gamma = ctx.in(1).toDoubles();
  if (ctx.numOperands() > 2)
    beta = ctx.in(2).toDoubles();
  for (int64_t r = 0; r < rows; ++r) {
    double *row = v.data() + r * cols;
    auto [mean, var] = isRms ? std::pair(0.0, meanSquare(row, cols)) : meanVariance(row, cols);
    double denom = std::sqrt(var + eps);
    for (int64_t j = 0; j < cols; ++j) {
      double y = (row[j] - mean) / denom;
      row[j] = (gamma.empty() ? y : y * gamma[j]) + (beta.empty() ? 0.0 : beta[j]);
    }
  }
  out = Tensor::fromDoubles(x.dtype, x.shape, v);
  return true;
}

bool runSoftmax(const OpContext &ctx, Tensor &out) {
  const Tensor &x = ctx.in(0);
  size_t axis = *normalizeAxis(ctx.op.getInt("axis"), x.shape.size());
  int64_t n = x.shape[axis];
  int64_t inner = product(Sizes(x.shape.begin() + axis + 1, x.shape.end()));
  int64_t outer = product(Sizes(x.shape.begin(), x.shape.begin() + axis));
  std::vector<double> v = x.toDoubles();
  if (n == 0) // no lines: an empty axis (v.data() may be null, not to be offset)
    outer = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in)
      softmaxLine(v.data() + o * n * inner + in, n, inner);
  out = Tensor::fromDoubles(x.dtype, x.shape, v);
  return true;
}

bool runBatchNorm(const OpContext &ctx, Tensor &out) {
  const Tensor &x = ctx.in(0);
  size_t axis = ctx.op.operand(0)->type().layout == Layout::NHWC ? 3 : 1;
  int64_t channels = x.shape[axis];
  static const char *names[] = {"", "scale", "bias", "mean", "var"};
  for (unsigned i = 1; i < 5; ++i)
    if (!checkParamShape(ctx, i, {channels}, names[i]))
      return false;
  std::vector<double> scale = ctx.in(1).toDoubles(), bias = ctx.in(2).toDoubles(),
                      mean = ctx.in(3).toDoubles(), var = ctx.in(4).toDoubles();
  double eps = ctx.op.getFloat("epsilon");
  std::vector<double> denom(static_cast<size_t>(channels));
  for (int64_t c = 0; c < channels; ++c)
    denom[c] = std::sqrt(var[c] + eps);
  int64_t inner = product(Sizes(x.shape.begin() + axis + 1, x.shape.end()));
  std::vector<double> v = x.toDoubles();
  for (size_t i = 0; i < v.size(); ++i) {
    size_t c = (i / size_t(inner)) % size_t(channels);
    v[i] = (v[i] - mean[c]) / denom[c] * scale[c] + bias[c];
  }
  out = Tensor::fromDoubles(x.dtype, x.shape, v);
  return true;
}

namespace {

/// The running sums of the n elements v[0], v[stride], ...: inclusive or exclusive, from the
/// front or the back; T is double (floats) or int64 wrapped through uint64 (integers).
template <typename T> void scanLine(T *v, int64_t n, int64_t stride, bool exclusive, bool reverse) {
  T sum = 0;
  for (int64_t t = 0; t < n; ++t) {
    T &x = v[(reverse ? n - 1 - t : t) * stride];
    T next;
    if constexpr (std::is_same_v<T, double>)
      next = sum + x;
    else
      next = T(uint64_t(sum) + uint64_t(x));
    x = exclusive ? sum : next;
    sum = next;
  }
}

template <typename T>
void scanAll(std::vector<T> &v, const Sizes &shape, size_t axis, bool exclusive, bool reverse) {
  int64_t n = shape[axis];
  int64_t inner = product(Sizes(shape.begin() + axis + 1, shape.end()));
  int64_t outer = n == 0 ? 0 : product(Sizes(shape.begin(), shape.begin() + axis));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; ++j)
      scanLine(v.data() + o * n * inner + j, n, inner, exclusive, reverse);
}

} // namespace

bool runCumSum(const OpContext &ctx, Tensor &out) {
  const Tensor &x = ctx.in(0);
  size_t axis = *normalizeAxis(ctx.op.getInt("axis"), x.shape.size());
  bool exclusive = ctx.op.getBool("exclusive"), reverse = ctx.op.getBool("reverse");
  if (isFloat(x.dtype)) {
    std::vector<double> v = x.toDoubles();
    scanAll(v, x.shape, axis, exclusive, reverse);
    out = Tensor::fromDoubles(x.dtype, x.shape, v);
    return true;
  }
  std::vector<int64_t> v = toInt64s(x);
  scanAll(v, x.shape, axis, exclusive, reverse);
  out = fromInt64s(x.dtype, x.shape, v);
  return true;
}

namespace {

/// The indices of the k best elements of each line along `axis`, best first: `first(a, b)` says
/// whether value a ranks above value b; equal values keep index order.
template <typename T, typename F>
std::vector<int64_t> topKAll(const std::vector<T> &v, const Sizes &shape, size_t axis, int64_t k,
                             F first) {
  int64_t n = shape[axis];
  int64_t inner = product(Sizes(shape.begin() + axis + 1, shape.end()));
  int64_t outer = n == 0 ? 0 : product(Sizes(shape.begin(), shape.begin() + axis));
  std::vector<int64_t> out(size_t(outer * k * inner));
  std::vector<int64_t> line(static_cast<size_t>(n));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; ++j) {
      const T *x = v.data() + o * n * inner + j;
      for (int64_t t = 0; t < n; ++t)
        line[size_t(t)] = t;
      std::partial_sort(line.begin(), line.begin() + k, line.end(), [&](int64_t a, int64_t b) {
        if (first(x[a * inner], x[b * inner]))
          return true;
        return !first(x[b * inner], x[a * inner]) && a < b;
      });
      for (int64_t t = 0; t < k; ++t)
        out[size_t((o * k + t) * inner + j)] = line[size_t(t)];
    }
  return out;
}

} // namespace

bool runTopK(const OpContext &ctx, Tensor &out) {
  const Tensor &x = ctx.in(0);
  size_t axis = *normalizeAxis(ctx.op.getInt("axis"), x.shape.size());
  int64_t k = ctx.op.getInt("k");
  bool largest = ctx.op.getBool("largest");
  if (k > x.shape[axis])
    return ctx.error("'top_k' k " + std::to_string(k) + " is larger than axis " +
                     std::to_string(axis) + " of " + x.typeStr());
  Sizes shape = x.shape;
  shape[axis] = k;
  std::vector<int64_t> indices;
  if (isFloat(x.dtype)) {
    // NaN ranks above every number (two NaNs are equal).
    auto above = [](double a, double b) { return std::isnan(a) ? !std::isnan(b) : a > b; };
    auto below = [&](double a, double b) { return above(b, a); };
    indices = largest ? topKAll(x.toDoubles(), x.shape, axis, k, above)
                      : topKAll(x.toDoubles(), x.shape, axis, k, below);
  } else {
    auto above = [](int64_t a, int64_t b) { return a > b; };
    auto below = [](int64_t a, int64_t b) { return a < b; };
    indices = largest ? topKAll(toInt64s(x), x.shape, axis, k, above)
                      : topKAll(toInt64s(x), x.shape, axis, k, below);
  }
  out = fromInt64s(DType::I64, shape, indices);
  return true;
}

} // namespace fusec::ref
