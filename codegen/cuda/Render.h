// The CUDA C++ renderer: prints a kir kernel as self-contained CUDA C++ for
// NVRTC, over the device helpers of codegen/device/ (cudaTranslationUnit
// puts them first). It knows kir, not kernel families.
#pragma once

#include "codegen/kir/Kir.h"

#include <string>

namespace fusec::cuda {

/// `k`'s constant tables, its comment and its extern "C" __global__
/// function: one statement a line, values named as kir::uniqueNames names
/// them.
std::string render(const kir::Kernel &k);

} // namespace fusec::cuda
