// What every kernel emitter returns: CUDA C++ for one entry point, the
// meaning of each of its parameters in order, and, when the kernel's shapes
// are static, the launch configuration. The runtime launches a kernel from
// this description alone; it never reads the source.
#pragma once

#include "include/fusec/backend.h"
#include "ir/Types.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace fusec {

class Op;
namespace kir {
struct Kernel;
} // namespace kir

/// One parameter of a generated kernel, in signature order. Pointers
/// (Input, Output, Scratch) are device addresses, a TensorMap is 128 bytes (64-byte aligned);
/// every other kind is a `long long`.
struct KernelArg {
  enum class Kind {
    Input,       ///< const pointer to kernel operand `index`
    Output,      ///< pointer to kernel result `index`
    NumElements, ///< element count of the kernel's index space
    Dim,         ///< size of output axis `axis` (a symbolic dim)
    Stride,      ///< stride in elements of operand `index` along output axis `axis`
    NumRows,     ///< rows of a row-reduction kernel
    Scratch,     ///< pointer to `dtype` at byte `index` of the kernel's scratch
                 ///< (GeneratedKernel::scratchBytes): workspace of its own that no other kernel
                 ///< touches, zeros when the program is loaded, and left as the kernel found it
                 ///< wherever it must start at zero (the counters of a kernel whose last block
                 ///< combines)
    TensorMap,   ///< a TMA tensor map (CUtensorMap, 128 bytes by value) over the view
                 ///< `tensorMap` of operand `index` (of result `index` when `tensorMap->output`),
                 ///< of elements `dtype`; encoded by the runtime for the buffer of each launch
  };
  Kind kind;
  std::string name;   ///< the C identifier in the source
  unsigned index = 0; ///< Input and Stride: kernel operand; Output: kernel result; Scratch: byte
  unsigned axis = 0;  ///< Dim and Stride: axis of the output index space
  /// The value of a scalar kind when the kernel's shapes are static; the
  /// runtime passes it as is. Unset for pointers and for symbolic shapes.
  std::optional<int64_t> value;
  DType dtype = DType::F32; ///< Scratch, TensorMap: its elements
  /// TensorMap: the tiled view a TMA copy reads (cuTensorMapEncodeTiled's arguments).
  struct TensorView {
    bool output = false;          ///< over the kernel's result `index`, else its operand
    int64_t offset = 0;           ///< elements from the buffer's start to the view's first
    std::vector<int64_t> dims;    ///< extents, innermost (contiguous) first; 1 to 5 of them
    std::vector<int64_t> strides; ///< elements between consecutive indices of dims 1 on
    std::vector<unsigned> box;    ///< elements a copy moves along each dim (at most 256 each)
    unsigned swizzle = 128;       ///< bytes the 16-byte chunks swizzle over: 0, 32, 64 or 128
    /// An im2col view (cuTensorMapEncodeIm2col's arguments) of a channels-last tensor: dims are
    /// the channels, the spatial dims innermost first, then the batch (3 to 5 in all); box is
    /// {channels a pixel, pixels a load}. A load walks the window corners from `lower` to each
    /// spatial extent - 1 + `upper` (a corner a spatial dim, innermost first) by `traversal`
    /// (one a dim: the conv's strides), pixel after pixel across the batch, and reads each at the
    /// filter tap its instruction names (kir's tensorLoadIm2col).
    struct Im2col {
      std::vector<int64_t> lower, upper;
      std::vector<unsigned> traversal;
    };
    std::optional<Im2col> im2col = {};
  };
  std::optional<TensorView> tensorMap = {};

  bool isPointer() const {
    return kind == Kind::Input || kind == Kind::Output || kind == Kind::Scratch;
  }
};

/// Bytes of kernel parameter space `args` take, in order: 8 for a pointer or a scalar, 128 at a
/// 64-byte boundary for a tensor map.
uint64_t kernelParamBytes(const std::vector<KernelArg> &args);

/// Grid and block of a launch, its dynamic shared memory, and the blocks along x of a cluster
/// (sm_90: they run at once on neighbouring SMs and reach each other's shared memory).
struct LaunchConfig {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned sharedBytes = 0;
  unsigned cluster = 1;
  /// The kernel may start before the one before it ends, and waits for it itself (kir::Kernel::
  /// dependent).
  bool dependent = false;
};

/// "nvrtc" or "llvm" (include/fusec/backend.h), as --backend spells them.
const char *backendName(Backend b);

/// What a kernel computes, as data (ir/Cost.h), for reports and benchmarks.
struct KernelFacts {
  std::string templateName; ///< the kernel op's template, or the plain op's name
  bool generic = false;     ///< a plain op's generic kernel (the attention template's kernel
                            ///< and the attention op's generic one share a name)
  std::string fuses;        ///< the ops it runs, '+'-joined ("matmul+add+gelu")
  uint64_t bytes = 0;       ///< what it must move; 0 while its shapes are symbolic
  uint64_t flops = 0;       ///< what its contractions must compute
  /// How it maps the work onto threads, in words ("tile 128x128x32, 8 warps
  /// of 64x32, 3 stages; ..."), as its template chose it.
  std::string schedule;
};

/// CUDA C++ for one kernel op (or one plain op run by a generic kernel), or
/// for the LLVM back end a textual LLVM IR module holding its kernel.
struct GeneratedKernel {
  std::string name;   ///< the extern "C" entry point
  std::string source; ///< CUDA C++: the kernel alone (cuda::translationUnit adds the
                      ///< helpers); LLVM: the module
  std::vector<KernelArg> args;
  /// Set when every shape the kernel sees is static.
  std::optional<LaunchConfig> launch;
  /// Bytes of the workspace its Scratch arguments point into (0: it has none).
  int64_t scratchBytes = 0;
  Backend backend = Backend::Nvrtc;
  KernelFacts facts = {};
  /// The kernel in kir (codegen/kir/), printed only when asked
  /// (--emit=kir).
  std::shared_ptr<const kir::Kernel> kir = {};
};

/// `s` with every character that is not a letter or digit replaced by '_'.
std::string cIdentifier(std::string_view s);

/// C identifiers made from IR names, unique within one kernel:
/// fresh("in_", "x.1") is "in_x_1", then "in_x_1_1", ...
class Namer {
public:
  std::string fresh(std::string_view prefix, std::string_view irName) {
    std::string base = std::string(prefix) + cIdentifier(irName), name = base;
    // Probing resumes after the last suffix given for this base: a kernel
    // with thousands of values hinted alike stays linear.
    unsigned &n = nextSuffix[base];
    while (!used.insert(name).second)
      name = base + "_" + std::to_string(++n);
    return name;
  }
  /// Gives `name`, from fresh, back: a later fresh may return it again.
  void release(const std::string &name) {
    used.erase(name);
    nextSuffix.clear(); // probe from _1 again
  }

private:
  std::set<std::string> used;
  std::map<std::string, unsigned> nextSuffix;
};

/// Entry points of the kernels of one program (one translation unit, one
/// module): "fusec_<graph>_<first result>" made a C identifier, and _1, _2,
/// ... after a name already given, so that IR names which read alike as
/// identifiers ("%y.1", "%y_1"; "@a.b", "@a_b") still name two kernels.
/// Stable: the same graph gives the same names in the same order.
class EntryNamer {
public:
  std::string operator()(const Op &kernel, std::string_view graphName);
  /// Gives back the name of a kernel that was not generated after all.
  void release(const std::string &name) { names.release(name); }

private:
  Namer names;
};

} // namespace fusec
