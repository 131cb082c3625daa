// Lowering a shape-specialized graph to launches: every top-level op becomes
// one generated kernel. A `kernel` op whose template emitter refuses it (a
// broadcast or dtype the template does not take, or a template without an
// emitter, such as attention today) is inlined: its body's ops take its
// place in the graph and each gets a generic kernel, so every graph that
// verifies runs. Constants stay as they are (the program uploads them once).
#pragma once

#include "codegen/GeneratedKernel.h"
#include "ir/Diagnostics.h"
#include "ir/Graph.h"
#include "ir/MemoryPlan.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace fusec {

/// One launch: the op it runs (in the lowered graph) and its kernel.
struct LoweredStep {
  const Op *op = nullptr;
  GeneratedKernel kernel;
  /// Where its kernel's scratch starts in the program's scratch region: every kernel has its own
  /// (one kernel's counters must not be another's workspace).
  int64_t scratchAt = 0;
};

struct LoweredGraph {
  std::vector<LoweredStep> steps;
  /// One note per inlined kernel, at the kernel op:
  /// "kernel '%x' (template attention) runs op by op: <why>".
  std::vector<Diagnostic> fallbacks;

  /// The scratch region: every step's scratch, from its scratchAt.
  int64_t scratchBytes() const;
};

/// The arena of a lowered graph: its values where `plan` puts them, then from scratchOffset the
/// steps' scratch.
inline int64_t scratchOffset(const MemoryPlan &plan) {
  return (plan.peakBytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
}
inline int64_t arenaBytes(const MemoryPlan &plan, const LoweredGraph &steps) {
  int64_t scratch = steps.scratchBytes();
  return scratch ? scratchOffset(plan) + scratch : plan.peakBytes;
}

/// What specialize and lower make of a graph for one set of input shapes.
struct LoweredProgram {
  std::unique_ptr<Graph> graph; ///< specialized and lowered; the steps point into it
  LoweredGraph steps;
  /// Where each tuned kernel op's config came from (runtime/Tuning.h), for reports.
  std::map<const Op *, std::string> tuning;
};

/// What runs `op`: a kernel op's template, else the op's name ("transpose").
std::string stepTemplateName(const Op &op);

/// Lowers `g` (static shapes, see ir/Specialize.h) in place and returns its
/// steps in graph order. Returns false after reporting an error at an op
/// that even the generic emitter cannot run, or, with `allowFallback`
/// false, the errors of a template that refused its kernel (what
/// `fusec compile --no-fallback` shows a compiler engineer). `backend` picks
/// the emitters; a kernel whose template the LLVM back end does not render
/// yet runs op by op there too, through its generic kernels (a note says so).
/// `names` names the kernels: one namer for every graph of one program.
bool lowerForGpu(Graph &g, LoweredGraph &out, EntryNamer &names, Diagnostics &diags,
                 bool allowFallback = true, Backend backend = Backend::Nvrtc,
                 std::string_view target = "sm_80");

} // namespace fusec
