// The NVRTC driver: compiles generated CUDA C++ to PTX. libnvrtc is opened
// with dlopen on first use, so every binary starts, and everything but this
// step works, on a machine without the CUDA toolkit. Only runtime/ touches
// NVRTC; no CUDA header is needed to build fusec.
#pragma once

#include "codegen/GeneratedKernel.h"
#include "ir/Diagnostics.h"

#include <optional>
#include <string>
#include <vector>

namespace fusec {

/// NVRTC's version, e.g. {13, 0}.
struct NvrtcVersion {
  int major = 0, minor = 0;
};

/// Loads libnvrtc (once; later calls reuse the result) and returns its
/// version, or nullopt with the reason in `whyNot`: "NVRTC not found: set
/// CUDA_HOME ..." when no library loads, or a missing symbol.
std::optional<NvrtcVersion> loadNvrtc(std::string *whyNot = nullptr);

/// The NVRTC options fusec passes to NVRTC `v` besides --gpu-architecture
/// (part of the kernel cache key, with the version). From 12.4 on they
/// include --minimal: the kernels use no textures, device runtime or
/// runtime API types, and leaving those out of NVRTC's built-in header
/// saves 4-6 ms a compile.
std::vector<const char *> nvrtcOptions(NvrtcVersion v);

/// What to compile.
struct PtxRequest {
  std::string source; ///< self-contained CUDA C++ (NVRTC), or an LLVM IR module (LLVM)
  std::string name;   ///< the program (a kernel or a model), named in messages and the saved file
  std::string target; ///< sm_80, sm_90a, ...: NVRTC's --gpu-architecture
  Backend backend = Backend::Nvrtc; ///< which compiler `source` is for
};

/// A compiled program: PTX, and the cubin for the requested architecture
/// (empty from the LLVM back end: the driver compiles its PTX at load).
struct CompiledCuda {
  std::string ptx;
  std::string cubin;
};

/// Compiles `req.source` for `req.target` (a real architecture: sm_80,
/// sm_90a, ...) to PTX and cubin; errors as compileToPtx reports them.
std::optional<CompiledCuda> compileCuda(const PtxRequest &req, Diagnostics &diags);

/// Compiles `req.source` to PTX with -default-device --std=c++17. Returns
/// nullopt after reporting an error: NVRTC missing (an environment error), an
/// invalid target, or a failed compile, whose error carries the program's name,
/// NVRTC's log and the path where the source was saved to reproduce it.
std::optional<std::string> compileToPtx(const PtxRequest &req, Diagnostics &diags);

} // namespace fusec
