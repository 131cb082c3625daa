// The equivalence check behind `fusec-opt --check-equivalence`: runs the CPU
// reference on the same seeded random inputs before and after a rewrite and
// compares every output within the tolerance of the lowest precision the
// rewritten graph computes in.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/Graph.h"
#include "runtime/reference/Tensor.h"

#include <cstdint>
#include <map>
#include <string>

namespace fusec {

struct EquivalenceOptions {
  uint64_t seed = 0;
  /// Size given to every symbolic dim that `dims` does not name.
  int64_t defaultDimSize = 3;
  std::map<std::string, int64_t> dims;
};

struct EquivalenceResult {
  bool equivalent = false;
  double worstError = 0; // |got − want| / max(1, |want|), over all outputs
  double tolerance = 0;
  std::string worstWhere; // "output 0 (%y) at [1,2]: want 0.5, got 0.52"
};

/// Relative tolerance for results computed in `t`: 1e-5 for f32/f64, 1e-2
/// for f16/bf16 (their rounding step is 2^-11 and 2^-8).
double toleranceFor(DType t);

/// Tolerance of a GPU result against the reference: the GPU keeps f16/bf16
/// intermediates of a fused kernel in f32 registers where the reference
/// rounds each op, and uses f32 libm: 1e-4 for f32/f64, 2e-2 for f16/bf16.
double gpuToleranceFor(DType t);

/// The lowest-precision float dtype any value of `g` (kernel bodies
/// included) is stored in, starting from `lowest`.
DType lowestPrecision(const Graph &g, DType lowest = DType::F64);

/// Folds output `k` of `g` (`got` against `want`, of one type) into `r`'s
/// worst error and where it is.
void compareOutput(const Graph &g, unsigned k, const Tensor &want, const Tensor &got,
                   EquivalenceResult &r);

/// Compares `before` and `after` (same inputs and outputs, by position).
/// Reports an error when they are not equivalent, naming the worst element.
EquivalenceResult checkEquivalence(const Graph &before, const Graph &after,
                                   const EquivalenceOptions &opts, Diagnostics &diags);

} // namespace fusec
