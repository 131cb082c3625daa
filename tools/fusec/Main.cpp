// fusec: the command-line driver. Subcommands: convert, run, compile, bench.
//
// Exit codes: 0 success, 1 bad input (diagnostics on stderr), 2 bad usage.
#include "tools/ToolSupport.h"
#include "tools/fusec/Commands.h"

#include "llvm/Support/raw_ostream.h"

using namespace fusec;
namespace cl = llvm::cl;

namespace fusec {
cl::OptionCategory toolCategory("fusec options");
} // namespace fusec

int main(int argc, char **argv) {
  cl::HideUnrelatedOptions(toolCategory);
  installVersionPrinter("fusec");
  if (!parseCommandLine(
          argc, argv,
          "fusec: a kernel-fusion compiler for NVIDIA GPUs\n\n"
          "  fusec convert IN OUT   convert between .fir and .fb\n"
          "  fusec run FILE         run a model on the GPU or the CPU\n"
          "  fusec compile FILE     its kernels: CUDA C++, PTX, a report, an artifact\n"
          "  fusec bench FILE       compile for the GPU and time it\n\n"
          "  fusec SUBCOMMAND --help for the options of each\n"))
    return kExitUsage;
  if (convertCommand)
    return runConvert();
  if (runCommand)
    return runRun();
  if (compileCommand)
    return runCompile();
  if (benchCommand)
    return runBench();
  llvm::errs() << "fusec: no subcommand given (see 'fusec --help')\n";
  return kExitUsage;
}
