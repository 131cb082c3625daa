// fusec compile MODEL: runs the default pipeline and generates every kernel
// the runtime would launch (see generateGraph), with the NVRTC back end (CUDA
// C++) or the LLVM back end (LLVM IR; --backend=llvm). --emit says what to
// write: the CUDA C++ (cuda) or the LLVM IR (llvm), the PTX the back end
// makes of it for --target (ptx), a per-kernel report (report), or a `.fusec`
// artifact that `fusec run` runs without compiling (artifact; the default
// when -o ends in .fusec). Needs no GPU; ptx and artifact with the NVRTC
// back end need NVRTC, the LLVM back end only the toolkit's libdevice. What is left to run time
// (kernels that need bound shapes, kernels that run op by op) is listed in notes, never faked.
// --dim binds symbolic dims, so that everything is generated.
#include "codegen/Codegen.h"
#include "codegen/cuda/Render.h"
#include "codegen/kir/Kir.h"
#include "codegen/llvm/Nvptx.h"
#include "ir/Dot.h"
#include "ir/Kernel.h"
#include "runtime/CompilePipeline.h"
#include "runtime/GpuArtifact.h"
#include "runtime/gpu/Nvrtc.h"
#include "tools/ToolSupport.h"
#include "tools/fusec/Commands.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"

#include <sstream>
#include <vector>

namespace fusec {

namespace cl = llvm::cl;

cl::SubCommand compileCommand("compile", "Compile a model's kernels (CUDA C++, PTX, artifact)");

namespace {

enum class Emit { Cuda, Llvm, Ptx, Kir, Report, Dot, Artifact };
enum class Target { Sm80, Sm90, Sm90a };

cl::opt<std::string> input(cl::Positional, cl::Required, cl::desc("<model .fir|.fb>"),
                           cl::sub(compileCommand), cl::cat(toolCategory));
cl::opt<std::string> output("o", cl::desc("Output file (default: stdout)"), cl::init("-"),
                            cl::value_desc("OUT"), cl::sub(compileCommand), cl::cat(toolCategory));
cl::opt<Target, false, ChoiceParser<Target>>
    target("target", cl::desc("GPU target"), cl::init(Target::Sm90a),
           cl::values(clEnumValN(Target::Sm80, "sm_80", "Ampere"),
                      clEnumValN(Target::Sm90, "sm_90", "Hopper, portable"),
                      clEnumValN(Target::Sm90a, "sm_90a", "Hopper")),
           cl::sub(compileCommand), cl::cat(toolCategory));
cl::opt<Emit, false, ChoiceParser<Emit>> emit(
    "emit", cl::desc("What to write (default: artifact for -o *.fusec, else cuda)"),
    cl::init(Emit::Cuda),
    cl::values(clEnumValN(Emit::Cuda, "cuda", "the generated CUDA C++ (NVRTC back end)"),
               clEnumValN(Emit::Llvm, "llvm", "the generated LLVM IR (LLVM back end)"),
               clEnumValN(Emit::Ptx, "ptx", "PTX compiled by the back end"),
               clEnumValN(Emit::Kir, "kir", "each kernel in the kernel IR both back ends render"),
               clEnumValN(Emit::Report, "report", "one line per kernel"),
               clEnumValN(Emit::Dot, "dot", "the fused graph for graphviz (kernels as clusters)"),
               clEnumValN(Emit::Artifact, "artifact", "a .fusec artifact")),
    cl::sub(compileCommand), cl::cat(toolCategory));
cl::opt<Backend, false, ChoiceParser<Backend>>
    backend("backend", cl::desc("Code generator (default: llvm for --emit=llvm, else nvrtc)"),
            cl::init(Backend::Nvrtc), backendValues(), cl::sub(compileCommand),
            cl::cat(toolCategory));
cl::list<std::string> dimValues("dim", cl::desc("Size of a symbolic dim"),
                                cl::value_desc("NAME=SIZE"), cl::CommaSeparated,
                                cl::sub(compileCommand), cl::cat(toolCategory));
cl::opt<PrecisionChoice, false, ChoiceParser<PrecisionChoice>>
    precision("precision", cl::desc("Autocast precision"), cl::init(PrecisionChoice::FP32),
              precisionValues(), cl::sub(compileCommand), cl::cat(toolCategory));
static cl::opt<LayoutChoice, false, ChoiceParser<LayoutChoice>>
    layout("layout", cl::desc("Layout for conv/pool chains"), cl::init(LayoutChoice::Auto),
           layoutValues(), cl::sub(compileCommand), cl::cat(toolCategory));

StageFlags stageFlags(compileCommand, toolCategory);

cl::opt<bool> noFallback("no-fallback",
                         cl::desc("Report a template's refusal of a kernel as an error instead "
                                  "of running the kernel op by op"),
                         cl::sub(compileCommand), cl::cat(toolCategory));

// Hidden, for the generic emitter's lit tests: no passes, so every op stays
// top-level, and each op but constants and kernels gets its generic kernel.
cl::opt<bool> genericOnly("generic", cl::Hidden,
                          cl::desc("Run no passes; generate every op with the generic emitter"),
                          cl::sub(compileCommand), cl::cat(toolCategory));

std::string targetName() {
  return target == Target::Sm80 ? "sm_80" : target == Target::Sm90 ? "sm_90" : "sm_90a";
}

Backend backendKind() {
  if (backend.getNumOccurrences() == 0 && emit == Emit::Llvm)
    return Backend::Llvm;
  return backend;
}

Emit emitKind() {
  if (emit.getNumOccurrences() == 0 && llvm::StringRef(output).ends_with(".fusec"))
    return Emit::Artifact;
  if (emit.getNumOccurrences() == 0 && backendKind() == Backend::Llvm)
    return Emit::Llvm;
  return emit;
}

/// What --emit and --backend cannot do together, or "".
std::string unsupportedCombination() {
  Backend b = backendKind();
  Emit e = emitKind();
  if (b == Backend::Nvrtc && e == Emit::Llvm)
    return "--emit=llvm needs --backend=llvm";
  if (b == Backend::Llvm && e == Emit::Cuda)
    return "--emit=cuda is the NVRTC back end's; the LLVM back end writes --emit=llvm";
  if (b == Backend::Llvm && e == Emit::Artifact)
    return "artifacts hold kernels of the NVRTC back end only, so far";
  return "";
}

/// Generates the generic kernel of every non-constant op of `g`.
bool generateGeneric(const Graph &g, EntryNamer &names, std::vector<GeneratedKernel> &kernels,
                     Diagnostics &diags) {
  bool ok = true;
  for (const auto &op : g.ops()) {
    if (op->kind() == OpKind::Const || op->kind() == OpKind::Kernel)
      continue;
    std::optional<GeneratedKernel> k =
        emitKernel(*op, names(*op, g.name()), diags, backendKind(), targetName());
    if (k)
      kernels.push_back(std::move(*k));
    ok &= k.has_value();
  }
  return ok;
}

/// The input shapes of `g` with its symbolic dims bound by --dim, or
/// nullopt when some dim is unbound (`unbound` then names the input).
std::optional<std::vector<std::vector<int64_t>>>
inputShapes(const Graph &g, const DimBindings &dims, std::string *unbound = nullptr) {
  std::vector<std::vector<int64_t>> shapes;
  for (const Value *v : g.inputs()) {
    shapes.emplace_back();
    for (const Dim &d : v->type().shape) {
      auto it = dims.find(d.symbol);
      if (!d.isStatic() && (d.isAnonymous() || it == dims.end())) {
        if (unbound)
          *unbound = "input '%" + v->name() + "' of type " + v->type().str();
        return std::nullopt;
      }
      shapes.back().push_back(d.isStatic() ? d.size : it->second);
    }
  }
  return shapes;
}

/// A note for an op whose kernel waits for bound shapes.
void noteDeferred(const Op &op, const Diagnostics &why, Diagnostics &diags) {
  diags.note(op.loc(), describeLaunchedOp(op) + " is generated once its shapes are bound: " +
                           (why.all().empty() ? "" : why.all().front().message));
}

/// Generates every kernel of `g` as the runtime would run it. With all
/// input shapes known (static or bound by --dim) that is exactly the
/// runtime's lowering (kernels a template refuses run op by op, noted);
/// otherwise each op whose emitter needs static shapes is noted.
bool generateGraph(const Graph &g, const DimBindings &dims, EntryNamer &names,
                   std::vector<GeneratedKernel> &kernels, StageTrace &trace, Diagnostics &diags) {
  if (auto shapes = inputShapes(g, dims)) {
    std::optional<LoweredProgram> program =
        lowerProgram(g, *shapes, names, !noFallback, backendKind(), targetName(), &trace, diags);
    if (!program)
      return false;
    for (const Diagnostic &note : program->steps.fallbacks)
      diags.note(note.loc, note.message);
    for (LoweredStep &step : program->steps.steps)
      kernels.push_back(std::move(step.kernel));
    return true;
  }
  for (const auto &op : g.ops()) {
    if (op->kind() == OpKind::Const)
      continue;
    Diagnostics trial;
    std::string entry = names(*op, g.name());
    if (std::optional<GeneratedKernel> k =
            emitKernel(*op, entry, trial, backendKind(), targetName())) {
      kernels.push_back(std::move(*k));
      continue;
    }
    names.release(entry);
    if (noFallback)
      diags.append(trial);
    else
      noteDeferred(*op, trial, diags);
  }
  return !diags.hasErrors();
}

std::string launchStr(const GeneratedKernel &k) {
  if (!k.launch)
    return "launch at run time";
  const LaunchConfig &c = *k.launch;
  std::ostringstream os;
  os << "grid " << c.grid[0] << "x" << c.grid[1] << "x" << c.grid[2] << ", block " << c.block[0]
     << "x" << c.block[1] << "x" << c.block[2] << ", shared " << c.sharedBytes << " B";
  if (c.cluster > 1)
    os << ", clusters of " << c.cluster;
  return os.str();
}

/// One line per kernel, from its facts: name, launch, template and the ops
/// it fuses, the bytes it must move and its contractions' FLOPs ("?" while
/// its shapes are symbolic), then its schedule where the template says it.
std::string report(const std::vector<GeneratedKernel> &kernels) {
  std::ostringstream os;
  for (const GeneratedKernel &k : kernels) {
    const KernelFacts &f = k.facts;
    bool sized = k.launch.has_value();
    std::string what = f.generic ? "generic " + f.fuses : f.templateName + " fuses " + f.fuses;
    os << k.name << ": " << launchStr(k) << "; " << what << "; moves "
       << (sized ? std::to_string(f.bytes) : "?") << " B, "
       << (sized ? std::to_string(f.flops) : "?") << " FLOP"
       << (f.schedule.empty() ? "" : "; " + f.schedule) << "\n";
  }
  return os.str();
}

/// Each kernel's kir.
std::string kirText(const std::vector<GeneratedKernel> &kernels) {
  std::string out;
  for (const GeneratedKernel &k : kernels)
    out += (out.empty() ? "" : "\n") + kir::print(*k.kir);
  return out;
}

/// The text to write: all kernels in one translation unit (or LLVM module),
/// its PTX, or a report.
std::optional<std::string> render(const Module &module, const std::vector<GeneratedKernel> &kernels,
                                  Diagnostics &diags) {
  if (emitKind() == Emit::Report)
    return report(kernels);
  if (emitKind() == Emit::Kir)
    return kirText(kernels);
  if (backendKind() == Backend::Llvm) {
    std::string ir = llvmir::linkKernels(kernels);
    if (emitKind() == Emit::Llvm)
      return ir;
    return llvmir::compileToPtx(ir, targetName(), diags);
  }
  std::string unit = cuda::translationUnit(kernels);
  if (emitKind() == Emit::Cuda)
    return unit;
  std::string program = "fusec_" + (module.graphs.empty() ? "module" : module.graphs[0]->name());
  return compileToPtx({unit, program, targetName()}, diags);
}

int writeArtifactFile(const Module &m, const DimBindings &dims, StageTrace &trace,
                      Diagnostics &diags) {
  const Graph &g = *m.graphs.front();
  std::string unbound;
  std::optional<std::vector<std::vector<int64_t>>> shapes = inputShapes(g, dims, &unbound);
  if (!shapes) {
    diags.error(g.loc(), "an artifact needs static shapes: " + unbound +
                             " needs --dim for each of its symbolic dims");
    return reportAndExit(diags, kExitUserError);
  }
  if (output == "-" || sameFile(input, output)) {
    diags.error(Loc{}, "an artifact needs -o FILE.fusec (not stdout, not the input)");
    return reportAndExit(diags, kExitUsage);
  }
  std::optional<Artifact> a = compileArtifact(g, *shapes, targetName(), diags, &trace);
  trace.printTimes();
  if (!a || !writeArtifact(output, *a, diags))
    return reportAndExit(diags, kExitUserError);
  return reportAndExit(diags, kExitOk);
}

} // namespace

int runCompile() {
  Diagnostics diags;
  DimBindings dims;
  if (!parseDimFlags(dimValues, dims, diags))
    return reportAndExit(diags, kExitUsage);
  if (std::string why = unsupportedCombination(); !why.empty()) {
    diags.error(Loc{}, why);
    return reportAndExit(diags, kExitUsage);
  }
  StageTrace trace = stageFlags.trace();
  if (!trace.checkNames(diags))
    return reportAndExit(diags, kExitUsage);
  std::unique_ptr<Module> module = loadInput(input, diags);
  if (!module)
    return reportAndExit(diags, kExitUserError);
  Diagnostics passDiags; // notes of the passes (memory plan, ...) are not this tool's
  if (!genericOnly && !prepareModule(*module, precision, passDiags, layout, &trace)) {
    diags.append(passDiags);
    return reportAndExit(diags, kExitUserError);
  }
  if (emitKind() == Emit::Artifact)
    return writeArtifactFile(*module, dims, trace, diags);
  if (emitKind() == Emit::Dot) {
    auto dot = [&](std::ostream &os) {
      for (const auto &g : module->graphs)
        os << graphToDot(*g);
    };
    return reportAndExit(diags, writeTextOutput(output, dot, diags) ? kExitOk : kExitUserError);
  }
  std::vector<GeneratedKernel> kernels;
  EntryNamer names; // the module's kernels form one program
  bool ok = true;
  for (const auto &g : module->graphs)
    ok &= genericOnly ? generateGeneric(*g, names, kernels, diags)
                      : generateGraph(*g, dims, names, kernels, trace, diags);
  std::optional<std::string> text;
  if (ok) // --emit=ptx compiles the whole program at once: the compile stage
    trace.stage(Stage::Compile, [&] {
      text = render(*module, kernels, diags);
      return text.has_value();
    });
  trace.printTimes();
  if (!text || !writeTextOutput(
                   output, [&](std::ostream &os) { os << *text; }, diags))
    return reportAndExit(diags, kExitUserError);
  return reportAndExit(diags, kExitOk);
}

} // namespace fusec
