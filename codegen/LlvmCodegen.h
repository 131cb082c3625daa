// The entry point of the LLVM back end: renders a kernel op into an LLVM IR
// module (as text) holding its kernel, from the same plan the CUDA C++ back
// end renders; compileLlvmToPtx turns such a module into PTX through LLVM's
// NVPTX back end (Nvptx.h). Renders the row_reduction template and every
// op's generic kernel; the templates built in kir (pointwise, gemm, the
// elementwise generic kernels) are rendered by codegen/llvm/ instead.
#pragma once

#include "codegen/GeneratedKernel.h"
#include "ir/Diagnostics.h"
#include "ir/Graph.h"

#include <optional>
#include <string_view>
#include <vector>

namespace fusec {

/// Renders `op` into LLVM IR: GeneratedKernel::source is the textual
/// module (the attention template has no generator on either back end:
/// emitKernel refuses it first).
std::optional<GeneratedKernel> emitKernelLlvm(const Op &op, const std::string &entry,
                                              Diagnostics &diags);

/// One module (as text) holding the kernels of several of emitKernelLlvm's.
std::string linkLlvmKernels(const std::vector<GeneratedKernel> &kernels);

/// PTX for `target` of the module text `ir` (emitKernelLlvm's or
/// linkLlvmKernels').
std::optional<std::string> compileLlvmToPtx(const std::string &ir, const std::string &target,
                                            Diagnostics &diags);

namespace codegen {
std::optional<GeneratedKernel> emitRowReductionLlvm(const Op &kernel, const std::string &entry,
                                                    Diagnostics &diags);
} // namespace codegen

} // namespace fusec
