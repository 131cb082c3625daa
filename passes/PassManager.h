// The pass registry and the pipeline runner. A pass is a free function over
// a Graph, registered by one row in Passes.def; its flag name is its file
// name and its lit test's name.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/Graph.h"

#include <string>
#include <string_view>
#include <vector>

namespace fusec {

/// A pass rewrites `g` in place; it returns false only after reporting an
/// error it cannot recover from (a bug in the input the verifier could not
/// see). Passes must keep the graph's meaning.
using PassFn = bool (*)(Graph &g, Diagnostics &diags);

struct PassInfo {
  std::string_view name;
  std::string_view summary;
  PassFn run;
};

const std::vector<PassInfo> &allPasses();
const PassInfo *lookupPass(std::string_view name);

struct PipelineOptions {
  bool verifyEach = false;
};

/// Parses "a,b,c" into passes; reports an unknown name with the valid ones.
bool parsePipeline(std::string_view spec, std::vector<const PassInfo *> &pipeline,
                   Diagnostics &diags);

/// Runs the passes in order over every graph of the module.
bool runPipeline(Module &m, const std::vector<const PassInfo *> &pipeline,
                 const PipelineOptions &opts, Diagnostics &diags);

} // namespace fusec
