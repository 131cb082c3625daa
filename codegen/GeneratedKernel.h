// What every kernel emitter returns: CUDA C++ for one entry point, the
// meaning of each of its parameters in order, and, when the kernel's shapes
// are static, the launch configuration. The runtime launches a kernel from
// this description alone; it never reads the source.
#pragma once

#include "include/fusec/backend.h"

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
/// (Input, Output, Scratch) are device addresses; every other kind is a `long long`.
struct KernelArg {
  enum class Kind {
    Input,       ///< const pointer to kernel operand `index`
    Output,      ///< pointer to kernel result `index`
    NumElements, ///< element count of the kernel's index space
    Dim,         ///< size of output axis `axis` (a symbolic dim)
    Stride,      ///< stride in elements of operand `index` along output axis `axis`
    NumRows,     ///< rows of a row-reduction kernel
    Scratch,     ///< f32 workspace of GeneratedKernel::scratchBytes, which the phases of one op
                 ///< share (written by one, read by the next) and nothing else reads
  };
  Kind kind;
  std::string name;   ///< the C identifier in the source
  unsigned index = 0; ///< Input and Stride: kernel operand; Output: kernel result
  unsigned axis = 0;  ///< Dim and Stride: axis of the output index space
  /// The value of a scalar kind when the kernel's shapes are static; the
  /// runtime passes it as is. Unset for pointers and for symbolic shapes.
  std::optional<int64_t> value;

  bool isPointer() const {
    return kind == Kind::Input || kind == Kind::Output || kind == Kind::Scratch;
  }
};

/// Grid and block of a launch, and its dynamic shared memory.
struct LaunchConfig {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned sharedBytes = 0;
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
/// for the LLVM back end a textual LLVM IR module holding its kernel. A
/// template may run one op as several kernels launched in order (its
/// phases: split-KV attention's split and combine kernels).
struct GeneratedKernel {
  std::string name;   ///< the extern "C" entry point
  std::string source; ///< CUDA C++: the kernel alone (cuda::translationUnit adds the
                      ///< helpers); LLVM: the module
  std::vector<KernelArg> args;
  /// Set when every shape the kernel sees is static.
  std::optional<LaunchConfig> launch;
  /// Bytes of its Scratch argument (0: it has none); every phase of one op names the same.
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
  /// The entry point of a later phase of the op named `entry`: "<entry>_<phase>", made unique.
  std::string phase(const std::string &entry, std::string_view phase) {
    return names.fresh(entry + "_", phase);
  }
  /// Gives back the name of a kernel that was not generated after all.
  void release(const std::string &name) { names.release(name); }

private:
  Namer names;
};

} // namespace fusec
