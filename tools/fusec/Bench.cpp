// fusec bench FILE: compiles a model for the GPU and times it. Reports, per
// kernel, the cold compile time (NVRTC, into an empty cache), the disk-cache
// and memory-cache hit times, the device time and the achieved bandwidth over
// the bytes the kernel must move (each operand read once, each result
// written once); then the end-to-end device time of a run replayed as a CUDA
// graph and of direct launches, and the host time per kernel of a graph
// replay. Each kernel's schedule (its template's tiles and choices) follows
// its row. Device times are medians of runs timed as triton.testing.do_bench
// times PyTorch, each after an L2 flush (runtime/gpu/DeviceTimer.h). --trace
// writes one run's kernels on a timeline (Chrome trace JSON). Cold compiles
// (the median of three) are timed after a warm-up build with the same back
// end, so they exclude its first use in the process, reported on its own. --json writes it
// all for the benchmark scripts (bench/).
#include "codegen/GeneratedKernel.h"
#include "ir/TextFormat.h"
#include "runtime/CompilePipeline.h"
#include "runtime/gpu/GpuHost.h"
#include "runtime/reference/Reference.h"
#include "tools/ToolSupport.h"
#include "tools/fusec/Commands.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>

namespace fusec {

namespace cl = llvm::cl;

cl::SubCommand benchCommand("bench", "Compile a model for the GPU and time it");
static StageFlags stageFlags(benchCommand, toolCategory);

static cl::opt<std::string> input(cl::Positional, cl::Required, cl::desc("<model .fir|.fb>"),
                                  cl::sub(benchCommand), cl::cat(toolCategory));
static cl::list<std::string> dimValues("dim", cl::desc("Size of a symbolic dim"),
                                       cl::value_desc("NAME=SIZE"), cl::CommaSeparated,
                                       cl::sub(benchCommand), cl::cat(toolCategory));
static cl::opt<PrecisionChoice, false, ChoiceParser<PrecisionChoice>>
    precision("precision", cl::desc("Autocast precision"), cl::init(PrecisionChoice::FP32),
              precisionValues(), cl::sub(benchCommand), cl::cat(toolCategory));
static cl::opt<LayoutChoice, false, ChoiceParser<LayoutChoice>>
    layout("layout", cl::desc("Layout for conv/pool chains"), cl::init(LayoutChoice::Auto),
           layoutValues(), cl::sub(benchCommand), cl::cat(toolCategory));
static cl::opt<Backend, false, ChoiceParser<Backend>>
    backend("backend", cl::desc("Code generator"), cl::init(Backend::Nvrtc), backendValues(),
            cl::sub(benchCommand), cl::cat(toolCategory));
static cl::opt<unsigned> iterations("iterations", cl::desc("Timed runs"), cl::init(50),
                                    cl::sub(benchCommand), cl::cat(toolCategory));
static cl::opt<std::string> tracePath("trace",
                                      cl::desc("Write one run's kernels as a Chrome trace "
                                               "(chrome://tracing, Perfetto)"),
                                      cl::value_desc("FILE"), cl::sub(benchCommand),
                                      cl::cat(toolCategory));
static cl::opt<bool> tune("tune",
                          cl::desc("First time the candidate configs of each kernel the tuning "
                                   "cache does not know, and keep the fastest there"),
                          cl::sub(benchCommand), cl::cat(toolCategory));
static cl::opt<std::string> jsonPath("json", cl::desc("Write the results as JSON"),
                                     cl::value_desc("FILE"), cl::sub(benchCommand),
                                     cl::cat(toolCategory));

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

struct Timings {
  std::vector<float> kernelMs;
  std::vector<std::pair<float, float>> trace; // one run: (start, duration) ms per kernel
  float graphMs = 0, directMs = 0;
  double hostUsPerKernel = 0;
};

/// Median device time of `iterations` runs, replayed as a CUDA graph or
/// launched directly.
std::optional<float> timeRuns(GpuProgram &p, const DeviceBuffers &in, const DeviceBuffers &out,
                              gpu::Stream s, DeviceTimer &timer, bool replay, Diagnostics &diags) {
  return timer.medianMs(
      s, 3, iterations,
      [&] {
        return replay ? p.enqueue(in.pointers(), out.pointers(), s, diags)
                      : p.enqueueDirect(in.pointers(), out.pointers(), s, diags);
      },
      diags);
}

/// Host microseconds per kernel of back-to-back graph replays.
std::optional<double> hostReplayCost(GpuProgram &p, const DeviceBuffers &in,
                                     const DeviceBuffers &out, gpu::Stream s, Diagnostics &diags) {
  constexpr unsigned kReplays = 200;
  auto start = Clock::now();
  for (unsigned r = 0; r < kReplays; ++r)
    if (!p.enqueue(in.pointers(), out.pointers(), s, diags))
      return std::nullopt;
  double us = msSince(start) * 1000.0;
  if (!gpu::synchronize(s, diags))
    return std::nullopt;
  return us / (kReplays * std::max<size_t>(1, p.kernels().size()));
}

/// Each measurement in turn; the first failure (a CUDA error is sticky)
/// stops the rest, so it is reported once.
bool measureOn(GpuProgram &p, const DeviceBuffers &in, const DeviceBuffers &out, gpu::Stream s,
               Timings &t, Diagnostics &diags) {
  std::unique_ptr<DeviceTimer> timer = DeviceTimer::create(diags);
  std::optional<std::vector<float>> kernels =
      timer ? p.timeSteps(in.pointers(), out.pointers(), s, *timer, iterations, diags)
            : std::nullopt;
  if (!kernels)
    return false;
  std::optional<float> graph = timeRuns(p, in, out, s, *timer, true, diags);
  std::optional<float> direct =
      graph ? timeRuns(p, in, out, s, *timer, false, diags) : std::nullopt;
  std::optional<double> host = direct ? hostReplayCost(p, in, out, s, diags) : std::nullopt;
  auto trace = host ? p.traceSteps(in.pointers(), out.pointers(), s, diags) : std::nullopt;
  if (!trace)
    return false;
  t = {*kernels, *trace, *graph, *direct, *host};
  return true;
}

bool measure(GpuProgram &p, const std::vector<Tensor> &inputs, Timings &t, Diagnostics &diags) {
  DeviceBuffers in, out;
  std::optional<gpu::Stream> s = gpu::createStream(diags);
  if (!s)
    return false;
  bool ok = prepareBuffers(p, inputs, in, out, diags) && measureOn(p, in, out, *s, t, diags);
  gpu::destroyStream(*s);
  return ok;
}

/// A graph whose kernels use what generated kernels use (a row reduction
/// with vector loads and shuffles, approximate and libdevice math). A back
/// end's first compile in a process costs far more than later ones (NVRTC:
/// 100-350 ms more on the H100 machine; LLVM: reading libdevice, the first
/// PTX the driver compiles), a cost of the process, not of a kernel:
/// building this first pays it before the kernels' cold compiles are timed.
constexpr const char *kWarmUpGraph =
    R"(func @fusec_warm_up(%x: f16[8,1024], %g: f16[1024]) -> (f16[8,1024], f32[8,1024]) {
  %y = layer_norm(%x, %g) : f16[8,1024]
  %z = gelu(%y) : f16[8,1024]
  %w = cast(%z) {to = f32} : f32[8,1024]
  %e = exp(%w) : f32[8,1024]
  return %z, %e
}
)";

/// Builds the warm-up graph with `backend` into a throwaway cache; returns
/// the milliseconds it took (a failure shows again in the real compiles).
double warmUp() {
  Diagnostics ignored;
  auto start = Clock::now();
  std::unique_ptr<Module> m = parseModule(kWarmUpGraph, "<warm-up>", ignored);
  llvm::SmallString<128> dir;
  if (!m || !prepareModule(*m, PrecisionChoice::FP32, ignored) ||
      llvm::sys::fs::createUniqueDirectory("fusec-bench-warm-up", dir))
    return msSince(start);
  KernelCache cache{std::string(dir.str())};
  buildGpuProgram(*m->graphs[0], {{8, 1024}, {1024}}, GpuBuildOptions{"", &cache, true, backend},
                  ignored);
  double ms = msSince(start);
  llvm::sys::fs::remove_directories(dir);
  return ms;
}

struct CompileTimes {
  double firstUseMs = 0;                      ///< the warm-up build
  std::vector<std::vector<double>> perKernel; ///< [cold, disk, memory][kernel]
};

/// Cold compiles per kernel, of which the median is reported: on the shared
/// GPU machines one varies by 2-4x between runs.
constexpr unsigned kColdRuns = 3;

/// Builds `g` into an empty cache directory (cold; kColdRuns times, the
/// medians kept), from such a directory in a new cache (disk hits), and
/// again (memory hits).
std::unique_ptr<GpuProgram> buildForTiming(const Graph &g, const std::vector<Tensor> &inputs,
                                           CompileTimes &times, StageTrace &trace,
                                           Diagnostics &diags) {
  std::vector<std::vector<int64_t>> shapes;
  for (const Tensor &t : inputs)
    shapes.push_back(t.shape);
  if (gpu::openDevice())
    times.firstUseMs = warmUp();
  if (tune) { // tuned once, before the builds timed: they read the tuning cache
    GpuBuildOptions opts{"", nullptr, true, backend, nullptr, TuningMode::Tune};
    if (!buildGpuProgram(g, shapes, opts, diags))
      return nullptr;
  }
  bool first = true; // the first (cold) build is the one traced
  auto build = [&](KernelCache &cache) {
    GpuBuildOptions opts{"", &cache, true, backend, first ? &trace : nullptr};
    first = false;
    std::unique_ptr<GpuProgram> p = buildGpuProgram(g, shapes, opts, diags);
    if (p) {
      times.perKernel.emplace_back();
      for (const GpuKernelReport &k : p->kernels())
        times.perKernel.back().push_back(k.compileMs);
    }
    return p;
  };
  std::unique_ptr<GpuProgram> p;
  llvm::SmallString<128> dir;
  for (unsigned r = 0; r < kColdRuns; ++r) {
    if (!dir.empty())
      llvm::sys::fs::remove_directories(dir);
    if (llvm::sys::fs::createUniqueDirectory("fusec-bench-cache", dir)) {
      diags.error(Loc{}, "cannot create a temporary cache directory");
      return nullptr;
    }
    KernelCache cold{std::string(dir.str())};
    if (!(p = build(cold)))
      break;
  }
  if (p) {
    // Per-kernel medians of the cold runs replace them.
    std::vector<double> medians;
    for (size_t k = 0; k < times.perKernel.front().size(); ++k) {
      std::vector<double> runs;
      for (unsigned r = 0; r < kColdRuns; ++r)
        runs.push_back(times.perKernel[r][k]);
      std::nth_element(runs.begin(), runs.begin() + kColdRuns / 2, runs.end());
      medians.push_back(runs[kColdRuns / 2]);
    }
    times.perKernel = {medians};
    KernelCache disk{std::string(dir.str())};
    for (unsigned r = 0; p && r < 2; ++r) // disk hits, then memory hits
      p = build(disk);
  }
  llvm::sys::fs::remove_directories(dir);
  return p;
}

void printTable(const GpuProgram &p, const CompileTimes &times, const Timings &t) {
  const std::vector<std::vector<double>> &compileMs = times.perKernel;
  std::printf("The %s back end's first build in this process: %.1f ms (not in the cold column)\n",
              backendName(backend), times.firstUseMs);
  std::printf("%-40s %-14s %9s %9s %9s %10s %9s\n", "kernel", "template", "cold ms", "disk ms",
              "mem ms", "device us", "GB/s");
  for (size_t i = 0; i < p.kernels().size(); ++i) {
    const GpuKernelReport &k = p.kernels()[i];
    double gbs = double(k.bytes) / (t.kernelMs[i] * 1e6);
    std::printf("%-40s %-14s %9.2f %9.3f %9.4f %10.2f %9.1f\n", k.name.c_str(),
                k.templateName.c_str(), compileMs[0][i], compileMs[1][i], compileMs[2][i],
                t.kernelMs[i] * 1000.0, gbs);
    if (!k.schedule.empty())
      std::printf("    %s\n", k.schedule.c_str());
    if (!k.tuning.empty())
      std::printf("    tuning: %s\n", k.tuning.c_str());
  }
  std::printf("end to end: %.2f us (graph replay), %.2f us (direct launches); host %.2f us per "
              "kernel under replay\n",
              t.graphMs * 1000.0, t.directMs * 1000.0, t.hostUsPerKernel);
}

llvm::json::Array fallbackMessages(const GpuProgram &p) {
  llvm::json::Array out;
  for (const Diagnostic &d : p.fallbacks())
    out.push_back(d.message);
  return out;
}

/// Chrome trace events ("X": complete events, microseconds) of one run.
bool writeTrace(const GpuProgram &p, const Timings &t, Diagnostics &diags) {
  llvm::json::Array events;
  for (size_t i = 0; i < p.kernels().size(); ++i) {
    const GpuKernelReport &k = p.kernels()[i];
    llvm::json::Object args{
        {"template", k.templateName},
        {"schedule", k.schedule},
        {"bytes", int64_t(k.bytes)},
        {"grid", llvm::json::Array{k.launch.grid[0], k.launch.grid[1], k.launch.grid[2]}},
        {"block", llvm::json::Array{k.launch.block[0], k.launch.block[1], k.launch.block[2]}}};
    events.push_back(llvm::json::Object{{"name", k.name},
                                        {"ph", "X"},
                                        {"pid", 0},
                                        {"tid", 0},
                                        {"ts", t.trace[i].first * 1000.0},
                                        {"dur", t.trace[i].second * 1000.0},
                                        {"args", std::move(args)}});
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::json::Value(llvm::json::Object{{"traceEvents", std::move(events)}}) << "\n";
  return writeTextOutput(
      tracePath, [&](std::ostream &out) { out << os.str(); }, diags);
}

bool writeJson(const GpuProgram &p, const CompileTimes &times, const Timings &t,
               Diagnostics &diags) {
  const std::vector<std::vector<double>> &compileMs = times.perKernel;
  llvm::json::Array kernels;
  for (size_t i = 0; i < p.kernels().size(); ++i) {
    const GpuKernelReport &k = p.kernels()[i];
    kernels.push_back(llvm::json::Object{{"name", k.name},
                                         {"template", k.templateName},
                                         {"fuses", k.fuses},
                                         {"schedule", k.schedule},
                                         {"tuning", k.tuning},
                                         {"bytes", int64_t(k.bytes)},
                                         {"flops", int64_t(k.flops)},
                                         {"device_ms", t.kernelMs[i]},
                                         {"compile_cold_ms", compileMs[0][i]},
                                         {"compile_disk_ms", compileMs[1][i]},
                                         {"compile_memory_ms", compileMs[2][i]}});
  }
  llvm::json::Object root{{"model", input.getValue()},
                          {"kernels", std::move(kernels)},
                          {"graph_ms", t.graphMs},
                          {"direct_ms", t.directMs},
                          {"host_us_per_kernel", t.hostUsPerKernel},
                          {"first_use_ms", times.firstUseMs},
                          {"fallbacks", fallbackMessages(p)}};
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
  return writeTextOutput(
      jsonPath, [&](std::ostream &out) { out << os.str(); }, diags);
}

} // namespace

int runBench() {
  Diagnostics diags;
  DimBindings dims;
  if (iterations == 0)
    diags.error(Loc{}, "--iterations must be at least 1");
  if (!parseDimFlags(dimValues, dims, diags) || diags.hasErrors())
    return reportAndExit(diags, kExitUsage);
  std::unique_ptr<Module> module = loadInput(input, diags);
  if (!module)
    return reportAndExit(diags, kExitUserError);
  const Graph &original = *module->graphs.front();
  std::vector<Tensor> inputs(original.numInputs());
  MemoryBudget memory;
  for (unsigned i = 0; i < original.numInputs(); ++i)
    if (!randomInputWithDims(*original.input(i), dims, 1000003 + i, memory, inputs[i], diags))
      return reportAndExit(diags, kExitUserError);
  Diagnostics passDiags; // the passes' notes are not for this tool
  StageTrace trace = stageFlags.trace();
  if (!trace.checkNames(diags))
    return reportAndExit(diags, kExitUsage);
  if (!prepareModule(*module, precision, passDiags, layout, &trace))
    return reportAndExit(passDiags, kExitUserError);
  CompileTimes times;
  Timings t;
  std::unique_ptr<GpuProgram> p =
      buildForTiming(*module->graphs.front(), inputs, times, trace, diags);
  trace.printTimes();
  if (!p || !measure(*p, inputs, t, diags))
    return reportAndExit(diags, kExitUserError);
  printTable(*p, times, t);
  if ((!jsonPath.empty() && !writeJson(*p, times, t, diags)) ||
      (!tracePath.empty() && !writeTrace(*p, t, diags)))
    return reportAndExit(diags, kExitUserError);
  return reportAndExit(diags, kExitOk);
}

} // namespace fusec
