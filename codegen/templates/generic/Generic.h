// The generic kernels: a correct kernel, built in kir, for any one op of
// ir/Ops.def (except `const` and `kernel`) whose shapes are static. The
// runtime uses them for every top-level op the fusion pass left alone
// (movement ops, conv2d, pooling, batch_norm, reductions over leading axes)
// and, op by op, for the body of a kernel op whose template refused it.
// docs/codegen-generic.md describes the kernels and their limits.
#pragma once

#include "codegen/templates/Template.h"
#include "ir/Diagnostics.h"

#include <optional>
#include <string>

namespace fusec::generic {

/// The generic kernel of the non-kernel op `op`, entry point `entry`: one
/// read-only pointer parameter per operand, then one per result, every size
/// and stride a constant, launched as 256-thread blocks (grid[0] = 0 when
/// the result is empty). Reports at the op, and returns nullopt, a symbolic
/// dim or a `const` op (constants are uploaded, not computed).
std::optional<templates::KirKernel> buildGeneric(const Op &op, const std::string &entry,
                                                 Diagnostics &diags);

} // namespace fusec::generic
