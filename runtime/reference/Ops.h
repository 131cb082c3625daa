// Internal to the CPU reference executor: the kernels that Reference.cpp
// dispatches each op to, and the index helpers they share.
//
// A kernel reads its operands as Tensors of their dtypes, computes with the
// actual (run-time) shapes, reports shape problems that only show at run time
// (a `?` dim that turns out not to broadcast, say) at the op's location, and
// fills `out` with the result in the op's result dtype. Float kernels convert
// operands to double once, compute in double and round once on store; integer
// kernels compute in int64 and wrap on store; movement kernels copy bytes.
#pragma once

#include "runtime/reference/Reference.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace fusec::ref {

/// What a kernel sees.
struct OpContext {
  const Op &op;
  std::vector<const Tensor *> operands;
  const DimBindings &bindings;
  Diagnostics &diags;

  const Tensor &in(unsigned i) const { return *operands[i]; }
  unsigned numOperands() const { return unsigned(operands.size()); }
  /// The declared result type (its dtype and layout are what the kernel makes).
  const TensorType &resultType() const { return op.result()->type(); }
  /// Reports `message` at the op's location; returns false.
  bool error(std::string message) const;
};

// The kernels, grouped by file. Each returns false after reporting an error.

// ReferencePointwise.cpp
bool runUnary(const OpContext &ctx, Tensor &out); // neg abs relu exp ... gelu sin ... sign
bool runCast(const OpContext &ctx, Tensor &out);
bool runBinary(const OpContext &ctx, Tensor &out); // add sub mul div pow max min
bool runCompare(const OpContext &ctx, Tensor &out);
bool runWhere(const OpContext &ctx, Tensor &out);

// ReferenceNorm.cpp
bool runReduce(const OpContext &ctx, Tensor &out);
bool runLayerNorm(const OpContext &ctx, Tensor &out); // layer_norm and rms_norm
bool runSoftmax(const OpContext &ctx, Tensor &out);
bool runBatchNorm(const OpContext &ctx, Tensor &out);
bool runCumSum(const OpContext &ctx, Tensor &out);
bool runTopK(const OpContext &ctx, Tensor &out);

// ReferenceContraction.cpp
bool runMatMul(const OpContext &ctx, Tensor &out);
bool runLinear(const OpContext &ctx, Tensor &out);
bool runAttention(const OpContext &ctx, Tensor &out);

// ReferenceMovement.cpp
bool runConst(const OpContext &ctx, Tensor &out);
bool runReshape(const OpContext &ctx, Tensor &out);
bool runTranspose(const OpContext &ctx, Tensor &out);
bool runSlice(const OpContext &ctx, Tensor &out);
bool runConcat(const OpContext &ctx, Tensor &out);
bool runBroadcast(const OpContext &ctx, Tensor &out);
bool runGather(const OpContext &ctx, Tensor &out);
bool runGatherElements(const OpContext &ctx, Tensor &out);

// ReferenceWindow.cpp
bool runConv2d(const OpContext &ctx, Tensor &out);
bool runPool2d(const OpContext &ctx, Tensor &out); // max_pool2d and avg_pool2d

// Shared helpers (ReferenceOps.cpp).

using Sizes = std::vector<int64_t>;

/// Product of the sizes (asserts on overflow: shapes come from real tensors).
int64_t product(const Sizes &sizes);
/// Row-major element strides.
Sizes contiguousStrides(const Sizes &shape);
/// Numpy broadcasting of run-time shapes; nullopt when they do not broadcast.
std::optional<Sizes> broadcastSizes(const std::vector<Sizes> &shapes);
/// Strides that read a tensor of `shape` as if broadcast to `target` (right-
/// aligned; 0 along broadcast dims). The shapes must broadcast to `target`.
Sizes broadcastStrides(const Sizes &shape, const Sizes &target);
/// For each row-major index of `shape`, the offset Σ index[d] · strides[d].
Sizes stridedOffsets(const Sizes &shape, const Sizes &strides);
/// "[2,3]".
std::string sizesStr(const Sizes &sizes);
/// "f32[2,3], f32[4] and f32[1]": the operands' run-time types for messages.
std::string operandTypes(const OpContext &ctx);

/// The tensor's elements as int64 (bool as 0/1); and back, wrapping.
std::vector<int64_t> toInt64s(const Tensor &t);
Tensor fromInt64s(DType dtype, Sizes shape, const std::vector<int64_t> &v);

/// The elements of `v` (of `shape`) transposed by `perm`.
std::vector<double> permuteDoubles(const std::vector<double> &v, const Sizes &shape,
                                   const Sizes &perm);
/// Gathers out[i] = in[base + Σ index[d] · strides[d]] over `shape`, by bytes.
Tensor gatherElements(const Tensor &in, Sizes shape, const Sizes &strides, int64_t base = 0);

/// Softmax in place over x[0], x[stride], ..., x[(n-1)·stride]: exp(x − max)
/// over the sum; NaN anywhere makes the whole line NaN.
void softmaxLine(double *x, int64_t n, int64_t stride);

/// Advances the row-major multi-index `index` of `shape` past its last dim
/// (the caller walks that one), moving each offsets[n] along strides[n].
template <size_t N>
void advanceOuter(const Sizes &shape, const std::array<const Sizes *, N> &strides, Sizes &index,
                  std::array<int64_t, N> &offsets) {
  for (size_t d = shape.size() - 1; d-- > 0;) {
    ++index[d];
    for (size_t n = 0; n < N; ++n)
      offsets[n] += (*strides[n])[d];
    if (index[d] < shape[d])
      return;
    for (size_t n = 0; n < N; ++n)
      offsets[n] -= (*strides[n])[d] * shape[d];
    index[d] = 0;
  }
}

/// Calls body(i, offsets) for every row-major index i of `shape`, where
/// offsets[n] = Σ index[d] · strides[n][d]. The innermost dim runs in a
/// tight loop, so this is the workhorse of broadcasting and data movement.
template <size_t N, typename F>
void forEachStrided(const Sizes &shape, const std::array<const Sizes *, N> &strides, F &&body) {
  int64_t total = product(shape);
  std::array<int64_t, N> offsets{};
  if (total == 0)
    return;
  if (shape.empty())
    return body(int64_t(0), offsets);
  int64_t inner = shape.back();
  std::array<int64_t, N> step;
  for (size_t n = 0; n < N; ++n)
    step[n] = strides[n]->back();
  Sizes index(shape.size(), 0);
  for (int64_t i = 0; i < total; i += inner) {
    std::array<int64_t, N> at = offsets;
    for (int64_t j = 0; j < inner; ++j) {
      body(i + j, at);
      for (size_t n = 0; n < N; ++n)
        at[n] += step[n];
    }
    advanceOuter(shape, strides, index, offsets);
  }
}

} // namespace fusec::ref
