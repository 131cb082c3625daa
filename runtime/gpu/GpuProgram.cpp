// The GPU program (see GpuProgram.h). It is made from a lowered program in
// the compile's last two stages (runtime/CompilePipeline.h runs them):
// create plans the arena, compile runs every step's kernel through the
// kernel cache (in parallel), load loads the modules and uploads the
// constants. Running it only resolves each argument to an address (a tensor
// map argument to the map for that address) and launches.
//
// Where a value lives: a graph input or output in the caller's buffer, a
// constant in its own device buffer (uploaded once), anything else in the
// arena at its planned offset. An output that no step writes (it is a graph
// input, a constant, or the same value as an earlier output) is copied into
// place after the steps.
//
// Note [CUDA graph replay]
// A captured graph bakes in the kernel arguments, so it is valid only for
// the buffer addresses it was captured with. The program keeps the graphs
// of the last kMaxGraphs address sets (least recently used dropped): a
// serving loop that reuses its buffers replays one graph per call, which
// costs one cuGraphLaunch of host time instead of one launch per kernel.
// A graph holds its own copy of every kernel's tensor maps, encoded for its
// addresses (Note [Tensor map encoding] in TensorMap.cpp).
#include "runtime/gpu/GpuProgram.h"

#include "codegen/cuda/Render.h"
#include "ir/Assert.h"
#include "ir/Specialize.h"
#include "runtime/gpu/Lowering.h"
#include "runtime/gpu/Nvtx.h"
#include "runtime/reference/Tensor.h"

#include <algorithm>
#include <chrono>

namespace fusec {

namespace {

constexpr size_t kMaxGraphs = 8;

uint64_t valueBytes(const Value &v) {
  return tensorBytes(v.type().dtype, staticSizes(v.type().shape)).value_or(0);
}

/// The most host memory a splat's upload takes.
constexpr size_t kSplatChunkBytes = size_t(1) << 20;

// Note [Splat constants] (ir/Attribute.h): a splat is expanded only here, on
// its way to the device, by copying one host chunk of at most
// kSplatChunkBytes over and over, so that host memory stays small whatever
// its size. Element sizes divide the chunk, so every copy ends on an element.
// (The same synchronous copy as the full form's: a byte fill would run on the
// legacy stream, unordered with a caller's non-blocking stream.)
bool uploadDense(gpu::DevicePtr dst, const DenseData &d, Diagnostics &diags) {
  const std::vector<uint8_t> &held = d.storedBytes();
  if (!d.isSplatForm())
    return gpu::copyToDevice(dst, held.data(), held.size(), diags);
  size_t total = d.numElements() * held.size();
  int64_t perChunk = int64_t(std::min(kSplatChunkBytes / held.size(), d.numElements()));
  std::vector<uint8_t> chunk = DenseData::makeSplat(d.dtype, {perChunk}, held).expandedBytes();
  for (size_t offset = 0; offset < total; offset += chunk.size())
    if (!gpu::copyToDevice(dst + offset, chunk.data(), std::min(chunk.size(), total - offset),
                           diags))
      return false;
  return true;
}

/// A launch of no blocks: its kernel never runs (an empty tensor).
bool launchesNothing(const LaunchConfig &c) {
  return c.grid[0] == 0 || c.grid[1] == 0 || c.grid[2] == 0;
}

double msSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

} // namespace

std::unique_ptr<GpuProgram> GpuProgram::create(LoweredProgram program, const GpuBuildOptions &opts,
                                               Diagnostics &diags) {
  std::string whyNot;
  std::optional<gpu::DeviceInfo> device = gpu::openDevice(&whyNot);
  if (!device) {
    diags.error(Loc{}, whyNot);
    return nullptr;
  }
  std::unique_ptr<GpuProgram> p(new GpuProgram);
  p->options = opts;
  if (p->options.target.empty())
    p->options.target = device->target();
  if (!gpu::targetRunsOn(p->options.target, device->major, device->minor)) {
    diags.error(Loc{}, "code for " + p->options.target + " cannot run on this GPU (" +
                           device->name + ", " + device->target() + ")");
    return nullptr;
  }
  p->lowered = std::move(program.graph);
  p->indexConstants();
  if (!p->planArena(program.steps, diags))
    return nullptr;
  p->pending = std::move(program.steps.steps);
  p->fallbackNotes = std::move(program.steps.fallbacks);
  p->dropInPlaceReshapes(p->pending);
  p->reports.resize(p->pending.size());
  for (size_t i = 0; i < p->pending.size(); ++i)
    if (auto it = program.tuning.find(p->pending[i].op); it != program.tuning.end())
      p->reports[i].tuning = it->second;
  return p;
}

bool GpuProgram::compile(Diagnostics &diags) {
  std::optional<std::vector<CompiledCuda>> code = compileSteps(pending, options, diags);
  if (!code)
    return false;
  compiled = std::move(*code);
  return true;
}

bool GpuProgram::load(Diagnostics &diags) {
  FUSEC_ASSERT(compiled.size() == pending.size(), "GpuProgram::load before compile");
  // The uploads and the scratch's zero fill ran on the legacy stream and may still be in flight:
  // a run on any stream starts after them.
  if (!loadSteps(pending, compiled, diags) || !uploadConstants(diags) ||
      !gpu::synchronize(nullptr, diags))
    return false;
  pending.clear();
  compiled.clear();
  planOutputCopies();
  std::optional<gpu::Event> done = gpu::createEvent(diags);
  if (!done)
    return false;
  lastRun = *done;
  return true;
}

GpuProgram::~GpuProgram() {
  Diagnostics ignored; // nothing to report to from a destructor
  if (!gpu::openDevice())
    return;
  if (lastRun) { // the last run may still read the arena and the weights
    gpu::synchronizeEvent(lastRun, ignored);
    gpu::destroyEvent(lastRun);
  }
  for (CapturedGraph &c : graphs)
    gpu::destroyGraph(c.exec);
  for (gpu::Module m : modules)
    gpu::unloadModule(m);
  for (gpu::DevicePtr w : weights)
    gpu::release(w);
  gpu::release(arena);
}

bool GpuProgram::planArena(const LoweredGraph &steps, Diagnostics &diags) {
  const Value *unsized = nullptr;
  std::optional<MemoryPlan> planned = planMemory(*lowered, DimBindings{}, &unsized);
  FUSEC_ASSERT(planned, "a specialized graph has a value without a static size");
  plan = std::move(*planned);
  totalBytes = fusec::arenaBytes(plan, steps);
  if (totalBytes == 0)
    return true;
  std::optional<gpu::DevicePtr> a = gpu::allocate(size_t(totalBytes), diags, "the arena");
  arena = a.value_or(0);
  // The scratch starts at zero: counters that a kernel's blocks count themselves in (and that
  // the last of them sets back to zero).
  return a && (totalBytes == plan.peakBytes ||
               gpu::fill(arena + scratchOffset(plan), 0, size_t(totalBytes - scratchOffset(plan)),
                         diags));
}

void GpuProgram::indexConstants() {
  for (const auto &op : lowered->ops())
    if (op->kind() == OpKind::Const)
      weightIndex.emplace(op->result(), unsigned(weightIndex.size()));
}

// A reshape that the memory plan put in its operand's buffer (the operand
// dies at it) would copy every element onto itself: it needs no launch.
void GpuProgram::dropInPlaceReshapes(std::vector<LoweredStep> &steps) const {
  std::erase_if(steps, [&](const LoweredStep &s) {
    if (s.op->kind() != OpKind::Reshape)
      return false;
    auto it = plan.reusedOperand.find(s.op->result());
    return it != plan.reusedOperand.end() && it->second == s.op->operand(0);
  });
}

bool GpuProgram::uploadConstants(Diagnostics &diags) {
  weights.assign(weightIndex.size(), 0);
  for (const auto &[v, index] : weightIndex) {
    const DenseData &d = v->definingOp()->getDense("value");
    std::optional<gpu::DevicePtr> p =
        gpu::allocate(d.numElements() * dtypeSize(d.dtype), diags, "constant '%" + v->name() + "'");
    if (!p)
      return false;
    weights[index] = *p;
    if (!uploadDense(*p, d, diags))
      return false;
  }
  return true;
}

std::optional<std::vector<CompiledCuda>>
GpuProgram::compileSteps(const std::vector<LoweredStep> &lowered, const GpuBuildOptions &opts,
                         Diagnostics &diags) {
  KernelCache &cache = opts.cache ? *opts.cache : KernelCache::global();
  size_t n = lowered.size();
  std::vector<PtxRequest> requests;
  for (const LoweredStep &step : lowered) {
    const GeneratedKernel &k = step.kernel;
    requests.push_back({k.backend == Backend::Nvrtc ? cuda::translationUnit({k}) : k.source, k.name,
                        opts.target, k.backend});
  }
  std::vector<CacheLookup> lookups;
  std::vector<double> ms;
  std::vector<std::optional<CompiledCuda>> code =
      cache.getOrCompileAll(requests, diags, lookups, ms);
  reports.resize(n);
  std::vector<CompiledCuda> compiled;
  for (size_t i = 0; i < n; ++i) {
    reports[i].lookup = lookups[i], reports[i].compileMs = ms[i];
    if (!code[i])
      return std::nullopt;
    compiled.push_back(std::move(*code[i]));
  }
  return compiled;
}

bool GpuProgram::loadSteps(const std::vector<LoweredStep> &lowered, std::vector<CompiledCuda> &code,
                           Diagnostics &diags) {
  std::optional<gpu::DeviceInfo> device = gpu::openDevice();
  bool cubinRuns = device && gpu::cubinRunsOn(options.target, device->major, device->minor);
  for (size_t i = 0; i < lowered.size(); ++i) {
    auto start = std::chrono::steady_clock::now();
    const GeneratedKernel &k = lowered[i].kernel;
    // A cubin for an older architecture than the device's does not load; its PTX does.
    bool cubin = !code[i].cubin.empty() && cubinRuns;
    const std::string &image = cubin ? code[i].cubin : code[i].ptx;
    std::optional<gpu::Module> m = gpu::loadModule(image, k.name, diags);
    if (!m)
      return false;
    modules.push_back(*m);
    std::optional<gpu::Function> f = gpu::getFunction(*m, k.name, diags);
    if (!f)
      return false;
    FUSEC_ASSERT(k.launch, "a kernel of static shapes without a launch configuration");
    if (!gpu::allowSharedBytes(*f, k.launch->sharedBytes, diags, k.name))
      return false;
    Step step{*f, *k.launch, {}, k.name, {}};
    for (const KernelArg &a : k.args)
      if (!addArg(step, lowered[i], a, diags))
        return false;
    steps.push_back(std::move(step));
    reports[i].name = k.name;
    reports[i].templateName = stepTemplateName(*lowered[i].op);
    reports[i].bytes = k.facts.bytes;
    reports[i].flops = k.facts.flops;
    reports[i].fuses = k.facts.fuses;
    reports[i].schedule = k.facts.schedule;
    reports[i].launch = *k.launch;
    reports[i].compileMs += msSince(start);
  }
  return true;
}

bool GpuProgram::addArg(Step &step, const LoweredStep &lowered, const KernelArg &a,
                        Diagnostics &diags) const {
  const Op &op = *lowered.op;
  switch (a.kind) {
  case KernelArg::Kind::Input:
    step.args.push_back(sourceOf(op.operand(a.index)));
    return true;
  case KernelArg::Kind::Output:
    step.args.push_back(sourceOf(op.result(a.index)));
    return true;
  case KernelArg::Kind::Scratch: {
    int64_t at = scratchOffset(plan) + lowered.scratchAt + a.index;
    step.args.push_back({ArgSource::Kind::Arena, uint64_t(at)});
    return true;
  }
  case KernelArg::Kind::TensorMap: {
    FUSEC_ASSERT(a.tensorMap, "a tensor map argument without its view");
    // A kernel that never runs (an empty tensor) gets no map: its view may be empty.
    if (!launchesNothing(step.launch) && !checkTensorMapArg(a, op, lowered.kernel.name, diags))
      return false;
    const Value *buffer = a.tensorMap->output ? op.result(a.index) : op.operand(a.index);
    step.args.push_back({ArgSource::Kind::TensorMap, step.maps.size()});
    step.maps.push_back({sourceOf(buffer), TensorMapArg(a, lowered.kernel.name)});
    return true;
  }
  case KernelArg::Kind::NumElements:
  case KernelArg::Kind::Dim:
  case KernelArg::Kind::Stride:
  case KernelArg::Kind::NumRows:
    FUSEC_ASSERT(a.value, "a scalar kernel argument without a value");
    step.args.push_back({ArgSource::Kind::Scalar, uint64_t(*a.value)});
    return true;
  }
  FUSEC_ASSERT(false, "a kernel argument of no known kind");
  return false;
}

GpuProgram::ArgSource GpuProgram::sourceOf(const Value *v) const {
  const auto &outs = lowered->outputs();
  for (unsigned j = 0; j < outs.size(); ++j)
    if (outs[j] == v && !v->isGraphInput() && v->definingOp()->kind() != OpKind::Const)
      return {ArgSource::Kind::Output, j};
  if (v->isGraphInput())
    return {ArgSource::Kind::Input, v->index()};
  if (auto it = weightIndex.find(v); it != weightIndex.end())
    return {ArgSource::Kind::Weight, it->second};
  std::optional<int64_t> offset = plan.offsetOf(*v);
  FUSEC_ASSERT(offset, "a value with neither a buffer nor an arena offset");
  return {ArgSource::Kind::Arena, uint64_t(*offset)};
}

void GpuProgram::planOutputCopies() {
  const auto &outs = lowered->outputs();
  for (unsigned j = 0; j < outs.size(); ++j) {
    ArgSource s = sourceOf(outs[j]);
    if (s.kind != ArgSource::Kind::Output || s.value != j)
      copies.push_back({s, j, valueBytes(*outs[j])});
  }
}

gpu::DevicePtr GpuProgram::address(const ArgSource &s, const std::vector<gpu::DevicePtr> &inputs,
                                   const std::vector<gpu::DevicePtr> &outputs) const {
  switch (s.kind) {
  case ArgSource::Kind::Input:
    return inputs[s.value];
  case ArgSource::Kind::Output:
    return outputs[s.value];
  case ArgSource::Kind::Weight:
    return weights[s.value];
  case ArgSource::Kind::Arena:
    return arena + s.value;
  case ArgSource::Kind::Scalar:
    return s.value;
  case ArgSource::Kind::TensorMap:
    break;
  }
  FUSEC_ASSERT(false, "the address of a tensor map argument");
  return 0;
}

bool GpuProgram::encodeMaps(const std::vector<gpu::DevicePtr> &inputs,
                            const std::vector<gpu::DevicePtr> &outputs, Diagnostics &diags) {
  for (Step &s : steps)
    for (MapArg &m : s.maps)
      if (!launchesNothing(s.launch) && !m.map.mapFor(address(m.buffer, inputs, outputs), diags))
        return false;
  return true;
}

bool GpuProgram::launchStep(Step &s, const std::vector<gpu::DevicePtr> &inputs,
                            const std::vector<gpu::DevicePtr> &outputs, gpu::Stream stream,
                            Diagnostics &diags) {
  if (launchesNothing(s.launch))
    return true; // an empty tensor: nothing to compute
  nvtx::Range range(s.name);
  gpu::KernelParams params;
  for (const ArgSource &a : s.args) {
    if (a.kind != ArgSource::Kind::TensorMap) {
      params.addWord(address(a, inputs, outputs));
      continue;
    }
    MapArg &m = s.maps[a.value];
    const gpu::TensorMapBytes *map = m.map.mapFor(address(m.buffer, inputs, outputs), diags);
    if (!map)
      return false; // never a launch with a map that is not this buffer's
    params.addTensorMap(*map);
  }
  return gpu::launch(s.function, s.launch, params.pointers(), stream, diags, s.name);
}

std::optional<std::vector<float>> GpuProgram::timeSteps(const std::vector<gpu::DevicePtr> &inputs,
                                                        const std::vector<gpu::DevicePtr> &outputs,
                                                        gpu::Stream stream, DeviceTimer &timer,
                                                        unsigned reps, Diagnostics &diags) {
  std::vector<float> medians;
  for (Step &s : steps) {
    std::optional<float> ms = timer.medianMs(
        stream, 1, reps, [&] { return launchStep(s, inputs, outputs, stream, diags); }, diags);
    if (!ms)
      return std::nullopt;
    medians.push_back(*ms);
  }
  return medians;
}

std::optional<std::vector<std::pair<float, float>>>
GpuProgram::traceSteps(const std::vector<gpu::DevicePtr> &inputs,
                       const std::vector<gpu::DevicePtr> &outputs, gpu::Stream stream,
                       Diagnostics &diags) {
  std::vector<gpu::Event> events;
  bool ok = true;
  for (size_t i = 0; ok && i <= steps.size(); ++i) {
    std::optional<gpu::Event> e = gpu::createEvent(diags);
    ok = e && gpu::recordEvent(*e, stream, diags) &&
         (i == steps.size() || launchStep(steps[i], inputs, outputs, stream, diags));
    if (e)
      events.push_back(*e);
  }
  std::vector<std::pair<float, float>> spans;
  for (size_t i = 0; ok && i < steps.size(); ++i) {
    std::optional<float> start = gpu::elapsedMs(events[0], events[i], diags);
    std::optional<float> length = gpu::elapsedMs(events[i], events[i + 1], diags);
    ok = start && length;
    if (ok)
      spans.push_back({*start, *length});
  }
  for (gpu::Event e : events)
    gpu::destroyEvent(e);
  return ok ? std::optional(spans) : std::nullopt;
}

bool GpuProgram::enqueueDirect(const std::vector<gpu::DevicePtr> &inputs,
                               const std::vector<gpu::DevicePtr> &outputs, gpu::Stream stream,
                               Diagnostics &diags) {
  return checkBuffers(inputs, outputs, diags) && gpu::ensureDevice(diags) &&
         gpu::waitForEvent(stream, lastRun, diags) && launchSteps(inputs, outputs, stream, diags) &&
         gpu::recordEvent(lastRun, stream, diags);
}

bool GpuProgram::launchSteps(const std::vector<gpu::DevicePtr> &inputs,
                             const std::vector<gpu::DevicePtr> &outputs, gpu::Stream stream,
                             Diagnostics &diags) {
  // Every map before the first launch: a run with a buffer TMA cannot take launches nothing.
  if (!encodeMaps(inputs, outputs, diags))
    return false;
  for (Step &s : steps)
    if (!launchStep(s, inputs, outputs, stream, diags))
      return false;
  for (const Copy &c : copies)
    if (!gpu::copyOnDevice(outputs[c.output], address(c.from, inputs, outputs), c.bytes, stream,
                           diags))
      return false;
  return true;
}

bool GpuProgram::checkBuffers(const std::vector<gpu::DevicePtr> &inputs,
                              const std::vector<gpu::DevicePtr> &outputs,
                              Diagnostics &diags) const {
  const Graph &g = *lowered;
  if (inputs.size() != g.numInputs() || outputs.size() != g.outputs().size()) {
    diags.error(g.loc(), "graph '@" + g.name() + "' takes " + std::to_string(g.numInputs()) +
                             " inputs and " + std::to_string(g.outputs().size()) +
                             " outputs, got " + std::to_string(inputs.size()) + " and " +
                             std::to_string(outputs.size()));
    return false;
  }
  for (const auto *list : {&inputs, &outputs})
    for (gpu::DevicePtr p : *list)
      if (p % 16) {
        diags.error(g.loc(),
                    "device buffers must be 16-byte aligned; got address " + std::to_string(p));
        return false;
      }
  return true;
}

/// Captures the launches for one set of addresses into a graph; a failed
/// capture is ended (its own errors are the launch's consequences) and
/// leaves nothing behind.
std::optional<gpu::GraphExec> GpuProgram::capture(const std::vector<gpu::DevicePtr> &inputs,
                                                  const std::vector<gpu::DevicePtr> &outputs,
                                                  gpu::Stream stream, Diagnostics &diags) {
  // The maps first: a buffer TMA cannot take is refused before anything is captured.
  if (!encodeMaps(inputs, outputs, diags) || !gpu::beginCapture(stream, diags))
    return std::nullopt;
  bool launched = launchSteps(inputs, outputs, stream, diags);
  Diagnostics endDiags;
  std::optional<gpu::GraphExec> exec = gpu::endCapture(stream, launched ? diags : endDiags);
  if (launched)
    return exec;
  if (exec)
    gpu::destroyGraph(*exec);
  return std::nullopt;
}

// Note [Runs share the arena]
// Every run of a program uses the same arena, so two runs must not overlap
// on the device even when they are enqueued on different streams (two
// threads, or one serving loop with several streams): each run waits for
// the previous run's completion event and records its own.
bool GpuProgram::enqueue(const std::vector<gpu::DevicePtr> &inputs,
                         const std::vector<gpu::DevicePtr> &outputs, gpu::Stream stream,
                         Diagnostics &diags) {
  if (!checkBuffers(inputs, outputs, diags) || !gpu::ensureDevice(diags) ||
      !gpu::waitForEvent(stream, lastRun, diags))
    return false;
  std::optional<bool> capturing = stream ? gpu::isCapturing(stream, diags) : false;
  if (!capturing)
    return false;
  // A stream the caller is capturing itself gets plain launches, which
  // become part of the caller's graph.
  bool direct = !options.useGraphs || !stream || *capturing;
  nvtx::Range range(lowered->name()); // the kernels' ranges nest in it, or a replay

  bool ok =
      direct ? launchSteps(inputs, outputs, stream, diags) : replay(inputs, outputs, stream, diags);
  return ok && gpu::recordEvent(lastRun, stream, diags);
}

bool GpuProgram::replay(const std::vector<gpu::DevicePtr> &inputs,
                        const std::vector<gpu::DevicePtr> &outputs, gpu::Stream stream,
                        Diagnostics &diags) {
  std::vector<gpu::DevicePtr> addresses = inputs;
  addresses.insert(addresses.end(), outputs.begin(), outputs.end());
  for (auto it = graphs.begin(); it != graphs.end(); ++it) {
    if (it->addresses != addresses)
      continue;
    graphs.splice(graphs.begin(), graphs, it);
    return gpu::launchGraph(it->exec, stream, diags);
  }
  std::optional<gpu::GraphExec> exec = capture(inputs, outputs, stream, diags);
  if (!exec)
    return false;
  graphs.push_front({addresses, *exec});
  if (graphs.size() > kMaxGraphs) {
    gpu::destroyGraph(graphs.back().exec);
    graphs.pop_back();
  }
  return gpu::launchGraph(*exec, stream, diags);
}

} // namespace fusec
