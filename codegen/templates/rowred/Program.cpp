// Builds the row_reduction program of a kernel body (see RowReductionPlan.h).
//
// The first anchor fixes the view; every other anchor must reduce the same
// input shape over the same axes. The body's ops are visited in order and
// each becomes nodes: a pointwise op one expression (PointwiseMath.h), a
// reduce_* a Reduce node (its accumulator: f32 for f32/f16/bf16, f64 for
// f64, wrapping i64 for integers) and the expression of its result (the
// mean divides by the extent: 0/0 is NaN for an empty one), layer_norm,
// rms_norm and softmax the reductions and expressions of their formulas
// (two passes for the variance: mean, then Σ(x − mean)², as docs/ir.md and
// the reference compute it; softmax's exp(x − max) kept, times 1/Σ). Body
// inputs and constants become leaves where they are used, classified
// against the view (RowReductionView.h) as the using op's index space
// needs: a result of a reduction without keepdims, and every op reading
// one, live in the rows' space, where a leaf aligns with the view minus its
// reduced axes. A node's level counts the reductions it depends on in
// sequence: it can be computed in the sweep over the row of that number.
#include "codegen/GeneratedKernel.h"
#include "codegen/templates/rowred/Builder.h"
#include "codegen/templates/rowred/View.h"
#include "ir/Assert.h"

namespace fusec::rowred {

namespace {

bool isAllOnes(const Shape &s) {
  for (const Dim &d : s)
    if (!d.isStaticValue(1))
      return false;
  return true;
}

} // namespace

std::string ProgramBuilder::unique(const std::string &base) {
  std::string name = base;
  for (unsigned k = 1; !names.insert(name).second; ++k)
    name = base + "_" + std::to_string(k);
  return name;
}

unsigned ProgramBuilder::add(Node n, const std::string &irName, const char *prefix) {
  n.name = unique(prefix + cIdentifier(irName));
  prog.maxLevel = std::max(prog.maxLevel, n.level);
  prog.nodes.push_back(std::move(n));
  return unsigned(prog.nodes.size() - 1);
}

unsigned ProgramBuilder::expr(DType type, std::vector<unsigned> args, Node what,
                              const std::string &irName) {
  Node n = std::move(what);
  n.kind = NodeKind::Expr;
  n.type = type;
  for (unsigned a : args) {
    n.mask |= prog.nodes[a].mask;
    n.level = std::max(n.level, prog.nodes[a].level);
  }
  n.args = std::move(args);
  return add(std::move(n), irName);
}

unsigned ProgramBuilder::reduce(ReduceKind kind, unsigned input, DType type,
                                const std::string &irName) {
  Node n;
  n.kind = NodeKind::Reduce;
  n.type = type;
  n.reduce = kind;
  n.args = {input};
  n.mask = prog.nodes[input].mask & ~unsigned(Reduced);
  n.level = prog.nodes[input].level + 1;
  return add(std::move(n), irName, "acc_");
}

bool ProgramBuilder::setView() {
  const Op *anchor = nullptr;
  for (const auto &op : body.ops())
    if (!anchor && isAnchor(*op))
      anchor = op.get();
  if (!anchor) {
    diags.error(kernel.loc(), "kernel '%" + kernel.result(0)->name() +
                                  "' (template row_reduction) holds no reduction or normalization");
    return false;
  }
  auto block = anchorBlock(*anchor, diags);
  std::optional<View> view = block ? makeView(*anchor, *block, diags) : std::nullopt;
  if (!view)
    return false;
  prog.view = *view;
  return true;
}

// Every anchor reduces the view's input shape over the view's axes.
bool ProgramBuilder::checkAnchor(const Op &op) {
  auto block = anchorBlock(op, diags);
  if (!block)
    return false;
  const View &v = prog.view;
  if (op.operand(0)->type().shape == v.shape && block->first == v.begin && block->second == v.end)
    return true;
  View other = v;
  other.shape = op.operand(0)->type().shape;
  other.begin = block->first;
  other.end = block->second;
  diags.error(op.loc(), "'" + std::string(op.name()) + "' reduces " + describe(other) +
                            " but the kernel's first reduction reduces " + describe(v) +
                            "; one row_reduction kernel reduces one set of rows");
  return false;
}

std::optional<unsigned> ProgramBuilder::leaf(const Value *v, bool inRows, const Op &user) {
  auto found = leaves.find({v, inRows});
  if (found != leaves.end())
    return found->second;
  std::optional<unsigned> mask = classify(prog.view, v->type().shape, inRows);
  if (!mask) {
    diags.error(user.loc(), "'" + std::string(user.name()) + "' operand %" + v->name() +
                                " of type " + v->type().str() +
                                " does not broadcast as a full, per-row, per-column or "
                                "scalar operand of " +
                                describe(prog.view) +
                                (inRows ? " (in the space of its rows)" : ""));
    return std::nullopt;
  }
  Op *def = v->definingOp();
  unsigned id;
  if (def && def->getDense("value").isSplat()) {
    Node n;
    n.kind = NodeKind::Splat;
    n.type = kir::computeType(v->type().dtype);
    n.constant = &def->getDense("value");
    id = add(std::move(n), v->name());
  } else if (def) {
    id = tableLeaf(v, *mask);
  } else {
    Node n;
    n.kind = NodeKind::Load;
    n.type = kir::computeType(v->type().dtype);
    n.mask = *mask;
    n.input = v->index();
    n.dtype = v->type().dtype;
    id = add(std::move(n), v->name());
  }
  leaves[{v, inRows}] = id;
  return id;
}

// A non-splat constant: a table, indexed as an operand would be.
unsigned ProgramBuilder::tableLeaf(const Value *v, unsigned mask) {
  const DenseData &d = v->definingOp()->getDense("value");
  Node n;
  n.kind = NodeKind::Table;
  n.type = kir::computeType(d.dtype);
  n.mask = mask;
  n.dtype = d.dtype;
  n.constant = &d;
  // The table is a global and its element a local of the kernel: two names,
  // both unique in the kernel (a local named as the table hid it).
  n.table = unique(entry + "_table_" + cIdentifier(v->name()));
  return add(std::move(n), v->name());
}

std::optional<unsigned> ProgramBuilder::operand(const Op &user, unsigned i, bool inRows) {
  const Value *v = user.operand(i);
  Op *def = v->definingOp();
  if (!def || def->kind() == OpKind::Const)
    return leaf(v, inRows, user);
  bool valueInRows = inRowSpace.count(v) > 0;
  if (valueInRows == inRows || isAllOnes(v->type().shape))
    return computed.at(v);
  diags.error(user.loc(), "'" + std::string(user.name()) + "' reads %" + v->name() + " of type " +
                              v->type().str() + (valueInRows ? ", a per-row value," : "") +
                              " across the rows of " + describe(prog.view) +
                              "; the row_reduction template cannot");
  return std::nullopt;
}

bool ProgramBuilder::visitPointwise(const Op &op) {
  bool inRows = false;
  for (const Value *v : op.operands())
    inRows = inRows || inRowSpace.count(v);
  std::vector<unsigned> args;
  for (unsigned i = 0; i < op.numOperands(); ++i) {
    std::optional<unsigned> a = operand(op, i, inRows);
    if (!a)
      return false;
    args.push_back(*a);
  }
  Node what;
  what.expr = ExprKind::Pointwise;
  what.op = &op;
  computed[op.result()] =
      expr(kir::computeType(op.result()->type().dtype), std::move(args), what, op.result()->name());
  if (inRows)
    inRowSpace.insert(op.result());
  return true;
}

bool ProgramBuilder::visit(const Op &op) {
  if (op.kind() == OpKind::Const)
    return true;
  if (isAnchor(op) && !checkAnchor(op))
    return false;
  if (op.info().cls == OpClass::Pointwise)
    return visitPointwise(op);
  if (op.info().cls == OpClass::Reduction)
    return visitReduce(op);
  if (isAnchor(op))
    return visitNorm(op);
  diags.error(op.loc(),
              "'" + std::string(op.name()) + "' cannot be generated by the row_reduction template");
  return false;
}

bool ProgramBuilder::addStore(unsigned j) {
  const Value *v = body.outputs()[j];
  bool inRows = inRowSpace.count(v) > 0;
  std::optional<unsigned> node =
      computed.count(v) ? std::optional(computed.at(v)) : leaf(v, inRows, kernel);
  if (!node)
    return false;
  std::optional<unsigned> mask = classify(prog.view, v->type().shape, inRows);
  FUSEC_ASSERT(mask, "a body output broadcasts against the view as its producer does");
  const View &view = prog.view;
  bool perRow = (*mask & Outer) || view.outer == int64_t(1);
  bool perInner = (*mask & Inner) || view.inner == 1;
  if (!perRow || !perInner || (prog.nodes[*node].mask & ~*mask)) {
    diags.error(kernel.loc(), "kernel result %" + kernel.result(j)->name() + " of type " +
                                  v->type().str() + " does not follow the rows of " +
                                  describe(view) + "; the row_reduction template cannot store it");
    return false;
  }
  prog.stores.push_back({*node, j, v->type().dtype, *mask});
  return true;
}

std::optional<Program> ProgramBuilder::run() {
  if (!setView())
    return std::nullopt;
  bool ok = true;
  for (const auto &op : body.ops()) {
    if (!visit(*op))
      return std::nullopt;
    if (op->kind() != OpKind::Const)
      prog.fused += (prog.fused.empty() ? "" : ", ") + std::string(op->name());
  }
  for (unsigned j = 0; ok && j < body.outputs().size(); ++j)
    ok = addStore(j);
  if (!ok)
    return std::nullopt;
  return std::move(prog);
}

std::optional<Program> buildProgram(const Op &kernel, const std::string &entry,
                                    Diagnostics &diags) {
  return ProgramBuilder(kernel, entry, diags).run();
}

} // namespace fusec::rowred
