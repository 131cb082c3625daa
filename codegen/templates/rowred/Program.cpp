// Builds the row_reduction program of a kernel body (Plan.h).
//
// The view. An anchor reduces one contiguous block of axes [begin, end) of its input S: reduce_*
// over its `axes` (all axes when empty), layer_norm and rms_norm over [axis, rank), softmax over
// [axis, axis + 1). The first anchor's block splits S into outer [0, begin), reduced [begin, end)
// and inner [end, rank); end == rank is the row path, anything else the column path. Every other
// anchor must reduce the same shape over the same axes. Another value broadcasts against the view
// group by group: within a group, either every axis matches S (the value varies along the group) or
// every axis is 1 or absent; a value that matches part of a group is refused, because one flat
// coordinate per group could not index it.
//
// The nodes. The body's ops are visited in order: a pointwise op becomes one expression, a reduce_*
// a Reduce node (accumulating in f32 for f32/f16/bf16, f64 for f64, wrapping i64 for integers) and
// the expression of its result (the mean divides by the extent: 0/0 is NaN for an empty one);
// layer_norm, rms_norm and softmax become the reductions and expressions of their formulas in the
// result's compute type (two passes for the variance: mean, then Σ(x − mean)², as docs/ir.md and
// the reference compute it; softmax's exp(x − max) kept, times 1/Σ). Body inputs and constants
// become leaves where they are used, classified as the using op's index space needs: a result of a
// reduction without keepdims, and every op reading one, live in the rows' space, where a leaf
// aligns with the view minus its reduced axes. A node's level counts the reductions it depends on
// in sequence: it can be computed in the sweep over the row of that number.
#include "codegen/GeneratedKernel.h"
#include "codegen/templates/rowred/Plan.h"
#include "ir/Assert.h"

#include <algorithm>
#include <map>
#include <set>

namespace fusec::rowred {

namespace {

std::string quoted(const Op &op) { return "'" + std::string(op.name()) + "'"; }

bool isAnchor(const Op &op) {
  OpKind k = op.kind();
  return op.info().cls == OpClass::Reduction || k == OpKind::LayerNorm || k == OpKind::RmsNorm ||
         k == OpKind::Softmax;
}

GroupBit groupOf(const View &view, unsigned axis) {
  if (axis < view.begin)
    return Outer;
  return axis < view.end ? Reduced : Inner;
}

/// The axes [begin, end) `anchor` reduces, or nullopt after reporting an error when they are not
/// one contiguous block.
std::optional<std::pair<unsigned, unsigned>> anchorBlock(const Op &anchor, Diagnostics &diags) {
  unsigned rank = unsigned(anchor.operand(0)->type().rank());
  if (anchor.kind() == OpKind::LayerNorm || anchor.kind() == OpKind::RmsNorm)
    return std::pair(*normalizeAxis(anchor.getInt("axis"), rank), rank);
  if (anchor.kind() == OpKind::Softmax) {
    unsigned axis = *normalizeAxis(anchor.getInt("axis"), rank);
    return std::pair(axis, axis + 1);
  }
  std::vector<unsigned> axes;
  for (int64_t a : anchor.getInts("axes"))
    axes.push_back(*normalizeAxis(a, rank));
  for (unsigned a = 0; a < rank && anchor.getInts("axes").empty(); ++a)
    axes.push_back(a);
  std::sort(axes.begin(), axes.end());
  if (axes.empty()) // a rank-0 input: one row of one element
    return std::pair(0u, 0u);
  if (axes.back() - axes.front() + 1 == axes.size())
    return std::pair(axes.front(), axes.back() + 1);
  std::string list;
  for (unsigned a : axes)
    list += (list.empty() ? "" : ", ") + std::to_string(a);
  diags.error(anchor.loc(), quoted(anchor) + " reduces axes [" + list + "] of " +
                                anchor.operand(0)->type().str() +
                                "; the row_reduction template needs one contiguous block of axes");
  return std::nullopt;
}

/// The view of `anchor`'s input reduced over `block`, or nullopt after reporting an error when the
/// reduced or inner extent is symbolic.
std::optional<View> makeView(const Op &anchor, std::pair<unsigned, unsigned> block,
                             Diagnostics &diags) {
  const TensorType &x = anchor.operand(0)->type();
  auto extent = [&](unsigned begin, unsigned end) {
    return staticNumElements(Shape(x.shape.begin() + begin, x.shape.begin() + end));
  };
  std::optional<int64_t> reduced = extent(block.first, block.second);
  std::optional<int64_t> inner = extent(block.second, x.rank());
  if (!reduced || !inner) {
    diags.error(anchor.loc(), quoted(anchor) + " of " + x.str() + ": the " +
                                  (reduced ? "inner" : "reduced") +
                                  " extent must be static for the row_reduction template");
    return std::nullopt;
  }
  if (*reduced * *inner > INT32_MAX) { // columns are `int` in the kernel
    diags.error(anchor.loc(), quoted(anchor) + " of " + x.str() +
                                  ": rows of more than 2^31 - 1 elements are not supported by "
                                  "the row_reduction template");
    return std::nullopt;
  }
  return View{x.shape,  x.dtype, block.first,           block.second,
              *reduced, *inner,  extent(0, block.first)};
}

/// The groups along which a value of `shape` varies, broadcast (numpy, right-aligned) against the
/// view, or against the view without its reduced axes when `rowForm` (a reduction's result without
/// keepdims). Nullopt when it spans a group only partly or does not broadcast. Groups of extent 1
/// count as not spanned.
std::optional<unsigned> classify(const View &view, const Shape &shape, bool rowForm) {
  std::vector<unsigned> axes; // the view's axes that `shape` aligns with
  for (unsigned a = 0; a < view.shape.size(); ++a)
    if (!rowForm || groupOf(view, a) != Reduced)
      axes.push_back(a);
  if (shape.size() > axes.size())
    return std::nullopt;
  size_t lead = axes.size() - shape.size();
  unsigned matched = 0, broadcast = 0;
  for (size_t i = 0; i < axes.size(); ++i) {
    const Dim &s = view.shape[axes[i]];
    GroupBit g = groupOf(view, axes[i]);
    if (s.isStaticValue(1))
      continue; // a size-1 axis neither varies nor broadcasts
    if (i < lead || shape[i - lead].isStaticValue(1))
      broadcast |= g;
    else if (shape[i - lead] == s)
      matched |= g;
    else
      return std::nullopt;
  }
  if (matched & broadcast)
    return std::nullopt;
  return matched;
}

/// Builds the Program of one kernel body; run() once.
class ProgramBuilder {
public:
  ProgramBuilder(const Op &kernel, const std::string &entry, Diagnostics &diags)
      : kernel(kernel), body(*kernel.body()), entry(entry), diags(diags) {}

  std::optional<Program> run() {
    auto anchor = std::find_if(body.ops().begin(), body.ops().end(),
                               [](const auto &op) { return isAnchor(*op); });
    if (anchor == body.ops().end()) {
      diags.error(kernel.loc(), "kernel '%" + kernel.result(0)->name() +
                                    "' (template row_reduction) holds no reduction or "
                                    "normalization");
      return std::nullopt;
    }
    // The view is the first anchor's: a prologue before it reads its operands against the view.
    auto block = anchorBlock(**anchor, diags);
    std::optional<View> view = block ? makeView(**anchor, *block, diags) : std::nullopt;
    if (!view)
      return std::nullopt;
    prog.view = *view;
    for (const auto &op : body.ops()) {
      if (!visit(*op))
        return std::nullopt;
      if (op->kind() != OpKind::Const)
        prog.fused += (prog.fused.empty() ? "" : ", ") + std::string(op->name());
    }
    for (unsigned j = 0; j < body.outputs().size(); ++j)
      if (!addStore(j))
        return std::nullopt;
    return std::move(prog);
  }

private:
  /// Appends `n`, named `prefix` + the C form of `irName`, made unique.
  unsigned add(Node n, const std::string &irName, const char *prefix = "v_") {
    n.name = names.fresh(prefix, irName);
    prog.maxLevel = std::max(prog.maxLevel, n.level);
    prog.nodes.push_back(std::move(n));
    return unsigned(prog.nodes.size() - 1);
  }

  /// An Expr node computing `n` (its kind and parameters) in `type` over `args`; its mask and level
  /// follow from them.
  unsigned expr(DType type, std::vector<unsigned> args, Node n, const std::string &irName) {
    n.kind = NodeKind::Expr;
    n.type = type;
    for (unsigned a : args) {
      n.mask |= prog.nodes[a].mask;
      n.level = std::max(n.level, prog.nodes[a].level);
    }
    n.args = std::move(args);
    return add(std::move(n), irName);
  }

  /// `a` `kind` `b` in `type`, as an Expr node.
  unsigned math(OpKind kind, DType type, unsigned a, unsigned b, const std::string &irName) {
    return expr(type, {a, b}, {.math = {kind, type, type}}, irName);
  }

  /// A Reduce node over elementwise node `input`, accumulating in `type`.
  unsigned reduce(OpKind kind, unsigned input, DType type, const std::string &irName) {
    Node n{.kind = NodeKind::Reduce, .type = type, .args = {input}, .reduce = kind};
    n.mask = prog.nodes[input].mask & ~unsigned(Reduced);
    n.level = prog.nodes[input].level + 1;
    return add(std::move(n), irName, "acc_");
  }

  /// Whether anchor `op` reduces the view's input shape over the view's axes; reports when not.
  bool checkAnchor(const Op &op) {
    auto block = anchorBlock(op, diags);
    if (!block)
      return false;
    const View &v = prog.view;
    if (op.operand(0)->type().shape == v.shape && block->first == v.begin && block->second == v.end)
      return true;
    View other{op.operand(0)->type().shape, v.dtype, block->first, block->second};
    diags.error(op.loc(), quoted(op) + " reduces " + describe(other) +
                              " but the kernel's first reduction reduces " + describe(v) +
                              "; one row_reduction kernel reduces one set of rows");
    return false;
  }

  /// The node of a body input or constant `v` as `user` reads it, in the rows' space when `inRows`;
  /// a non-splat constant is a table, indexed as an operand would be.
  std::optional<unsigned> leaf(const Value *v, bool inRows, const Op &user) {
    if (auto found = leaves.find({v, inRows}); found != leaves.end())
      return found->second;
    std::optional<unsigned> mask = classify(prog.view, v->type().shape, inRows);
    if (!mask) {
      diags.error(user.loc(),
                  quoted(user) + " operand %" + v->name() + " of type " + v->type().str() +
                      " does not broadcast as a full, per-row, per-column or "
                      "scalar operand of " +
                      describe(prog.view) + (inRows ? " (in the space of its rows)" : ""));
      return std::nullopt;
    }
    DType t = v->type().dtype;
    Node n{.kind = NodeKind::Load, .mask = *mask, .type = kir::computeType(t), .dtype = t};
    const Op *def = v->definingOp();
    if (!def) {
      n.input = v->index();
    } else if (def->getDense("value").isSplat()) {
      n = {.kind = NodeKind::Splat, .type = n.type, .constant = &def->getDense("value")};
    } else {
      n.kind = NodeKind::Table;
      n.constant = &def->getDense("value");
      // The table is a global and its element a local of the kernel: two names, both unique in the
      // kernel (a local named as the table hid it).
      n.table = names.fresh(entry + "_table_", v->name());
    }
    return leaves[{v, inRows}] = add(std::move(n), v->name());
  }

  /// The node of operand `i` of `user`, in the rows' space when `inRows`.
  std::optional<unsigned> operand(const Op &user, unsigned i, bool inRows) {
    const Value *v = user.operand(i);
    Op *def = v->definingOp();
    if (!def || def->kind() == OpKind::Const)
      return leaf(v, inRows, user);
    bool valueInRows = inRowSpace.count(v) > 0;
    if (valueInRows == inRows || staticNumElements(v->type().shape) == 1)
      return computed.at(v);
    diags.error(user.loc(), quoted(user) + " reads %" + v->name() + " of type " + v->type().str() +
                                (valueInRows ? ", a per-row value," : "") + " across the rows of " +
                                describe(prog.view) + "; the row_reduction template cannot");
    return std::nullopt;
  }

  /// Turns one body op into nodes; false after an error at it.
  bool visit(const Op &op) {
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
    diags.error(op.loc(), quoted(op) + " cannot be generated by the row_reduction template");
    return false;
  }

  /// The nodes of `op`'s operands, in the rows' space when `inRows`; nullopt after an error.
  std::optional<std::vector<unsigned>> operands(const Op &op, bool inRows) {
    std::vector<unsigned> nodes;
    for (unsigned i = 0; i < op.numOperands(); ++i) {
      std::optional<unsigned> a = operand(op, i, inRows);
      if (!a)
        return std::nullopt;
      nodes.push_back(*a);
    }
    return nodes;
  }

  bool visitPointwise(const Op &op) {
    auto isInRows = [&](const Value *v) { return inRowSpace.count(v) > 0; };
    bool inRows = std::any_of(op.operands().begin(), op.operands().end(), isInRows);
    std::optional<std::vector<unsigned>> args = operands(op, inRows);
    if (!args)
      return false;
    DType t = kir::computeType(op.result()->type().dtype);
    computed[op.result()] =
        expr(t, std::move(*args), {.math = kir::mathOf(op)}, op.result()->name());
    if (inRows)
      inRowSpace.insert(op.result());
    return true;
  }

  bool visitReduce(const Op &op) {
    DType t = op.operand(0)->type().dtype;
    const View &v = prog.view;
    if (t == DType::Bool) {
      diags.error(op.loc(), quoted(op) + " of bool is not supported by the row_reduction template");
      return false;
    }
    OpKind kind = op.kind() == OpKind::ReduceMax    ? OpKind::Max
                  : op.kind() == OpKind::ReduceMin  ? OpKind::Min
                  : op.kind() == OpKind::ReduceProd ? OpKind::Mul
                                                    : OpKind::Add;
    bool hasIdentity = kind == OpKind::Add || kind == OpKind::Mul;
    if (!hasIdentity && v.reduced == 0 && v.inner != 0 && v.outer != int64_t(0)) {
      diags.error(op.loc(),
                  quoted(op) + " of " + op.operand(0)->type().str() + " reduces an empty extent");
      return false;
    }
    std::optional<unsigned> x = operand(op, 0, false);
    if (!x)
      return false;
    DType acc = t == DType::F64 ? t : isFloat(t) ? DType::F32 : DType::I64;
    unsigned r = reduce(kind, *x, acc, op.result()->name());
    Node result{.expr = op.kind() == OpKind::ReduceMean ? ExprKind::Mean : ExprKind::Convert};
    DType type = kir::computeType(op.result()->type().dtype);
    computed[op.result()] = expr(type, {r}, result, op.result()->name());
    if (!op.getBool("keepdims"))
      inRowSpace.insert(op.result());
    return true;
  }

  bool visitNorm(const Op &op) {
    std::optional<std::vector<unsigned>> args = operands(op, false);
    if (!args)
      return false;
    DType t = kir::computeType(op.result()->type().dtype);
    computed[op.result()] =
        op.kind() == OpKind::Softmax ? softmax(op, args->front(), t) : layerNorm(op, *args, t);
    return true;
  }

  // (x − mean)·rstd·γ + β over operands (x, γ, β), with mean = Σx/N and
  // rstd = 1/√(Σ(x − mean)²/N + ε); rms_norm: x·(1/√(Σx²/N + ε))·γ.
  unsigned layerNorm(const Op &op, const std::vector<unsigned> &operands, DType t) {
    std::string name = op.result()->name();
    unsigned x = operands[0];
    bool isRms = op.kind() == OpKind::RmsNorm;
    std::vector<unsigned> args{x};
    unsigned centered = x;
    if (!isRms) {
      unsigned sum = reduce(OpKind::Add, x, t, name + "_sum");
      unsigned mean = expr(t, {sum}, {.expr = ExprKind::Mean}, name + "_mean");
      centered = math(OpKind::Sub, t, x, mean, name + "_centered");
      args.push_back(mean);
    }
    unsigned square = math(OpKind::Mul, t, centered, centered, name + "_square");
    unsigned sumSq = reduce(OpKind::Add, square, t, name + "_sumsq");
    Node rstd{.expr = ExprKind::Rstd, .epsilon = op.getFloat("epsilon")};
    args.push_back(expr(t, {sumSq}, rstd, name + "_rstd"));
    args.insert(args.end(), operands.begin() + 1, operands.end());
    Node normalize{.expr = isRms ? ExprKind::RmsNormalize : ExprKind::Normalize};
    return expr(t, std::move(args), normalize, name);
  }

  // exp(x − max)·(1/Σexp(x − max)).
  unsigned softmax(const Op &op, unsigned x, DType t) {
    std::string name = op.result()->name();
    unsigned max = reduce(OpKind::Max, x, t, name + "_max");
    Node exp{.expr = ExprKind::ExpDifference, .dtype = op.result()->type().dtype};
    unsigned e = expr(t, {x, max}, exp, name + "_exp");
    unsigned sum = reduce(OpKind::Add, e, t, name + "_sum");
    unsigned inv = expr(t, {sum}, {.expr = ExprKind::Reciprocal}, name + "_inv");
    return math(OpKind::Mul, t, e, inv, name);
  }

  /// Records body output `j` as a Store; false after an error.
  bool addStore(unsigned j) {
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
                                    describe(view) +
                                    "; the row_reduction template cannot store it");
      return false;
    }
    prog.stores.push_back({*node, j, v->type().dtype, *mask});
    return true;
  }

  const Op &kernel;
  const Graph &body;
  std::string entry;
  Diagnostics &diags;
  Program prog;
  std::map<const Value *, unsigned> computed;
  std::set<const Value *> inRowSpace; // results of reductions without keepdims, and their users
  std::map<std::pair<const Value *, bool>, unsigned> leaves;
  Namer names; // of nodes and tables: unique in the kernel
};

} // namespace

std::optional<Program> buildProgram(const Op &kernel, const std::string &entry,
                                    Diagnostics &diags) {
  return ProgramBuilder(kernel, entry, diags).run();
}

std::string describe(const View &view) {
  return TensorType{view.dtype, view.shape, Layout::None}.str() + " reduced over axes [" +
         std::to_string(view.begin) + ", " + std::to_string(view.end) + ")";
}

} // namespace fusec::rowred
