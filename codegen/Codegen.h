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

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fusec {

/// Renders `op` with `backend` into a kernel for GPU `target` ("sm_80", "sm_90", "sm_90a": the
/// attention template uses Hopper's warpgroup instructions for sm_90a only) whose entry point is
/// `entry` (an EntryNamer's name, unique in its program). Returns nullopt after reporting an error
/// at the op when its template (or the generic emitter) cannot take it; the caller may then run a
/// kernel op's body op by op instead (see runtime/gpu/Lowering.h).
std::optional<GeneratedKernel> emitKernel(const Op &op, const std::string &entry,
                                          Diagnostics &diags, Backend backend = Backend::Nvrtc,
                                          std::string_view target = "sm_80");

/// The `config` values worth timing for `op` on `target`, "" (its template's own choice) first:
/// what `--tune` compares (runtime/Tuning.h). Empty for an op with nothing to tune (today every
/// template but gemm, and a gemm of symbolic rows).
std::vector<std::string> tuningCandidates(const Op &op, std::string_view target);

} // namespace fusec
