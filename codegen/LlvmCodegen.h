// The entry point of the LLVM back end: renders a kernel op into an LLVM IR
// module (as text) holding its kernel, from the same plan the CUDA C++ back
// end renders; compileLlvmToPtx turns such a module into PTX through LLVM's
// NVPTX back end (Nvptx.h). Renders the pointwise and row_reduction
// templates, the gemm template's plans that LlvmGemm.cpp takes (others are
// refused: the runtime then runs the kernel op by op), and every op's
// generic kernel.
#pragma once

#include "codegen/GeneratedKernel.h"
#include "ir/Diagnostics.h"
#include "ir/Graph.h"

#include <optional>
#include <string_view>
#include <vector>

namespace fusec {

/// Renders `op` into LLVM IR: GeneratedKernel::source is the textual
/// module. Reports an error at the op, and returns nullopt, for a gemm plan
/// the LLVM back end does not render yet (the attention template has no
/// generator on either back end: emitKernel refuses it first).
std::optional<GeneratedKernel> emitKernelLlvm(const Op &op, const std::string &entry,
                                              Diagnostics &diags);

/// One module (as text) holding the kernels of several of emitKernelLlvm's.
std::string linkLlvmKernels(const std::vector<GeneratedKernel> &kernels);

/// PTX for `target` of the module text `ir` (emitKernelLlvm's or
/// linkLlvmKernels').
std::optional<std::string> compileLlvmToPtx(const std::string &ir, const std::string &target,
                                            Diagnostics &diags);

namespace codegen {
/// The gemm template, for the plans LlvmGemm.cpp takes so far.
std::optional<GeneratedKernel> emitGemmLlvm(const Op &kernel, const std::string &entry,
                                            Diagnostics &diags);
/// A plain op's generic kernel (Generic.h): movement ops, conv2d, pooling.
std::optional<GeneratedKernel> emitGenericLlvm(const Op &op, const std::string &entry,
                                               Diagnostics &diags);
} // namespace codegen

} // namespace fusec
