// The row_reduction template: a `kernel` op whose body holds reductions or normalizations over one
// block of axes (reduce_*, layer_norm, rms_norm, softmax) with their pointwise prologue and
// epilogue, built in kir as one kernel that reads each row from memory once when it fits in
// registers. RowReduction.cpp describes the algorithm.
#pragma once

#include "codegen/templates/Template.h"
#include "ir/Diagnostics.h"
#include "ir/Graph.h"

#include <optional>
#include <string>

namespace fusec::rowred {

/// `kernel` (template "row_reduction") in kir, its entry point `entry`. Reports an error at the
/// offending op, and returns nullopt, when the body holds an op the template cannot run, reductions
/// over different rows, an operand that broadcasts other than as a full, per-row, per-column or
/// scalar value, a symbolic reduced extent, or a max/min over an empty extent. The caller may then
/// run the body op by op.
std::optional<templates::KirKernel> buildRowReduction(const Op &kernel, const std::string &entry,
                                                      Diagnostics &diags);

} // namespace fusec::rowred
