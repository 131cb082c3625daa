// The CUDA C++ renderer: prints a kir kernel as self-contained CUDA C++ for
// NVRTC, over the device helpers of cuda/device/ (translationUnit puts them
// first). It knows kir, not kernel families.
#pragma once

#include "codegen/GeneratedKernel.h"
#include "codegen/kir/Kir.h"

#include <string>
#include <vector>

namespace fusec::cuda {

/// `k`'s constant tables, its comment and its extern "C" __global__
/// function: one statement a line, values named as kir::uniqueNames names
/// them.
std::string render(const kir::Kernel &k);

/// One self-contained CUDA C++ translation unit (no #include) holding the
/// device helpers once and then every kernel (each rendered by render): what
/// NVRTC compiles.
std::string translationUnit(const std::vector<GeneratedKernel> &kernels);

} // namespace fusec::cuda
