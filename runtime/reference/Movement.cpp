// Reference kernels of `const` and the movement ops. They copy element bytes
// (so every dtype moves exactly) through one strided gather: transpose
// permutes the input's strides, slice offsets and scales one of them,
// broadcast zeroes the broadcast ones. gather copies rows of `inner` elements
// picked by its indices, each of which must lie in [-d, d) for the axis's d;
// gather_elements copies one element per index, under the same rule.
//
// Target shapes written in attributes (reshape, broadcast) may name symbolic
// dims; those are looked up in the run's bindings. A dim that is neither
// static nor bound (`?`, -1, or a name nothing bound yet) is inferred: for
// reshape from the element count (at most one such dim), for broadcast from
// the input's dim at the same position.
#include "ir/Assert.h"
#include "runtime/reference/Ops.h"

#include <algorithm>
#include <cstring>

namespace fusec::ref {

namespace {

std::string opPrefix(const OpContext &ctx) { return "'" + std::string(ctx.op.name()) + "' "; }

/// A target-shape dim's size, or nullopt when it is to be inferred.
std::optional<int64_t> targetDim(const Dim &d, const DimBindings &bindings) {
  if (d.isStatic())
    return d.size >= 0 ? std::optional<int64_t>(d.size) : std::nullopt;
  auto it = bindings.find(d.symbol);
  return it == bindings.end() ? std::nullopt : std::optional<int64_t>(it->second);
}

} // namespace

bool runConst(const OpContext &ctx, Tensor &out) {
  const DenseData &data = ctx.op.getDense("value");
  out.dtype = data.dtype;
  out.shape = data.shape;
  out.bytes = data.expandedBytes(); // a kernel needs the elements (Note [Splat constants])
  return true;
}

bool runReshape(const OpContext &ctx, Tensor &out) {
  const Tensor &x = ctx.in(0);
  const Shape &target = ctx.op.getShape("shape");
  Sizes sizes;
  std::optional<size_t> unknown;
  int64_t known = 1;
  for (size_t d = 0; d < target.size(); ++d) {
    std::optional<int64_t> size = targetDim(target[d], ctx.bindings);
    if (!size && unknown)
      return ctx.error(opPrefix(ctx) + "target " + shapeStr(target) +
                       " leaves more than one dim to infer at run time");
    if (!size)
      unknown = d;
    sizes.push_back(size.value_or(1));
    if (__builtin_mul_overflow(known, sizes.back(), &known))
      return ctx.error(opPrefix(ctx) + "target " + shapeStr(target) + " is too large");
  }
  int64_t count = int64_t(x.numElements());
  if (unknown && known != 0 && count % known == 0)
    sizes[*unknown] = count / known;
  if ((unknown ? sizes[*unknown] * known : known) != count)
    return ctx.error(opPrefix(ctx) + "cannot reshape " + x.typeStr() + " to " + shapeStr(target));
  out.dtype = x.dtype;
  out.shape = sizes;
  out.bytes = x.bytes;
  return true;
}

bool runTranspose(const OpContext &ctx, Tensor &out) {
  const Tensor &x = ctx.in(0);
  Sizes own = contiguousStrides(x.shape), shape, strides;
  for (int64_t p : ctx.op.getInts("perm")) {
    shape.push_back(x.shape[size_t(p)]);
    strides.push_back(own[size_t(p)]);
  }
  out = gatherElements(x, shape, strides);
  return true;
}

bool runSlice(const OpContext &ctx, Tensor &out) {
  const Tensor &x = ctx.in(0);
  size_t axis = *normalizeAxis(ctx.op.getInt("axis"), x.shape.size());
  int64_t dim = x.shape[axis], step = ctx.op.getInt("step");
  FUSEC_ASSERT(step >= 1, "the verifier rejects slice steps below 1");
  int64_t start = sliceBound(ctx.op.getInt("start"), dim);
  int64_t end = sliceBound(ctx.op.getInt("end"), dim);
  int64_t count = end > start ? (end - start - 1) / step + 1 : 0;
  Sizes strides = contiguousStrides(x.shape), shape = x.shape;
  int64_t base = start * strides[axis];
  strides[axis] *= step;
  shape[axis] = count;
  out = gatherElements(x, shape, strides, base);
  return true;
}

bool runConcat(const OpContext &ctx, Tensor &out) {
  const Tensor &first = ctx.in(0);
  size_t axis = *normalizeAxis(ctx.op.getInt("axis"), first.shape.size());
  Sizes others = first.shape, shape = first.shape;
  others[axis] = shape[axis] = 0;
  for (unsigned i = 0; i < ctx.numOperands(); ++i) {
    Sizes s = ctx.in(i).shape;
    if (__builtin_add_overflow(shape[axis], s[axis], &shape[axis]))
      return ctx.error(opPrefix(ctx) + "extent along axis " + std::to_string(axis) + " of " +
                       operandTypes(ctx) + " overflows");
    s[axis] = 0;
    if (s != others)
      return ctx.error(opPrefix(ctx) + "operand shapes " + operandTypes(ctx) +
                       " differ outside axis " + std::to_string(axis));
  }
  int64_t outer = product(Sizes(shape.begin(), shape.begin() + axis));
  int64_t inner = product(Sizes(shape.begin() + axis + 1, shape.end()));
  out = Tensor(first.dtype, shape);
  uint8_t *dst = out.bytes.data();
  for (int64_t o = 0; o < outer; ++o) {
    for (const Tensor *t : ctx.operands) {
      size_t chunk = size_t(t->shape[axis] * inner) * dtypeSize(t->dtype);
      if (chunk > 0)
        std::memcpy(dst, t->bytes.data() + size_t(o) * chunk, chunk);
      dst += chunk;
    }
  }
  return true;
}

bool runBroadcast(const OpContext &ctx, Tensor &out) {
  const Tensor &x = ctx.in(0);
  const Shape &target = ctx.op.getShape("shape");
  size_t lead = target.size() - std::min(target.size(), x.shape.size());
  Sizes sizes;
  for (size_t d = 0; d < target.size(); ++d) {
    std::optional<int64_t> size = targetDim(target[d], ctx.bindings);
    if (!size && d < lead)
      return ctx.error(opPrefix(ctx) + "cannot infer dim " + std::to_string(d) + " of target " +
                       shapeStr(target) + " from " + x.typeStr());
    sizes.push_back(size ? *size : x.shape[d - lead]);
  }
  if (x.shape.size() > sizes.size() || broadcastSizes({x.shape, sizes}) != sizes)
    return ctx.error(opPrefix(ctx) + "cannot broadcast " + x.typeStr() + " to " + sizesStr(sizes));
  out = gatherElements(x, sizes, broadcastStrides(x.shape, sizes));
  return true;
}

/// The indices as rows of `axis` of `data`, a negative one counted from the end; false after
/// reporting one out of range.
static bool rowsAlong(const OpContext &ctx, const Tensor &data, const Tensor &indices, size_t axis,
                      std::vector<int64_t> &rows) {
  int64_t d = data.shape[axis];
  rows = toInt64s(indices);
  for (size_t k = 0; k < rows.size(); ++k) {
    if (rows[k] < -d || rows[k] >= d)
      return ctx.error(opPrefix(ctx) + "index " + std::to_string(rows[k]) + " (element " +
                       std::to_string(k) + " of " + indices.typeStr() +
                       ") is out of range for axis " + std::to_string(axis) + " of " +
                       data.typeStr());
    rows[k] += rows[k] < 0 ? d : 0;
  }
  return true;
}

// out[o, k, j] = data[o, indices[k] (+ d when negative), j] over the dims
// before the axis (o), the indices' elements (k) and the dims after it (j).
bool runGather(const OpContext &ctx, Tensor &out) {
  const Tensor &data = ctx.in(0), &indices = ctx.in(1);
  size_t axis = *normalizeAxis(ctx.op.getInt("axis"), data.shape.size());
  int64_t d = data.shape[axis];
  std::vector<int64_t> rows;
  if (!rowsAlong(ctx, data, indices, axis, rows))
    return false;
  Sizes shape(data.shape.begin(), data.shape.begin() + axis);
  shape.insert(shape.end(), indices.shape.begin(), indices.shape.end());
  shape.insert(shape.end(), data.shape.begin() + axis + 1, data.shape.end());
  int64_t outer = product(Sizes(data.shape.begin(), data.shape.begin() + axis));
  int64_t inner = product(Sizes(data.shape.begin() + axis + 1, data.shape.end()));
  out = Tensor(data.dtype, shape);
  size_t row = size_t(inner) * dtypeSize(data.dtype);
  uint8_t *dst = out.bytes.data();
  for (int64_t o = 0; o < outer && row > 0; ++o)
    for (int64_t r : rows) {
      std::memcpy(dst, data.bytes.data() + size_t(o * d + r) * row, row);
      dst += row;
    }
  return true;
}

// out[i] = data[i with i[axis] replaced by indices[i] (+ d when negative)], for every row-major
// index i of the indices' shape, which along the other axes must not exceed the data's.
bool runGatherElements(const OpContext &ctx, Tensor &out) {
  const Tensor &data = ctx.in(0), &indices = ctx.in(1);
  size_t axis = *normalizeAxis(ctx.op.getInt("axis"), data.shape.size());
  for (size_t a = 0; a < data.shape.size(); ++a)
    if (a != axis && indices.shape[a] > data.shape[a])
      return ctx.error(opPrefix(ctx) + "indices " + indices.typeStr() + " are longer than data " +
                       data.typeStr() + " along axis " + std::to_string(a));
  std::vector<int64_t> rows;
  if (!rowsAlong(ctx, data, indices, axis, rows))
    return false;
  Sizes strides = contiguousStrides(data.shape), others = strides;
  others[axis] = 0;
  out = Tensor(data.dtype, indices.shape);
  size_t size = dtypeSize(data.dtype);
  forEachStrided<1>(indices.shape, {&others}, [&](int64_t i, const std::array<int64_t, 1> &at) {
    int64_t from = at[0] + rows[size_t(i)] * strides[axis];
    std::memcpy(out.bytes.data() + size_t(i) * size, data.bytes.data() + size_t(from) * size, size);
  });
  return true;
}

} // namespace fusec::ref
