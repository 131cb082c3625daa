// The compile-path oracle: what the compile-path fuzzer checks for each
// generated module. Each check that fails prints what failed (with the
// module as text) and aborts, so that libFuzzer keeps the input.
//
//  1. the module verifies and round-trips (text and model file);
//  2. the default pipeline runs (verifying after every pass) and, when it
//     does not autocast to f16/bf16, each graph is equivalent to the
//     original on seeded random inputs under the CPU reference
//     (runtime/reference/Equivalence.h, what `fusec-opt --check-equivalence` runs); a
//     module whose original graph the reference cannot run (an integer
//     division by zero) is skipped;
//  3. kernels are generated on both back ends (CUDA C++ and LLVM IR) for the
//     symbolic graph (ops whose emitter needs bound shapes may refuse) and
//     for the graph specialized to the generated sizes, lowered as the
//     runtime lowers it (which must succeed: every graph that verifies runs);
//  4. in each module (one translation unit, one LLVM module), kernel entry
//     names are unique; each kernel's parameters fit the parameter space
//     (32764 bytes for NVRTC's PTX, 4352 for the LLVM back end's PTX 8.0); a static launch
//     has 1..1024 threads a block, a grid within the hardware's limits and at most 227 KiB of
//     shared memory; each LLVM kernel's module passes LLVM's verifier;
//  5. with `ptx` (slow, see run-fuzzers.sh): NVRTC compiles the translation
//     unit to a cubin (which also catches names that clash inside a kernel's
//     source), the LLVM kernels link into one module (llvmir::linkKernels, as
//     `fusec compile --emit=llvm`), LLVM's NVPTX back end compiles it to PTX,
//     and ptxas assembles it. Each is skipped, once with a note, where the CUDA
//     toolkit does not have it.
#pragma once

#include "test/fuzz/GraphGenerator.h"

namespace fusec::fuzz {

struct OracleOptions {
  bool ptx = false;
  /// Echo each module's text to stderr before checking it (a crash then shows its module).
  bool echo = false;
};

/// Runs the checks above on `gen` (its module is optimized in place).
/// Aborts on a failure; returns false when the module was skipped.
bool checkCompilePath(GeneratedModule &gen, const OracleOptions &opts);

} // namespace fusec::fuzz
