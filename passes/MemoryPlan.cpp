// memory-plan: gives every intermediate tensor of a static-shaped graph a
// byte offset in one arena, and reports the arena's peak size.
//
// The plan itself is ir/MemoryPlan.h's planMemory (liveness over op order,
// in-place reuse of dying operands by pointwise ops, greedy-by-size best-fit
// placement at 256-byte aligned offsets), shared with the runtime. This pass
// records it as discardable annotations, which the verifier accepts on any
// op: `plan.offset = N` on each op whose result has a buffer (for an op with
// several results, one offset per result, -1 for a result without one), and
// `plan.inplace = true` where a result took over an operand's buffer. When
// asked (PassOptions::reportMemoryPlan), it notes `@g: arena peak N bytes
// for M buffers` on the graph.
//
// Invariants: annotations from an earlier run are removed first, so running
// the pass twice gives the same IR; nothing else in the graph changes.
// Graph inputs, outputs and constants get no offset (the caller and the
// weights own them), nor do the ops inside kernel bodies (they are registers
// and shared memory, codegen's business).
//
// A graph with a symbolic dim in any planned value is not planned: the pass
// notes that the plan is deferred, and the runtime calls planMemory once it
// has bound the dims.
#include "ir/MemoryPlan.h"

#include "passes/PassManager.h"

namespace fusec {

namespace {

constexpr std::string_view kOffsetAttr = "plan.offset";
constexpr std::string_view kInPlaceAttr = "plan.inplace";

void removePlanAttrs(Graph &g) {
  for (Op *op : g.opsSnapshot()) {
    std::vector<std::string> stale;
    for (const NamedAttr &a : op->attrs())
      if (std::string_view(a.name).starts_with("plan."))
        stale.push_back(a.name);
    for (const std::string &name : stale)
      op->removeAttr(name);
  }
}

// Sets the plan attributes of one op, if any of its results has a buffer.
void annotate(Op &op, const MemoryPlan &plan) {
  std::vector<int64_t> offsets;
  bool planned = false, inPlace = false;
  for (unsigned i = 0; i < op.numResults(); ++i) {
    std::optional<int64_t> offset = plan.offsetOf(*op.result(i));
    planned = planned || offset.has_value();
    inPlace = inPlace || plan.reusedOperand.count(op.result(i));
    offsets.push_back(offset.value_or(-1));
  }
  if (!planned)
    return;
  if (offsets.size() == 1)
    op.setAttr(std::string(kOffsetAttr), offsets[0]);
  else
    op.setAttr(std::string(kOffsetAttr), offsets);
  if (inPlace)
    op.setAttr(std::string(kInPlaceAttr), true);
}

} // namespace

bool runMemoryPlan(Graph &g, const PassOptions &opts, Diagnostics &diags) {
  removePlanAttrs(g);
  std::optional<MemoryPlan> plan = planMemory(g, std::map<std::string, int64_t>{});
  if (!plan) {
    if (opts.reportMemoryPlan)
      diags.note(g.loc(), "@" + g.name() + ": memory plan deferred until shapes are bound");
    return true;
  }
  for (Op *op : g.opsSnapshot())
    annotate(*op, *plan);
  size_t buffers = plan->buffers.size();
  if (opts.reportMemoryPlan)
    diags.note(g.loc(), "@" + g.name() + ": arena peak " + std::to_string(plan->peakBytes) +
                          " bytes for " + std::to_string(buffers) +
                          (buffers == 1 ? " buffer" : " buffers"));
  return true;
}

} // namespace fusec
