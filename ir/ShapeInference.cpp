// Inference for constants, pointwise ops, reductions, normalizations and scans, per
// docs/ir.md. Movement ops are in ShapeInferenceMovement.cpp; contractions
// and windowed ops in ShapeInferenceContraction.cpp.
//
// Layout tags (docs/ir.md "Layout tags"): pointwise ops, casts and
// normalizations keep their input's tag. Among several operands the tagged
// ones must agree; untagged operands (a [C,1,1] bias, a scalar) are
// compatible with any tag, and the tag is dropped when broadcasting makes the
// result a rank other than 4. Reductions produce untagged results.
//
// Dtypes: arithmetic (neg, abs, relu, add..min, reductions) rejects bool;
// reduce_mean, the float math ops and the normalizations need a float.
#include "ir/ShapeInferenceUtil.h"

#include <cmath>
#include <sstream>

namespace fusec {

bool inferConst(const InferContext &ctx, std::vector<TensorType> &results, const ErrorFn &error) {
  Infer in(ctx, results, error);
  const DenseRef &data = ctx.attr("value").get<DenseRef>();
  if (!data)
    return in.fail("value has no data");
  std::optional<int64_t> bytes = dtypeSize(data->dtype);
  for (int64_t n : data->shape) {
    if (n < 0)
      return in.fail("value shape " + intList(data->shape) + " has a negative dim");
    bytes = checkedMul(*bytes, n);
    if (!bytes)
      return in.fail("value shape " + intList(data->shape) + " has too many elements");
  }
  TensorType type{data->dtype, staticShape(data->shape), Layout::None};
  // A splat holds one element (Note [Splat constants]).
  uint64_t held = data->storedBytes().size();
  uint64_t expected = data->isSplatForm() ? dtypeSize(data->dtype) : uint64_t(*bytes);
  if (held != expected)
    return in.fail("value holds " + std::to_string(held) + " bytes, expected " +
                   std::to_string(expected) + " for " + type.str());
  return in.produce(type);
}

//===--- Pointwise ----------------------------------------------------------===//

// The broadcast of all operands' shapes, reporting a mismatch with all types.
static std::optional<Shape> broadcastAll(const Infer &in, std::span<const TensorType> types) {
  Shape shape = types.front().shape;
  for (const TensorType &t : types.subspan(1)) {
    std::optional<Shape> s = broadcastShapes(shape, t.shape);
    if (!s) {
      in.fail("operand shapes " + typeList(types) + " do not broadcast");
      return std::nullopt;
    }
    shape = std::move(*s);
  }
  return shape;
}

// The common tail of the broadcasting ops: shape, tag and a result dtype.
static bool producePointwise(Infer &in, std::span<const TensorType> types, DType dtype) {
  std::optional<Shape> shape = broadcastAll(in, types);
  if (!shape)
    return false;
  std::optional<Layout> layout = mergeLayouts(in, types, shape->size());
  if (!layout)
    return false;
  return in.produce(TensorType{dtype, std::move(*shape), *layout});
}

bool inferUnary(const InferContext &ctx, std::vector<TensorType> &results, const ErrorFn &error) {
  Infer in(ctx, results, error);
  return requireNumeric(in, in.operands()) && in.produce(in.operand(0));
}

bool inferUnaryFloat(const InferContext &ctx, std::vector<TensorType> &results,
                     const ErrorFn &error) {
  Infer in(ctx, results, error);
  return requireFloat(in, in.operands()) && in.produce(in.operand(0));
}

bool inferGelu(const InferContext &ctx, std::vector<TensorType> &results, const ErrorFn &error) {
  Infer in(ctx, results, error);
  if (!requireFloat(in, in.operands()))
    return false;
  const std::string &approximate = ctx.getString("approximate");
  if (approximate != "none" && approximate != "tanh")
    return in.fail("attribute 'approximate' must be \"none\" or \"tanh\", got \"" + approximate +
                   "\"");
  return in.produce(in.operand(0));
}

bool inferCast(const InferContext &ctx, std::vector<TensorType> &results, const ErrorFn &error) {
  Infer in(ctx, results, error);
  TensorType t = in.operand(0);
  t.dtype = ctx.attr("to").get<DType>();
  return in.produce(std::move(t));
}

bool inferBinary(const InferContext &ctx, std::vector<TensorType> &results, const ErrorFn &error) {
  Infer in(ctx, results, error);
  if (!requireOneDType(in, in.operands()) || !requireNumeric(in, in.operands()))
    return false;
  return producePointwise(in, in.operands(), in.operand(0).dtype);
}

bool inferCompare(const InferContext &ctx, std::vector<TensorType> &results, const ErrorFn &error) {
  Infer in(ctx, results, error);
  if (!requireOneDType(in, in.operands()))
    return false;
  return producePointwise(in, in.operands(), DType::Bool);
}

bool inferWhere(const InferContext &ctx, std::vector<TensorType> &results, const ErrorFn &error) {
  Infer in(ctx, results, error);
  const TensorType &cond = in.operand(0);
  if (cond.dtype != DType::Bool)
    return in.fail("condition must be bool, got " + cond.str());
  if (!requireOneDType(in, in.operands().subspan(1)))
    return false;
  return producePointwise(in, in.operands(), in.operand(1).dtype);
}

//===--- Reductions ---------------------------------------------------------===//

// Which axes of `x` the op reduces, normalized: all when `axes` is empty.
static std::optional<std::vector<bool>> reducedAxes(const Infer &in, const TensorType &x) {
  const std::vector<int64_t> &axes = in.ctx.getInts("axes");
  std::vector<bool> reduced(x.rank(), axes.empty());
  for (int64_t axis : axes) {
    std::optional<unsigned> a = resolveAxis(in, axis, x);
    if (!a)
      return std::nullopt;
    if (reduced[*a]) {
      in.fail("axes " + intList(axes) + " repeat axis " + std::to_string(*a) + " of " + x.str());
      return std::nullopt;
    }
    reduced[*a] = true;
  }
  return reduced;
}

bool inferReduce(const InferContext &ctx, std::vector<TensorType> &results, const ErrorFn &error) {
  Infer in(ctx, results, error);
  const TensorType &x = in.operand(0);
  bool ok = ctx.kind == OpKind::ReduceMean ? requireFloat(in, in.operands())
                                           : requireNumeric(in, in.operands());
  if (!ok)
    return false;
  std::optional<std::vector<bool>> reduced = reducedAxes(in, x);
  if (!reduced)
    return false;
  bool keepdims = ctx.getBool("keepdims");
  Shape shape;
  for (size_t i = 0; i < x.rank(); ++i) {
    if (!(*reduced)[i])
      shape.push_back(x.shape[i]);
    else if (keepdims)
      shape.push_back(Dim::fixed(1));
  }
  return in.produce(TensorType{x.dtype, std::move(shape), Layout::None});
}

//===--- Normalizations -----------------------------------------------------===//

// The checks every normalization starts with: float operands of one dtype.
static bool requireFloatOperands(const Infer &in) {
  return requireOneDType(in, in.operands()) && requireFloat(in, in.operands());
}

/// epsilon is a finite number >= 0 (a NaN or negative one gives NaN rows).
static bool requireEpsilon(const Infer &in, const InferContext &ctx) {
  double eps = ctx.getFloat("epsilon");
  if (std::isfinite(eps) && eps >= 0)
    return true;
  std::ostringstream os;
  os << eps;
  return in.fail("epsilon must be a finite number >= 0, got " + os.str());
}

// layer_norm(x, gamma?, beta?) and rms_norm(x, gamma?): the parameters have
// the shape of the normalized dims x.shape[axis:].
bool inferLayerNorm(const InferContext &ctx, std::vector<TensorType> &results,
                    const ErrorFn &error) {
  Infer in(ctx, results, error);
  const TensorType &x = in.operand(0);
  if (!requireFloatOperands(in) || !requireEpsilon(in, ctx))
    return false;
  std::optional<unsigned> axis = resolveAxis(in, ctx.getInt("axis"), x);
  if (!axis)
    return false;
  Shape normalized(x.shape.begin() + *axis, x.shape.end());
  static constexpr std::string_view kRoles[] = {"x", "gamma", "beta"};
  for (size_t i = 1; i < in.numOperands(); ++i)
    if (!requireParamShape(in, kRoles[i], in.operand(i), normalized, "normalized dims", x))
      return false;
  return in.produce(x);
}

bool inferSoftmax(const InferContext &ctx, std::vector<TensorType> &results, const ErrorFn &error) {
  Infer in(ctx, results, error);
  if (!requireFloatOperands(in) || !resolveAxis(in, ctx.getInt("axis"), in.operand(0)))
    return false;
  return in.produce(in.operand(0));
}

// batch_norm(x, scale, bias, mean, var): parameters are [C], C the channel
// axis given by the layout (3 for nhwc, else 1).
bool inferBatchNorm(const InferContext &ctx, std::vector<TensorType> &results,
                    const ErrorFn &error) {
  Infer in(ctx, results, error);
  const TensorType &x = in.operand(0);
  if (!requireFloatOperands(in) || !requireEpsilon(in, ctx))
    return false;
  if (x.rank() < 2)
    return in.fail("needs an input of rank >= 2, got " + x.str());
  Shape channels{x.shape[x.layout == Layout::NHWC ? 3 : 1]};
  static constexpr std::string_view kRoles[] = {"x", "scale", "bias", "mean", "var"};
  for (size_t i = 1; i < in.numOperands(); ++i)
    if (!requireParamShape(in, kRoles[i], in.operand(i), channels, "channels", x))
      return false;
  return in.produce(x);
}

//===--- Scans --------------------------------------------------------------===//

bool inferScan(const InferContext &ctx, std::vector<TensorType> &results, const ErrorFn &error) {
  Infer in(ctx, results, error);
  TensorType x = in.operand(0);
  if (!requireNumeric(in, in.operands()) || !resolveAxis(in, ctx.getInt("axis"), x))
    return false;
  x.layout = Layout::None;
  return in.produce(std::move(x));
}

// The input's shape with the axis's dim replaced by k, i64, untagged. k >= 1, and at most the
// axis's extent when that is static (the reference checks a symbolic one).
bool inferTopK(const InferContext &ctx, std::vector<TensorType> &results, const ErrorFn &error) {
  Infer in(ctx, results, error);
  TensorType x = in.operand(0);
  if (!requireNumeric(in, in.operands()))
    return false;
  std::optional<unsigned> axis = resolveAxis(in, ctx.getInt("axis"), x);
  if (!axis)
    return false;
  int64_t k = ctx.getInt("k");
  if (k < 1)
    return in.fail("k must be at least 1, got " + std::to_string(k));
  const Dim &d = x.shape[*axis];
  if (d.isStatic() && k > d.size)
    return in.fail("k " + std::to_string(k) + " is larger than axis " + std::to_string(*axis) +
                   " of " + x.str());
  x.shape[*axis] = Dim::fixed(k);
  return in.produce(TensorType{DType::I64, std::move(x.shape), Layout::None});
}

} // namespace fusec
