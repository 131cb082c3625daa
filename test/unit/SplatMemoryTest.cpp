// Splat constants stay one element through the compile path (Note [Splat
// constants] in ir/Attribute.h): twelve `dense<1.5> : f32[16000,16000]`
// constants, 12 GB if expanded, are parsed, written to a model file and read
// back, optimized by the default pipeline (folding included) and lowered by
// both back ends in a child process whose peak resident memory, read with
// wait4's rusage, stays under kPeakBound. The child's address space is
// capped a little above that, so that a regression fails fast instead of
// taking the machine's memory.
#include "frontend/ModelFile.h"
#include "ir/TextFormat.h"
#include "runtime/CompilePipeline.h"
#include "runtime/gpu/Lowering.h"

#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace fusec;

namespace {

constexpr int kSplats = 12;
constexpr long kPeakBound = 200l << 20;
constexpr rlim_t kAddressHeadroom = rlim_t(1) << 30;

std::string bigSplatsText() {
  const std::string type = "f32[16000,16000]";
  std::string results, consts, outputs;
  for (int i = 0; i < kSplats; ++i) {
    results += type + ", ";
    consts += "  %c" + std::to_string(i) + " = const() {value = dense<1.5>} : " + type + "\n";
    outputs += "%c" + std::to_string(i) + ", ";
  }
  return "func @splats(%x: " + type + ") -> (" + results + type + ", " + type + ") {\n" + consts +
         "  %n = neg(%c1) : " + type + "\n  %y = add(%x, %c0) : " + type + "\n  return " + outputs +
         "%n, %y\n}\n";
}

// The stages the child runs, each a distinct exit status when it fails.
enum Stage : int {
  Ok,
  Parse,
  ModelRoundTrip,
  Pipeline,
  NotSplats,
  LowerNvrtc,
  LowerLlvm,
  OutOfMemory,
};

std::string printed(const Module &m) {
  std::ostringstream os;
  printModule(m, os);
  return os.str();
}

int compileBigSplats() {
  Diagnostics diags;
  std::string text = bigSplatsText();
  std::unique_ptr<Module> m = parseModule(text, "splats.fir", diags);
  if (!m)
    return Parse;
  std::unique_ptr<Module> loaded = loadModelBuffer(serializeModel(*m), "splats.fb", "", diags);
  if (!loaded || printed(*loaded) != printed(*m))
    return ModelRoundTrip;
  if (!prepareModule(*m, PrecisionChoice::FP32, diags))
    return Pipeline;
  std::string optimized = printed(*m);
  if (optimized.find("dense<-1.5>") == std::string::npos || optimized.size() > 100000)
    return NotSplats; // neg folded to a splat, and nothing printed in full
  LoweredGraph nvrtc, llvm;
  EntryNamer nvrtcNames, llvmNames;
  if (!lowerForGpu(*m->graphs.front(), nvrtc, nvrtcNames, diags, true, Backend::Nvrtc))
    return LowerNvrtc;
  if (!prepareModule(*loaded, PrecisionChoice::FP32, diags) ||
      !lowerForGpu(*loaded->graphs.front(), llvm, llvmNames, diags, true, Backend::Llvm))
    return LowerLlvm;
  return Ok;
}

/// The current size of this process's address space, in bytes.
rlim_t addressSpaceBytes() {
  std::ifstream statm("/proc/self/statm");
  rlim_t pages = 0;
  statm >> pages;
  return pages * rlim_t(sysconf(_SC_PAGESIZE));
}

} // namespace

TEST(SplatMemory, BigSplatsCompileInLittleMemory) {
  rlim_t cap = addressSpaceBytes() + kAddressHeadroom;
  pid_t pid = fork();
  ASSERT_GE(pid, 0) << "fork failed";
  if (pid == 0) {
    rlimit limit{cap, cap};
    setrlimit(RLIMIT_AS, &limit);
    int stage = OutOfMemory;
    try {
      stage = compileBigSplats();
    } catch (const std::bad_alloc &) {
    }
    _exit(stage);
  }
  int status = 0;
  rusage usage{};
  ASSERT_EQ(wait4(pid, &status, 0, &usage), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died of signal " << WTERMSIG(status)
                                 << " (out of memory: splats were expanded?)";
  EXPECT_EQ(WEXITSTATUS(status), Ok) << "stage " << WEXITSTATUS(status) << " failed (enum Stage)";
  long peak = usage.ru_maxrss * 1024; // Linux reports KiB
  EXPECT_LT(peak, kPeakBound) << "peak resident memory " << (peak >> 20) << " MiB";
  std::cout << "peak resident memory of the child: " << (peak >> 20) << " MiB\n";
}
