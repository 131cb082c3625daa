// The dim-compatibility and broadcasting rules of docs/ir.md ("Dim
// compatibility", "Broadcasting") and the checks the inference functions
// share. See ShapeInferenceUtil.h for the error-reporting convention.
#include "ir/ShapeInferenceUtil.h"

#include <algorithm>

namespace fusec {

bool Infer::fail(const std::string &message) const {
  error("'" + std::string(ctx.name()) + "' " + message);
  return false;
}

bool Infer::produce(TensorType t) {
  results.push_back(std::move(t));
  return true;
}

bool dimsAgree(const Dim &a, const Dim &b) { return a.isAnonymous() || b.isAnonymous() || a == b; }

// Precision order: static over named over `?`. Two agreeing dims are either
// equal or one is `?`, so "the other wins" picks the non-anonymous one.
Dim mergeDims(const Dim &a, const Dim &b) {
  if (a.isStaticValue(1))
    return b;
  if (b.isStaticValue(1))
    return a;
  return a.isAnonymous() ? b : a;
}

std::optional<Shape> broadcastShapes(const Shape &a, const Shape &b) {
  const Shape &longer = a.size() >= b.size() ? a : b;
  const Shape &shorter = a.size() >= b.size() ? b : a;
  size_t offset = longer.size() - shorter.size();
  Shape out(longer.begin(), longer.begin() + offset);
  for (size_t i = 0; i < shorter.size(); ++i) {
    const Dim &x = longer[offset + i], &y = shorter[i];
    if (!x.isStaticValue(1) && !y.isStaticValue(1) && !dimsAgree(x, y))
      return std::nullopt;
    out.push_back(mergeDims(x, y));
  }
  return out;
}

std::optional<Shape> broadcastTo(const Shape &from, const Shape &to) {
  if (from.size() > to.size())
    return std::nullopt;
  Shape out = to;
  size_t offset = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i) {
    const Dim &f = from[i], &t = to[offset + i];
    if (f.isStaticValue(1))
      continue;
    if (!dimsAgree(f, t))
      return std::nullopt;
    if (t.isAnonymous())
      out[offset + i] = f;
  }
  return out;
}

bool shapesAgree(const Shape &a, const Shape &b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), dimsAgree);
}

std::string typeList(std::span<const TensorType> types) {
  std::string out;
  for (size_t i = 0; i < types.size(); ++i) {
    if (i)
      out += i + 1 == types.size() ? " and " : ", ";
    out += types[i].str();
  }
  return out;
}

std::string intList(const std::vector<int64_t> &v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i)
    out += (i ? ", " : "") + std::to_string(v[i]);
  return out + "]";
}

bool requireOneDType(const Infer &in, std::span<const TensorType> types) {
  for (const TensorType &t : types)
    if (t.dtype != types.front().dtype)
      return in.fail("operands must have one dtype, got " + typeList(types));
  return true;
}

// "needs a float operand, got i32[4]" / "needs float operands, got ...".
static bool requireAll(const Infer &in, std::span<const TensorType> types, bool (*ok)(DType),
                       std::string_view adjective) {
  for (const TensorType &t : types) {
    if (ok(t.dtype))
      continue;
    std::string what = types.size() == 1 ? "a " + std::string(adjective) + " operand"
                                         : std::string(adjective) + " operands";
    return in.fail("needs " + what + ", got " + typeList(types));
  }
  return true;
}

static bool isNumeric(DType t) { return t != DType::Bool; }

bool requireNumeric(const Infer &in, std::span<const TensorType> types) {
  return requireAll(in, types, isNumeric, "numeric");
}

bool requireFloat(const Infer &in, std::span<const TensorType> types) {
  return requireAll(in, types, isFloat, "float");
}

std::optional<Layout> mergeLayouts(const Infer &in, std::span<const TensorType> types,
                                   size_t rank) {
  Layout tag = Layout::None;
  for (const TensorType &t : types) {
    if (t.layout == Layout::None || t.layout == tag)
      continue;
    if (tag != Layout::None) {
      in.fail("operand layout tags differ: " + typeList(types));
      return std::nullopt;
    }
    tag = t.layout;
  }
  return rank == 4 ? tag : Layout::None;
}

std::optional<unsigned> resolveAxis(const Infer &in, int64_t axis, const TensorType &t) {
  std::optional<unsigned> a = normalizeAxis(axis, t.rank());
  if (!a)
    in.fail("axis " + std::to_string(axis) + " is out of range for " + t.str());
  return a;
}

bool requireParamShape(const Infer &in, std::string_view role, const TensorType &param,
                       const Shape &expected, std::string_view what, const TensorType &of) {
  if (shapesAgree(param.shape, expected))
    return true;
  return in.fail(std::string(role) + " " + param.str() + " does not match the " +
                 std::string(what) + " " + shapeStr(expected) + " of " + of.str());
}

std::optional<int64_t> checkedAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    return std::nullopt;
  return r;
}

std::optional<int64_t> checkedMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    return std::nullopt;
  return r;
}

} // namespace fusec
