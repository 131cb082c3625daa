// canonicalize: constant folding, algebraic identities and shape-op
// simplification, CSE and DCE, iterated to a fixpoint.
//
// Algorithm: a forward sweep over the ops driven by a worklist. Each op
// popped is (1) folded into a `const` when all its operands are constants,
// its result is static, and PassOptions::foldConstant evaluates it; else
// (2) rewritten by the first pattern of its kind that applies
// (CanonicalizePatterns.cpp). A replacement takes the op's uses (and, if it
// is new, its name); the new ops it created go to the front of the worklist,
// so they are canonicalized before the sweep moves on. An op that neither
// changes is (3) entered in the CSE table; when an equivalent op is already
// there (CanonicalizeCse.cpp), the later op's uses move to the first one.
// Rules read only an op and the producers of its operands, which the forward
// order has already made canonical, so one sweep reaches the fixpoint; the
// driver sweeps again until a sweep changes nothing (asserting that this
// happens quickly), then the `dce` pass erases what is left unused.
//
// Invariants: a value is only replaced by a value of the same type, defined
// before its first use (so users stay well typed and graph outputs keep
// their types); only the op being visited is erased during a sweep, so the
// worklist and the CSE table never hold an erased op.
//
// Deliberately not done: x · 0 → 0 and x − x → 0 (wrong for NaN and ±inf);
// folding a result above the folder's size limit (a broadcast constant would
// bloat the graph) or with a layout tag (a `const` has none); sinking
// transposes through other ops (the layout pass); merging casts across a
// rounding step (the precision pass removes the redundant pairs it makes);
// rewriting inside `kernel` bodies or merging equal kernels (bodies are left
// as fusion made them).
#include "passes/Canonicalize.h"

#include "ir/Assert.h"

#include <algorithm>
#include <deque>
#include <unordered_set>

namespace fusec {

bool runDeadCodeElimination(Graph &g, const PassOptions &opts, Diagnostics &diags);

namespace canonicalize {

Rewriter::Rewriter(Graph &g, Op &anchor) : graph(g), builder(g, scratch) {
  builder.setInsertionPoint(&anchor);
  builder.setLoc(anchor.loc());
}

Value *Rewriter::record(Value *v) {
  if (v)
    createdOps.push_back(v->definingOp());
  return v;
}

Value *Rewriter::create(OpKind kind, const std::vector<Value *> &operands, AttrList attrs) {
  return record(builder.create(kind, operands, std::move(attrs)));
}

Value *Rewriter::constant(DenseRef data) { return record(builder.constant(std::move(data))); }

void Rewriter::discard() {
  for (auto it = createdOps.rbegin(); it != createdOps.rend(); ++it)
    graph.erase(*it);
  createdOps.clear();
}

} // namespace canonicalize

namespace {

using canonicalize::Rewriter;

/// The data of op's operands, or fewer entries when one is not a constant.
std::vector<DenseRef> constantOperands(const Op &op) {
  std::vector<DenseRef> data;
  for (Value *v : op.operands()) {
    const Op *def = v->definingOp();
    if (!def || def->kind() != OpKind::Const)
      break;
    data.push_back(def->attr("value").get<DenseRef>());
  }
  return data;
}

// op(const c1, ..., const cn) → const(op(c1, ..., cn)), evaluated by the folder
Value *foldConstants(Rewriter &rw, const Op &op, const PassOptions &opts) {
  if (!opts.foldConstant || op.kind() == OpKind::Const || op.numOperands() == 0 ||
      op.numResults() != 1)
    return nullptr;
  const TensorType &type = op.result()->type();
  if (!isStatic(type.shape) || type.layout != Layout::None)
    return nullptr; // what a `const` can hold
  std::vector<DenseRef> operands = constantOperands(op);
  if (operands.size() != op.numOperands())
    return nullptr;
  DenseRef data = opts.foldConstant(op, operands);
  if (!data)
    return nullptr;
  Value *folded = rw.constant(std::move(data));
  if (folded && folded->type() == type)
    return folded;
  rw.discard();
  return nullptr;
}

struct CseHash {
  size_t operator()(const Op *op) const { return canonicalize::hashOp(*op); }
};
struct CseEqual {
  bool operator()(const Op *a, const Op *b) const { return canonicalize::opsEquivalent(*a, *b); }
};

/// One forward sweep; see the file comment.
class Sweep {
public:
  Sweep(Graph &g, const PassOptions &opts) : graph(g), opts(opts) {}

  /// Canonicalizes every op; true when anything changed.
  bool run() {
    std::vector<Op *> ops = graph.opsSnapshot();
    worklist.assign(ops.begin(), ops.end());
    while (!worklist.empty()) {
      Op *op = worklist.front();
      worklist.pop_front();
      visit(*op);
    }
    return changed;
  }

private:
  void visit(Op &op) {
    Rewriter rw(graph, op);
    Value *replacement = foldConstants(rw, op, opts);
    if (!replacement)
      replacement = canonicalize::applyPatterns(rw, op);
    if (replacement) {
      const std::vector<Op *> &created = rw.created();
      worklist.insert(worklist.begin(), created.begin(), created.end());
      bool isNew =
          std::find(created.begin(), created.end(), replacement->definingOp()) != created.end();
      replace(op, {replacement}, isNew);
      return;
    }
    if (op.body())
      return; // kernels are not compared: CSE's key does not look into bodies
    auto [first, inserted] = cseTable.insert(&op);
    if (inserted)
      return;
    std::vector<Value *> results;
    for (unsigned i = 0; i < op.numResults(); ++i)
      results.push_back((*first)->result(i));
    replace(op, results, false);
  }

  /// Moves op's uses to `with` (one value per result) and erases op. A new
  /// replacement takes op's name, so the printed graph reads like its input.
  void replace(Op &op, const std::vector<Value *> &with, bool isNew) {
    FUSEC_ASSERT(with.size() == op.numResults(), "one replacement per result");
    for (unsigned i = 0; i < op.numResults(); ++i) {
      FUSEC_ASSERT(with[i]->type() == op.result(i)->type(), "a rewrite changed a value's type");
      op.result(i)->replaceAllUsesWith(with[i]);
    }
    std::string name = isNew ? op.result(0)->name() : std::string();
    graph.erase(&op);
    if (isNew)
      with.front()->setName(std::move(name));
    changed = true;
  }

  Graph &graph;
  const PassOptions &opts;
  std::deque<Op *> worklist;
  std::unordered_set<Op *, CseHash, CseEqual> cseTable;
  bool changed = false;
};

// One sweep reaches the fixpoint (see the file comment); a rule that breaks
// this shows up as more sweeps, and one that never settles trips the bound.
constexpr unsigned kMaxSweeps = 8;

} // namespace

bool runCanonicalize(Graph &g, const PassOptions &opts, Diagnostics &diags) {
  for (unsigned sweeps = 1; Sweep(g, opts).run(); ++sweeps)
    FUSEC_ASSERT(sweeps < kMaxSweeps, "canonicalize does not reach a fixpoint");
  return runDeadCodeElimination(g, opts, diags);
}

} // namespace fusec
