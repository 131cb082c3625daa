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
// Symbolic dims: the rows M' may be named dims (each a `long long`
// parameter, KernelArg::Dim); N, K, and every dim of an unfolded batched
// product must be static. A `?` is refused: an operand's `?` may be 1 at
// run time and broadcast, which the kernel's indexing does not know.
#include "codegen/GemmPlan.h"
#include "codegen/PointwiseMath.h"

namespace fusec::codegen::gemm {

std::string lit(int64_t v) { return std::to_string(v) + "LL"; }

std::string castChain(const Source &src, const std::string &x, bool dropLast) {
  size_t n = src.casts.size();
  if (dropLast && n > 0 && (n >= 2 ? src.casts[n - 2] : src.stored) != DType::F64)
    --n;
  std::string e = x;
  DType from = src.stored;
  for (size_t i = 0; i < n; ++i) {
    e = castExpr(from, src.casts[i], e);
    from = src.casts[i];
  }
  return e;
}

std::string productOf(const std::vector<std::string> &exprs) {
  int64_t folded = 1;
  std::string symbolic;
  for (const std::string &e : exprs) {
    if (e.size() > 2 && e.compare(e.size() - 2, 2, "LL") == 0 && std::isdigit(e[0])) {
      folded *= std::stoll(e);
      continue;
    }
    symbolic += (symbolic.empty() ? "" : " * ") + e;
  }
  if (symbolic.empty())
    return lit(folded);
  return folded == 1 ? symbolic : symbolic + " * " + lit(folded);
}

namespace {

class ShapeAnalyzer {
public:
  ShapeAnalyzer(Plan &plan, Diagnostics &diags)
      : plan(plan), diags(diags), anchor(*plan.chains.front().anchor),
        space(anchor.result()->type().shape) {}

  bool run();

private:
  bool declareDims();
  bool checkSymbolic(bool folded) const;
  std::string batchOffset(const Shape &operand, int64_t matrixElements) const;
  void declareParams();

  Plan &plan;
  Diagnostics &diags;
  const Op &anchor;
  const Shape &space;
};

bool ShapeAnalyzer::declareDims() {
  std::map<std::string, std::string> byName;
  for (unsigned k = 0; k < space.size(); ++k) {
    const Dim &d = space[k];
    if (d.isStatic()) {
      plan.dims.push_back(lit(d.size));
      continue;
    }
    plan.staticShapes = false;
    auto [it, fresh] = byName.emplace(d.symbol, "dim_" + cIdentifier(d.symbol));
    plan.dims.push_back(it->second);
    if (fresh && !d.isAnonymous())
      plan.args.push_back({KernelArg::Kind::Dim, it->second, 0, k, std::nullopt});
  }
  return true;
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

/// Elements from the first matrix of `operand` to the one batch `z` reads.
std::string ShapeAnalyzer::batchOffset(const Shape &operand, int64_t matrixElements) const {
  size_t batchRank = space.size() - 2, own = operand.size() - 2;
  std::string offset;
  int64_t stride = matrixElements, outer = 1;
  for (size_t k = batchRank; k-- > 0;) {
    int64_t size = space[k].size;
    size_t j = k + own - batchRank; // operand axis, when k >= batchRank - own
    bool moves = k + own >= batchRank && operand[j].size != 1;
    if (moves) {
      std::string coord = outer == 1 ? "z" : "z / " + lit(outer);
      if (k > 0)
        coord = "(" + coord + " % " + lit(size) + ")";
      offset += (offset.empty() ? "" : " + ") + coord + " * " + lit(stride);
      stride *= size;
    }
    outer *= size;
  }
  return offset.empty() ? "0" : offset;
}

void ShapeAnalyzer::declareParams() {
  const Graph &body = *plan.body;
  std::vector<KernelArg> pointers;
  for (unsigned j = 0; j < body.numInputs(); ++j) {
    plan.params.push_back("const " + std::string(storageType(body.input(j)->type().dtype)) +
                          " *__restrict__ " + plan.inputs[j]);
    pointers.push_back({KernelArg::Kind::Input, plan.inputs[j], j, 0, std::nullopt});
  }
  for (unsigned j = 0; j < plan.kernel->numResults(); ++j) {
    plan.params.push_back(std::string(storageType(plan.kernel->result(j)->type().dtype)) +
                          " *__restrict__ " + plan.outputs[j]);
    pointers.push_back({KernelArg::Kind::Output, plan.outputs[j], j, 0, std::nullopt});
  }
  for (const KernelArg &d : plan.args)
    plan.params.push_back("long long " + d.name);
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
  std::vector<std::string> rowDims(plan.dims.begin(), plan.dims.end() - 1);
  plan.rows = productOf(rowDims);
  bool batched = !folded && space.size() > 2;
  plan.m = batched ? plan.dims[space.size() - 2] : plan.rows;
  plan.batches = batched ? productOf({rowDims.begin(), rowDims.end() - 1}) : lit(1);
  int64_t m = ta || batched ? space[space.size() - 2].size : 0; // static then
  plan.a.kMajor = !ta;
  plan.a.outer = ta ? lit(plan.k) : plan.m;
  plan.a.inner = ta ? m : plan.k;
  plan.a.batchOffset = batched ? batchOffset(sa, m * plan.k) : "0";
  plan.b.kMajor = tb;
  plan.b.outer = lit(tb ? plan.n : plan.k);
  plan.b.inner = tb ? plan.k : plan.n;
  plan.b.batchOffset = batched ? batchOffset(sb, plan.n * plan.k) : "0";
  for (Matrix *x : {&plan.a, &plan.b})
    x->async = plan.tensorCores && x->sources.front().casts.empty() && x->inner % 8 == 0;
  declareParams();
  return true;
}

} // namespace

bool analyzeShapes(Plan &plan, Diagnostics &diags) { return ShapeAnalyzer(plan, diags).run(); }

} // namespace fusec::codegen::gemm
