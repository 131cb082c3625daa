// The gemm template: a `kernel` op of template "gemm" (one or more matmul/linear ops sharing their
// A operand, cast prologues on the operands, pointwise epilogues) built in kir as one kernel:
// tensor cores for f16/bf16 operands (on sm_90a warp-specialized TMA + wgmma where the plan fits,
// else mma.sync), SIMT for f32/f64 ones. docs/codegen-gemm.md describes the kernels, their tiles
// and their limits.
#pragma once

#include "codegen/templates/Template.h"
#include "ir/Diagnostics.h"
#include "ir/Graph.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fusec::gemm {

/// `kernel` (template "gemm") in kir, entry point `entry`; its launch is set when its shapes are
/// static. Reports an error at the offending op, and returns nullopt, when the body is not a gemm
/// with cast prologues and a pointwise epilogue, contracts integers, or has symbolic dims other
/// than named dims among the rows of an unbatched product; the runtime then runs the body op by
/// op. `target` ("sm_90a", "sm_80", ...) picks the tensor-core schedule. A `config` attribute
/// ("bm=128 bn=256 bk=32 warps=2x4 stages=4 group=8 specialized=0|1" for tensor cores,
/// "bm=128 bn=128 bk=16 thread=8x8" for SIMT; any subset) overrides the chosen tiles; a
/// malformed one is an error.
std::optional<templates::KirKernel> buildGemm(const Op &kernel, const std::string &entry,
                                              std::string_view target, Diagnostics &diags);

/// The configs worth timing for `kernel` on `target` (Note [Tuning candidates] in Tiles.cpp): ""
/// (the template's own choice) first, each a distinct kernel; none when there is no choice to
/// make (symbolic rows, or a body the template does not take).
std::vector<std::string> tuningConfigs(const Op &kernel, std::string_view target);

} // namespace fusec::gemm
