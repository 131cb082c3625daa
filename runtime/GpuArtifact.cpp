// Artifacts (see GpuArtifact.h). Compiling one is the runtime's build minus
// the device: the compile's stages specialize, lower and compile
// (runtime/CompilePipeline.h), every kernel through the global kernel cache;
// the graph stored is the lowered one, printed.
#include "runtime/GpuArtifact.h"

#include "codegen/GeneratedKernel.h"
#include "codegen/cuda/Render.h"
#include "include/fusec/fusec.h"
#include "ir/MemoryPlan.h"
#include "ir/Specialize.h"
#include "ir/TextFormat.h"
#include "ir/Verifier.h"
#include "runtime/CompilePipeline.h"

namespace fusec {

namespace {

std::string nvrtcVersionString() {
  std::optional<NvrtcVersion> v = loadNvrtc();
  return v ? std::to_string(v->major) + "." + std::to_string(v->minor) : "none";
}

} // namespace

std::optional<Artifact> compileArtifact(const Graph &g,
                                        const std::vector<std::vector<int64_t>> &inputShapes,
                                        const std::string &target, Diagnostics &diags,
                                        StageTrace *trace) {
  EntryNamer names;
  std::optional<LoweredProgram> program =
      lowerProgram(g, inputShapes, names, true, Backend::Nvrtc, target, trace, diags);
  if (!program)
    return std::nullopt;
  const Graph &lowered = *program->graph;
  const LoweredGraph &steps = program->steps;
  for (const Diagnostic &d : steps.fallbacks)
    diags.note(d.loc, d.message);
  std::vector<PtxRequest> requests;
  for (const LoweredStep &s : steps.steps)
    requests.push_back({cuda::translationUnit({s.kernel}), s.kernel.name, target});
  std::vector<CacheLookup> lookups;
  std::vector<double> ms;
  std::vector<std::optional<CompiledCuda>> code;
  StageTrace none;
  (trace ? *trace : none).stage(Stage::Compile, [&] {
    code = KernelCache::global().getOrCompileAll(requests, diags, lookups, ms);
    return true;
  });
  Artifact a{version(), target, nvrtcVersionString(), toString(lowered), inputShapes, 0, {}};
  for (size_t i = 0; i < code.size(); ++i) {
    if (!code[i])
      return std::nullopt;
    a.kernels.push_back({requests[i].name, lookups[i].key, stepTemplateName(*steps.steps[i].op),
                         std::move(code[i]->ptx), std::move(code[i]->cubin)});
  }
  if (std::optional<MemoryPlan> plan = planMemory(lowered, DimBindings{}))
    a.arenaBytes = arenaBytes(*plan, steps);
  return a;
}

std::optional<LoadedArtifact> loadArtifact(const std::string &path,
                                           const std::optional<gpu::DeviceInfo> &device,
                                           Diagnostics &diags) {
  std::optional<Artifact> a = readArtifact(path, diags);
  if (!a)
    return std::nullopt;
  std::string name = "'" + path + "'";
  if (a->fusecVersion != version()) {
    diags.error(Loc{}, name + " was compiled by fusec " + a->fusecVersion + "; this is fusec " +
                           version() + ": compile it again");
    return std::nullopt;
  }
  if (device && !gpu::targetRunsOn(a->target, device->major, device->minor)) {
    diags.error(Loc{}, name + " was compiled for " + a->target +
                           ", which cannot run on this GPU (" + device->name + ", " +
                           device->target() +
                           "): compile it again with --target=" + device->target());
    return std::nullopt;
  }
  LoadedArtifact out;
  out.module = parseModule(a->graphText, path, diags);
  if (!out.module || out.module->graphs.size() != 1 || !verify(*out.module, diags)) {
    diags.error(Loc{}, name + " holds a graph this fusec cannot load");
    return std::nullopt;
  }
  out.cache = std::make_unique<KernelCache>("");
  for (ArtifactKernel &k : a->kernels)
    out.cache->insert(k.key, {std::move(k.ptx), std::move(k.cubin)});
  out.cache->keyAsNvrtc(a->nvrtcVersion);
  out.cache->refuseMisses(name + " (the artifact is stale: compile it again with this fusec)");
  out.inputShapes = std::move(a->inputShapes);
  out.target = a->target;
  return out;
}

} // namespace fusec
