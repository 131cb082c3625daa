// Outlining groups into kernel ops, the last stage of fusion, and the
// --explain-fusion report.
//
// A group's members move, in program order, into the body of a new kernel
// op placed where its last member was. The kernel's operands are the values
// the members read from outside, the anchors' first (seen through the
// prologue), then in order of first use, except constants of
// at most kMaxInlineElements elements or a single repeated value: those are
// copied into the body (codegen makes them immediates) unless a gemm or
// attention anchor reads them (through its prologue): those load their
// operands from memory (a gemm's bias row, a conv's filter), so they stay
// kernel operands. Its results are the
// member values read outside the group, in program order. Every name is
// kept: body inputs are named after the operands they receive, body ops keep
// theirs, and each kernel result takes the name of the value it replaces.
// Since a kernel runs where its last member was, a value it produces may now
// be read before it is computed; a stable topological sort puts every op
// after its producers again (grouping never makes a cycle, so one exists).
#include "ir/Assert.h"
#include "passes/Fusion.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <unordered_set>

namespace fusec::fusion {

namespace {
constexpr size_t kMaxInlineElements = 16;
} // namespace

bool isInlinedConstant(const Value *v) {
  const Op *c = defOf(v, OpKind::Const);
  if (!c)
    return false;
  const DenseData &d = c->getDense("value");
  return d.numElements() <= kMaxInlineElements || d.isSplat();
}

namespace {

bool usedOutside(const Value *v, const std::unordered_set<const Op *> &inside) {
  for (const Use &u : v->uses())
    if (!u.user || !inside.count(u.user))
      return true;
  return false;
}

/// What the body of one group is built from.
class Outliner {
public:
  Outliner(Graph &g, const Group &grp, std::vector<Op *> ops)
      : graph(g), grp(grp), ops(std::move(ops)), inside(this->ops.begin(), this->ops.end()),
        body(std::make_unique<Graph>("body")) {}

  void run() {
    bool loadsOperands = grp.tmpl == KernelTemplate::Gemm || grp.tmpl == KernelTemplate::Attention;
    for (Op *anchor : grp.anchors)
      for (Value *v : anchor->operands())
        registerInput(v, /*inlineConstants=*/!loadsOperands);
    for (Op *op : ops)
      cloneIntoBody(*op);
    std::vector<Value *> results;
    for (Op *op : ops)
      for (unsigned i = 0; i < op->numResults(); ++i)
        if (usedOutside(op->result(i), inside))
          results.push_back(op->result(i));
    if (results.empty()) // dead code (DCE's to erase): the kernel still needs a result
      results.push_back(ops.back()->result());
    std::vector<TensorType> types;
    for (Value *v : results)
      types.push_back(v->type());
    std::vector<Value *> outputs;
    for (Value *v : results)
      outputs.push_back(inBody.at(v));
    body->setOutputs(outputs);
    const Op &locOf = grp.hasAnchor() ? *grp.anchors.front() : *ops.front();
    Op *kernel = graph.createOp(OpKind::Kernel, operands, types,
                                {{"template", std::string(kernelTemplateName(grp.tmpl))}},
                                locOf.loc(), graph.nextOp(ops.back()));
    kernel->setBody(std::move(body));
    replaceAndErase(*kernel, results);
  }

private:
  /// The body's value for an outside value: a new input, or a copied constant
  /// (where `inlineConstants` allows).
  Value *bodyValue(Value *v, bool inlineConstants = true) {
    if (auto it = inBody.find(v); it != inBody.end())
      return it->second;
    Value *mapped;
    if (inlineConstants && isInlinedConstant(v)) {
      const Op *c = v->definingOp();
      mapped = body->createOp(OpKind::Const, {}, {v->type()}, c->attrs(), c->loc())->result();
      mapped->setName(v->name());
      copiedConstants.push_back(v->definingOp());
    } else {
      operands.push_back(v);
      mapped = body->addInput(v->name(), v->type());
    }
    return inBody[v] = mapped;
  }

  /// Makes the outside values behind v (through the prologue) inputs now,
  /// so that a kernel's operands start with its anchors' (a gemm's A, B),
  /// constants too where `inlineConstants` is false.
  /// A prologue op met again from a later root has registered its inputs.
  void registerInput(Value *root, bool inlineConstants) {
    std::vector<Value *> stack{root}; // depth first, operands in order
    while (!stack.empty()) {
      Value *v = stack.back();
      stack.pop_back();
      Op *def = v->definingOp();
      if (!def || !inside.count(def))
        bodyValue(v, inlineConstants);
      else if (seen.insert(def).second)
        stack.insert(stack.end(), def->operands().rbegin(), def->operands().rend());
    }
  }

  void cloneIntoBody(const Op &op) {
    std::vector<Value *> mapped;
    for (Value *v : op.operands())
      mapped.push_back(bodyValue(v));
    std::vector<TensorType> types;
    for (unsigned i = 0; i < op.numResults(); ++i)
      types.push_back(op.result(i)->type());
    Op *copy = body->createOp(op.kind(), mapped, types, op.attrs(), op.loc());
    canonicalizeCompositeAttrs(*copy);
    for (unsigned i = 0; i < op.numResults(); ++i) {
      copy->result(i)->setName(op.result(i)->name());
      inBody[op.result(i)] = copy->result(i);
    }
  }

  /// Points outside uses at the kernel, erases the members (users first) and
  /// the constants nothing reads any more, and gives the results their names.
  void replaceAndErase(Op &kernel, const std::vector<Value *> &results) {
    std::vector<std::string> names;
    for (unsigned i = 0; i < results.size(); ++i) {
      names.push_back(results[i]->name());
      std::vector<Use> uses(results[i]->uses().begin(), results[i]->uses().end());
      for (const Use &u : uses) {
        if (!u.user)
          graph.setOutput(u.index, kernel.result(i));
        else if (!inside.count(u.user))
          u.user->setOperand(u.index, kernel.result(i));
      }
    }
    for (auto it = ops.rbegin(); it != ops.rend(); ++it)
      graph.erase(*it);
    for (Op *c : copiedConstants)
      if (!c->result()->hasUses())
        graph.erase(c);
    for (unsigned i = 0; i < results.size(); ++i)
      kernel.result(i)->setName(names[i]);
  }

  Graph &graph;
  const Group &grp;
  std::vector<Op *> ops;
  std::unordered_set<const Op *> inside;
  std::unique_ptr<Graph> body;
  std::unordered_map<const Value *, Value *> inBody;
  std::vector<Value *> operands;
  std::vector<Op *> copiedConstants;
  std::unordered_set<const Op *> seen; // prologue ops registerInput has walked
};

/// Reorders g's ops so that each comes after its producers, keeping the
/// current order wherever it already does (Kahn's algorithm, earliest first).
void sortTopologically(Graph &g) {
  std::vector<Op *> ops = g.opsSnapshot();
  std::unordered_map<const Op *, size_t> index, pending;
  for (size_t i = 0; i < ops.size(); ++i)
    index[ops[i]] = i;
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
  for (size_t i = 0; i < ops.size(); ++i) {
    size_t n = 0;
    for (Value *v : ops[i]->operands())
      n += v->definingOp() ? 1 : 0;
    pending[ops[i]] = n;
    if (n == 0)
      ready.push(i);
  }
  std::vector<Op *> order;
  while (!ready.empty()) {
    Op *op = ops[ready.top()];
    ready.pop();
    order.push_back(op);
    for (unsigned r = 0; r < op->numResults(); ++r)
      for (const Use &u : op->result(r)->uses())
        if (u.user && --pending[u.user] == 0)
          ready.push(index[u.user]);
  }
  FUSEC_ASSERT(order.size() == ops.size(), "fusion made a cycle between kernels");
  for (Op *op : order)
    g.moveBefore(op, nullptr);
}

} // namespace

void outlineGroups(Graph &g, const Plan &plan) {
  for (const auto &grp : plan.groups()) {
    std::vector<Op *> ops = grp->ops;
    std::sort(ops.begin(), ops.end(),
              [&](Op *a, Op *b) { return plan.positionOf(a) < plan.positionOf(b); });
    for (std::vector<Op *> &chunk : cutAtKernelBound(*grp, ops)) {
      bool keepsTemplate = !grp->hasAnchor() || std::find(chunk.begin(), chunk.end(),
                                                          grp->anchors.front()) != chunk.end();
      if (keepsTemplate) {
        Outliner(g, *grp, std::move(chunk)).run();
        continue;
      }
      Group piece{KernelTemplate::Pointwise, chunk, {}, {chunk.front()->result()->type().shape}};
      Outliner(g, piece, std::move(chunk)).run();
    }
  }
  sortTopologically(g);
}

// Explaining asks afresh whether an edge could have fused, with either end
// possibly in a group already: a walk per question, which only --explain-fusion
// pays for.
bool Plan::createsCycleExplained(const std::vector<Op *> &a, const std::vector<Op *> &b) const {
  return pathOutside(a, b) || pathOutside(b, a);
}

// A depth-first walk along users, from the users of `from` that are in
// neither set; reaching one member of a group reaches all of them (the group
// will be one kernel). True when it reaches an op of `to`.
bool Plan::pathOutside(const std::vector<Op *> &from, const std::vector<Op *> &to) const {
  std::unordered_set<const Op *> source(from.begin(), from.end()), target(to.begin(), to.end());
  std::unordered_set<const Op *> pushed;
  std::unordered_set<const Group *> expanded;
  std::vector<const Op *> stack;
  auto pushUsers = [&](const Op *op, bool skipTarget) {
    for (unsigned i = 0; i < op->numResults(); ++i)
      for (const Use &u : op->result(i)->uses())
        if (u.user && !source.count(u.user) && !(skipTarget && target.count(u.user)) &&
            pushed.insert(u.user).second)
          stack.push_back(u.user);
  };
  for (const Op *op : from)
    pushUsers(op, true);
  while (!stack.empty()) {
    const Op *op = stack.back();
    stack.pop_back();
    if (target.count(op))
      return true;
    const Member *m = memberOf(op);
    if (!m) {
      pushUsers(op, false);
      continue;
    }
    if (!expanded.insert(m->group).second)
      continue;
    for (const Op *peer : m->group->ops) {
      if (target.count(peer))
        return true;
      pushUsers(peer, false);
    }
  }
  return false;
}

Reason Plan::whyNotFused(const Op &producer, const Op &consumer) const {
  const Member *mp = memberOf(&producer), *mc = memberOf(&consumer);
  // A pointwise kernel gathers a movement op, and a pointwise kernel behind one but a broadcast,
  // that it alone reads (gatherIntoPointwise).
  bool gathering = mc && !mc->group->hasAnchor() && (!mp || !mp->group->hasAnchor());
  if (gathering && !mp && producer.kind() == OpKind::GatherElements)
    return Reason::CannotHold;
  if (gathering && !mp && producer.info().cls == OpClass::Movement)
    return Reason::SeveralUsers;
  if (gathering && mp && consumer.kind() == OpKind::GatherElements)
    return Reason::CannotHold;
  if (gathering && mp && consumer.info().cls == OpClass::Movement)
    return consumer.kind() == OpKind::Broadcast || consumer.kind() == OpKind::Gather
               ? Reason::IndexSpaceMismatch
               : Reason::SeveralUsers;
  if (mp && !mc && mp->group->tmpl == KernelTemplate::Gemm && isPlanarStore(consumer)) {
    int chain = -1; // a conv's result back to NCHW (planarStoreProblem)
    return epilogueProblem(*mp->group, consumer, chain, true).value_or(Reason::SeveralUsers);
  }
  if (!mp || !mc)
    return Reason::CannotHold;
  if (mc->role == Role::Anchor || mc->role == Role::Prologue)
    return prologueProblem(*mc->group, producer, consumer, true).value_or(Reason::SeveralUsers);
  if (mc->group->hasAnchor()) // an epilogue takes no pointwise work from elsewhere
    return mp->group->hasAnchor() ? Reason::ReductionBoundary : Reason::CannotHold;
  int chain = -1;
  return epilogueProblem(*mp->group, consumer, chain, true).value_or(Reason::SeveralUsers);
}

void explainUnfused(const Graph &g, const Plan &plan, std::ostream &os) {
  for (const auto &consumer : g.ops()) {
    std::unordered_set<const Value *> seen;
    const Member *mc = plan.memberOf(consumer.get());
    for (const Value *v : consumer->operands()) {
      const Op *producer = v->definingOp();
      if (!producer || producer->kind() == OpKind::Const || !seen.insert(v).second)
        continue;
      const Member *mp = plan.memberOf(producer);
      if ((!mp && !mc) || (mp && mc && mp->group == mc->group))
        continue;
      os << "fusion: %" << v->name() << " -> %" << consumer->result(0)->name()
         << " not fused: " << reasonText(plan.whyNotFused(*producer, *consumer)) << "\n";
    }
  }
}

} // namespace fusec::fusion
