// The second back end's last step: an LLVM module of kernels to PTX through
// LLVM's NVPTX back end, without NVRTC. The module is optimized at O3 for
// the target, the libdevice functions it calls (__nv_expf, ...) are linked
// in from the CUDA toolkit's libdevice.10.bc and internalized, and the
// NVPTX assembly printer writes the PTX. Kernels are functions with the
// PTX_Kernel calling convention.
#pragma once

#include "ir/Diagnostics.h"

#include <optional>
#include <string>

namespace llvm {
class Module;
} // namespace llvm

namespace fusec::llvmir {

/// The LLVM triple of every module this back end emits.
inline constexpr const char *kNvptxTriple = "nvptx64-nvidia-cuda";

/// Prepares an empty module for NVPTX: its triple and data layout (the same
/// for every GPU), and libdevice's flush-to-zero setting (off).
void prepareNvptxModule(llvm::Module &m);

/// Optimizes `m` (prepared as above) for `target` (sm_80, sm_90, sm_90a,
/// ...), links the libdevice functions it declares and returns its PTX;
/// nullopt after reporting an error (an unknown target, ...).
std::optional<std::string> emitPtx(llvm::Module &m, const std::string &target, Diagnostics &diags);

} // namespace fusec::llvmir
