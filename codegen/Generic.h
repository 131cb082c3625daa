// The generic emitter: a correct CUDA C++ kernel for any one op of
// ir/Ops.def (except `const` and `kernel`) whose shapes are static. The
// runtime uses it for every top-level op the fusion pass left alone
// (movement ops, conv2d, pooling, batch_norm, reductions over leading axes)
// and, op by op, for the body of a kernel op whose template refused it.
// docs/codegen-generic.md describes the kernels and their limits.
#pragma once

#include "codegen/GeneratedKernel.h"
#include "ir/Diagnostics.h"
#include "ir/Graph.h"

#include <optional>
#include <string_view>

namespace fusec {

/// Renders the non-kernel op `op` into CUDA C++ with entry point `entry`:
/// one pointer argument per operand (Input)
/// and per result (Output), every size and stride baked in as a literal, and
/// a launch of 256-thread blocks (grid[0] = 0 when the result is empty).
/// Reports "'<op>' needs static shapes for its generic kernel" at the op,
/// and returns nullopt, when an operand or result has a symbolic dim; a
/// `const` op is also refused (constants are uploaded, not computed).
std::optional<GeneratedKernel> emitGenericKernel(const Op &op, const std::string &entry,
                                                 Diagnostics &diags);

/// Whether the non-kernel `op` can have a generic kernel (of either back
/// end); reports why not at the op, as emitGenericKernel does.
bool checkGenericOp(const Op &op, Diagnostics &diags);

} // namespace fusec
