// libFuzzer targets of the compile path: bytes -> a generated module
// (GraphGenerator.h) -> every check of CompileOracle.h. fuzz-compile checks
// up to generated CUDA C++ and verified LLVM IR, about a millisecond an
// input; fuzz-compile-ptx (this file built with FUSEC_FUZZ_PTX) also
// compiles both back ends' kernels to PTX and assembles them, about a second
// an input. An input the reference cannot run is rejected (-1: not kept in
// the corpus). An input that is a reproducer (Reproducer.h: a .fir file
// written by fuzz-compile-gen) is checked as it stands: regressions/compile
// holds such files.
//
// Flags of its own (libFuzzer ignores flags that start with "--"):
//   --echo   print each module before checking it (a crash then shows its
//            module: fuzz-compile --echo crash-...)
//   --big    every module big: a pointwise chain of thousands of ops or a
//            concat of thousands of operands, which must go through within
//            -timeout and fit the kernel parameter space
#include "test/fuzz/CompileOracle.h"
#include "test/fuzz/Reproducer.h"

#include <cstdint>
#include <cstdlib>
#include <fuzzer/FuzzedDataProvider.h>
#include <string_view>
#include <sys/stat.h>

static fusec::fuzz::OracleOptions options;
static fusec::fuzz::GeneratorLimits limits;
/// Whether libFuzzer runs files named on the command line (a replay).
static bool replaying = false;

extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv) {
#ifdef FUSEC_FUZZ_PTX
  options.ptx = true;
#endif
  for (int i = 1; i < *argc; ++i) {
    std::string_view arg = (*argv)[i];
    options.echo |= arg == "--echo";
    limits.big |= arg == "--big";
    struct stat st;
    replaying |= !arg.starts_with("-") && stat((*argv)[i], &st) == 0 && S_ISREG(st.st_mode);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  if (text.starts_with(fusec::fuzz::kReproducerPrefix)) {
    std::optional<fusec::fuzz::GeneratedModule> module = fusec::fuzz::parseReproducer(text);
    if (!module && replaying) // a saved reproducer that no longer reads must not pass
      std::abort();
    return module && fusec::fuzz::checkCompilePath(*module, options) ? 0 : -1;
  }
  FuzzedDataProvider provider(data, size);
  fusec::fuzz::GeneratedModule module = fusec::fuzz::generateModule(provider, limits);
  return fusec::fuzz::checkCompilePath(module, options) ? 0 : -1;
}
