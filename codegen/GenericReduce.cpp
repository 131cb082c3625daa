// Generic kernels of reduce_sum, reduce_max, reduce_min and reduce_mean over
// any set of axes. Each output element (a line) is reduced by a group of
// lanes that stride over the line's flattened reduced index; the groups'
// partial values meet in shared memory (fusec_group_reduce). When the
// input's last axis is reduced a line's elements are contiguous, so a
// group's lanes are adjacent threads; otherwise neighbouring outputs are
// contiguous, so neighbouring groups are adjacent threads (a column
// reduction that still reads whole cache lines). Floats accumulate in f32
// (double for f64), integers in wrapping int64; max and min propagate NaN.
// An empty extent gives 0 (sum), NaN (mean, 0/0) or the identity (max/min,
// which the reference reports as an error).
//
// Limit: one block at most per output, so a reduction to very few outputs
// of a huge extent runs on few SMs.
#include "codegen/GenericSupport.h"
#include "codegen/PointwiseMath.h"
#include "ir/Assert.h"

namespace fusec::codegen::generic {

ReduceShape splitAxes(const Op &op) {
  Sizes in = sizesOf(*op.operand(0)), own = contiguousStrides(in);
  std::vector<bool> reduced(in.size(), op.getInts("axes").empty());
  for (int64_t axis : op.getInts("axes"))
    reduced[*normalizeAxis(axis, in.size())] = true;
  ReduceShape s;
  for (size_t k = 0; k < in.size(); ++k) {
    (reduced[k] ? s.redDims : s.keptDims).push_back(in[k]);
    (reduced[k] ? s.redStrides : s.keptStrides).push_back(own[k]);
  }
  s.lastReduced = !in.empty() && reduced.back();
  return s;
}

namespace {

/// The initial value and the combining expression of the reduction.
std::pair<std::string, std::string (*)(DType, const std::string &, const std::string &)>
combinerOf(OpKind kind, DType acc) {
  switch (kind) {
  case OpKind::ReduceSum:
  case OpKind::ReduceMean:
    return {zeroLiteral(acc), addExpr};
  case OpKind::ReduceMax:
    return {lowestLiteral(acc), maxExpr};
  case OpKind::ReduceMin:
    return {highestLiteral(acc), minExpr};
  default:
    FUSEC_ASSERT(false, "not a reduction");
  }
}

constexpr std::string_view kReduceKernel = R"(  __shared__ $T red[$BLOCK];
$DECLARE  for (long long tile = blockIdx.x; tile < $TILES; tile += gridDim.x) {
    const long long o = tile * $GROUPS + group;
    $T acc = $INIT;
    if (o < $OUTPUTS) {
$SPLIT_O      const long long base = $BASE;
      for (long long r = lane; r < $EXTENT; r += $LANES) {
$SPLIT_R        const $T x = $LOAD;
        acc = $COMBINE;
      }
    }
    const $T total = $REDUCE;
    if (o < $OUTPUTS && lane == 0)
      $OUT[o] = $STORE;
  }
)";

} // namespace

GeneratedKernel emitReduction(KernelBuilder &k) {
  const Op &op = k.op();
  ReduceShape s = splitAxes(op);
  DType t = op.result()->type().dtype, acc = accDType(t);
  int64_t outputs = product(s.keptDims), extent = product(s.redDims);
  GroupLayout layout = GroupLayout::choose(outputs, extent, s.lastReduced);
  IndexSpace kept(s.keptDims, "k"), red(s.redDims, "r");
  std::string base = kept.offset(s.keptStrides), element = red.offset(s.redStrides);
  auto [init, combine] = combinerOf(op.kind(), acc);
  std::string total = "total";
  if (op.kind() == OpKind::ReduceMean)
    total += " / " + floatLiteral(acc, double(extent));
  std::string body = fill(kReduceKernel, {{"T", std::string(accType(acc))},
                                          {"BLOCK", std::to_string(kBlock)},
                                          {"DECLARE", layout.declare()},
                                          {"TILES", lit(layout.tiles(outputs))},
                                          {"GROUPS", std::to_string(layout.groups)},
                                          {"INIT", init},
                                          {"OUTPUTS", lit(outputs)},
                                          {"SPLIT_O", kept.split("o", "      ")},
                                          {"BASE", base},
                                          {"EXTENT", lit(extent)},
                                          {"LANES", std::to_string(layout.lanes)},
                                          {"SPLIT_R", red.split("r", "        ")},
                                          {"LOAD", loadExpr(t, k.in(0), "base + " + element)},
                                          {"COMBINE", combine(acc, "acc", "x")},
                                          {"REDUCE", layout.reduce("acc", lambda(acc, combine))},
                                          {"OUT", k.out()},
                                          {"STORE", storeFromAcc(t, acc, total)}});
  std::string note = std::to_string(layout.lanes) + " lanes per output, " +
                     std::to_string(layout.groups) + " outputs per block";
  return k.finish({note}, body, layout.tiles(outputs));
}

} // namespace fusec::codegen::generic
