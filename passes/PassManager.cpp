// The pass registry (from Passes.def) and the pipeline runner.
#include "passes/PassManager.h"

#include "ir/Verifier.h"

namespace fusec {

#define PASS(name, fn, summary) bool fn(Graph &g, Diagnostics &diags);
#include "passes/Passes.def"

const std::vector<PassInfo> &allPasses() {
  static const std::vector<PassInfo> passes = {
#define PASS(name, fn, summary) PassInfo{name, summary, &fn},
#include "passes/Passes.def"
  };
  return passes;
}

const PassInfo *lookupPass(std::string_view name) {
  for (const PassInfo &p : allPasses())
    if (p.name == name)
      return &p;
  return nullptr;
}

bool parsePipeline(std::string_view spec, std::vector<const PassInfo *> &pipeline,
                   Diagnostics &diags) {
  bool ok = true;
  while (!spec.empty()) {
    size_t comma = spec.find(',');
    std::string_view name = spec.substr(0, comma);
    spec = comma == std::string_view::npos ? std::string_view() : spec.substr(comma + 1);
    if (const PassInfo *p = lookupPass(name)) {
      pipeline.push_back(p);
      continue;
    }
    std::string valid;
    for (const PassInfo &p : allPasses())
      valid += (valid.empty() ? "" : ", ") + std::string(p.name);
    diags.error(Loc{}, "unknown pass '" + std::string(name) + "' (valid passes: " + valid + ")");
    ok = false;
  }
  return ok;
}

bool runPipeline(Module &m, const std::vector<const PassInfo *> &pipeline,
                 const PipelineOptions &opts, Diagnostics &diags) {
  for (auto &g : m.graphs) {
    for (const PassInfo *p : pipeline) {
      if (!p->run(*g, diags))
        return false;
      if (opts.verifyEach && !verify(*g, diags)) {
        diags.note(g->loc(), "the graph was invalid after pass '" + std::string(p->name) + "'");
        return false;
      }
    }
  }
  return true;
}

} // namespace fusec
