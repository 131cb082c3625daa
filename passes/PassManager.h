// The pass registry and the pipeline runner. A pass is a free function over
// a Graph, registered by one row in Passes.def; its flag name is its file
// name and its lit test's name. Named pipelines (`default`) are rows too.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/Graph.h"

#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace fusec {

enum class LayoutChoice { Auto, NCHW, NHWC };
enum class PrecisionChoice { FP32, FP16, BF16 };

/// Options that passes read; the tools fill them from flags (each flag's
/// valid values are checked there, with the valid ones listed on error).
struct PassOptions {
  LayoutChoice layout = LayoutChoice::Auto;
  PrecisionChoice precision = PrecisionChoice::FP32;
  /// Where fusion explains each producer→consumer edge it left unfused; null: silent.
  std::ostream *explainFusion = nullptr;
  /// Whether the memory plan notes each graph's arena peak (fusec-opt
  /// --report-memory-plan); the plan itself is in the IR either way.
  bool reportMemoryPlan = false;
  /// Evaluates `op` on constant operands for canonicalize's constant folding:
  /// the result's data, or null when it cannot or will not fold. Null: no folding.
  std::function<DenseRef(const Op &op, const std::vector<DenseRef> &operands)> foldConstant;
};

/// A pass rewrites `g` in place and must keep its meaning. It returns false
/// only after reporting an error it cannot recover from.
using PassFn = bool (*)(Graph &g, const PassOptions &opts, Diagnostics &diags);

struct PassInfo {
  std::string_view name;
  std::string_view summary;
  PassFn run;
};

const std::vector<PassInfo> &allPasses();
const PassInfo *lookupPass(std::string_view name);

struct PipelineInfo {
  std::string_view name;
  std::string_view passes; // comma-separated pass names
};
const std::vector<PipelineInfo> &allPipelines();

/// Parses "a,b,c" into passes, expanding pipeline names; reports an unknown
/// name with the valid ones.
bool parsePipeline(std::string_view spec, std::vector<const PassInfo *> &pipeline,
                   Diagnostics &diags);

struct PipelineHooks {
  bool verifyEach = false;
  /// Called after each pass with the graph it ran on.
  std::function<void(const PassInfo &, const Graph &)> afterPass;
  /// Collects the wall time of each pass (summed over graphs) when set.
  std::vector<std::pair<std::string, double>> *timings = nullptr;
};

/// Runs the passes in order over every graph of the module.
bool runPipeline(Module &m, const std::vector<const PassInfo *> &pipeline,
                 const PassOptions &opts, const PipelineHooks &hooks, Diagnostics &diags);

} // namespace fusec
