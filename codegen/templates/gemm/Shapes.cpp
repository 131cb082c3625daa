// The shapes of a gemm kernel (see GemmPlan.h) and its signature.
//
// A matmul's result is [L..., M, N] with L the broadcast of the operands'
// leading dims; linear's is [L..., N] for x [L..., K]. When B has no batch
// of its own (linear, or a matmul whose B has only size-1 leading dims) and
// A is not transposed, the batch folds into the rows: one M' x K by K x N
// product with M' = prod(L) * M, so small per-batch M does not waste tiles.
// Otherwise the product runs once per batch index z, each operand's matrix
// found by its own strides over L (0 where it broadcasts).
//
// Symbolic dims: the rows M' may be named dims (each an i64 parameter,
// KernelArg::Dim); N, K, and every dim of an unfolded batched
// product must be static. A `?` is refused: an operand's `?` may be 1 at
// run time and broadcast, which the kernel's indexing does not know.
#include "codegen/templates/gemm/Plan.h"

#include <map>

namespace fusec::gemm {

namespace {

class ShapeAnalyzer {
public:
  ShapeAnalyzer(Plan &plan, Diagnostics &diags)
      : plan(plan), diags(diags), anchor(*plan.chains.front().anchor),
        space(anchor.result()->type().shape) {}

  bool run();

private:
  void declareDims();
  bool checkSymbolic(bool folded) const;
  std::vector<BatchTerm> batchOffset(const Shape &operand, int64_t matrixElements) const;
  void declareParams();

  Plan &plan;
  Diagnostics &diags;
  const Op &anchor;
  const Shape &space;
};

// The pointers come first (declareParams), so the dims' arguments follow
// the kernel's operands and results.
void ShapeAnalyzer::declareDims() {
  unsigned first = plan.body->numInputs() + plan.kernel->numResults();
  std::map<std::string, unsigned> byName;
  for (unsigned k = 0; k < space.size(); ++k) {
    const Dim &d = space[k];
    if (d.isStatic()) {
      plan.dims.push_back({d.size, {}});
      continue;
    }
    plan.staticShapes = false;
    auto [it, fresh] = byName.emplace(d.symbol, first + unsigned(plan.args.size()));
    plan.dims.push_back({1, {it->second}});
    if (fresh && !d.isAnonymous())
      plan.args.push_back({KernelArg::Kind::Dim, "dim_" + cIdentifier(d.symbol), 0, k, std::nullopt});
  }
}

bool ShapeAnalyzer::checkSymbolic(bool folded) const {
  bool ok = folded && space.back().isStatic();
  for (const Dim &d : space)
    ok = ok && !d.isAnonymous();
  for (const Value *v : anchor.operands())
    for (const Dim &d : v->type().shape)
      ok = ok && !d.isAnonymous();
  const Shape &a = anchor.operand(0)->type().shape;
  ok = ok && a.back().isStatic();
  if (ok)
    return true;
  std::string types;
  for (const Value *v : anchor.operands())
    types += (types.empty() ? "" : ", ") + v->type().str();
  diags.error(anchor.loc(), "'" + std::string(anchor.name()) + "' of " + types +
                                ": the gemm template needs static shapes, except named dims "
                                "among the rows of an unbatched product");
  return false;
}

/// The terms of the elements from the first matrix of `operand` to the one
/// batch `z` reads.
std::vector<BatchTerm> ShapeAnalyzer::batchOffset(const Shape &operand,
                                                  int64_t matrixElements) const {
  size_t batchRank = space.size() - 2, own = operand.size() - 2;
  std::vector<BatchTerm> terms;
  int64_t stride = matrixElements, outer = 1;
  for (size_t k = batchRank; k-- > 0;) {
    int64_t size = space[k].size;
    size_t j = k + own - batchRank; // operand axis, when k >= batchRank - own
    if (k + own >= batchRank && operand[j].size != 1) {
      terms.push_back({outer, k > 0 ? size : 0, stride});
      stride *= size;
    }
    outer *= size;
  }
  return terms;
}

void ShapeAnalyzer::declareParams() {
  std::vector<KernelArg> pointers;
  for (unsigned j = 0; j < plan.body->numInputs(); ++j)
    pointers.push_back({KernelArg::Kind::Input, plan.inputs[j], j, 0, std::nullopt});
  for (unsigned j = 0; j < plan.kernel->numResults(); ++j)
    pointers.push_back({KernelArg::Kind::Output, plan.outputs[j], j, 0, std::nullopt});
  plan.args.insert(plan.args.begin(), pointers.begin(), pointers.end());
}

bool ShapeAnalyzer::run() {
  declareDims();
  bool linear = anchor.kind() == OpKind::Linear;
  bool ta = !linear && anchor.getBool("transpose_a");
  bool tb = linear || anchor.getBool("transpose_b");
  const Shape &sa = anchor.operand(0)->type().shape, &sb = anchor.operand(1)->type().shape;
  bool folded = !ta;
  for (size_t i = 0; !linear && i + 2 < sb.size(); ++i)
    folded = folded && sb[i].isStaticValue(1);
  if (!plan.staticShapes && !checkSymbolic(folded))
    return false;
  plan.n = space.back().size;
  plan.k = (ta ? sa[sa.size() - 2] : sa.back()).size;
  Extent rows;
  for (size_t d = 0; d + 1 < plan.dims.size(); ++d)
    rows = rows * plan.dims[d];
  bool batched = !folded && space.size() > 2;
  plan.m = batched ? plan.dims[space.size() - 2] : rows;
  plan.batches = batched ? rows.factor / plan.m.factor : 1;
  int64_t m = ta || batched ? space[space.size() - 2].size : 0; // static then
  plan.a.kMajor = !ta;
  plan.a.outer = ta ? Extent{plan.k, {}} : plan.m;
  plan.a.inner = ta ? m : plan.k;
  if (batched)
    plan.a.batchOffset = batchOffset(sa, m * plan.k);
  plan.b.kMajor = tb;
  plan.b.outer = {tb ? plan.n : plan.k, {}};
  plan.b.inner = tb ? plan.k : plan.n;
  if (batched)
    plan.b.batchOffset = batchOffset(sb, plan.n * plan.k);
  for (Matrix *x : {&plan.a, &plan.b})
    x->async = plan.tensorCores && x->sources.front().casts.empty() && x->inner % 8 == 0;
  declareParams();
  return true;
}

} // namespace

bool analyzeShapes(Plan &plan, Diagnostics &diags) { return ShapeAnalyzer(plan, diags).run(); }

} // namespace fusec::gemm
