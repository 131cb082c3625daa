// fusion: rewrites a graph into `kernel` ops, each holding the ops it fuses
// as its body and naming the template that runs it (pointwise,
// row_reduction, gemm, attention).
//
// Three stages. (1) Raise (FusionRaise.cpp, FusionAttention.cpp): primitive
// spellings of softmax, layer_norm, rms_norm, gelu, attention and linear —
// decompose's forms, which hand-written models use too — become composites
// (kernel bodies then give them canonical attributes), so that a model fuses
// into the same kernels however it was written. (2) Group (FusionGroups.cpp): each
// contraction (an NHWC conv2d of one group among them: the gemm template's
// implicit gemm), normalization or trailing-axes reduction anchors a group
// (matmuls sharing their A operand share one grouped-GEMM group); a row
// reduction takes its pointwise prologue in the input's index space, gemm and
// attention the casts of their operands; every anchor takes the pointwise
// epilogue in its result's index space (a row reduction also in its rows'
// space, with further reductions over the same rows); the remaining pointwise
// ops form pointwise groups of one index space (broadcast operands welcome),
// which then take the movement ops only they read; every merge asks a kernel
// graph kept in topological order whether it would make a cycle
// (FusionDag.cpp), so grouping is near-linear in ops and edges.
// (3) Outline (FusionOutline.cpp): each group becomes a kernel op, or several
// when its operands and results would overflow a kernel's parameters; before
// all this, a concat of too many operands becomes a tree (FusionBounds.cpp,
// Note [Kernel parameter space]).
//
// Invariants: the graph's meaning is kept (a kernel means its body; raising
// changes rounding only, never toward less precision); no op is computed by
// two kernels (a value several kernels read is one kernel's result); kernels
// do not depend on each other in a cycle; every name survives. With
// PassOptions::explainFusion set, each producer→consumer edge left between
// two kernels, or between a kernel and an op outside any, is reported as
// `fusion: %a -> %b not fused: REASON`, %a the value and %b the consumer's
// first result as named before outlining (the names survive in the bodies).
// REASON: `several users` (the producer also feeds another kernel, or
// fusing would make a cycle through one), `index-space mismatch` (the two
// compute over different shapes), `reduction boundary` (both sides hold a
// contraction or reduction, or two GEMM accumulators meet), `template cannot
// hold it` (an op no template takes, or a prologue the template lacks).
//
// Movement ops (reshape, transpose, slice, concat, broadcast) join a kernel
// that reads through them: attention the views of its operands and result, a
// pointwise kernel those only it reads, and through them (a broadcast aside)
// the pointwise ops behind (gatherIntoPointwise). The rest run alone, `gather`
// and `gather_elements` always (their indices are data: no template reads
// through them).
// A gemm's epilogue also takes a batch_norm over the last axis (NHWC: its
// parameters run along the columns), so conv → batch_norm → relu is one kernel.
// Deliberately not done: other windowed ops (pooling, grouped or NCHW
// convolutions), other batch_norms and reductions over leading axes stay
// outside kernels — no template holds them (layout sinks and
// cancels transposes before fusion; canonicalize folds reshape chains). Ops already in
// kernels are left alone, so running fusion twice changes nothing. A rank-1
// linear is not raised from its reshaped decomposed form.
#include "passes/Fusion.h"

#include "passes/PassManager.h"

namespace fusec {

bool runFusion(Graph &g, const PassOptions &opts, Diagnostics &) {
  fusion::splitWideConcats(g);
  fusion::raiseComposites(g);
  fusion::Plan plan(g);
  plan.build();
  if (opts.explainFusion)
    fusion::explainUnfused(g, plan, *opts.explainFusion);
  fusion::outlineGroups(g, plan);
  return true;
}

} // namespace fusec
