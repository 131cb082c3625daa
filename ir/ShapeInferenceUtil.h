// Helpers shared by the inference functions (ShapeInference*.cpp): the error
// reporting convention, the dtype/layout/axis checks most ops share, and
// overflow-checked size arithmetic. Internal to ir/; not part of the API.
//
// Every check reports through Infer::fail, which prefixes the op's name in
// quotes, so messages read "'add' operand shapes f32[4] and f32[5] do not
// broadcast". A check returns false (or nullopt) after reporting; callers
// return at once, so each function reports at most one problem per op.
#pragma once

#include "ir/ShapeInference.h"

#include <optional>
#include <span>
#include <string>

namespace fusec {

using ErrorFn = std::function<void(std::string)>;

/// What an inference function works with: the context, where results go, and
/// where errors go.
class Infer {
public:
  Infer(const InferContext &ctx, std::vector<TensorType> &results, const ErrorFn &error)
      : ctx(ctx), results(results), error(error) {}

  const InferContext &ctx;

  std::span<const TensorType> operands() const { return ctx.operands; }
  const TensorType &operand(size_t i) const { return ctx.operands[i]; }
  size_t numOperands() const { return ctx.operands.size(); }

  /// Reports "'op' <message>" and returns false, so checks read `return in.fail(...)`.
  bool fail(const std::string &message) const;
  /// Records a result type; returns true.
  bool produce(TensorType t);

private:
  std::vector<TensorType> &results;
  const ErrorFn &error;
};

/// "f32[4]", "f32[4] and f32[5]", "f32[4], f32[5] and f32[6]".
std::string typeList(std::span<const TensorType> types);
/// "[0, 2, 1]", as the text form writes an ints attribute.
std::string intList(const std::vector<int64_t> &v);

/// All of `types` share one dtype, else reports "operands must have one dtype".
bool requireOneDType(const Infer &in, std::span<const TensorType> types);
/// None of `types` is bool (arithmetic needs numbers).
bool requireNumeric(const Infer &in, std::span<const TensorType> types);
/// Every one of `types` is a float type.
bool requireFloat(const Infer &in, std::span<const TensorType> types);

/// The layout tag of a pointwise-like result of rank `rank`: the operands'
/// common tag (untagged operands are compatible with any tag), dropped when
/// the result is not rank 4. Reports operands tagged differently.
std::optional<Layout> mergeLayouts(const Infer &in, std::span<const TensorType> types, size_t rank);

/// Resolves `axis` (negative counts from the end) against t's rank; reports
/// "axis 3 is out of range for f32[2,3]".
std::optional<unsigned> resolveAxis(const Infer &in, int64_t axis, const TensorType &t);

/// Same rank and every pair of dims agrees (dimsAgree).
bool shapesAgree(const Shape &a, const Shape &b);
/// The broadcast of two agreeing (or static-1) dims: the more precise one.
Dim mergeDims(const Dim &a, const Dim &b);
/// numpy broadcast_to: `from` (right-aligned) broadcasts to `to` without
/// changing `to`'s rank; the result refines `to` with `from`'s precision.
std::optional<Shape> broadcastTo(const Shape &from, const Shape &to);

/// A parameter of shape `expected` derived from the main operand (a norm's
/// gamma, a bias): reports "<role> f32[5] does not match the <what> [4] of
/// <of>".
bool requireParamShape(const Infer &in, std::string_view role, const TensorType &param,
                       const Shape &expected, std::string_view what, const TensorType &of);

/// Overflow-checked int64 arithmetic; nullopt on overflow.
std::optional<int64_t> checkedAdd(int64_t a, int64_t b);
std::optional<int64_t> checkedMul(int64_t a, int64_t b);

} // namespace fusec
