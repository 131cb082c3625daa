// The compile-path oracle (see CompileOracle.h): the pipeline, the
// equivalence check and kernel generation on both back ends, driven through
// the entry points `fusec-opt --check-equivalence` and `fusec compile` use
// (runtime/CompilePipeline.h, runtime/reference/Equivalence.h, codegen/Codegen.h,
// runtime/gpu/Lowering.h, codegen/llvm/Nvptx.h, runtime/gpu/Nvrtc.h).
#include "test/fuzz/CompileOracle.h"

#include "codegen/Codegen.h"
#include "codegen/cuda/Render.h"
#include "codegen/llvm/Nvptx.h"
#include "ir/Assert.h"
#include "ir/Verifier.h"
#include "runtime/CompilePipeline.h"
#include "runtime/gpu/Lowering.h"
#include "runtime/gpu/Nvrtc.h"
#include "runtime/reference/ConstantFolder.h"
#include "runtime/reference/Equivalence.h"
#include "runtime/reference/Reference.h"
#include "test/fuzz/FuzzCommon.h"
#include "test/fuzz/Reproducer.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <iostream>
#include <set>

namespace fusec::fuzz {

namespace {

/// Kernel parameter space (Note [Kernel parameter space] in
/// passes/FusionBounds.cpp): PTX ISA 8.1 on (NVRTC) 32764 bytes, before it
/// (LLVM 19 writes 8.0) 4352.
size_t maxParamBytes(Backend b) { return b == Backend::Llvm ? 4352 : 32764; }
constexpr unsigned kMaxSharedBytes = 227 * 1024;
constexpr const char *kTarget = "sm_90a";

/// The generated module's text, kept to show with any failure.
std::string generatedText;

/// Reports the failed check, the diagnostics and `detail` (what was
/// checked), then the generated module, and aborts.
[[noreturn]] void failed(const std::string &what, const Diagnostics &diags = {},
                         const std::string &detail = "") {
  std::cerr << "compile-path oracle failed: " << what << "\n"
            << diags.str() << detail
            << "\n--- the generated module, as a reproducer (Reproducer.h):\n"
            << generatedText << std::flush;
  std::abort();
}

/// Parameters are 8 bytes each (pointers and `long long` scalars), tensor maps 128.
void checkKernel(const GeneratedKernel &k, const std::string &where) {
  uint64_t bytes = kernelParamBytes(k.args);
  if (bytes > maxParamBytes(k.backend))
    failed(where + ": kernel " + k.name + " takes " + std::to_string(bytes) +
           " bytes of parameters, more than the " + std::to_string(maxParamBytes(k.backend)) +
           " of the parameter space");
  if (!k.launch)
    return;
  const LaunchConfig &c = *k.launch;
  uint64_t threads = uint64_t(c.block[0]) * c.block[1] * c.block[2];
  bool ok = threads >= 1 && threads <= 1024 && c.block[2] <= 64 && c.grid[0] <= 0x7fffffffu &&
            c.grid[1] <= 65535 && c.grid[2] <= 65535 && c.sharedBytes <= kMaxSharedBytes;
  if (!ok)
    failed(where + ": kernel " + k.name + " has a launch no GPU takes: grid " +
           std::to_string(c.grid[0]) + "x" + std::to_string(c.grid[1]) + "x" +
           std::to_string(c.grid[2]) + ", block " + std::to_string(c.block[0]) + "x" +
           std::to_string(c.block[1]) + "x" + std::to_string(c.block[2]) + ", shared " +
           std::to_string(c.sharedBytes));
}

/// The kernels of one module go into one translation unit (or LLVM module):
/// their entry names must differ.
void checkKernels(const std::vector<GeneratedKernel> &kernels, const std::string &where) {
  std::set<std::string> names;
  for (const GeneratedKernel &k : kernels) {
    if (!names.insert(k.name).second)
      failed(where + ": two kernels are named " + k.name);
    checkKernel(k, where);
  }
}

bool referenceRuns(const Graph &g, const GeneratedModule &gen, size_t gi) {
  // The inputs checkEquivalence makes (runtime/reference/Equivalence.cpp, makeInputs).
  std::vector<Tensor> inputs, outputs;
  Diagnostics diags;
  for (unsigned i = 0; i < g.numInputs(); ++i) {
    inputs.emplace_back();
    if (!randomInput(*g.input(i), gen.inputShapes[gi][i], gen.seed * 7919 + i, inputs.back(),
                     diags))
      return false;
  }
  return runReference(g, inputs, outputs, diags);
}

/// Runs the default pipeline on gen's module and compares each graph with
/// `original`; false when the reference cannot run an original graph.
bool optimizeAndCompare(GeneratedModule &gen, const Module &original) {
  std::vector<const PassInfo *> pipeline;
  Diagnostics diags;
  FUSEC_ASSERT(parsePipeline("default", pipeline, diags), "no default pipeline");
  PassOptions opts;
  opts.precision = gen.precision;
  opts.foldConstant = makeReferenceFolder();
  PipelineHooks hooks;
  hooks.verifyEach = true;
  if (!runPipeline(*gen.module, pipeline, opts, hooks, diags))
    failed("the default pipeline failed on a module that verifies", diags);
  // Autocast to f16/bf16 rounds every f32 value the random graph computes;
  // an ill-conditioned op after it (pow of a small base) then moves the
  // result by more than any fixed tolerance: no meaningful comparison. The
  // original must still run on the reference (or the module is skipped).
  if (gen.precision != PrecisionChoice::FP32)
    return std::all_of(original.graphs.begin(), original.graphs.end(), [&](const auto &g) {
      return referenceRuns(*g, gen, size_t(&g - original.graphs.data()));
    });
  for (size_t gi = 0; gi < original.graphs.size(); ++gi) {
    EquivalenceOptions eq;
    eq.seed = gen.seed;
    eq.dims = gen.dims[gi];
    Diagnostics check;
    if (checkEquivalence(*original.graphs[gi], *gen.module->graphs[gi], eq, check).equivalent)
      continue;
    if (!referenceRuns(*original.graphs[gi], gen, gi))
      return false;
    failed("the optimized module is not equivalent to the original", check,
           "--- the optimized module:\n" + printed(*gen.module));
  }
  return true;
}

/// `fusec compile` without --dim: each top-level op's kernel, where its
/// emitter takes symbolic shapes.
std::vector<GeneratedKernel> symbolicKernels(const Module &m, Backend backend) {
  std::vector<GeneratedKernel> kernels;
  EntryNamer names; // the module's kernels form one program
  for (const auto &g : m.graphs)
    for (const auto &op : g->ops()) {
      Diagnostics trial;
      if (op->kind() == OpKind::Const)
        continue;
      std::string entry = names(*op, g->name());
      if (std::optional<GeneratedKernel> k = emitKernel(*op, entry, trial, backend, kTarget))
        kernels.push_back(std::move(*k));
      else
        names.release(entry);
    }
  return kernels;
}

/// What the runtime launches for the generated sizes on GPU `target`: every
/// graph specialized and lowered, which must succeed.
std::vector<GeneratedKernel> loweredKernels(const Module &m, const GeneratedModule &gen,
                                            Backend backend, const char *target) {
  std::vector<GeneratedKernel> kernels;
  EntryNamer names;
  for (size_t gi = 0; gi < m.graphs.size(); ++gi) {
    Diagnostics diags;
    DimBindings bindings;
    std::unique_ptr<Graph> g =
        specializeShapes(*m.graphs[gi], gen.inputShapes[gi], bindings, diags);
    if (!g)
      failed("the optimized graph does not specialize to the sizes the reference ran", diags);
    LoweredGraph lowered;
    if (!lowerForGpu(*g, lowered, names, diags, /*allowFallback=*/true, backend, target))
      failed(std::string("lowering for the ") + backendName(backend) + " back end failed", diags);
    for (LoweredStep &step : lowered.steps)
      kernels.push_back(std::move(step.kernel));
  }
  return kernels;
}

/// Each LLVM kernel's module parses and LLVM's verifier accepts it. (They
/// are linked into one module, which NVPTX verifies again, in PTX mode.)
void verifyLlvmKernels(const std::vector<GeneratedKernel> &kernels, const std::string &where) {
  for (const GeneratedKernel &k : kernels) {
    llvm::LLVMContext ctx;
    llvm::SMDiagnostic error;
    std::unique_ptr<llvm::Module> m = llvm::parseAssemblyString(k.source, error, ctx);
    std::string problems;
    llvm::raw_string_ostream os(problems);
    if (!m)
      error.print(k.name.c_str(), os, false);
    else if (llvm::verifyModule(*m, &os))
      os << "(LLVM's verifier)";
    if (!problems.empty())
      failed(where + ": the LLVM IR of kernel " + k.name + " is invalid: " + problems, {},
             k.source);
  }
}

/// ptxas at CUDA_HOME/bin or /usr/local/cuda/bin, or "" (said once).
const std::string &ptxasPath() {
  static const std::string path = [] {
    std::string home = llvm::sys::Process::GetEnv("CUDA_HOME").value_or("/usr/local/cuda");
    llvm::ErrorOr<std::string> found =
        llvm::sys::findProgramByName("ptxas", {home + "/bin", "/usr/local/cuda/bin"});
    if (!found)
      std::cerr << "fuzz-compile: no ptxas (CUDA_HOME/bin): PTX is not assembled\n";
    return found ? *found : std::string();
  }();
  return path;
}

void assemble(const std::string &ptx, const char *target, const std::string &where) {
  if (ptxasPath().empty())
    return;
  llvm::SmallString<128> path, log;
  int fd = -1;
  if (llvm::sys::fs::createTemporaryFile("fusec-fuzz", "ptx", fd, path) ||
      llvm::sys::fs::createTemporaryFile("fusec-fuzz", "log", log))
    failed("cannot create a temporary file for ptxas");
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << ptx;
  }
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, log.str(), log.str()};
  int rc = llvm::sys::ExecuteAndWait(
      ptxasPath(), {ptxasPath(), std::string("-arch=") + target, path.str(), "-o", "/dev/null"},
      std::nullopt, redirects);
  auto output = llvm::MemoryBuffer::getFile(log);
  llvm::sys::fs::remove(path);
  llvm::sys::fs::remove(log);
  if (rc != 0)
    failed(where + ": ptxas failed (exit " + std::to_string(rc) +
               "): " + (output ? (*output)->getBuffer().str() : std::string()),
           {}, ptx);
}

/// NVRTC to a cubin (its ptxas runs too), where libnvrtc loads.
void compileWithNvrtc(const std::vector<GeneratedKernel> &kernels, const char *target,
                      const std::string &where) {
  static const bool haveNvrtc = [] {
    std::string whyNot;
    if (!loadNvrtc(&whyNot))
      std::cerr << "fuzz-compile: " << whyNot << ": CUDA C++ is not compiled\n";
    return whyNot.empty();
  }();
  if (!haveNvrtc || kernels.empty())
    return;
  Diagnostics diags;
  if (!compileCuda({cuda::translationUnit(kernels), "fusec_fuzz", target, Backend::Nvrtc}, diags))
    failed(where + ": NVRTC rejected the generated CUDA C++", diags);
}

bool hasSymbolicInput(const Module &m) {
  for (const auto &g : m.graphs)
    for (const Value *v : g->inputs())
      if (!isStatic(v->type().shape))
        return true;
  return false;
}

/// Whether a kernel of `kernels` is one whose template generates for sm_80 another kernel than
/// for sm_90a (attention: mma.sync there, wgmma here).
bool dependsOnTarget(const std::vector<GeneratedKernel> &kernels) {
  return std::any_of(kernels.begin(), kernels.end(), [](const GeneratedKernel &k) {
    return !k.facts.generic && k.facts.templateName == "attention";
  });
}

void checkBackend(const Module &m, const GeneratedModule &gen, Backend backend,
                  const OracleOptions &opts) {
  std::string name = backendName(backend);
  for (int pass = 0; pass < 3; ++pass) { // symbolic, lowered, lowered for sm_80
    bool lowered = pass > 0;
    if (!lowered && !hasSymbolicInput(m)) // the symbolic kernels would be the lowered ones
      continue;
    const char *target = pass == 2 ? "sm_80" : kTarget;
    std::vector<GeneratedKernel> kernels =
        lowered ? loweredKernels(m, gen, backend, target) : symbolicKernels(m, backend);
    if (pass == 2 && !dependsOnTarget(kernels))
      continue;
    std::string where =
        name + (lowered ? ", lowered" : ", symbolic") + (pass == 2 ? ", sm_80" : "");
    checkKernels(kernels, where);
    if (backend == Backend::Nvrtc) {
      if (opts.ptx)
        compileWithNvrtc(kernels, target, where);
      continue;
    }
    verifyLlvmKernels(kernels, where);
    if (!opts.ptx || kernels.empty())
      continue;
    Diagnostics diags;
    std::optional<std::string> ptx =
        llvmir::compileToPtx(llvmir::linkKernels(kernels), target, diags);
    if (!ptx)
      failed(where + ": the NVPTX back end failed", diags);
    assemble(*ptx, target, where);
  }
}

} // namespace

bool checkCompilePath(GeneratedModule &gen, const OracleOptions &opts) {
  generatedText = reproducerText(gen);
  if (opts.echo)
    std::cerr << generatedText << std::flush;
  Diagnostics diags;
  if (!verify(*gen.module, diags))
    failed("the generated module does not verify (a generator bug)", diags);
  checkRoundTrips(*gen.module);
  std::unique_ptr<Module> original = std::make_unique<Module>();
  for (const auto &g : gen.module->graphs)
    original->graphs.push_back(g->clone());
  if (!optimizeAndCompare(gen, *original))
    return false;
  checkBackend(*gen.module, gen, Backend::Nvrtc, opts);
  checkBackend(*gen.module, gen, Backend::Llvm, opts);
  return true;
}

} // namespace fusec::fuzz
