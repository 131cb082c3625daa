// Internals of the precision pass shared by its files: the tensor-core
// alignment rewrite (PrecisionAlign.cpp) that Precision.cpp runs after the
// autocast.
#pragma once

#include "ir/Graph.h"

namespace fusec::precision {

/// Dims of a low-precision contraction are padded to multiples of this.
inline constexpr int64_t kTensorCoreMultiple = 8;

/// For a matmul, linear or attention op in f16/bf16 whose static K or N dim
/// is not a multiple of kTensorCoreMultiple: replaces it by the same op on
/// zero-padded operands, sliced back to its result type where N grew.
/// Returns true when it rewrote `op` (which is then erased).
bool alignForTensorCores(Graph &g, Op &op);

} // namespace fusec::precision
