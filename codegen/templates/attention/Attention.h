// The attention template: a `kernel` op of template "attention" built in kir as one fused
// flash-attention kernel (FlashAttention-2's design: Q in registers, K and V tiles streamed through
// shared memory by cp.async, S = Q·Kᵀ and O += P·V on the tensor cores, online softmax in f32).
// docs/codegen-attention.md describes the kernel, its numerics and its limits.
#pragma once

#include "codegen/templates/Template.h"
#include "ir/Diagnostics.h"
#include "ir/Graph.h"

#include <optional>
#include <string>

namespace fusec::attention {

/// `kernel` (template "attention") in kir, entry point `entry`; `warpgroups` allows Hopper's
/// wgmma (an sm_90a target). Reports an error at the kernel, and returns nullopt, when its body is
/// not one attention op over the kernel's inputs that the kernel supports (f16 or bf16, head dims
/// 32, 64 or 128, static shapes); the runtime then runs the body op by op, on the generic kernel.
std::optional<templates::KirKernel> buildAttention(const Op &kernel, const std::string &entry,
                                                   bool warpgroups, Diagnostics &diags);

} // namespace fusec::attention
