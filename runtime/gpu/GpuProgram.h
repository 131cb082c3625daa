// A graph compiled for the GPU at one binding of its input shapes: the
// specialized and lowered graph, one loaded kernel per step, the constants
// on the device, and an arena sized by the memory plan. Enqueueing it
// launches every step in order on the caller's stream, reading the caller's
// input buffers and writing the caller's output buffers; nothing is
// allocated per run. With `useGraphs`, the launches of one set of buffer
// addresses are captured once into a CUDA graph and replayed after that
// (Note [CUDA graph replay] in GpuProgram.cpp).
#pragma once

#include "ir/Diagnostics.h"
#include "ir/Graph.h"
#include "ir/MemoryPlan.h"
#include "runtime/gpu/CudaDriver.h"
#include "runtime/gpu/DeviceTimer.h"
#include "runtime/gpu/KernelCache.h"
#include "runtime/gpu/Lowering.h"
#include "runtime/gpu/TensorMap.h"
#include "runtime/gpu/TuningCache.h"

#include <list>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace fusec {

struct StageTrace; // runtime/CompilePipeline.h

/// How a compile uses the tuning cache (runtime/Tuning.h): not at all, for the configs it holds,
/// or tuning the kernels it does not know on the GPU first.
enum class TuningMode : uint8_t { Off, Cached, Tune };

struct GpuBuildOptions {
  std::string target;           ///< default: the device's (DeviceInfo::target)
  KernelCache *cache = nullptr; ///< default: KernelCache::global()
  bool useGraphs = true;
  Backend backend = Backend::Nvrtc; ///< the code generator
  StageTrace *trace = nullptr;      ///< what to show of the compile's stages (CompilePipeline.h)
  TuningMode tuning = TuningMode::Cached;
  TuningCache *tuningCache = nullptr; ///< default: TuningCache::global()
};

/// What was compiled for one step, for reports.
struct GpuKernelReport {
  std::string name;
  std::string templateName; ///< the kernel op's template, or the op's name
  std::string fuses;        ///< the ops it runs, '+'-joined (ir/Cost.h fusedOpNames)
  uint64_t bytes = 0;       ///< what it must move: operands read once, results written once
  uint64_t flops = 0;       ///< what its contractions must compute (ir/Cost.h)
  std::string schedule;     ///< its tiles and schedule as its template chose them
                            ///< (KernelFacts::schedule; a gemm's tile, stages, split of K)
  LaunchConfig launch;
  CacheLookup lookup;
  std::string tuning;   ///< where its config came from (runtime/Tuning.h TuningNotes); "" untuned
  double compileMs = 0; ///< NVRTC, cache lookup and module load
};

class GpuProgram {
public:
  /// A program of `program` on the current device, its arena allocated,
  /// nothing compiled yet (buildGpuProgram in runtime/CompilePipeline.h runs
  /// the stages up to here). Null after reporting an error: no GPU, or
  /// `opts.target` cannot run on it.
  static std::unique_ptr<GpuProgram> create(LoweredProgram program, const GpuBuildOptions &opts,
                                            Diagnostics &diags);
  /// The compile stage: every step's kernel through the kernel cache, in
  /// parallel. False after reporting an error.
  bool compile(Diagnostics &diags);
  /// The load stage, after compile: the modules loaded, the constants
  /// uploaded. False after reporting an error.
  bool load(Diagnostics &diags);
  ~GpuProgram();
  GpuProgram(const GpuProgram &) = delete;
  GpuProgram &operator=(const GpuProgram &) = delete;

  /// The specialized, lowered graph the steps run.
  const Graph &graph() const { return *lowered; }
  const std::vector<GpuKernelReport> &kernels() const { return reports; }
  /// Kernels that run op by op, and why.
  const std::vector<Diagnostic> &fallbacks() const { return fallbackNotes; }
  /// The arena: the intermediate values, then the scratch of the kernels that have one.
  int64_t arenaBytes() const { return totalBytes; }

  /// Enqueues one run on `stream`. `inputs` and `outputs` are device
  /// addresses, one per graph input and output, 16-byte aligned, holding
  /// the types of graph(). Returns false after reporting an error.
  bool enqueue(const std::vector<gpu::DevicePtr> &inputs,
               const std::vector<gpu::DevicePtr> &outputs, gpu::Stream stream, Diagnostics &diags);

  /// Enqueues one run as direct launches (no graph capture or replay).
  bool enqueueDirect(const std::vector<gpu::DevicePtr> &inputs,
                     const std::vector<gpu::DevicePtr> &outputs, gpu::Stream stream,
                     Diagnostics &diags);

  /// Device milliseconds of each step (median of `reps` > 0 launches timed
  /// by `timer` after one warm-up), in step order; nullopt after reporting
  /// an error.
  std::optional<std::vector<float>> timeSteps(const std::vector<gpu::DevicePtr> &inputs,
                                              const std::vector<gpu::DevicePtr> &outputs,
                                              gpu::Stream stream, DeviceTimer &timer, unsigned reps,
                                              Diagnostics &diags);

  /// One run of the steps with an event between consecutive launches: the
  /// start (from the first launch) and the duration of each step in
  /// milliseconds, for a timeline (fusec bench --trace).
  std::optional<std::vector<std::pair<float, float>>>
  traceSteps(const std::vector<gpu::DevicePtr> &inputs, const std::vector<gpu::DevicePtr> &outputs,
             gpu::Stream stream, Diagnostics &diags);

private:
  struct ArgSource {
    enum class Kind { Input, Output, Weight, Arena, Scalar, TensorMap } kind;
    uint64_t value = 0; ///< input/output index, weight index, arena offset, the scalar, or the
                        ///< index in Step::maps
  };
  /// A TensorMap argument: its buffer and its map (Note [Tensor map encoding]).
  struct MapArg {
    ArgSource buffer;
    TensorMapArg map;
  };
  struct Step {
    gpu::Function function = nullptr;
    LaunchConfig launch;
    std::vector<ArgSource> args;
    std::string name;
    std::vector<MapArg> maps;
  };
  struct Copy {
    ArgSource from;
    unsigned output;
    uint64_t bytes;
  };
  struct CapturedGraph {
    std::vector<gpu::DevicePtr> addresses;
    gpu::GraphExec exec;
  };

  GpuProgram() = default;
  void indexConstants();
  void dropInPlaceReshapes(std::vector<LoweredStep> &steps) const;
  bool uploadConstants(Diagnostics &diags);
  bool planArena(const LoweredGraph &steps, Diagnostics &diags);
  /// The compile stage: every step's kernel through the cache.
  std::optional<std::vector<CompiledCuda>> compileSteps(const std::vector<LoweredStep> &steps,
                                                        const GpuBuildOptions &opts,
                                                        Diagnostics &diags);
  /// The load stage's modules: each step's function and arguments.
  bool loadSteps(const std::vector<LoweredStep> &steps, std::vector<CompiledCuda> &code,
                 Diagnostics &diags);
  /// Appends where argument `a` of `lowered`'s kernel comes from to `step`. False after
  /// reporting a tensor map TMA cannot take.
  bool addArg(Step &step, const LoweredStep &lowered, const KernelArg &a, Diagnostics &diags) const;
  ArgSource sourceOf(const Value *v) const;
  bool checkBuffers(const std::vector<gpu::DevicePtr> &inputs,
                    const std::vector<gpu::DevicePtr> &outputs, Diagnostics &diags) const;
  bool launchSteps(const std::vector<gpu::DevicePtr> &inputs,
                   const std::vector<gpu::DevicePtr> &outputs, gpu::Stream stream,
                   Diagnostics &diags);
  std::optional<gpu::GraphExec> capture(const std::vector<gpu::DevicePtr> &inputs,
                                        const std::vector<gpu::DevicePtr> &outputs,
                                        gpu::Stream stream, Diagnostics &diags);
  bool replay(const std::vector<gpu::DevicePtr> &inputs, const std::vector<gpu::DevicePtr> &outputs,
              gpu::Stream stream, Diagnostics &diags);
  /// Every launched step's tensor maps for these buffers (Note [Tensor map encoding]).
  bool encodeMaps(const std::vector<gpu::DevicePtr> &inputs,
                  const std::vector<gpu::DevicePtr> &outputs, Diagnostics &diags);
  bool launchStep(Step &s, const std::vector<gpu::DevicePtr> &inputs,
                  const std::vector<gpu::DevicePtr> &outputs, gpu::Stream stream,
                  Diagnostics &diags);
  gpu::DevicePtr address(const ArgSource &s, const std::vector<gpu::DevicePtr> &inputs,
                         const std::vector<gpu::DevicePtr> &outputs) const;
  void planOutputCopies();

  std::unique_ptr<Graph> lowered;
  GpuBuildOptions options;
  std::vector<LoweredStep> pending;   // create to load
  std::vector<CompiledCuda> compiled; // compile to load
  MemoryPlan plan;
  int64_t totalBytes = 0; // the arena's: plan.peakBytes, then the scratch
  gpu::DevicePtr arena = 0;
  std::vector<gpu::DevicePtr> weights;
  std::unordered_map<const Value *, unsigned> weightIndex; // constant -> weights[] index
  std::vector<gpu::Module> modules;
  std::vector<Step> steps;
  std::vector<Copy> copies;
  std::vector<GpuKernelReport> reports;
  std::vector<Diagnostic> fallbackNotes;
  std::list<CapturedGraph> graphs; // most recently used first
  gpu::Event lastRun = nullptr;    // Note [Runs share the arena]
};

} // namespace fusec
