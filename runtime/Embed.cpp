// The embedding API of include/fusec/fusec.h, over the runtime: a Model holds
// a verified module; a CompiledGraph holds one optimized graph and builds a
// GpuProgram per input shape on first use (the last kMaxPrograms shapes are
// kept). One mutex per CompiledGraph guards its programs and their enqueues,
// so any number of threads may run one graph; compiling a new shape holds
// it too (its kernels compile in parallel inside).
#include "frontend/ModelFile.h"
#include "include/fusec/fusec.h"
#include "ir/Specialize.h"
#include "ir/TextFormat.h"
#include "ir/Verifier.h"
#include "runtime/CompilePipeline.h"
#include "runtime/gpu/GpuProgram.h"

#include <list>
#include <mutex>

namespace fusec {

namespace {

constexpr size_t kMaxPrograms = 16;

bool fail(const Diagnostics &diags, std::string *error) {
  if (error)
    *error = diags.str();
  return false;
}

PrecisionChoice precisionChoice(Precision p) {
  switch (p) {
  case Precision::FP16:
    return PrecisionChoice::FP16;
  case Precision::BF16:
    return PrecisionChoice::BF16;
  case Precision::FP32:
    break;
  }
  return PrecisionChoice::FP32;
}

} // namespace

struct Model::Impl {
  std::unique_ptr<Module> module;
};

Model::Model(std::unique_ptr<Impl> impl) : pimpl(std::move(impl)) {}
Model::~Model() = default;

std::unique_ptr<Model> Model::load(const std::string &path, std::string *error) {
  Diagnostics diags;
  std::unique_ptr<Module> m = loadAnyModel(path, diags);
  if (!m)
    return fail(diags, error), nullptr;
  return std::unique_ptr<Model>(new Model(std::make_unique<Impl>(Impl{std::move(m)})));
}

std::unique_ptr<Model> Model::parse(const std::string &text, const std::string &name,
                                    std::string *error) {
  Diagnostics diags;
  diags.addSource(name, text);
  std::unique_ptr<Module> m = parseModule(text, name, diags);
  if (!m || !verify(*m, diags))
    return fail(diags, error), nullptr;
  return std::unique_ptr<Model>(new Model(std::make_unique<Impl>(Impl{std::move(m)})));
}

std::vector<std::string> Model::graphNames() const {
  std::vector<std::string> names;
  for (const auto &g : pimpl->module->graphs)
    names.push_back(g->name());
  return names;
}

struct CompiledGraph::Impl {
  Module optimized;
  CompileOptions options;
  std::mutex mutex;
  // Most recently used first.
  std::list<std::pair<std::vector<std::vector<int64_t>>, std::unique_ptr<GpuProgram>>> programs;

  const Graph &graph() const { return *optimized.graphs.front(); }
  GpuProgram *programFor(const std::vector<std::vector<int64_t>> &shapes, Diagnostics &diags);
};

GpuProgram *CompiledGraph::Impl::programFor(const std::vector<std::vector<int64_t>> &shapes,
                                            Diagnostics &diags) {
  for (auto it = programs.begin(); it != programs.end(); ++it)
    if (it->first == shapes) {
      programs.splice(programs.begin(), programs, it);
      return it->second.get();
    }
  GpuBuildOptions opts{
      options.target,  nullptr, options.cudaGraphs,
      options.backend, nullptr, options.tune ? TuningMode::Tune : TuningMode::Cached};
  std::unique_ptr<GpuProgram> p = buildGpuProgram(graph(), shapes, opts, diags);
  if (!p)
    return nullptr;
  programs.emplace_front(shapes, std::move(p));
  if (programs.size() > kMaxPrograms)
    programs.pop_back();
  return programs.front().second.get();
}

CompiledGraph::CompiledGraph(std::unique_ptr<Impl> impl) : pimpl(std::move(impl)) {}
CompiledGraph::~CompiledGraph() = default;

std::unique_ptr<CompiledGraph> CompiledGraph::compile(const Model &model,
                                                      const std::string &graphName,
                                                      const CompileOptions &options,
                                                      std::string *error) {
  Diagnostics diags;
  const Module &m = *model.impl().module;
  const Graph *g = m.graphs.front().get();
  for (const auto &candidate : m.graphs)
    if (candidate->name() == graphName)
      g = candidate.get();
  if (!graphName.empty() && g->name() != graphName) {
    diags.error(Loc{}, "the model has no graph named '@" + graphName + "'");
    return fail(diags, error), nullptr;
  }
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->optimized.graphs.push_back(g->clone());
  Diagnostics passDiags; // the passes' notes are not for the caller
  if (!prepareModule(impl->optimized, precisionChoice(options.precision), passDiags))
    return fail(passDiags, error), nullptr;
  return std::unique_ptr<CompiledGraph>(new CompiledGraph(std::move(impl)));
}

bool CompiledGraph::outputShapes(const std::vector<std::vector<int64_t>> &inputShapes,
                                 std::vector<std::vector<int64_t>> &outputShapes,
                                 std::string *error) const {
  Diagnostics diags;
  DimBindings bindings;
  std::unique_ptr<Graph> g = specializeShapes(pimpl->graph(), inputShapes, bindings, diags);
  if (!g)
    return fail(diags, error);
  outputShapes.clear();
  for (const Value *v : g->outputs())
    outputShapes.push_back(staticSizes(v->type().shape));
  return true;
}

bool CompiledGraph::run(const std::vector<DeviceTensor> &inputs,
                        const std::vector<DeviceTensor> &outputs, void *stream,
                        std::string *error) {
  Diagnostics diags;
  std::vector<std::vector<int64_t>> shapes;
  std::vector<gpu::DevicePtr> in, out;
  for (const DeviceTensor &t : inputs) {
    shapes.push_back(t.shape);
    in.push_back(reinterpret_cast<gpu::DevicePtr>(t.data));
  }
  for (const DeviceTensor &t : outputs)
    out.push_back(reinterpret_cast<gpu::DevicePtr>(t.data));
  std::lock_guard<std::mutex> lock(pimpl->mutex);
  GpuProgram *p = pimpl->programFor(shapes, diags);
  if (!p)
    return fail(diags, error);
  const Graph &g = p->graph();
  for (size_t j = 0; j < outputs.size() && j < g.outputs().size(); ++j) {
    if (outputs[j].shape != staticSizes(g.outputs()[j]->type().shape)) {
      diags.error(g.loc(), "output " + std::to_string(j) + " of '@" + g.name() + "' is " +
                               g.outputs()[j]->type().str() + " for these inputs");
      return fail(diags, error);
    }
  }
  if (!p->enqueue(in, out, static_cast<gpu::Stream>(stream), diags))
    return fail(diags, error);
  return true;
}

std::vector<KernelInfo> CompiledGraph::kernels(const std::vector<std::vector<int64_t>> &inputShapes,
                                               std::string *error) {
  Diagnostics diags;
  std::lock_guard<std::mutex> lock(pimpl->mutex);
  GpuProgram *p = pimpl->programFor(inputShapes, diags);
  if (!p)
    return fail(diags, error), std::vector<KernelInfo>{};
  std::vector<KernelInfo> infos;
  for (const GpuKernelReport &r : p->kernels()) {
    KernelInfo k;
    k.name = r.name;
    k.templateName = r.templateName;
    std::copy(r.launch.grid, r.launch.grid + 3, k.grid);
    std::copy(r.launch.block, r.launch.block + 3, k.block);
    k.sharedBytes = r.launch.sharedBytes;
    k.compileMs = r.compileMs;
    k.cacheSource = cacheSourceName(r.lookup.source);
    k.schedule = r.schedule;
    k.tuning = r.tuning;
    infos.push_back(std::move(k));
  }
  return infos;
}

std::unique_ptr<DeviceBuffer> DeviceBuffer::allocate(size_t bytes, std::string *error) {
  Diagnostics diags;
  std::string whyNot;
  if (!gpu::openDevice(&whyNot)) {
    diags.error(Loc{}, whyNot);
    return fail(diags, error), nullptr;
  }
  std::optional<gpu::DevicePtr> p = gpu::allocate(bytes, diags, "a device buffer");
  if (!p)
    return fail(diags, error), nullptr;
  return std::unique_ptr<DeviceBuffer>(new DeviceBuffer(reinterpret_cast<void *>(*p), bytes));
}

DeviceBuffer::~DeviceBuffer() { gpu::release(reinterpret_cast<gpu::DevicePtr>(address)); }

bool DeviceBuffer::upload(const void *host, std::string *error) {
  Diagnostics diags;
  return gpu::copyToDevice(reinterpret_cast<gpu::DevicePtr>(address), host, bytes, diags) ||
         fail(diags, error);
}

bool DeviceBuffer::download(void *host, std::string *error) const {
  Diagnostics diags;
  return gpu::copyToHost(host, reinterpret_cast<gpu::DevicePtr>(address), bytes, diags) ||
         fail(diags, error);
}

bool synchronize(void *stream, std::string *error) {
  Diagnostics diags;
  std::string whyNot;
  if (!gpu::openDevice(&whyNot)) {
    diags.error(Loc{}, whyNot);
    return fail(diags, error);
  }
  return gpu::synchronize(static_cast<gpu::Stream>(stream), diags) || fail(diags, error);
}

} // namespace fusec
