// Grouping ops into future kernels: the second stage of fusion.
//
// Anchors (contractions, normalizations, reductions over trailing axes) each
// seed a group, in program order; a matmul or linear sharing its A operand,
// weight type and attributes with an earlier gemm anchor joins that group
// instead (one grouped GEMM reading A once, like a fused QKV projection).
// Each group then grows, in seeding order: a prologue (the pointwise
// producers of a row reduction's input in the same index space; for gemm,
// casts of operands used nowhere else; for attention, the reshapes,
// transposes and slices its operands are), then an epilogue (every later
// pointwise op that reads the group and computes in one of its index spaces:
// the anchors' result shapes, and for a row reduction also its rows' shape;
// for attention, the reshapes and transposes of its result; for a conv2d's
// gemm, the transpose of its result back to NCHW that alone reads it, stored
// as the kernel's result: Note [Planar results] in codegen/templates/gemm/Gemm.cpp). A row
// reduction also takes later reductions over the same rows that read it, so a LayerNorm or softmax
// that no pattern recognised is still one kernel. Left-over pointwise ops form pointwise groups of
// one index space, joined along producer→consumer edges; a pointwise group then takes the movement
// ops only it reads (and the pointwise groups behind them). A merge never makes a cycle between
// kernels; a producer never joins two groups: its other users read it as a kernel result. An
// epilogue op reads one accumulator of a grouped GEMM, or both of a group of two (a paired GEMM:
// SwiGLU's gate and up projections).
#include "passes/Fusion.h"

#include <algorithm>
#include <queue>
#include <unordered_set>

namespace fusec::fusion {

std::string_view reasonText(Reason r) {
  switch (r) {
  case Reason::SeveralUsers:
    return "several users";
  case Reason::IndexSpaceMismatch:
    return "index-space mismatch";
  case Reason::ReductionBoundary:
    return "reduction boundary";
  case Reason::CannotHold:
    return "template cannot hold it";
  }
  return "";
}

bool isFusiblePointwise(const Op &op) { return op.info().cls == OpClass::Pointwise; }

/// A batch_norm over the last axis (NHWC): elementwise with per-column parameters, so a gemm's
/// epilogue (a convolution's) evaluates it like a pointwise op.
static bool isChannelsLastBatchNorm(const Op &op) {
  return op.kind() == OpKind::BatchNorm && op.operand(0)->type().layout == Layout::NHWC;
}

/// Whether the gemm template runs conv2d `op` as an implicit gemm: an NHWC float input of one
/// group and static sizes but for the batch.
static bool isImplicitGemm(const Op &op) {
  return isFloat(op.operand(0)->type().dtype) && implicitGemmProblem(op).empty();
}

// The attention template reads its operands and writes its result through
// strides, so the views that make its operands from the kernel's
// (contiguous) inputs, and its result into the kernel's output, can be read
// through in place: the head split and merge around attention ([B,S,H·D] ->
// [B,H,S,D] and back), q, k and v sliced from one projection. The rules keep
// every view a set of strides over a contiguous tensor with the last dim
// contiguous: a transpose keeps the last axis; a reshape that regroups dims
// (more than adding or dropping dims of size 1) sits at the contiguous end,
// on the way in with only reshapes before it, on the way out with only
// reshapes after it; slices only on the way in (the result is written whole).
// The template checks the strides again with the shapes known (and refuses
// what it cannot read).
static bool isView(const Op &op) { return isStridedView(op.kind()); }

/// Whether reshape `r` regroups dims: more than adding or dropping dims of size 1.
static bool regroups(const Op &r) {
  auto squeezed = [](const Shape &s) {
    Shape out;
    for (const Dim &d : s)
      if (!d.isStaticValue(1))
        out.push_back(d);
    return out;
  };
  return squeezed(r.operand(0)->type().shape) != squeezed(r.result()->type().shape);
}

/// On the way in: whether reshape `r` needs its operand contiguous (it regroups, or a reshape
/// reading it does).
static bool needsContiguous(const Op &r) {
  if (r.kind() != OpKind::Reshape)
    return false;
  if (regroups(r))
    return true;
  for (const Use &u : r.result()->uses())
    if (u.user && needsContiguous(*u.user))
      return true;
  return false;
}

/// On the way out: whether `op`'s result has been regrouped by a reshape since the attention.
static bool regrouped(const Op &op) {
  if (op.kind() != OpKind::Reshape)
    return false;
  const Op *before = op.operand(0)->definingOp();
  return regroups(op) || (before && regrouped(*before));
}

/// Whether view `view` keeps the rules above next to `other`, its neighbour on
/// the attention's side of the path between the kernel's contiguous end and
/// the attention: its reader on the way `in`, else its producer.
static std::optional<Reason> viewProblem(const Op &view, const Op &other, bool in) {
  if (!isView(other) && other.kind() != OpKind::Attention)
    return Reason::CannotHold;
  if (view.kind() == OpKind::Transpose) {
    const std::vector<int64_t> &perm = view.getInts("perm");
    if (perm.empty() || perm.back() != int64_t(perm.size()) - 1)
      return Reason::IndexSpaceMismatch;
  }
  if (view.kind() == OpKind::Slice && !in)
    return Reason::CannotHold;
  // Only reshapes between a regrouping reshape and the contiguous end.
  bool contiguousSide = in ? needsContiguous(other) : regrouped(other);
  if (contiguousSide && view.kind() != OpKind::Reshape)
    return Reason::CannotHold;
  return std::nullopt;
}

std::optional<KernelTemplate> anchorTemplate(const Op &op) {
  size_t rank = op.numOperands() ? op.operand(0)->type().rank() : 0;
  switch (op.kind()) {
  case OpKind::MatMul:
  case OpKind::Linear:
    return KernelTemplate::Gemm;
  case OpKind::Conv2d:
    if (isImplicitGemm(op))
      return KernelTemplate::Gemm;
    return std::nullopt;
  case OpKind::Attention:
    return KernelTemplate::Attention;
  case OpKind::LayerNorm:
  case OpKind::RmsNorm:
    return KernelTemplate::RowReduction;
  case OpKind::Softmax:
    if (normalizeAxis(op.getInt("axis"), rank) == rank - 1)
      return KernelTemplate::RowReduction;
    return std::nullopt;
  case OpKind::ReduceSum:
  case OpKind::ReduceMax:
  case OpKind::ReduceMin:
  case OpKind::ReduceMean:
  case OpKind::ReduceProd:
    if (trailingReductionStart(op))
      return KernelTemplate::RowReduction;
    return std::nullopt;
  default:
    return std::nullopt;
  }
}

bool Group::computesIn(const Shape &s) const {
  return std::find(spaces.begin(), spaces.end(), s) != spaces.end();
}

/// The first axis a row-reduction anchor spans: its normalized or reduced
/// trailing block.
static unsigned rowStartOf(const Op &anchor) {
  size_t rank = anchor.operand(0)->type().rank();
  if (anchor.info().cls == OpClass::Reduction)
    return *trailingReductionStart(anchor);
  if (anchor.kind() == OpKind::Softmax)
    return unsigned(rank - 1);
  return *normalizeAxis(anchor.getInt("axis"), rank);
}

namespace {
std::unordered_map<const Op *, size_t> positionsOf(const Graph &g) {
  std::unordered_map<const Op *, size_t> position;
  for (const auto &op : g.ops())
    position.emplace(op.get(), position.size());
  return position;
}
} // namespace

Plan::Plan(const Graph &g) : graph(g), position(positionsOf(g)), dag(g, position) {
  byPosition = g.opsSnapshot();
}

Group *Plan::current(Group *g) {
  Group *root = g;
  while (root->absorbedInto)
    root = root->absorbedInto;
  while (g->absorbedInto) {
    Group *next = g->absorbedInto;
    g->absorbedInto = root;
    g = next;
  }
  return root;
}

const Member *Plan::memberOf(const Op *op) const {
  auto it = members.find(op);
  if (it == members.end())
    return nullptr;
  it->second.group = current(it->second.group);
  return &it->second;
}

void Plan::add(Group &grp, Op *op, Role role, int chain) {
  if (!grp.ops.empty())
    dag.merge(position.at(grp.ops.front()), position.at(op));
  members[op] = Member{&grp, role, chain};
  grp.ops.push_back(op);
  if (role == Role::Anchor)
    grp.anchors.push_back(op);
}

void Plan::seed(Op *anchor, KernelTemplate t) {
  auto grp = std::make_unique<Group>(Group{t, {}, {}, {anchor->result()->type().shape}});
  if (t == KernelTemplate::RowReduction) {
    grp->rowStart = rowStartOf(*anchor);
    if (!grp->computesIn(anchor->operand(0)->type().shape))
      grp->spaces.push_back(anchor->operand(0)->type().shape);
  }
  add(*grp, anchor, Role::Anchor, 0);
  if (t == KernelTemplate::Gemm)
    gemmGroupsByA[anchor->operand(0)].push_back(grp.get());
  all.push_back(std::move(grp));
}

/// Whether two gemm anchors can share one grouped-GEMM kernel: the same A
/// operand, kind and attributes, and operands and results of equal types.
static bool areSiblings(const Op &a, const Op &b) {
  if (a.kind() != b.kind() || a.operand(0) != b.operand(0) || a.numOperands() != b.numOperands() ||
      a.result()->type() != b.result()->type())
    return false;
  for (unsigned i = 1; i < a.numOperands(); ++i)
    if (a.operand(i)->type() != b.operand(i)->type())
      return false;
  for (const AttrSpec &spec : a.info().attrs) {
    const Attribute *x = a.attrIfPresent(spec.name), *y = b.attrIfPresent(spec.name);
    if ((x || y) && !(x && y && *x == *y))
      return false;
  }
  return true;
}

// The groups are tried in seeding order; a sibling shares the first anchor's
// A operand, so only the groups seeded by a gemm on that operand can take it.
bool Plan::joinSibling(Op *anchor) {
  auto candidates = gemmGroupsByA.find(anchor->operand(0));
  if (candidates == gemmGroupsByA.end())
    return false;
  for (Group *grp : candidates->second) {
    if (!areSiblings(*grp->anchors.front(), *anchor) || createsCycle(*grp, *anchor))
      continue;
    add(*grp, anchor, Role::Anchor, int(grp->anchors.size()));
    return true;
  }
  return false;
}

void Plan::build() {
  for (const auto &op : graph.ops()) {
    std::optional<KernelTemplate> t = anchorTemplate(*op);
    if (t && !(*t == KernelTemplate::Gemm && joinSibling(op.get())))
      seed(op.get(), *t);
  }
  size_t anchored = all.size();
  for (size_t i = 0; i < anchored; ++i) {
    if (all[i]->ops.empty())
      continue; // its reduction joined an earlier row reduction
    growPrologue(*all[i]);
    growEpilogue(*all[i]);
  }
  formPointwiseGroups();
  gatherIntoPointwise();
}

// Row reduction: producers of the anchor's input, then of those producers'
// operands. Gemm: casts of the anchors' operands, and casts of those casts.
// Attention: the views its operands are (viewProblem).
void Plan::growPrologue(Group &grp) {
  std::vector<std::pair<Value *, Op *>> work; // (value, the member reading it)
  for (Op *anchor : grp.anchors)
    for (Value *v : anchor->operands())
      if (grp.tmpl != KernelTemplate::RowReduction || v == anchor->operand(0))
        work.push_back({v, anchor});
  while (!work.empty()) {
    auto [v, reader] = work.back();
    work.pop_back();
    Op *producer = v->definingOp();
    if (!producer || members.count(producer) || prologueProblem(grp, *producer, *reader, false))
      continue;
    add(grp, producer, Role::Prologue, -1);
    for (Value *operand : producer->operands())
      work.push_back({operand, producer});
  }
}

std::optional<Reason> Plan::prologueProblem(const Group &grp, const Op &producer,
                                            const Op &consumer, bool explaining) const {
  const Member *m = memberOf(&producer);
  if (m && m->group->hasAnchor()) // another kernel's input is shared; its output is past a boundary
    return m->role == Role::Prologue ? Reason::SeveralUsers : Reason::ReductionBoundary;
  bool view = grp.tmpl == KernelTemplate::Attention && isView(producer);
  if (!isFusiblePointwise(producer) && !view)
    return Reason::CannotHold;
  if (m && !explaining)
    return Reason::SeveralUsers;
  const Op &anchor = *grp.anchors.front();
  if (grp.tmpl == KernelTemplate::RowReduction) {
    const TensorType &x = anchor.operand(0)->type();
    bool feedsInput = &consumer != &anchor || producer.result() == anchor.operand(0);
    if (!feedsInput || producer.result()->type().shape != x.shape)
      return Reason::IndexSpaceMismatch;
  } else {
    // The attention template reads no cast: one stays with its producer (a pointwise kernel
    // then writes the narrow type, half the bytes).
    bool cast = producer.kind() == OpKind::Cast && grp.tmpl != KernelTemplate::Attention;
    if (!cast && !(view && !viewProblem(producer, consumer, true)))
      return Reason::CannotHold;
    for (const Use &u : producer.result()->uses()) {
      const Member *user = u.user ? memberOf(u.user) : nullptr;
      if (!user || user->group != &grp)
        return Reason::SeveralUsers;
    }
  }
  return cycleProblem(grp, producer, explaining);
}

// The ops after the group's first, in program order, that may join it: only
// a user of a member, or of an anchor's input, can (joinsRows and
// epilogueProblem ask for one), so those are the ones visited, each once, in
// order, as the members that make them candidates join.
void Plan::growEpilogue(Group &grp) {
  size_t first = SIZE_MAX;
  for (Op *op : grp.ops)
    first = std::min(first, position.at(op));
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> next;
  std::unordered_set<size_t> queued;
  size_t at = first;
  auto enqueueUsers = [&](const Value *v) {
    for (const Use &u : v->uses()) {
      if (!u.user)
        continue;
      size_t p = position.at(u.user);
      if (p > at && queued.insert(p).second)
        next.push(p);
    }
  };
  auto enqueueResults = [&](const Op &op) {
    for (unsigned i = 0; i < op.numResults(); ++i)
      enqueueUsers(op.result(i));
  };
  for (Op *op : grp.ops)
    enqueueResults(*op);
  for (Op *anchor : grp.anchors)
    enqueueUsers(anchor->operand(0));
  while (!next.empty()) {
    at = next.top();
    next.pop();
    Op *op = byPosition[at];
    int chain = -1;
    if (joinsRows(grp, *op)) {
      Group &alone = *memberOf(op)->group;
      alone.ops.clear();
      alone.anchors.clear();
      add(grp, op, Role::Anchor, -1);
      if (!grp.computesIn(op->result()->type().shape))
        grp.spaces.push_back(op->result()->type().shape);
      enqueueResults(*op);
      enqueueUsers(op->operand(0));
    } else if (!members.count(op) && !epilogueProblem(grp, *op, chain, false)) {
      add(grp, op, Role::Epilogue, chain);
      enqueueResults(*op);
    }
  }
}

// A reduction over the same rows (the same trailing block of the same shape),
// still alone in its group, joins a row reduction when it reads the group or
// an anchor's input: one kernel computes both, as a LayerNorm's mean and
// variance, with the row in registers.
bool Plan::joinsRows(const Group &grp, const Op &reduce) const {
  const Member *self = memberOf(&reduce);
  if (grp.tmpl != KernelTemplate::RowReduction || reduce.info().cls != OpClass::Reduction ||
      !self || self->group == &grp || self->group->ops.size() != 1 ||
      rowStartOf(reduce) != grp.rowStart)
    return false;
  const Value *x = reduce.operand(0);
  const Op &first = *grp.anchors.front();
  if (x->type().shape != first.operand(0)->type().shape)
    return false;
  const Member *m = x->definingOp() ? memberOf(x->definingOp()) : nullptr;
  bool readsGroup = m && m->group == &grp;
  for (const Op *anchor : grp.anchors)
    readsGroup = readsGroup || anchor->operand(0) == x;
  return readsGroup && !createsCycle(grp, reduce);
}

std::optional<Reason> Plan::epilogueProblem(const Group &grp, const Op &consumer, int &chain,
                                            bool explaining) const {
  const Member *m = memberOf(&consumer);
  if (m && m->group->hasAnchor() && grp.hasAnchor())
    return Reason::ReductionBoundary;
  if (grp.tmpl == KernelTemplate::Attention && isView(consumer))
    return viewEpilogueProblem(grp, consumer, explaining);
  if (grp.tmpl == KernelTemplate::Gemm && isPlanarStore(consumer))
    return planarStoreProblem(grp, consumer, chain, explaining);
  bool elementwise = isFusiblePointwise(consumer) ||
                     (grp.tmpl == KernelTemplate::Gemm && isChannelsLastBatchNorm(consumer));
  if (!elementwise || (m && !explaining))
    return Reason::CannotHold;
  bool reads = false;
  for (Value *v : consumer.operands()) {
    const Member *p = v->definingOp() ? memberOf(v->definingOp()) : nullptr;
    if (!p || p->group != &grp)
      continue;
    reads = true;
    bool prologueValue = p->role == Role::Prologue && grp.tmpl != KernelTemplate::RowReduction;
    if (prologueValue)
      return Reason::IndexSpaceMismatch; // a gemm's epilogue sees its output tile only
    if (isPlanarStore(*v->definingOp()))
      return Reason::IndexSpaceMismatch; // stored NCHW, no longer the tile's rows
    if (v->type().rank() != consumer.result()->type().rank())
      return Reason::IndexSpaceMismatch; // a per-row value read across rows
    int from = p->chain;
    if (from >= 0 && chain >= 0 && from != chain) {
      // Two GEMM accumulators of one grouped kernel meet: two of them make it paired (the gemm
      // template's Note [Paired gemm]: each tile computes both products of its columns).
      if (grp.anchors.size() != 2)
        return Reason::ReductionBoundary;
      from = kJointChain;
    }
    chain = std::max(chain, from);
  }
  if (!reads)
    return Reason::CannotHold;
  if (!grp.computesIn(consumer.result()->type().shape))
    return Reason::IndexSpaceMismatch;
  return cycleProblem(grp, consumer, explaining);
}

// A view of the attention's result (or of a view of it) that nothing else
// reads joins as the epilogue.
std::optional<Reason> Plan::viewEpilogueProblem(const Group &grp, const Op &view,
                                                bool explaining) const {
  const Value *x = view.operand(0);
  const Member *p = x->definingOp() ? memberOf(x->definingOp()) : nullptr;
  if (!p || p->group != &grp || p->role == Role::Prologue)
    return Reason::CannotHold;
  if (x->uses().size() != 1)
    return Reason::SeveralUsers;
  if (std::optional<Reason> r = viewProblem(view, *x->definingOp(), false))
    return r;
  const Member *m = memberOf(&view);
  if (m && !explaining)
    return Reason::CannotHold;
  return cycleProblem(grp, view, explaining);
}

// The transpose of a convolution's NHWC result to NCHW, which nothing else of the group reads,
// joins its gemm group as the result's layout (Note [Planar results] in
// codegen/templates/gemm/Gemm.cpp): the kernel stores each channel as a plane instead of a
// transpose kernel reading the result back.
std::optional<Reason> Plan::planarStoreProblem(const Group &grp, const Op &transpose, int &chain,
                                               bool explaining) const {
  const Value *x = transpose.operand(0);
  const Member *p = x->definingOp() ? memberOf(x->definingOp()) : nullptr;
  if (!p || p->group != &grp || p->role == Role::Prologue || grp.anchors.size() != 1 ||
      grp.anchors.front()->kind() != OpKind::Conv2d || !grp.computesIn(x->type().shape))
    return Reason::CannotHold;
  if (x->uses().size() != 1)
    return Reason::SeveralUsers;
  const Member *m = memberOf(&transpose);
  if (m && !explaining)
    return Reason::CannotHold;
  chain = p->chain;
  return cycleProblem(grp, transpose, explaining);
}

std::optional<Reason> Plan::cycleProblem(const Group &grp, const Op &op, bool explaining) const {
  bool cycle =
      explaining ? createsCycleExplained(grp.ops, {const_cast<Op *>(&op)}) : createsCycle(grp, op);
  if (cycle)
    return Reason::SeveralUsers;
  return std::nullopt;
}

// Each left-over pointwise op joins the pointwise groups of its producers
// in its index space (merging them when it joins several), or starts one.
void Plan::formPointwiseGroups() {
  for (const auto &op : graph.ops()) {
    if (members.count(op.get()) || !isFusiblePointwise(*op))
      continue;
    Group *target = nullptr;
    for (Value *v : op->operands()) {
      const Member *p = v->definingOp() ? memberOf(v->definingOp()) : nullptr;
      Group *source = p ? p->group : nullptr;
      if (!source || source->hasAnchor() || source == target ||
          !source->computesIn(op->result()->type().shape))
        continue;
      if (!target && !createsCycle(*source, *op)) {
        target = source;
        add(*target, op.get(), Role::Pointwise, -1);
      } else if (target && !createsCycle(*target, *source->ops.front())) {
        absorb(*target, *source);
      }
    }
    if (target)
      continue;
    all.push_back(std::make_unique<Group>(
        Group{KernelTemplate::Pointwise, {}, {}, {op->result()->type().shape}}));
    add(*all.back(), op.get(), Role::Pointwise, -1);
  }
  for (auto &[op, m] : members) // no member may name a group erased below
    m.group = current(m.group);
  std::erase_if(all, [](const std::unique_ptr<Group> &g) { return g->ops.empty(); });
}

// A pointwise group takes the movement ops only it reads, and the pointwise groups only it reads
// through a movement op other than a broadcast (the pointwise template reads its operands through
// them: Note [Gathered operands] in codegen/templates/Gather.cpp): a rotary embedding's transpose,
// slices, negation and concat join the multiply-add that reads them. A broadcast would compute its
// operand's elements again for every copy, as a pointwise op read across index spaces would: such
// a group stays a kernel of its own. A producer joins once every user of its results is a member,
// so each pass over the members may let another in; the group grows until none joins.
void Plan::gatherIntoPointwise() {
  auto grow = [&](Group &grp) {
    for (bool grew = true; grew && !grp.ops.empty();) {
      grew = false;
      for (size_t j = 0; j < grp.ops.size() && !grew; ++j)
        for (Value *v : grp.ops[j]->operands())
          if (Op *producer = v->definingOp(); producer && gathers(grp, *producer)) {
            grew = true;
            break;
          }
    }
  };
  for (size_t i = 0; i < all.size(); ++i)
    if (!all[i]->hasAnchor())
      grow(*all[i]);
  // A gather no kernel took is a pointwise kernel of its own, which reads its data through the
  // movement ops only it reads (a resize's rows along one axis, then along the next). Users come
  // first, so that a gather of a gather's rows is one kernel.
  std::vector<Op *> ops;
  for (const auto &op : graph.ops())
    ops.push_back(op.get());
  for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
    Op *op = *it;
    if (op->kind() != OpKind::Gather || members.count(op))
      continue;
    all.push_back(std::make_unique<Group>(
        Group{KernelTemplate::Pointwise, {}, {}, {op->result()->type().shape}}));
    add(*all.back(), op, Role::Pointwise, -1);
    grow(*all.back());
  }
  for (auto &[op, m] : members)
    m.group = current(m.group);
  std::erase_if(all, [](const std::unique_ptr<Group> &g) { return g->ops.empty(); });
}

bool Plan::gathers(Group &grp, Op &producer) {
  const Member *m = memberOf(&producer);
  if (m && (m->group == &grp || m->group->hasAnchor()))
    return false;
  std::vector<Op *> joining = m ? m->group->ops : std::vector<Op *>{&producer};
  // gather_elements reads a row of its own for every element: no template reads through it.
  if (!m && (producer.info().cls != OpClass::Movement ||
             producer.kind() == OpKind::GatherElements))
    return false;
  for (const Op *op : joining)
    for (unsigned r = 0; r < op->numResults(); ++r)
      for (const Use &u : op->result(r)->uses()) {
        const Member *user = u.user ? memberOf(u.user) : nullptr;
        if (!user || (user->group != &grp && (!m || user->group != m->group)))
          return false;
        // A pointwise group joins only through views: read by a broadcast or a gather, or by a
        // pointwise op across index spaces, its elements would be computed again for every copy.
        bool view = isStridedView(u.user->kind()) || u.user->kind() == OpKind::Concat;
        if (m && user->group == &grp && !view)
          return false;
      }
  if (m) {
    if (dag.wouldCycle(position.at(grp.ops.front()), position.at(joining.front())))
      return false;
    absorb(grp, *m->group);
  } else {
    if (createsCycle(grp, producer))
      return false;
    add(grp, &producer, Role::Pointwise, -1);
  }
  return true;
}

// Both are pointwise groups, their members Role::Pointwise. The smaller list
// of ops moves (the larger is swapped in first when `from` holds it), and
// members of `from` find `into` through absorbedInto: union by size, so an
// op moves O(log n) times however the groups meet.
void Plan::absorb(Group &into, Group &from) {
  dag.merge(position.at(into.ops.front()), position.at(from.ops.front()));
  if (from.ops.size() > into.ops.size())
    into.ops.swap(from.ops);
  for (Op *op : from.ops)
    members[op].group = &into;
  into.ops.insert(into.ops.end(), from.ops.begin(), from.ops.end());
  from.ops.clear();
  from.absorbedInto = &into;
}

// `op` is alone, or (joinsRows) alone in its group; grouping asks this only
// before a merge.
bool Plan::createsCycle(const Group &grp, const Op &op) const {
  return dag.wouldCycle(position.at(grp.ops.front()), position.at(&op));
}

} // namespace fusec::fusion
