// The compile's stages (see CompilePipeline.h).
#include "runtime/CompilePipeline.h"

#include "codegen/kir/Kir.h"
#include "ir/Specialize.h"
#include "ir/TextFormat.h"
#include "ir/Verifier.h"
#include "runtime/Tuning.h"
#include "runtime/reference/ConstantFolder.h"

#include <chrono>
#include <iomanip>
#include <iostream>

namespace fusec {

std::string_view stageName(Stage s) {
  switch (s) {
  case Stage::Verify:
    return "verify";
  case Stage::Passes:
    return "passes";
  case Stage::Specialize:
    return "specialize";
  case Stage::Tune:
    return "tune";
  case Stage::Lower:
    return "lower";
  case Stage::Compile:
    return "compile";
  case Stage::Load:
    return "load";
  }
  return "?";
}

namespace {

constexpr Stage kStages[] = {Stage::Verify, Stage::Passes,  Stage::Specialize, Stage::Tune,
                             Stage::Lower,  Stage::Compile, Stage::Load};

void banner(std::ostream &os, std::string_view what) {
  os << "// -----// IR after " << what << " //----- //\n";
}

} // namespace

std::ostream &StageTrace::stream() const { return out ? *out : std::cerr; }

bool StageTrace::stage(Stage s, const std::function<bool()> &body,
                       const std::function<void(std::ostream &)> &print) {
  auto start = std::chrono::steady_clock::now();
  bool ok = body();
  if (time)
    times.push_back({std::string(stageName(s)), std::chrono::duration<double, std::milli>(
                                                    std::chrono::steady_clock::now() - start)
                                                    .count()});
  if (ok && print && printAfter.count(std::string(stageName(s)))) {
    banner(stream(), stageName(s));
    print(stream());
  }
  return ok;
}

PipelineHooks StageTrace::passHooks() {
  PipelineHooks hooks;
  if (printAfter.empty())
    return hooks;
  hooks.afterPass = [this](const PassInfo &p, const Graph &g) {
    if (!printAfter.count(std::string(p.name)))
      return;
    banner(stream(), p.name);
    printGraph(g, stream());
  };
  return hooks;
}

bool StageTrace::checkNames(Diagnostics &diags) const {
  for (const std::string &name : printAfter) {
    bool known = lookupPass(name) != nullptr;
    for (Stage s : kStages)
      known = known || name == stageName(s);
    if (known)
      continue;
    std::string stages;
    for (Stage s : kStages)
      stages += (stages.empty() ? "" : ", ") + std::string(stageName(s));
    diags.error(Loc{}, "--print-after names '" + name + "', neither a stage (" + stages +
                           ") nor a pass (fusec-opt --help lists them)");
  }
  return !diags.hasErrors();
}

void StageTrace::printTimes() const {
  if (!time)
    return;
  std::ostream &os = stream();
  double total = 0;
  os << "===- compile stages -===\n";
  for (const auto &[name, ms] : times) {
    os << std::fixed << std::setprecision(3) << std::setw(10) << ms << " ms  " << name << "\n";
    total += ms;
  }
  os << std::setw(10) << total << " ms  total\n";
}

bool prepareModule(Module &m, PrecisionChoice precision, Diagnostics &diags, LayoutChoice layout,
                   StageTrace *trace) {
  StageTrace none;
  StageTrace &t = trace ? *trace : none;
  auto print = [&](std::ostream &os) {
    for (const auto &g : m.graphs)
      printGraph(*g, os);
  };
  if (!t.stage(
          Stage::Verify, [&] { return verify(m, diags); }, print))
    return false;
  return t.stage(
      Stage::Passes,
      [&] {
        std::vector<const PassInfo *> pipeline;
        if (!parsePipeline("default", pipeline, diags))
          return false;
        PassOptions opts;
        opts.precision = precision;
        opts.layout = layout;
        opts.foldConstant = makeReferenceFolder();
        return runPipeline(m, pipeline, opts, t.passHooks(), diags);
      },
      print);
}

std::optional<LoweredProgram> lowerProgram(const Graph &g,
                                           const std::vector<std::vector<int64_t>> &inputShapes,
                                           EntryNamer &names, bool fallback, Backend backend,
                                           std::string_view target, StageTrace *trace,
                                           Diagnostics &diags, const TuningRequest *tuning) {
  StageTrace none;
  StageTrace &t = trace ? *trace : none;
  LoweredProgram p;
  auto printGraphOnly = [&](std::ostream &os) { printGraph(*p.graph, os); };
  bool specialized = t.stage(
      Stage::Specialize,
      [&] {
        DimBindings bindings;
        p.graph = specializeShapes(g, inputShapes, bindings, diags);
        return p.graph != nullptr;
      },
      printGraphOnly);
  if (!specialized)
    return std::nullopt;
  if (tuning && tuning->mode != TuningMode::Off &&
      !t.stage(
          Stage::Tune, [&] { return tuneKernels(*p.graph, *tuning, p.tuning, diags); },
          printGraphOnly))
    return std::nullopt;
  // After lower: the graph of steps, then each step's kernel in kir.
  auto printSteps = [&](std::ostream &os) {
    printGraph(*p.graph, os);
    for (const LoweredStep &s : p.steps.steps)
      os << "\n" << kir::print(*s.kernel.kir);
  };
  if (!t.stage(
          Stage::Lower,
          [&] { return lowerForGpu(*p.graph, p.steps, names, diags, fallback, backend, target); },
          printSteps))
    return std::nullopt;
  return p;
}

std::unique_ptr<GpuProgram> buildGpuProgram(const Graph &g,
                                            const std::vector<std::vector<int64_t>> &inputShapes,
                                            const GpuBuildOptions &opts, Diagnostics &diags) {
  GpuBuildOptions resolved = opts; // the kernels are generated for the target
  std::string whyNot;
  std::optional<gpu::DeviceInfo> device = gpu::openDevice(&whyNot);
  if (!device) {
    diags.error(Loc{}, whyNot);
    return nullptr;
  }
  if (resolved.target.empty())
    resolved.target = device->target();
  // Tuned configs are the device's, for its own target.
  TuningRequest tuning{opts.tuning,  opts.tuningCache, opts.cache,
                       device->name, resolved.target,  opts.backend};
  bool tunes = opts.tuning != TuningMode::Off && resolved.target == device->target();
  EntryNamer names;
  std::optional<LoweredProgram> lowered =
      lowerProgram(g, inputShapes, names, true, opts.backend, resolved.target, opts.trace, diags,
                   tunes ? &tuning : nullptr);
  if (!lowered)
    return nullptr;
  std::unique_ptr<GpuProgram> p = GpuProgram::create(std::move(*lowered), resolved, diags);
  if (!p)
    return nullptr;
  StageTrace none;
  StageTrace &t = opts.trace ? *opts.trace : none;
  if (!t.stage(Stage::Compile, [&] { return p->compile(diags); }) ||
      !t.stage(Stage::Load, [&] { return p->load(diags); }))
    return nullptr;
  return p;
}

} // namespace fusec
