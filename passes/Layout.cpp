// layout: runs conv2d / pooling / batch_norm chains in one layout and keeps
// the transposes at the edges of those chains.
//
// A direction names the layout the graph is written in (external, E) and the
// one its windowed ops should run in (internal, I): `--layout=nhwc` turns
// {nchw} chains into NHWC ones, `--layout=nchw` {nhwc} chains into NCHW ones,
// and `auto` is nhwc for a graph with a conv2d and no change otherwise.
// T_I is the transpose into I ([0,2,3,1] for NHWC), T_E the one back. One walk
// over the ops in order (producers before users) applies the patterns below;
// each rebuilds an op on internal values and puts T_E after it, so that the
// next op's pattern finds the transpose in front of it and cancels it. What
// is left: T_I at graph inputs, T_E at graph outputs and in front of ops that
// need E (reshape, contractions, ...). The docs/ir.md rule that a
// transpose between the layouts moves the tag ({nchw} by [0,2,3,1] is {nhwc})
// is what lets T_I make a value that windowed ops read as I.
//
// Invariants: every replaced value keeps its exact type (T_E restores the E
// shape and tag); the internal version of a value is made once and reused;
// the walk visits each op once, and a second run finds nothing to do.
// Not done here: untagged rank-4 tensors are not converted (windowed ops
// read them as NCHW, but no transpose can tag them: tag the inputs {nchw});
// constant weight transposes are folded by canonicalize; transposes are not
// hoisted above pointwise ops to the graph inputs, nor moved through
// movement ops, contractions or normalizations other than batch_norm (run
// decompose first to carry those through as primitives). Kernel bodies are
// not entered: layout runs before fusion.
#include "ir/Assert.h"
#include "ir/Builder.h"
#include "passes/PassManager.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace fusec {

namespace {

using Perm = std::vector<int64_t>;

struct Direction {
  Layout external, internal;
  Perm toInternal, toExternal;
  std::string internalName; // suffix of values moved to I: "nhwc"
  std::string weightName;   // suffix of conv weights moved to I's form: "ohwi"
};

Direction nchwToNhwc() {
  return {Layout::NCHW, Layout::NHWC, {0, 2, 3, 1}, {0, 3, 1, 2}, "nhwc", "ohwi"};
}
Direction nhwcToNchw() {
  return {Layout::NHWC, Layout::NCHW, {0, 3, 1, 2}, {0, 2, 3, 1}, "nchw", "oihw"};
}

/// Dim i of the result is dim perm[i] of `s`.
Shape permuted(const Shape &s, const Perm &perm) {
  Shape out;
  for (int64_t p : perm)
    out.push_back(s[size_t(p)]);
  return out;
}

/// `s` with static 1s prepended up to rank 4, as broadcasting reads it.
Shape paddedTo4(Shape s) {
  s.insert(s.begin(), 4 - s.size(), Dim::fixed(1));
  return s;
}

/// True when permuting `s` by `perm` moves only static-1 dims, so that a
/// reshape does the same.
bool movesOnlyUnitDims(const Shape &s, const Perm &perm) {
  int64_t last = -1;
  for (int64_t p : perm) {
    if (s[size_t(p)].isStaticValue(1))
      continue;
    if (p < last)
      return false;
    last = p;
  }
  return true;
}

/// How a pointwise operand gets its internal version.
enum class Move { Keep, Untranspose, Cached, Reshape, Transpose, Impossible };

/// Whether a reshape to `shape` can run: it infers at most one `?` at run
/// time, from the other dims' product, which must not be 0 (a [1,1,?,?] or
/// a [0,1,?,1] operand moves by a transpose, not to a [?,?,1] or [0,?,1,1]
/// reshape).
bool reshapeResolves(const Shape &shape) {
  auto count = [&](auto pred) { return std::count_if(shape.begin(), shape.end(), pred); };
  size_t unknown = count([](const Dim &d) { return d.isAnonymous(); });
  return unknown == 0 ||
         (unknown == 1 && count([](const Dim &d) { return d.isStaticValue(0); }) == 0);
}

class LayoutRewriter {
public:
  LayoutRewriter(Graph &g, Direction dir) : graph(g), dir(std::move(dir)), builder(g, scratch) {}

  void run() {
    for (Op *op : graph.opsSnapshot()) {
      builder.setInsertionPoint(op);
      builder.setLoc(op->loc());
      rewrite(*op);
    }
    eraseDeadLeftovers();
  }

private:
  void rewrite(Op &op) {
    switch (op.info().cls) {
    case OpClass::Window:
      return convertWindowOp(op);
    case OpClass::Normalization:
      if (op.kind() == OpKind::BatchNorm)
        convertWindowOp(op);
      return;
    case OpClass::Pointwise:
      return sinkThroughPointwise(op);
    case OpClass::Reduction:
      return sinkThroughReduction(op);
    case OpClass::Movement:
      if (op.kind() == OpKind::Transpose)
        cancelInversePair(op);
      if (op.kind() == OpKind::Concat)
        sinkThroughConcat(op);
      if (op.kind() == OpKind::Gather)
        sinkThroughGather(op);
      return;
    default:
      return;
    }
  }

  // W(x{E}, w, p…) → T_E(W(T_I(x){I}, T_I(w), p…)): a conv2d, pool or
  // batch_norm runs in I; conv2d's weight moves OIHW ↔ OHWI by the same perm
  // as the activation; bias and batch_norm parameters are per channel and stay.
  void convertWindowOp(Op &op) {
    if (op.operand(0)->type().layout != dir.external || !op.result()->hasUses())
      return;
    std::vector<Value *> operands = op.operands();
    operands[0] = internalOf(operands[0], dir.internalName);
    FUSEC_ASSERT(operands[0]->type().layout == dir.internal,
                 "T_I of an E-tagged value is I-tagged");
    if (op.kind() == OpKind::Conv2d)
      operands[1] = internalOf(operands[1], dir.weightName);
    Value *inner = make(op.kind(), operands, op.attrs(), internalName(op.result()));
    replaceOp(op, make(OpKind::Transpose, {inner}, {{"perm", dir.toExternal}}));
  }

  // P(T_E(a), b…) → T_E(P(a, b'…)) where a is I-tagged: the pointwise op runs
  // in I and the transpose sinks below it; b' is b's internal version (see
  // classify), e.g. a [C,1,1] bias becomes [C] for NHWC.
  void sinkThroughPointwise(Op &op) {
    if (op.numResults() != 1 || op.result()->type().rank() != 4)
      return;
    for (Value *v : op.operands())
      if (classify(v) == Move::Impossible)
        return;
    if (!readsInternal(op))
      return;
    std::vector<Value *> operands;
    for (Value *v : op.operands())
      operands.push_back(internalOperand(v));
    replaceByExternal(op, make(op.kind(), operands, op.attrs(), internalName(op.result())));
  }

  // C(T_E(a), v…) {axis} → T_E(C(a, T_I(v)…) {axis'}) when an operand comes
  // from I (a UNet's skip connection joined to its upsampled input): the
  // concat runs in I along the same data axis, axis' its place in I; the
  // other operands move by T_I (a boundary transpose, or one that fusion
  // gathers into the concat's kernel). Tagged operands give an E-tagged
  // concat and untagged ones are compatible with either tag, so T_E of the
  // I-tagged concat has the original type.
  void sinkThroughConcat(Op &op) {
    if (op.result()->type().rank() != 4 || !readsInternal(op))
      return;
    std::vector<Value *> operands;
    for (Value *v : op.operands())
      operands.push_back(internal.count(v) ? internal.at(v) : internalOf(v, dir.internalName));
    replaceByExternal(op,
                      make(OpKind::Concat, operands, {{"axis", internalAxis(op.getInt("axis"))}},
                           internalName(op.result())));
  }

  // G(T_E(a), i) {axis} → T_E(G(a, i) {axis'}) for a 1-D index i (a resize's
  // rows): the same rows picked along the data axis' place in I.
  void sinkThroughGather(Op &op) {
    Value *a = transposedFrom(op.operand(0));
    if (!a || op.operand(1)->type().rank() != 1)
      return;
    replaceByExternal(op,
                      make(OpKind::Gather, {a, op.operand(1)},
                           {{"axis", internalAxis(op.getInt("axis"))}}, internalName(op.result())));
  }

  /// Whether an operand of `op` is T_E of an I-tagged value.
  bool readsInternal(const Op &op) const {
    return std::ranges::any_of(op.operands(), [&](Value *v) {
      Value *a = transposedFrom(v);
      return a && a->type().layout == dir.internal;
    });
  }

  /// Replaces `op` by T_E(inner), inner its version in I.
  void replaceByExternal(Op &op, Value *inner) {
    Value *back = make(OpKind::Transpose, {inner}, {{"perm", dir.toExternal}});
    FUSEC_ASSERT(back->type() == op.result()->type(), "sinking a transpose changed a type");
    replaceOp(op, back);
  }

  /// Where E's axis `axis` of a rank-4 value is in I.
  int64_t internalAxis(int64_t axis) const {
    int64_t a = int64_t(*normalizeAxis(axis, 4));
    return std::find(dir.toInternal.begin(), dir.toInternal.end(), a) - dir.toInternal.begin();
  }

  // R(T_E(a)) {axes} → R(a) {toExternal[axes]}. keepdims: R(a) is the
  // internal version of the result, and a reshape (when only unit dims move)
  // or T_E gives the E shape back. No keepdims: the kept dims come out in
  // a's order, and a transpose of the smaller result fixes the order if
  // it differs from T_E's.
  void sinkThroughReduction(Op &op) {
    Value *a = transposedFrom(op.operand(0));
    if (!a)
      return;
    const Perm &p = dir.toExternal; // dim i of T_E(a) is dim p[i] of a
    std::vector<bool> reduced(p.size(), op.getInts("axes").empty());
    for (int64_t axis : op.getInts("axes"))
      reduced[*normalizeAxis(axis, p.size())] = true;
    Perm axes, kept;
    for (size_t i = 0; i < p.size(); ++i)
      (reduced[i] ? axes : kept).push_back(p[i]);
    std::sort(axes.begin(), axes.end());
    const Perm &written = op.getInts("axes");
    if (!written.empty() &&
        std::all_of(written.begin(), written.end(), [](int64_t a) { return a < 0; }))
      for (int64_t &axis : axes)
        axis -= int64_t(p.size()); // keep the op's way of naming axes
    bool keepdims = op.getBool("keepdims");
    AttrList attrs{{"axes", axes}};
    if (keepdims)
      attrs.push_back({"keepdims", true});
    Value *inner = make(op.kind(), {a}, std::move(attrs), internalName(op.result()));
    if (keepdims)
      return replaceOp(op, restoreExternal(inner, op.result()->type().shape));
    Perm order = kept;
    std::sort(order.begin(), order.end());
    Perm fix; // result dim j is inner dim fix[j]
    for (int64_t d : kept)
      fix.push_back(std::find(order.begin(), order.end(), d) - order.begin());
    if (std::is_sorted(fix.begin(), fix.end()))
      return replaceOp(op, inner);
    replaceOp(op, make(OpKind::Transpose, {inner}, {{"perm", fix}}));
  }

  // transpose(transpose(a) {p}) {q} → a when q∘p is the identity and the
  // types agree (tags included).
  void cancelInversePair(Op &op) {
    Op *def = op.operand(0)->definingOp();
    if (!def || def->kind() != OpKind::Transpose)
      return;
    Value *a = def->operand(0);
    const Perm &p = def->getInts("perm"), &q = op.getInts("perm");
    for (size_t i = 0; i < q.size(); ++i)
      if (p[size_t(q[i])] != int64_t(i))
        return;
    if (a->type() == op.result()->type())
      replaceOp(op, a, /*takeName=*/made.count(a->definingOp()) > 0);
  }

  /// The internal (rank-4, permuted-shape) version of a keepdims reduction
  /// `inner` given back in the E shape `shape`.
  Value *restoreExternal(Value *inner, const Shape &shape) {
    Value *back = reshapeResolves(shape) && movesOnlyUnitDims(inner->type().shape, dir.toExternal)
                      ? make(OpKind::Reshape, {inner}, {{"shape", shape}})
                      : make(OpKind::Transpose, {inner}, {{"perm", dir.toExternal}});
    internal[back] = inner;
    return back;
  }

  /// a when v = transpose(a) {perm = toExternal}, else null.
  Value *transposedFrom(Value *v) const {
    Op *def = v->definingOp();
    if (!def || def->kind() != OpKind::Transpose || def->getInts("perm") != dir.toExternal)
      return nullptr;
    return def->operand(0);
  }

  /// T_I(v), made once per value (right before its first user); a when v = T_E(a).
  Value *internalOf(Value *v, const std::string &suffix) {
    if (Value *a = transposedFrom(v))
      return a;
    Value *&cached = internal[v];
    if (!cached)
      cached = make(OpKind::Transpose, {v}, {{"perm", dir.toInternal}}, v->name() + "." + suffix);
    return cached;
  }

  // A pointwise operand's internal version: a scalar as it is; T_E(a) as a;
  // a value already moved as that; an untagged operand of rank ≤ 4 whose
  // move touches only unit dims ([C,1,1] → [C], [1,C,1,1] → [C]) by a
  // reshape; a rank-4 constant or graph input by T_I (a boundary transpose,
  // or a folded one). An E-tagged value always moves by T_I, so that its
  // internal version is I-tagged wherever a windowed op reads it.
  Move classify(Value *v) const {
    const TensorType &t = v->type();
    if (t.rank() == 0)
      return Move::Keep;
    if (transposedFrom(v))
      return Move::Untranspose;
    if (internal.count(v))
      return Move::Cached;
    if (t.rank() > 4)
      return Move::Impossible;
    if (t.layout != dir.external && movesOnlyUnitDims(paddedTo4(t.shape), dir.toInternal) &&
        reshapeResolves(t.shape))
      return Move::Reshape;
    bool boundary = v->isGraphInput() || v->definingOp()->kind() == OpKind::Const;
    return t.rank() == 4 && boundary ? Move::Transpose : Move::Impossible;
  }

  Value *internalOperand(Value *v) {
    switch (classify(v)) {
    case Move::Keep:
      return v;
    case Move::Untranspose:
      return transposedFrom(v);
    case Move::Cached:
      return internal.at(v);
    case Move::Reshape:
      return reshapedInternal(v);
    case Move::Transpose:
      return internalOf(v, dir.internalName);
    case Move::Impossible:
      break;
    }
    FUSEC_ASSERT(false, "internalOperand of an operand that cannot move");
  }

  // v → reshape(v) to v's padded shape permuted into I, leading 1s dropped;
  // reshape(reshape(u)) is reshape(u), and a reshape to u's own shape is u.
  Value *reshapedInternal(Value *v) {
    if (auto it = reshaped.find(v); it != reshaped.end())
      return it->second;
    Shape target = permuted(paddedTo4(v->type().shape), dir.toInternal);
    auto firstNonUnit = std::find_if(target.begin(), target.end(),
                                     [](const Dim &d) { return !d.isStaticValue(1); });
    target.erase(target.begin(), firstNonUnit);
    Value *source = v;
    if (Op *def = v->definingOp(); def && def->kind() == OpKind::Reshape)
      source = def->operand(0);
    Value *moved = source;
    if (target != source->type().shape)
      moved = make(OpKind::Reshape, {source}, {{"shape", target}}, internalName(v));
    // Kept apart from `internal`: a rank-reduced operand is right for a
    // broadcasting pointwise op, not for a conv weight that is the same value.
    return reshaped[v] = moved;
  }

  /// The name of v's internal version: `%c` → `%c.nhwc`, and back: `%c.nhwc` → `%c`.
  std::string internalName(const Value *v) const {
    std::string external = "." + std::string(layoutName(dir.external));
    if (v->name().ends_with(external))
      return v->name().substr(0, v->name().size() - external.size());
    return v->name() + "." + dir.internalName;
  }

  /// Builds an op before the current one, named from `hint` (a number when empty).
  Value *make(OpKind kind, const std::vector<Value *> &operands, AttrList attrs,
              const std::string &hint = "") {
    Value *v = builder.create(kind, operands, std::move(attrs));
    FUSEC_ASSERT(v, "a layout rewrite built an op that does not type-check");
    if (!hint.empty())
      v->setName(graph.uniqueName(hint));
    leftovers.insert(v->definingOp());
    made.insert(v->definingOp());
    return v;
  }

  /// Makes op's users use `with` and erases op; a value this pass made
  /// (`takeName`) takes op's name.
  void replaceOp(Op &op, Value *with, bool takeName = true) {
    for (Value *v : op.operands())
      if (Op *def = v->definingOp())
        leftovers.insert(def);
    std::string name = op.result()->name();
    op.result()->replaceAllUsesWith(with);
    graph.erase(&op);
    if (takeName)
      with->setName(std::move(name));
  }

  /// Erases the ops this pass made or unhooked that ended up unused, users
  /// before producers.
  void eraseDeadLeftovers() {
    std::vector<Op *> ops = graph.opsSnapshot();
    for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
      Op *op = *it;
      if (op->hasUses() || !leftovers.count(op))
        continue;
      for (Value *v : op->operands())
        if (Op *def = v->definingOp())
          leftovers.insert(def);
      graph.erase(op);
    }
  }

  Graph &graph;
  Direction dir;
  Diagnostics scratch; // make() asserts instead: every built op must type-check
  Builder builder;
  std::unordered_map<Value *, Value *> internal; // value → its internal version
  std::unordered_map<Value *, Value *> reshaped; // operand → its rank-reduced internal version
  std::unordered_set<const Op *> made;
  std::unordered_set<Op *> leftovers;
};

bool hasConv(const Graph &g) {
  return std::any_of(g.ops().begin(), g.ops().end(),
                     [](const auto &op) { return op->kind() == OpKind::Conv2d; });
}

} // namespace

bool runLayout(Graph &g, const PassOptions &opts, Diagnostics &) {
  if (opts.layout == LayoutChoice::Auto && !hasConv(g))
    return true;
  LayoutRewriter(g, opts.layout == LayoutChoice::NCHW ? nhwcToNchw() : nchwToNhwc()).run();
  return true;
}

} // namespace fusec
