// fusec: the command-line driver. Subcommands: convert, import, run, compile,
// bench.
//
// Exit codes: 0 success, 1 bad input (diagnostics on stderr), 2 bad usage.
#include "runtime/gpu/CudaDriver.h"
#include "runtime/gpu/Nvrtc.h"
#include "tools/ToolSupport.h"
#include "tools/fusec/Commands.h"

#include "llvm/Support/raw_ostream.h"

using namespace fusec;
namespace cl = llvm::cl;

namespace fusec {

cl::OptionCategory toolCategory("fusec options");

StageFlags::StageFlags(llvm::cl::SubCommand &sub, llvm::cl::OptionCategory &category)
    : printAfter("print-after",
                 llvm::cl::desc("Print the IR after a stage (verify, passes, specialize, lower, "
                                "compile, load) or a pass"),
                 llvm::cl::value_desc("STAGE|PASS"), llvm::cl::CommaSeparated, llvm::cl::sub(sub),
                 llvm::cl::cat(category)),
      time("time-stages", llvm::cl::desc("Print each compile stage's wall time"),
           llvm::cl::sub(sub), llvm::cl::cat(category)) {}

StageTrace StageFlags::trace() const {
  StageTrace t;
  t.printAfter.insert(printAfter.begin(), printAfter.end());
  t.time = time;
  return t;
}

} // namespace fusec

namespace {

/// The NVRTC and the CUDA driver fusec finds, or why not (--version).
void printGpuVersions(llvm::raw_ostream &os) {
  std::string why;
  std::optional<NvrtcVersion> nvrtc = loadNvrtc(&why);
  os << "  NVRTC "
     << (nvrtc ? std::to_string(nvrtc->major) + "." + std::to_string(nvrtc->minor)
               : "not found: " + why)
     << "\n";
  std::optional<gpu::DeviceInfo> device = gpu::openDevice(&why);
  os << "  CUDA driver ";
  if (device)
    os << device->driverVersion / 1000 << "." << device->driverVersion % 1000 / 10 << ", "
       << device->name << " (" << device->target() << ")\n";
  else
    os << "not usable: " << why << "\n";
}

} // namespace

int main(int argc, char **argv) {
  cl::HideUnrelatedOptions(toolCategory);
  installVersionPrinter("fusec", printGpuVersions);
  if (!parseCommandLine(
          argc, argv,
          "fusec: a kernel-fusion compiler for NVIDIA GPUs\n\n"
          "  fusec convert IN OUT   convert between .fir and .fb\n"
          "  fusec import M.onnx -o OUT  an ONNX model as .fb or .fir\n"
          "  fusec run FILE         run a model on the GPU or the CPU\n"
          "  fusec compile FILE     its kernels: CUDA C++, PTX, a report, an artifact\n"
          "  fusec bench FILE       compile for the GPU and time it\n\n"
          "  fusec SUBCOMMAND --help for the options of each\n"))
    return kExitUsage;
  if (convertCommand)
    return runConvert();
  if (importCommand)
    return runImport();
  if (runCommand)
    return runRun();
  if (compileCommand)
    return runCompile();
  if (benchCommand)
    return runBench();
  llvm::errs() << "fusec: no subcommand given (see 'fusec --help')\n";
  return kExitUsage;
}
