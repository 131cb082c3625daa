// The LLVM back end after rendering: the modules of kernels rendered by
// codegen/llvm/Render.cpp linked into one (`fusec compile --emit=llvm`), and
// a module turned into PTX through LLVM's NVPTX back end (Nvptx.h).
#pragma once

#include "codegen/GeneratedKernel.h"
#include "ir/Diagnostics.h"

#include <optional>
#include <string>
#include <vector>

namespace fusec {

/// One module (as text) holding the kernels (each an LLVM IR module) given.
std::string linkLlvmKernels(const std::vector<GeneratedKernel> &kernels);

/// PTX for `target` of the module text `ir` (a kernel's or linkLlvmKernels').
std::optional<std::string> compileLlvmToPtx(const std::string &ir, const std::string &target,
                                            Diagnostics &diags);

} // namespace fusec
