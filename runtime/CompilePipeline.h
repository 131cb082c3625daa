// One compile, as a flat list of named stages that every user runs in the
// same order: the embedding API and `fusec run`/`bench` (buildGpuProgram),
// the artifact writer (compileArtifact) and `fusec compile`.
//
//   verify      the module is well formed (ir/Verifier.h)
//   passes      the default pass pipeline, constants folded by the CPU
//               reference (each pass is a name for --print-after too)
//   specialize  symbolic dims bound to the input shapes (ir/Specialize.h)
//   tune        kernels take their tuned configs from the tuning cache, or are
//               tuned on the GPU first with --tune (runtime/Tuning.h; GPU
//               builds only)
//   lower       the graph as launched steps, each with its generated kernel
//               (runtime/gpu/Lowering.h: templates, generic kernels, fallbacks)
//   compile     each kernel to PTX (and a cubin) through the kernel cache
//   load        modules loaded, constants uploaded (the GPU paths; the
//               arena is planned before compile, on the lowered graph)
//
// A StageTrace says what to show on the way: the IR after a named stage or
// pass (--print-after=STAGE|PASS: the graph, or after `lower` each step's
// kernel in kir) and each stage's wall time (--time-stages).
#pragma once

#include "codegen/GeneratedKernel.h"
#include "ir/Diagnostics.h"
#include "ir/Graph.h"
#include "passes/PassManager.h"
#include "runtime/gpu/GpuProgram.h"
#include "runtime/gpu/Lowering.h"

#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace fusec {

enum class Stage : uint8_t { Verify, Passes, Specialize, Tune, Lower, Compile, Load };

/// "verify", "passes", ... as --print-after and --time-stages name them.
std::string_view stageName(Stage s);

/// What a compile shows besides its diagnostics.
struct StageTrace {
  std::set<std::string> printAfter;                  ///< stage and pass names
  bool time = false;                                 ///< collect each stage's wall time
  std::ostream *out = nullptr;                       ///< where both go; null: stderr
  std::vector<std::pair<std::string, double>> times; ///< (stage, ms), in order

  /// Runs stage `s`: timed when asked; then, when printAfter names it,
  /// `print` writes what it made. Returns what `body` returns.
  bool stage(Stage s, const std::function<bool()> &body,
             const std::function<void(std::ostream &)> &print = {});
  /// The pass hooks that print after the passes printAfter names.
  PipelineHooks passHooks();
  /// Reports a name in printAfter that is neither a stage nor a pass.
  bool checkNames(Diagnostics &diags) const;
  /// The stage times as a table (with --time-stages).
  void printTimes() const;

private:
  std::ostream &stream() const;
};

/// verify, passes: the default pipeline on every graph of `m`, autocasting
/// to `precision`. False after reporting an error.
bool prepareModule(Module &m, PrecisionChoice precision, Diagnostics &diags,
                   LayoutChoice layout = LayoutChoice::Auto, StageTrace *trace = nullptr);

struct TuningRequest; // runtime/Tuning.h

/// specialize, tune (when `tuning` is given), lower: `g` for `inputShapes` as launched steps for
/// GPU `target`, entry points named by `names`. A kernel a template refuses runs op by op when
/// `fallback` (noted in steps.fallbacks), else is an error.
std::optional<LoweredProgram> lowerProgram(const Graph &g,
                                           const std::vector<std::vector<int64_t>> &inputShapes,
                                           EntryNamer &names, bool fallback, Backend backend,
                                           std::string_view target, StageTrace *trace,
                                           Diagnostics &diags,
                                           const TuningRequest *tuning = nullptr);

/// specialize, tune, lower, compile, load: `g` (optimized; symbolic dims allowed)
/// as a GPU program for `inputShapes`, its kernels compiled in parallel
/// through the kernel cache and loaded, its constants uploaded (the stages
/// shown as `opts.trace` asks). Null after reporting an error.
std::unique_ptr<GpuProgram> buildGpuProgram(const Graph &g,
                                            const std::vector<std::vector<int64_t>> &inputShapes,
                                            const GpuBuildOptions &opts, Diagnostics &diags);

} // namespace fusec
