// fusec run FILE: runs a graph of a model on the GPU (optimized by the
// default pipeline, compiled through the kernel cache) or on the CPU
// reference executor. --device=auto (the default) uses the GPU when one is
// usable and otherwise says so and falls back to the reference.
// Inputs come from .npy files (--input=NAME=PATH) or are seeded random
// (--seed); symbolic dims of random inputs are given with --dim=NAME=SIZE.
// Prints one summary line per output; --print-values prints the elements,
// -o DIR writes each output to DIR/NAME.npy. --check runs the reference too
// and fails when a GPU output differs by more than the GPU tolerance.
// FILE may be a `.fusec` artifact (fusec compile -o): its kernels run as
// compiled, nothing is compiled, and one that does not fit this fusec or
// this GPU is refused; on the CPU its (lowered) graph runs on the reference.
#include "runtime/CompilePipeline.h"
#include "runtime/GpuArtifact.h"
#include "runtime/gpu/GpuHost.h"
#include "runtime/reference/Equivalence.h"
#include "runtime/reference/Npy.h"
#include "runtime/reference/Reference.h"
#include "tools/ToolSupport.h"
#include "tools/fusec/Commands.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <chrono>
#include <cmath>
#include <iostream>
#include <set>

namespace fusec {

namespace cl = llvm::cl;

cl::SubCommand runCommand("run", "Run a model on the GPU, or on the CPU reference executor");

static cl::opt<std::string> input(cl::Positional, cl::Required, cl::desc("<model .fir|.fb>"),
                                  cl::sub(runCommand), cl::cat(toolCategory));
static cl::opt<std::string> graphName("graph", cl::desc("Graph to run (default: the first)"),
                                      cl::sub(runCommand), cl::cat(toolCategory));
static cl::list<std::string> inputFiles("input", cl::desc("Read input NAME from a .npy file"),
                                        cl::value_desc("NAME=PATH"), cl::sub(runCommand),
                                        cl::cat(toolCategory));
static cl::list<std::string> dimValues("dim", cl::desc("Size of a symbolic dim of random inputs"),
                                       cl::value_desc("NAME=SIZE"), cl::CommaSeparated,
                                       cl::sub(runCommand), cl::cat(toolCategory));
static cl::opt<uint64_t> seed("seed", cl::desc("Seed of the random inputs"), cl::init(0),
                              cl::sub(runCommand), cl::cat(toolCategory));
static StageFlags stageFlags(runCommand, toolCategory);
static cl::opt<bool> printValues("print-values", cl::desc("Print the output elements"),
                                 cl::sub(runCommand), cl::cat(toolCategory));
static cl::opt<unsigned> maxValues("max-values", cl::desc("Elements printed per output"),
                                   cl::init(64), cl::sub(runCommand), cl::cat(toolCategory));
static cl::opt<std::string> outDir("o", cl::desc("Write each output to DIR/NAME.npy"),
                                   cl::value_desc("DIR"), cl::sub(runCommand),
                                   cl::cat(toolCategory));

enum class Device { Auto, Gpu, Cpu };
static cl::opt<Device, false, ChoiceParser<Device>>
    device("device", cl::desc("Where to run"), cl::init(Device::Auto),
           cl::values(clEnumValN(Device::Auto, "auto", "the GPU if usable, else the CPU"),
                      clEnumValN(Device::Gpu, "gpu", "the GPU (an error without one)"),
                      clEnumValN(Device::Cpu, "cpu", "the CPU reference executor")),
           cl::sub(runCommand), cl::cat(toolCategory));
static cl::opt<LayoutChoice, false, ChoiceParser<LayoutChoice>>
    layout("layout", cl::desc("Layout for conv/pool chains"), cl::init(LayoutChoice::Auto),
           layoutValues(), cl::sub(runCommand), cl::cat(toolCategory));
static cl::opt<PrecisionChoice, false, ChoiceParser<PrecisionChoice>>
    precision("precision", cl::desc("Autocast precision of the GPU pipeline"),
              cl::init(PrecisionChoice::FP32), precisionValues(), cl::sub(runCommand),
              cl::cat(toolCategory));
static cl::opt<Backend, false, ChoiceParser<Backend>> backend("backend", cl::desc("Code generator"),
                                                              cl::init(Backend::Nvrtc),
                                                              backendValues(), cl::sub(runCommand),
                                                              cl::cat(toolCategory));
static cl::opt<bool> explainCache("explain-cache",
                                  cl::desc("Say where each kernel's code and tuned config came "
                                           "from and why an entry of the kernel or tuning cache "
                                           "missed"),
                                  cl::sub(runCommand), cl::cat(toolCategory));
static cl::opt<bool> tune("tune",
                          cl::desc("Time the candidate configs of each kernel the tuning cache "
                                   "does not know on the GPU, and keep the fastest there"),
                          cl::sub(runCommand), cl::cat(toolCategory));
static cl::opt<bool> check("check", cl::desc("Compare GPU outputs with the CPU reference"),
                           cl::sub(runCommand), cl::cat(toolCategory));
static cl::opt<uint64_t> memoryBudget(
    "memory-budget", cl::init(0), cl::value_desc("bytes"), cl::sub(runCommand),
    cl::cat(toolCategory),
    cl::desc("Host memory the run's tensors may take (0: what this machine has available)"));

namespace {

/// What --input and --dim say; malformed values are usage errors.
struct InputFlags {
  std::map<std::string, std::string> files; // input name → .npy path
  DimBindings dims;
};

bool parseInputFlags(InputFlags &flags, Diagnostics &diags) {
  for (const std::string &arg : inputFiles) {
    std::string name, path;
    if (!splitAssignment(arg, "input", name, path, diags))
      return false;
    name = llvm::StringRef(name).ltrim('%').str();
    if (!flags.files.emplace(name, path).second) {
      diags.error(Loc{}, "--input gives '%" + name + "' twice");
      return false;
    }
  }
  return parseDimFlags(dimValues, flags.dims, diags);
}

/// Every --dim names a symbolic dim of an input of `g`.
bool checkDimNames(const Graph &g, const DimBindings &dims, Diagnostics &diags) {
  std::set<std::string> known;
  for (const Value *v : g.inputs())
    for (const Dim &d : v->type().shape)
      if (!d.isStatic() && !d.isAnonymous())
        known.insert(d.symbol);
  for (const auto &[name, size] : dims)
    if (!known.count(name)) {
      std::string list;
      for (const std::string &k : known)
        list += (list.empty() ? "" : ", ") + k;
      diags.error(Loc{}, "--dim " + name + " names no dim of the inputs of graph '@" + g.name() +
                             "'" + (list.empty() ? "" : " (its dims: " + list + ")"));
    }
  return !diags.hasErrors();
}

/// An .npy input whose shape gives a named dim another size than --dim.
bool checkNpyAgreesWithDims(const Value &v, const Tensor &t, const std::string &path,
                            const DimBindings &dims, Diagnostics &diags) {
  const Shape &shape = v.type().shape;
  for (size_t k = 0; k < shape.size() && k < t.shape.size(); ++k) {
    auto it = dims.find(shape[k].symbol);
    if (shape[k].isStatic() || shape[k].isAnonymous() || it == dims.end() ||
        it->second == t.shape[k])
      continue;
    diags.error(Loc{}, "--dim " + it->first + "=" + std::to_string(it->second) +
                           " contradicts input '%" + v.name() + "' of type " + v.type().str() +
                           " read as " + t.typeStr() + " from '" + path + "'");
    return false;
  }
  return true;
}

bool readInputFile(const Value &v, const std::string &path, const DimBindings &dims,
                   MemoryBudget &memory, Tensor &t, Diagnostics &diags) {
  NpyReadOptions opts;
  opts.u2AsBFloat16 = v.type().dtype == DType::BF16;
  opts.maxFileBytes = std::min(opts.maxFileBytes, memory.remaining() + (uint64_t(1) << 20));
  return readNpy(path, t, diags, opts) &&
         memory.reserveBytes(t.bytes.size(), "input '%" + v.name() + "'", Loc{}, diags) &&
         checkNpyAgreesWithDims(v, t, path, dims, diags);
}

bool gatherInputs(const Graph &g, InputFlags flags, MemoryBudget &memory,
                  std::vector<Tensor> &inputs, Diagnostics &diags) {
  auto &[files, dims] = flags;
  if (!checkDimNames(g, dims, diags))
    return false;
  std::string random;
  for (unsigned i = 0; i < g.numInputs(); ++i) {
    const Value &v = *g.input(i);
    Tensor t;
    auto file = files.find(v.name());
    bool ok = file != files.end()
                  ? readInputFile(v, file->second, dims, memory, t, diags)
                  : randomInputWithDims(v, dims, seed * 1000003 + i, memory, t, diags);
    if (!ok)
      return false;
    if (file != files.end())
      files.erase(file);
    else
      random += (random.empty() ? "%" : ", %") + v.name();
    inputs.push_back(std::move(t));
  }
  for (const auto &[name, path] : files)
    diags.error(Loc{}, "graph '@" + g.name() + "' has no input named '%" + name + "'");
  if (!random.empty() && !diags.hasErrors())
    diags.note(Loc{}, "random inputs (--seed=" + std::to_string(seed) + "): " + random);
  return !diags.hasErrors();
}

void printSummary(const std::string &name, const Tensor &t) {
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  size_t nans = 0, n = t.numElements();
  for (size_t i = 0; i < n; ++i) {
    double x = t.getDouble(i);
    if (std::isnan(x)) {
      ++nans;
      continue;
    }
    lo = std::min(lo, x);
    hi = std::max(hi, x);
    sum += x;
  }
  std::cout << "%" << name << ": " << t.typeStr();
  if (n > nans)
    std::cout << " min=" << lo << " max=" << hi << " mean=" << sum / double(n - nans);
  std::cout << " nan=" << nans << "\n";
}

const Graph *selectGraph(const Module &m, Diagnostics &diags) {
  if (graphName.empty())
    return m.graphs.front().get();
  for (const auto &g : m.graphs)
    if (g->name() == llvm::StringRef(graphName).ltrim('@'))
      return g.get();
  diags.error(Loc{}, "the model has no graph named '@" + graphName + "'");
  return nullptr;
}

bool writeOutputs(const Graph &g, const std::vector<Tensor> &outputs, Diagnostics &diags) {
  if (std::error_code ec = llvm::sys::fs::create_directories(outDir.getValue())) {
    diags.error(Loc{}, "cannot create directory '" + outDir + "': " + ec.message());
    return false;
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    llvm::SmallString<256> path(outDir.getValue());
    llvm::sys::path::append(path, g.outputs()[i]->name() + ".npy");
    if (!writeNpy(std::string(path), outputs[i], diags))
      return false;
  }
  return true;
}

/// "memory hit", "disk hit" or "compiled (why the cache missed)".
std::string explainLookup(const CacheLookup &l) {
  std::string source = cacheSourceName(l.source);
  return l.source == CacheLookup::Source::Compiled ? source + " (" + l.whyMissed + ")"
                                                   : source + " hit";
}

double elapsedMs(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

bool runOnCpu(const Graph &g, const std::vector<Tensor> &inputs, MemoryBudget &memory,
              std::vector<Tensor> &outputs, Diagnostics &diags) {
  auto start = std::chrono::steady_clock::now();
  if (!runReference(g, inputs, outputs, diags, &memory))
    return false;
  std::cerr << "ran @" << g.name() << " on the CPU reference in " << elapsedMs(start) << " ms\n";
  return true;
}

/// Compares GPU outputs with the reference's on the original graph `g`; an
/// error when beyond the tolerance of what the GPU ran (`ran`, the
/// optimized graph: autocast lowers its precision).
bool checkAgainstReference(const Graph &g, const Graph &ran, const std::vector<Tensor> &inputs,
                           MemoryBudget &memory, const std::vector<Tensor> &got,
                           Diagnostics &diags) {
  std::vector<Tensor> want;
  if (!runOnCpu(g, inputs, memory, want, diags))
    return false;
  EquivalenceResult r;
  r.tolerance = gpuToleranceFor(lowestPrecision(ran));
  for (unsigned k = 0; k < want.size(); ++k)
    compareOutput(g, k, want[k], got[k], r);
  std::cerr << "check: worst error " << r.worstError << " (tolerance " << r.tolerance << ")"
            << (r.worstWhere.empty() ? "" : " at " + r.worstWhere) << "\n";
  if (r.worstError <= r.tolerance)
    return true;
  diags.error(g.loc(), "GPU result differs from the CPU reference: " + r.worstWhere);
  return false;
}

/// Optimizes a copy of `g` (unless it comes from an artifact, whose kernel
/// cache `artifact` then is), compiles it for the inputs' shapes and runs it.
bool runOnGpu(const Graph &g, const std::vector<Tensor> &inputs, MemoryBudget &memory,
              std::vector<Tensor> &outputs, const LoadedArtifact *artifact, Diagnostics &diags) {
  Module m;
  m.graphs.push_back(g.clone());
  auto start = std::chrono::steady_clock::now();
  Diagnostics passDiags; // the passes' notes (memory plan, ...) are not for this tool
  StageTrace trace = stageFlags.trace();
  if (!artifact && !prepareModule(m, precision, passDiags, layout, &trace)) {
    diags.append(passDiags);
    return false;
  }
  std::vector<std::vector<int64_t>> shapes;
  for (const Tensor &t : inputs)
    shapes.push_back(t.shape);
  GpuBuildOptions opts;
  opts.backend = backend;
  opts.tuning = tune ? TuningMode::Tune : TuningMode::Cached;
  if (artifact) // its kernels are compiled, their configs chosen
    opts = {artifact->target, artifact->cache.get(), true, Backend::Nvrtc,
            nullptr,          TuningMode::Off};
  opts.trace = &trace;
  std::unique_ptr<GpuProgram> p = buildGpuProgram(*m.graphs[0], shapes, opts, diags);
  trace.printTimes();
  if (!p)
    return false;
  for (const Diagnostic &note : p->fallbacks())
    diags.note(note.loc, note.message);
  std::cerr << "compiled @" << g.name() << " into " << p->kernels().size() << " kernels in "
            << elapsedMs(start) << " ms\n";
  if (explainCache)
    for (const GpuKernelReport &k : p->kernels())
      std::cerr << "cache: " << k.name << " [" << k.lookup.key << "]: " << explainLookup(k.lookup)
                << (k.tuning.empty() ? "" : "\ntuning: " + k.name + " " + k.tuning) << "\n";
  for (const Value *v : p->graph().outputs())
    if (!memory.reserve(v->type().dtype, staticSizes(v->type().shape),
                        "output '%" + v->name() + "'", g.loc(), diags))
      return false;
  start = std::chrono::steady_clock::now();
  if (!runOnHostTensors(*p, inputs, outputs, diags))
    return false;
  std::cerr << "ran @" << g.name() << " on the GPU in " << elapsedMs(start)
            << " ms (first run, copies included)\n";
  return !check || checkAgainstReference(g, *m.graphs[0], inputs, memory, outputs, diags);
}

/// The device --device asks for: auto becomes the GPU when it can be opened.
Device chooseDevice(Diagnostics &diags) {
  if (device != Device::Auto)
    return device;
  std::string whyNot;
  if (gpu::openDevice(&whyNot))
    return Device::Gpu;
  diags.note(Loc{}, "running on the CPU reference: " + whyNot);
  return Device::Cpu;
}

} // namespace

int runRun() {
  Diagnostics diags;
  InputFlags flags;
  if (!parseInputFlags(flags, diags) || !stageFlags.trace().checkNames(diags))
    return reportAndExit(diags, kExitUsage);
  Device where = chooseDevice(diags);
  if (check && where == Device::Cpu) {
    diags.error(Loc{}, std::string("--check compares the GPU's outputs with the CPU reference, "
                                   "and this run is on the CPU") +
                           (device == Device::Cpu ? " (--device=cpu)" : ": no usable GPU"));
    return reportAndExit(diags, kExitUsage);
  }
  std::optional<LoadedArtifact> artifact;
  std::unique_ptr<Module> module;
  if (isArtifactFile(input) && backend.getNumOccurrences()) {
    diags.error(Loc{}, "an artifact's kernels are compiled already: --backend does not apply");
    return reportAndExit(diags, kExitUsage);
  }
  if (isArtifactFile(input)) {
    std::optional<gpu::DeviceInfo> device = where == Device::Gpu ? gpu::openDevice() : std::nullopt;
    if ((artifact = loadArtifact(input, device, diags)))
      module = std::move(artifact->module);
  } else {
    module = loadInput(input, diags);
  }
  if (!module)
    return reportAndExit(diags, kExitUserError);
  const Graph *g = selectGraph(*module, diags);
  std::vector<Tensor> inputs, outputs;
  MemoryBudget memory(memoryBudget ? memoryBudget : availableMemoryBytes());
  if (!g || !gatherInputs(*g, std::move(flags), memory, inputs, diags))
    return reportAndExit(diags, kExitUserError);

  bool ran = where == Device::Gpu
                 ? runOnGpu(*g, inputs, memory, outputs, artifact ? &*artifact : nullptr, diags)
                 : runOnCpu(*g, inputs, memory, outputs, diags);
  if (!ran)
    return reportAndExit(diags, kExitUserError);

  for (size_t i = 0; i < outputs.size(); ++i) {
    printSummary(g->outputs()[i]->name(), outputs[i]);
    if (printValues)
      printTensor(outputs[i], std::cout, maxValues);
  }
  if (!outDir.empty() && !writeOutputs(*g, outputs, diags))
    return reportAndExit(diags, kExitUserError);
  return reportAndExit(diags, kExitOk);
}

} // namespace fusec
