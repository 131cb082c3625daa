// fusec's code generators, part of the public API (fusec.h includes it).
#pragma once

namespace fusec {

/// How kernels are compiled: CUDA C++ through NVRTC, or LLVM IR through
/// LLVM's NVPTX back end (no NVRTC needed). Both render the same kernels
/// (each built once in fusec's kernel IR), with the same parameters and
/// launches.
enum class Backend { Nvrtc, Llvm };

} // namespace fusec
