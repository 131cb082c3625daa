// Inference for the movement ops (reshape, transpose, slice, concat,
// broadcast, gather, gather_elements), per docs/ir.md. All produce untagged
// results except a transpose between the two layouts, which carries the tag
// across, a concat, which keeps its operands' tag, and a gather by a 1-D
// index, which keeps its data's.
//
// Reshape's element-count check is symbolic: a shape's count is a multiset of
// named dims times a static product, and two counts are equal when both parts
// are. A `?` on either side makes the count unknown, so the check is left to
// run time. A `-1` becomes the quotient of the counts when it is expressible
// as one dim (a static size, or a single leftover name); otherwise `?`.
#include "ir/ShapeInferenceUtil.h"

#include <algorithm>
#include <limits>

namespace fusec {

namespace {
/// A shape's element count: the product of `names` times `product`.
struct ElementCount {
  std::vector<std::string> names; // sorted
  std::optional<int64_t> product = 1;
  bool anonymous = false; // a `?` makes the count unknown until run time
};
} // namespace

// The count of `shape`, leaving out a reshape's -1.
static ElementCount countElements(const Shape &shape) {
  ElementCount c;
  for (const Dim &d : shape) {
    if (d.isAnonymous())
      c.anonymous = true;
    else if (!d.isStatic())
      c.names.push_back(d.symbol);
    else if (d.size != -1 && c.product)
      c.product = checkedMul(*c.product, d.size);
  }
  std::sort(c.names.begin(), c.names.end());
  return c;
}

// The dim a -1 stands for, turning count `out` into count `in`; nullopt when
// no dim can (a name of `out` missing from `in`, or a static remainder).
static std::optional<Dim> solveMinusOne(const ElementCount &in, const ElementCount &out) {
  if (in.anonymous || out.anonymous)
    return Dim::anonymous();
  std::vector<std::string> leftover;
  if (!std::includes(in.names.begin(), in.names.end(), out.names.begin(), out.names.end()))
    return std::nullopt;
  std::set_difference(in.names.begin(), in.names.end(), out.names.begin(), out.names.end(),
                      std::back_inserter(leftover));
  int64_t num = *in.product, den = *out.product;
  if (den == 0 || (leftover.empty() && num % den != 0))
    return std::nullopt;
  if (num == 0 || leftover.empty())
    return Dim::fixed(num / den);
  if (leftover.size() == 1 && num == den)
    return Dim::named(leftover.front());
  return Dim::anonymous(); // e.g. [batch,seq,8] -> [-1,8]: batch*seq is no single dim
}

// The target's -1, if any: its index, or reports a malformed target.
static bool findMinusOne(const Infer &in, const Shape &target, std::optional<size_t> &minusOne) {
  for (size_t i = 0; i < target.size(); ++i) {
    if (!target[i].isStatic() || target[i].size >= 0)
      continue;
    if (target[i].size != -1)
      return in.fail("shape " + shapeStr(target) + " has a negative dim");
    if (minusOne)
      return in.fail("shape " + shapeStr(target) + " has more than one -1");
    minusOne = i;
  }
  return true;
}

bool inferReshape(const InferContext &ctx, std::vector<TensorType> &results, const ErrorFn &error) {
  Infer in(ctx, results, error);
  const TensorType &x = in.operand(0);
  Shape target = ctx.attr("shape").get<Shape>();
  std::optional<size_t> minusOne;
  if (!findMinusOne(in, target, minusOne))
    return false;
  ElementCount have = countElements(x.shape), want = countElements(target);
  if (!have.product || !want.product)
    return in.fail("element count of " + x.str() + " or " + shapeStr(target) + " overflows");
  if (minusOne) {
    std::optional<Dim> d = solveMinusOne(have, want);
    if (!d)
      return in.fail("cannot infer the -1 of " + shapeStr(target) + " from " + x.str());
    target[*minusOne] = *d;
  } else if (!have.anonymous && !want.anonymous &&
             (have.names != want.names || have.product != want.product)) {
    return in.fail("element counts of " + x.str() + " and " + shapeStr(target) + " differ");
  }
  return in.produce(TensorType{x.dtype, std::move(target), Layout::None});
}

static bool isPermutation(const std::vector<int64_t> &perm, size_t rank) {
  if (perm.size() != rank)
    return false;
  std::vector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= int64_t(rank) || seen[p])
      return false;
    seen[p] = true;
  }
  return true;
}

// The tag of a transposed tensor: {nchw} by [0, 2, 3, 1] is the same data
// in NHWC, {nhwc} by [0, 3, 1, 2] the same data in NCHW; any other
// transpose gives dims that no layout names.
static Layout transposedLayout(Layout from, const std::vector<int64_t> &perm) {
  if (from == Layout::NCHW && perm == std::vector<int64_t>{0, 2, 3, 1})
    return Layout::NHWC;
  if (from == Layout::NHWC && perm == std::vector<int64_t>{0, 3, 1, 2})
    return Layout::NCHW;
  return Layout::None;
}

bool inferTranspose(const InferContext &ctx, std::vector<TensorType> &results,
                    const ErrorFn &error) {
  Infer in(ctx, results, error);
  const TensorType &x = in.operand(0);
  const std::vector<int64_t> &perm = ctx.getInts("perm");
  if (!isPermutation(perm, x.rank()))
    return in.fail("perm " + intList(perm) + " is not a permutation of the dims of " + x.str());
  Shape shape;
  for (int64_t p : perm)
    shape.push_back(x.shape[p]);
  return in.produce(TensorType{x.dtype, std::move(shape), transposedLayout(x.layout, perm)});
}

// Python's slice length for a dim of static size n: bounds count from the
// end when negative, then clamp to [0, n].
static int64_t sliceLength(int64_t n, int64_t start, int64_t end, int64_t step) {
  int64_t s = sliceBound(start, n), e = sliceBound(end, n);
  if (e <= s)
    return 0;
  return (e - s) / step + ((e - s) % step != 0);
}

bool inferSlice(const InferContext &ctx, std::vector<TensorType> &results, const ErrorFn &error) {
  Infer in(ctx, results, error);
  TensorType x = in.operand(0);
  std::optional<unsigned> axis = resolveAxis(in, ctx.getInt("axis"), x);
  if (!axis)
    return false;
  int64_t start = ctx.getInt("start"), end = ctx.getInt("end"), step = ctx.getInt("step");
  if (step < 1)
    return in.fail("step must be at least 1, got " + std::to_string(step));
  Dim &d = x.shape[*axis];
  if (d.isStatic())
    d.size = sliceLength(d.size, start, end, step);
  else if (!(start == 0 && step == 1 && end == std::numeric_limits<int64_t>::max()))
    d = Dim::anonymous(); // a symbolic dim keeps its name only when sliced whole
  x.layout = Layout::None;
  return in.produce(std::move(x));
}

// The concatenated extent along the axis: a static sum, else `?`.
static std::optional<Dim> concatExtent(std::span<const TensorType> types, unsigned axis) {
  if (types.size() == 1)
    return types.front().shape[axis];
  std::optional<int64_t> sum = 0;
  for (const TensorType &t : types) {
    if (!t.shape[axis].isStatic())
      return Dim::anonymous();
    sum = checkedAdd(*sum, t.shape[axis].size);
    if (!sum)
      return std::nullopt;
  }
  return Dim::fixed(*sum);
}

bool inferConcat(const InferContext &ctx, std::vector<TensorType> &results, const ErrorFn &error) {
  Infer in(ctx, results, error);
  std::span<const TensorType> types = in.operands();
  if (!requireOneDType(in, types))
    return false;
  TensorType out = types.front();
  for (const TensorType &t : types)
    if (t.rank() != out.rank())
      return in.fail("operands must have one rank, got " + typeList(types));
  std::optional<unsigned> axis = resolveAxis(in, ctx.getInt("axis"), out);
  if (!axis)
    return false;
  for (const TensorType &t : types.subspan(1)) {
    for (size_t i = 0; i < out.rank(); ++i) {
      if (i == *axis || dimsAgree(out.shape[i], t.shape[i]))
        continue;
      return in.fail("dim " + std::to_string(i) + " of " + out.str() + " and " + t.str() +
                     " differ (" + out.shape[i].str() + " vs " + t.shape[i].str() + ")");
    }
    for (size_t i = 0; i < out.rank(); ++i)
      if (out.shape[i].isAnonymous()) // `?` agrees with anything: the other dim wins
        out.shape[i] = t.shape[i];
  }
  std::optional<Dim> extent = concatExtent(types, *axis);
  if (!extent)
    return in.fail("concatenated dim " + std::to_string(*axis) + " of " + typeList(types) +
                   " overflows");
  out.shape[*axis] = *extent;
  // Joined along any axis, tensors of one layout keep it (docs/ir.md).
  std::optional<Layout> layout = mergeLayouts(in, types, out.rank());
  if (!layout)
    return false;
  out.layout = *layout;
  return in.produce(std::move(out));
}

bool inferBroadcast(const InferContext &ctx, std::vector<TensorType> &results,
                    const ErrorFn &error) {
  Infer in(ctx, results, error);
  const TensorType &x = in.operand(0);
  const Shape &target = ctx.attr("shape").get<Shape>();
  for (const Dim &d : target)
    if (d.isStatic() && d.size < 0)
      return in.fail("shape " + shapeStr(target) + " has a negative dim");
  std::optional<Shape> shape = broadcastTo(x.shape, target);
  if (!shape)
    return in.fail("cannot broadcast " + x.str() + " to " + shapeStr(target));
  return in.produce(TensorType{x.dtype, std::move(*shape), Layout::None});
}

// data.shape[:axis] + indices.shape + data.shape[axis+1:]. Indices into an
// axis known to be empty are refused here (no index is in range); the
// values of the others are the reference's to check.
bool inferGather(const InferContext &ctx, std::vector<TensorType> &results, const ErrorFn &error) {
  Infer in(ctx, results, error);
  const TensorType &data = in.operand(0), &indices = in.operand(1);
  if (indices.dtype != DType::I32 && indices.dtype != DType::I64)
    return in.fail("indices must be i32 or i64, got " + indices.str());
  std::optional<unsigned> axis = resolveAxis(in, ctx.getInt("axis"), data);
  if (!axis)
    return false;
  bool someIndex = std::none_of(indices.shape.begin(), indices.shape.end(),
                                [](const Dim &d) { return d.isStaticValue(0); });
  if (data.shape[*axis].isStaticValue(0) && isStatic(indices.shape) && someIndex)
    return in.fail("indices " + indices.str() + " index axis " + std::to_string(*axis) + " of " +
                   data.str() + ", which is empty");
  Shape shape(data.shape.begin(), data.shape.begin() + *axis);
  shape.insert(shape.end(), indices.shape.begin(), indices.shape.end());
  shape.insert(shape.end(), data.shape.begin() + *axis + 1, data.shape.end());
  // Rows picked by a 1-D index keep the data's axes, and so its layout.
  Layout layout = indices.rank() == 1 ? data.layout : Layout::None;
  return in.produce(TensorType{data.dtype, std::move(shape), layout});
}

// The indices' shape and the data's dtype. Data and indices have one rank;
// along every axis but `axis` the indices' dim must not exceed the data's
// (checked when both are static; the reference checks the rest). As for
// gather, indices into an axis known to be empty are refused.
bool inferGatherElements(const InferContext &ctx, std::vector<TensorType> &results,
                         const ErrorFn &error) {
  Infer in(ctx, results, error);
  const TensorType &data = in.operand(0), &indices = in.operand(1);
  if (indices.dtype != DType::I32 && indices.dtype != DType::I64)
    return in.fail("indices must be i32 or i64, got " + indices.str());
  if (indices.rank() != data.rank())
    return in.fail("indices " + indices.str() + " must have the rank of data " + data.str());
  std::optional<unsigned> axis = resolveAxis(in, ctx.getInt("axis"), data);
  if (!axis)
    return false;
  for (unsigned a = 0; a < data.rank(); ++a) {
    const Dim &d = data.shape[a], &i = indices.shape[a];
    if (a != *axis && d.isStatic() && i.isStatic() && i.size > d.size)
      return in.fail("indices " + indices.str() + " are longer than data " + data.str() +
                     " along axis " + std::to_string(a));
  }
  bool someIndex = std::none_of(indices.shape.begin(), indices.shape.end(),
                                [](const Dim &d) { return d.isStaticValue(0); });
  if (data.shape[*axis].isStaticValue(0) && isStatic(indices.shape) && someIndex)
    return in.fail("indices " + indices.str() + " index axis " + std::to_string(*axis) + " of " +
                   data.str() + ", which is empty");
  return in.produce(TensorType{data.dtype, indices.shape, Layout::None});
}

} // namespace fusec
