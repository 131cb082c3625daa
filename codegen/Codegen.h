// The entry point of the CUDA C++ back end: renders one top-level op of an
// optimized graph into a kernel. A `kernel` op goes to its template's
// emitter; any other op (one the fusion pass left alone, or one of the body
// of a kernel that its template could not take) goes to the generic emitter,
// so that every op that verifies has a kernel.
#pragma once

#include "codegen/GeneratedKernel.h"
#include "ir/Diagnostics.h"
#include "ir/Graph.h"

#include <optional>
#include <string_view>

namespace fusec {

/// Renders `op` into CUDA C++ named by kernelEntryName(op, graphName).
/// Returns nullopt after reporting an error at the op when its template (or
/// the generic emitter) cannot take it; the caller may then run a kernel
/// op's body op by op instead (see runtime/Lowering.h).
std::optional<GeneratedKernel> emitKernel(const Op &op, std::string_view graphName,
                                          Diagnostics &diags);

} // namespace fusec
