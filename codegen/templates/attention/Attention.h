// The attention template: a `kernel` op of template "attention" built in kir as one fused
// flash-attention kernel (FlashAttention-2's design: Q in registers, K and V tiles streamed through
// shared memory by cp.async, S = Q·Kᵀ and O += P·V on the tensor cores, online softmax in f32;
// for a few queries, flash-decoding's split keys). docs/codegen-attention.md describes the kernel,
// its numerics and its limits.
#pragma once

#include "codegen/templates/Template.h"
#include "ir/Diagnostics.h"
#include "ir/Graph.h"

#include <optional>
#include <string>
#include <string_view>

namespace fusec::attention {

/// `kernel` (template "attention") in kir for GPU `target` (Hopper's wgmma on sm_90a), entry point
/// `entry`. Reports an error at the kernel, and returns nullopt, when its body is not one
/// attention op over the kernel's inputs that the kernel supports (docs/codegen-attention.md,
/// section 0); the runtime then runs the body op by op, on the generic kernel.
std::optional<templates::KirKernel> buildAttention(const Op &kernel, const std::string &entry,
                                                   std::string_view target, Diagnostics &diags);

} // namespace fusec::attention
