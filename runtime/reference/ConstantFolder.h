// Constant folding through the CPU reference executor, for injection into
// PassOptions::foldConstant (passes/ may not depend on runtime/): the folded
// value is exactly what the reference computes for the op at run time.
#pragma once

#include "ir/Graph.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace fusec {

/// A folder that evaluates `op` on its constant operands by running a
/// one-op graph on the reference executor. A pointwise or movement op on
/// splats folds to a splat, of any size up to kMaxSplatBytes. Otherwise it
/// returns null (no folding) when op's result type is not static, holds
/// more than `maxElements` elements (folding must not blow up the graph) —
/// unless op is a pointwise or movement op whose result holds no more
/// elements than its operands together, up to 2^24 (a weight's cast,
/// transpose or gathered taps: folding it grows nothing and saves a kernel
/// on every run) —, when a splat operand holds more than `maxElements`
/// (evaluating would expand it), or when evaluation fails (an integer
/// division by zero stays a run-time error).
std::function<DenseRef(const Op &op, const std::vector<DenseRef> &operands)>
makeReferenceFolder(uint64_t maxElements = 1 << 16);

} // namespace fusec
