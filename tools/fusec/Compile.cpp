// fusec compile MODEL: runs the default pipeline and generates code for each
// kernel: the CUDA C++ of the pointwise template (--emit=cuda) or the PTX
// NVRTC makes of it for --target (--emit=ptx). Needs no GPU; --emit=ptx
// needs NVRTC. Kernels of templates without a code generator yet are
// listed as notes, never faked.
#include "codegen/Generic.h"
#include "codegen/Pointwise.h"
#include "ir/Kernel.h"
#include "passes/PassManager.h"
#include "runtime/Nvrtc.h"
#include "tools/ToolSupport.h"
#include "tools/fusec/Commands.h"

#include <vector>

namespace fusec {

namespace cl = llvm::cl;

cl::SubCommand compileCommand("compile", "Compile a model's kernels to CUDA C++ or PTX");

namespace {

enum class Emit { Cuda, Ptx };
enum class Target { Sm80, Sm90a };

cl::opt<std::string> input(cl::Positional, cl::Required, cl::desc("<model .fir|.fb>"),
                           cl::sub(compileCommand), cl::cat(toolCategory));
cl::opt<std::string> output("o", cl::desc("Output file (default: stdout)"), cl::init("-"),
                            cl::value_desc("OUT"), cl::sub(compileCommand), cl::cat(toolCategory));
cl::opt<Target, false, ChoiceParser<Target>>
    target("target", cl::desc("GPU target"), cl::init(Target::Sm90a),
           cl::values(clEnumValN(Target::Sm80, "sm_80", "Ampere"),
                      clEnumValN(Target::Sm90a, "sm_90a", "Hopper")),
           cl::sub(compileCommand), cl::cat(toolCategory));
cl::opt<Emit, false, ChoiceParser<Emit>>
    emit("emit", cl::desc("What to write"), cl::init(Emit::Cuda),
         cl::values(clEnumValN(Emit::Cuda, "cuda", "the generated CUDA C++"),
                    clEnumValN(Emit::Ptx, "ptx", "PTX compiled by NVRTC")),
         cl::sub(compileCommand), cl::cat(toolCategory));

// Hidden, for the generic emitter's lit tests: no passes, so every op stays
// top-level, and each op but constants and kernels gets its generic kernel.
cl::opt<bool> genericOnly("generic", cl::Hidden,
                          cl::desc("Run no passes; generate every op with the generic emitter"),
                          cl::sub(compileCommand), cl::cat(toolCategory));

/// Generates the generic kernel of every non-constant op of `g`.
bool generateGeneric(const Graph &g, std::vector<GeneratedKernel> &kernels, Diagnostics &diags) {
  bool ok = true;
  for (const auto &op : g.ops()) {
    if (op->kind() == OpKind::Const || op->kind() == OpKind::Kernel)
      continue;
    std::optional<GeneratedKernel> k = emitGenericKernel(*op, g.name(), diags);
    if (k)
      kernels.push_back(std::move(*k));
    ok &= k.has_value();
  }
  return ok;
}

/// Generates `kernel` into `kernels`; a template without a generator is a note.
bool generateKernel(const Op &kernel, const Graph &g, std::vector<GeneratedKernel> &kernels,
                    Diagnostics &diags) {
  const std::string &name = kernel.getString("template");
  if (lookupKernelTemplate(name) != KernelTemplate::Pointwise) {
    diags.note(kernel.loc(), "kernel '%" + kernel.result(0)->name() + "': template '" + name +
                                 "' has no code generator yet");
    return true;
  }
  std::optional<GeneratedKernel> k = emitPointwiseKernel(kernel, g.name(), diags);
  if (k)
    kernels.push_back(std::move(*k));
  return k.has_value();
}

/// The text to write: all kernels in one translation unit, or its PTX.
std::optional<std::string> render(const Module &module, const std::vector<GeneratedKernel> &kernels,
                                  Diagnostics &diags) {
  std::string unit = cudaTranslationUnit(kernels);
  if (emit == Emit::Cuda)
    return unit;
  std::string program = "fusec_" + (module.graphs.empty() ? "module" : module.graphs[0]->name());
  return compileToPtx({unit, program, target == Target::Sm80 ? "sm_80" : "sm_90a"}, diags);
}

} // namespace

int runCompile() {
  Diagnostics diags;
  std::unique_ptr<Module> module = loadInput(input, diags);
  if (!module || (!genericOnly && !optimizeModule(*module, PrecisionChoice::FP32, diags)))
    return reportAndExit(diags, kExitUserError);
  std::vector<GeneratedKernel> kernels;
  bool ok = true;
  for (const auto &g : module->graphs)
    if (genericOnly)
      ok &= generateGeneric(*g, kernels, diags);
  for (const auto &g : module->graphs)
    for (const auto &op : g->ops())
      if (op->kind() == OpKind::Kernel)
        ok &= generateKernel(*op, *g, kernels, diags);
  std::optional<std::string> text = ok ? render(*module, kernels, diags) : std::nullopt;
  if (!text || !writeTextOutput(
                   output, [&](std::ostream &os) { os << *text; }, diags))
    return reportAndExit(diags, kExitUserError);
  return reportAndExit(diags, kExitOk);
}

} // namespace fusec
