// The pointwise code template: renders a `kernel` op whose body holds only
// pointwise ops (and constants) into one self-contained CUDA C++ kernel, a
// grid-stride loop over the flattened output that writes every result.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/Graph.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fusec {

/// One parameter of a generated kernel, in signature order; see
/// Note [Pointwise kernel arguments] in codegen/Pointwise.cpp.
struct KernelArg {
  enum class Kind { Input, Output, NumElements, Dim, Stride };
  Kind kind;
  std::string name;   ///< the C identifier in the source
  unsigned index = 0; ///< Input and Stride: kernel operand; Output: kernel result
  unsigned axis = 0;  ///< Dim and Stride: axis of the output index space
};

/// CUDA C++ for one kernel op.
struct GeneratedKernel {
  std::string name;   ///< the extern "C" entry point
  std::string source; ///< the kernel alone; cudaTranslationUnit adds the helpers
  std::vector<KernelArg> args;
};

/// "fusec_<graph>_<first result>", made a C identifier.
std::string kernelEntryName(const Op &kernel, std::string_view graphName);

/// Renders `kernel` (template "pointwise") into CUDA C++. Reports an error at
/// the offending op, and returns nullopt, when the body holds an op the
/// template cannot run or results of different shapes.
std::optional<GeneratedKernel> emitPointwiseKernel(const Op &kernel, std::string_view graphName,
                                                   Diagnostics &diags);

/// One self-contained CUDA C++ translation unit (no #include) holding the
/// device helpers once and then every kernel: what NVRTC compiles.
std::string cudaTranslationUnit(const std::vector<GeneratedKernel> &kernels);

} // namespace fusec
