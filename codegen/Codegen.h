// The entry point of code generation: renders one top-level op of an
// optimized graph into a kernel with either back end. On the CUDA C++ back
// end a `kernel` op goes to its template's emitter, and any other op (one the
// fusion pass left alone, or one of the body of a kernel that its template
// could not take) to the generic emitter, so that every op that verifies has
// a kernel; the LLVM back end renders the same kir kernels (llvm/Render.h).
#pragma once

#include "codegen/GeneratedKernel.h"
#include "ir/Diagnostics.h"
#include "ir/Graph.h"

#include <string_view>
#include <vector>

namespace fusec {

/// Renders `op` with `backend` into the kernels that run it, in launch order, for GPU `target`
/// ("sm_80", "sm_90", "sm_90a": the attention template uses Hopper's warpgroup instructions for
/// sm_90a only): one kernel, or the phases of a template that runs one op as several (split-KV
/// attention: the split kernel, then the combine kernel). The first is entry point `entry` (an
/// EntryNamer's name, unique in its program), later ones `names.phase(entry, ...)`. Returns
/// nothing after reporting an error at the op when its template (or the generic emitter) cannot
/// take it; the caller may then run a kernel op's body op by op instead (see
/// runtime/gpu/Lowering.h).
std::vector<GeneratedKernel> emitKernels(const Op &op, const std::string &entry, EntryNamer &names,
                                         Diagnostics &diags, Backend backend = Backend::Nvrtc,
                                         std::string_view target = "sm_80");

} // namespace fusec
