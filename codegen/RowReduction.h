// The row_reduction code template: renders a `kernel` op whose body holds a
// reduction or normalization over one block of axes (reduce_*, layer_norm,
// rms_norm, softmax) with its pointwise prologue and epilogue into one
// CUDA C++ kernel that reads each row from memory once when it fits in
// registers. RowReduction.cpp describes the algorithm.
#pragma once

#include "codegen/GeneratedKernel.h"
#include "ir/Diagnostics.h"
#include "ir/Graph.h"

#include <optional>
#include <string_view>

namespace fusec {

/// Renders `kernel` (template "row_reduction") into CUDA C++. Reports an
/// error at the offending op, and returns nullopt, when the body holds an op
/// the template cannot run, reductions over different rows, an operand that
/// broadcasts other than as a full, per-row, per-column or scalar value, a
/// symbolic reduced extent, or a max/min over an empty extent. The caller
/// may then run the body op by op.
std::optional<GeneratedKernel> emitRowReductionKernel(const Op &kernel, const std::string &entry,
                                                      Diagnostics &diags);

} // namespace fusec
