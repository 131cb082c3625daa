// The LLVM back end after rendering: the kernels' modules (codegen/llvm/Render.cpp) linked into
// one (`fusec compile --emit=llvm`), and a module turned into PTX through LLVM's NVPTX back end,
// without NVRTC. The module is optimized at O3 for the target, the libdevice functions it calls
// (__nv_expf, ...) are linked in from the CUDA toolkit's libdevice.10.bc and internalized, and the
// NVPTX assembly printer writes the PTX. Kernels are functions with the PTX_Kernel calling
// convention.
#pragma once

#include "codegen/GeneratedKernel.h"
#include "ir/Diagnostics.h"

#include <optional>
#include <string>
#include <vector>

namespace llvm {
class Module;
} // namespace llvm

namespace fusec::llvmir {

/// One module (as text) holding the kernels (each an LLVM IR module) given.
std::string linkKernels(const std::vector<GeneratedKernel> &kernels);

/// PTX for `target` of the module text `ir` (a kernel's or linkKernels').
std::optional<std::string> compileToPtx(const std::string &ir, const std::string &target,
                                        Diagnostics &diags);

/// Prepares an empty module for NVPTX: its triple and data layout (the same for every GPU), and
/// libdevice's flush-to-zero setting (off).
void prepareNvptxModule(llvm::Module &m);

/// Optimizes `m` (prepared as above) for `target` (sm_80, sm_90, sm_90a, ...), links the
/// libdevice functions it declares and returns its PTX; nullopt after reporting an error (an
/// unknown target, ...).
std::optional<std::string> emitPtx(llvm::Module &m, const std::string &target, Diagnostics &diags);

} // namespace fusec::llvmir
