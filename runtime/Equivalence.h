// The equivalence check behind `fusec-opt --check-equivalence`: runs the CPU
// reference on the same seeded random inputs before and after a rewrite and
// compares every output within the tolerance of the lowest precision the
// rewritten graph computes in.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/Graph.h"

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

/// Compares `before` and `after` (same inputs and outputs, by position).
/// Reports an error when they are not equivalent, naming the worst element.
EquivalenceResult checkEquivalence(const Graph &before, const Graph &after,
                                   const EquivalenceOptions &opts, Diagnostics &diags);

} // namespace fusec
