// Reductions and normalizations of a row_reduction program (see
// RowReductionProgram.cpp for the whole): a reduce_* is a Reduce node over
// its input (accumulating in f32 for f32/f16/bf16, f64 for f64, wrapping
// i64 for integers) and the expression of its result; layer_norm, rms_norm
// and softmax are the Reduce nodes and expressions of their formulas, in
// the result's compute type (f32 for f16/bf16).
#include "codegen/templates/rowred/Builder.h"
#include "codegen/templates/rowred/View.h"

namespace fusec::rowred {

namespace {

/// The accumulator of a reduction of `t`: f32 math for f32/f16/bf16, i64
/// for integers.
DType accumulatorType(DType t) {
  if (t == DType::F64)
    return DType::F64;
  return isFloat(t) ? DType::F32 : DType::I64;
}

/// An Expr node's kind and parameters.
Node what(ExprKind kind, double count = 0, double epsilon = 0) {
  Node n;
  n.expr = kind;
  n.count = count;
  n.epsilon = epsilon;
  return n;
}

} // namespace

bool ProgramBuilder::visitReduce(const Op &op) {
  DType t = op.operand(0)->type().dtype;
  const View &v = prog.view;
  if (t == DType::Bool) {
    diags.error(op.loc(), "'" + std::string(op.name()) +
                              "' of bool is not supported by the "
                              "row_reduction template");
    return false;
  }
  bool isMaxMin = op.kind() == OpKind::ReduceMax || op.kind() == OpKind::ReduceMin;
  if (isMaxMin && v.reduced == 0 && v.inner != 0 && v.outer != int64_t(0)) {
    diags.error(op.loc(), "'" + std::string(op.name()) + "' of " + op.operand(0)->type().str() +
                              " reduces an empty extent");
    return false;
  }
  std::optional<unsigned> x = operand(op, 0, false);
  if (!x)
    return false;
  DType acc = accumulatorType(t), type = kir::computeType(op.result()->type().dtype);
  ReduceKind kind = op.kind() == OpKind::ReduceMax   ? ReduceKind::Max
                    : op.kind() == OpKind::ReduceMin ? ReduceKind::Min
                                                     : ReduceKind::Sum;
  unsigned r = reduce(kind, *x, acc, op.result()->name());
  Node result = op.kind() == OpKind::ReduceMean ? what(ExprKind::Mean, double(v.reduced))
                                                : what(ExprKind::Convert);
  computed[op.result()] = expr(type, {r}, result, op.result()->name());
  if (!op.getBool("keepdims"))
    inRowSpace.insert(op.result());
  return true;
}

// (x − mean)·rstd·γ + β with mean = Σx/N, rstd = 1/√(Σ(x − mean)²/N + ε);
// rms_norm: x·(1/√(Σx²/N + ε))·γ.
void ProgramBuilder::layerNorm(const Op &op, unsigned x, DType t) {
  std::string name = op.result()->name();
  double n = double(prog.view.reduced);
  bool isRms = op.kind() == OpKind::RmsNorm;
  std::vector<unsigned> args{x};
  unsigned centered = x;
  if (!isRms) {
    unsigned sum = reduce(ReduceKind::Sum, x, t, name + "_sum");
    unsigned mean = expr(t, {sum}, what(ExprKind::Mean, n), name + "_mean");
    centered = expr(t, {x, mean}, what(ExprKind::Difference), name + "_centered");
    args.push_back(mean);
  }
  unsigned square = expr(t, {centered}, what(ExprKind::Square), name + "_square");
  unsigned sumSq = reduce(ReduceKind::Sum, square, t, name + "_sumsq");
  args.push_back(expr(t, {sumSq}, what(ExprKind::Rstd, n, op.getFloat("epsilon")), name + "_rstd"));
  for (unsigned i = 1; i < op.numOperands(); ++i)
    args.push_back(*operand(op, i, false));
  computed[op.result()] =
      expr(t, std::move(args), what(isRms ? ExprKind::RmsNormalize : ExprKind::Normalize), name);
}

// exp(x − max)·(1/Σexp(x − max)).
void ProgramBuilder::softmax(const Op &op, unsigned x, DType t) {
  std::string name = op.result()->name();
  unsigned max = reduce(ReduceKind::Max, x, t, name + "_max");
  Node exp = what(ExprKind::ExpDifference);
  exp.dtype = op.result()->type().dtype;
  unsigned e = expr(t, {x, max}, exp, name + "_exp");
  unsigned sum = reduce(ReduceKind::Sum, e, t, name + "_sum");
  unsigned inv = expr(t, {sum}, what(ExprKind::Reciprocal), name + "_inv");
  computed[op.result()] = expr(t, {e, inv}, what(ExprKind::Product), name);
}

bool ProgramBuilder::visitNorm(const Op &op) {
  std::optional<unsigned> x = operand(op, 0, false);
  for (unsigned i = 1; x && i < op.numOperands(); ++i)
    if (!operand(op, i, false))
      return false;
  if (!x)
    return false;
  DType t = kir::computeType(op.result()->type().dtype);
  if (op.kind() == OpKind::Softmax)
    softmax(op, *x, t);
  else
    layerNorm(op, *x, t);
  return true;
}

} // namespace fusec::rowred
