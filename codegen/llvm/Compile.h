// The LLVM back end after rendering: the modules of kernels rendered by
// codegen/llvm/Render.cpp linked into one (`fusec compile --emit=llvm`), and
// a module turned into PTX through LLVM's NVPTX back end (Nvptx.h).
#pragma once

#include "codegen/GeneratedKernel.h"
#include "ir/Diagnostics.h"

#include <optional>
#include <string>
#include <vector>

namespace fusec::llvmir {

/// One module (as text) holding the kernels (each an LLVM IR module) given.
std::string linkKernels(const std::vector<GeneratedKernel> &kernels);

/// PTX for `target` of the module text `ir` (a kernel's or linkKernels').
std::optional<std::string> compileToPtx(const std::string &ir, const std::string &target,
                                        Diagnostics &diags);

} // namespace fusec::llvmir
