// The pass registry (from Passes.def) and the pipeline runner.
#include "passes/PassManager.h"

#include "ir/Verifier.h"

#include <chrono>

namespace fusec {

#define PASS(name, fn, summary) bool fn(Graph &g, const PassOptions &opts, Diagnostics &diags);
#include "passes/Passes.def"

const std::vector<PassInfo> &allPasses() {
  static const std::vector<PassInfo> passes = {
#define PASS(name, fn, summary) PassInfo{name, summary, &fn},
#include "passes/Passes.def"
  };
  return passes;
}

const std::vector<PipelineInfo> &allPipelines() {
  static const std::vector<PipelineInfo> pipelines = {
#define PIPELINE(name, passes) PipelineInfo{name, passes},
#include "passes/Passes.def"
  };
  return pipelines;
}

const PassInfo *lookupPass(std::string_view name) {
  for (const PassInfo &p : allPasses())
    if (p.name == name)
      return &p;
  return nullptr;
}

namespace {
const PipelineInfo *lookupPipeline(std::string_view name) {
  for (const PipelineInfo &p : allPipelines())
    if (p.name == name)
      return &p;
  return nullptr;
}

std::string validNames() {
  std::string valid;
  for (const PassInfo &p : allPasses())
    valid += (valid.empty() ? "" : ", ") + std::string(p.name);
  for (const PipelineInfo &p : allPipelines())
    valid += ", " + std::string(p.name) + " (pipeline)";
  return valid;
}
} // namespace

bool parsePipeline(std::string_view spec, std::vector<const PassInfo *> &pipeline,
                   Diagnostics &diags) {
  bool ok = true;
  while (!spec.empty()) {
    size_t comma = spec.find(',');
    std::string_view name = spec.substr(0, comma);
    spec = comma == std::string_view::npos ? std::string_view() : spec.substr(comma + 1);
    if (const PassInfo *p = lookupPass(name)) {
      pipeline.push_back(p);
    } else if (const PipelineInfo *named = lookupPipeline(name)) {
      ok &= parsePipeline(named->passes, pipeline, diags);
    } else {
      diags.error(Loc{}, "unknown pass '" + std::string(name) + "' (valid passes: " +
                             validNames() + ")");
      ok = false;
    }
  }
  return ok;
}

namespace {
void addTiming(std::vector<std::pair<std::string, double>> &timings, std::string_view name,
               double ms) {
  for (auto &[n, t] : timings)
    if (n == name) {
      t += ms;
      return;
    }
  timings.emplace_back(std::string(name), ms);
}
} // namespace

bool runPipeline(Module &m, const std::vector<const PassInfo *> &pipeline,
                 const PassOptions &opts, const PipelineHooks &hooks, Diagnostics &diags) {
  for (auto &g : m.graphs) {
    for (const PassInfo *p : pipeline) {
      auto start = std::chrono::steady_clock::now();
      bool ok = p->run(*g, opts, diags);
      std::chrono::duration<double, std::milli> ms = std::chrono::steady_clock::now() - start;
      if (hooks.timings)
        addTiming(*hooks.timings, p->name, ms.count());
      if (!ok)
        return false;
      if (hooks.verifyEach && !verify(*g, diags)) {
        diags.note(g->loc(), "the graph was invalid after pass '" + std::string(p->name) + "'");
        return false;
      }
      if (hooks.afterPass)
        hooks.afterPass(*p, *g);
    }
  }
  return true;
}

} // namespace fusec
