// Internal to the fusion pass (passes/Fusion*.cpp): its stages and the
// helpers they share. Fusion.cpp's header paragraph describes the algorithm.
#pragma once

#include "ir/Graph.h"
#include "ir/Kernel.h"

#include <optional>
#include <ostream>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace fusec::fusion {

//===--- Stage 1: raising primitive forms to composites (FusionRaise*.cpp) --===//

/// Rewrites the primitive forms of softmax, layer_norm, rms_norm, gelu,
/// attention and linear (as passes/Decompose.cpp writes them, commuted
/// operands allowed) into the composite ops, so that both spellings of a
/// model fuse into the same kernels. Patterns whose inner values are used
/// elsewhere are left.
void raiseComposites(Graph &g);

/// Rewrites the attention pattern matmul(q, kᵀ) → scale → mask → softmax →
/// matmul(·, v) (casts between the stages allowed) into an attention op.
void raiseAttention(Graph &g);

/// Puts an op's attributes in the canonical form kernel bodies use: `axis`
/// negative, defaults dropped, an attention scale equal to its default (in
/// the operands' dtype) dropped.
void canonicalizeCompositeAttrs(Op &op);

//===--- Matching helpers (FusionMatch.cpp) ---------------------------------===//

/// v's defining op if it is of kind k, else null.
Op *defOf(const Value *v, OpKind k);
/// The value of a constant whose elements are all equal (as doubles), or
/// nullopt. Only constants of a float dtype count.
std::optional<double> splatValue(const Value *v);
/// Whether the splat constant v holds `want` rounded to v's dtype.
bool isSplatOf(const Value *v, double want);
/// The shortest decimal that rounds to the splat constant v in its dtype,
/// read back as a double: the value an attribute written by hand would hold.
double splatAsAttribute(const Value *v);
/// `x` rounded to float dtype t (f64: unchanged).
double roundTo(DType t, double x);
/// The axes of a reduction as a trailing block [k, rank): returns k, or
/// nullopt when they are not one.
std::optional<unsigned> trailingReductionStart(const Op &reduce);
/// Whether every use of every result of every op in `ops` other than `root`
/// is by an op in `ops` (graph outputs count as outside uses).
bool isClosedPattern(const std::vector<Op *> &ops, const Op *root);

/// Replaces `root`'s result with `replacement` (which takes root's name) and
/// erases the pattern's ops, then any operand producers left unused. Returns
/// the erased ops (their addresses are dangling; only for comparisons).
std::vector<const Op *> replacePattern(Graph &g, Op *root, Value *replacement,
                                       const std::vector<Op *> &ops);

//===--- Stage 2: grouping (FusionGroups.cpp) -------------------------------===//

enum class Role : uint8_t { Prologue, Anchor, Epilogue, Pointwise };

/// Why an edge was left unfused (the --explain-fusion vocabulary).
enum class Reason : uint8_t { SeveralUsers, IndexSpaceMismatch, ReductionBoundary, CannotHold };
std::string_view reasonText(Reason r);

struct Group {
  KernelTemplate tmpl;
  std::vector<Op *> ops;     // members, in the order they joined
  std::vector<Op *> anchors; // the contraction, normalization or reduction(s)
  /// The index spaces its epilogue may compute in: the anchors' result
  /// shapes and, for a row reduction, the shape of its rows.
  std::vector<Shape> spaces;
  unsigned rowStart = 0; // row reduction: the first axis its reductions span

  bool hasAnchor() const { return !anchors.empty(); }
  bool computesIn(const Shape &s) const;

  Group *absorbedInto = nullptr; // set when another group took this one's ops
};

/// Member::chain of an epilogue op that reads both accumulators of a paired gemm group.
inline constexpr int kJointChain = 1 << 20;

struct Member {
  Group *group = nullptr;
  Role role = Role::Pointwise;
  int chain = -1; // which anchor's epilogue, in a gemm group of several anchors (or kJointChain)
};

/// The graph of future kernels while groups form (FusionDag.cpp): a node
/// per group (its ops contracted) and per op in none, producer→user edges,
/// nodes kept in a topological order. Ops are named by their position in the
/// graph's order.
class KernelDag {
public:
  KernelDag(const Graph &g, const std::unordered_map<const Op *, size_t> &position);
  /// Whether the nodes of the ops at positions a and b are joined by a path
  /// through a third node: merging them would make a cycle.
  bool wouldCycle(size_t a, size_t b);
  /// Makes the nodes of a and b one; asserts that wouldCycle(a, b) is false.
  void merge(size_t a, size_t b);

private:
  unsigned find(unsigned n);
  const std::vector<unsigned> &neighbours(std::vector<std::vector<unsigned>> &lists, unsigned n);
  std::vector<unsigned> between(unsigned from, unsigned avoid, bool forward, unsigned target,
                                bool &hit);

  std::vector<unsigned> parent; // union-find over positions
  std::vector<unsigned> order;  // a representative's rank in the topological order
  std::vector<std::vector<unsigned>> succ, pred;
  std::vector<unsigned> seen, visited; // stamps for neighbours() and between()
  unsigned seenStamp = 0, visitStamp = 0;
};

/// The grouping of a graph's ops into future kernels (see Fusion.cpp).
class Plan {
public:
  explicit Plan(const Graph &g);
  /// Forms every group.
  void build();

  const std::vector<std::unique_ptr<Group>> &groups() const { return all; }
  /// The op's membership, or null for an op that stays outside kernels.
  const Member *memberOf(const Op *op) const;
  /// The op's index in the graph's order when the plan was made.
  size_t positionOf(const Op *op) const { return position.at(op); }
  /// Why the edge from `producer` to `consumer` is not fused; they are in
  /// different groups, at least one of them in a group.
  Reason whyNotFused(const Op &producer, const Op &consumer) const;

private:
  void seed(Op *anchor, KernelTemplate t);
  bool joinSibling(Op *anchor);
  void add(Group &grp, Op *op, Role role, int chain);
  void growPrologue(Group &grp);
  void growEpilogue(Group &grp);
  bool joinsRows(const Group &grp, const Op &reduce) const;
  void formPointwiseGroups();
  void gatherIntoPointwise();
  /// Whether `producer` (a movement op in no group, or a member of a pointwise group) joined
  /// `grp`: it does, with its whole group, when `grp` alone reads its results (a group's through
  /// views only: reshapes, transposes, slices, concats).
  bool gathers(Group &grp, Op &producer);
  void absorb(Group &into, Group &from);
  std::optional<Reason> prologueProblem(const Group &grp, const Op &producer, const Op &consumer,
                                        bool explaining) const;
  std::optional<Reason> epilogueProblem(const Group &grp, const Op &consumer, int &chain,
                                        bool explaining) const;
  std::optional<Reason> viewEpilogueProblem(const Group &grp, const Op &view,
                                            bool explaining) const;
  std::optional<Reason> planarStoreProblem(const Group &grp, const Op &transpose, int &chain,
                                           bool explaining) const;
  /// Whether putting `op` into `grp` would make a cycle between kernels.
  bool createsCycle(const Group &grp, const Op &op) const;
  /// SeveralUsers when putting `op` into `grp` would make a cycle (asked afresh when
  /// `explaining`), else nothing: the last question of each join.
  std::optional<Reason> cycleProblem(const Group &grp, const Op &op, bool explaining) const;
  /// The same question for explaining an edge, where `op` may be in a group
  /// already: a path from one to the other through an op outside both (whole
  /// groups as one node), walked afresh.
  bool createsCycleExplained(const std::vector<Op *> &a, const std::vector<Op *> &b) const;
  bool pathOutside(const std::vector<Op *> &from, const std::vector<Op *> &to) const;
  /// The group `g` now is (following absorptions).
  static Group *current(Group *g);

  const Graph &graph;
  std::vector<std::unique_ptr<Group>> all;
  mutable std::unordered_map<const Op *, Member> members; // groups resolved on lookup
  std::unordered_map<const Op *, size_t> position;
  std::vector<Op *> byPosition;
  std::unordered_map<const Value *, std::vector<Group *>> gemmGroupsByA;
  mutable KernelDag dag;
};

/// The template whose anchor `op` can be, or nullopt for a pointwise op or an
/// op no template holds.
std::optional<KernelTemplate> anchorTemplate(const Op &op);
/// Pointwise for fusion: the Pointwise op class.
bool isFusiblePointwise(const Op &op);

//===--- Stage 3: outlining (FusionOutline.cpp) -----------------------------===//

/// Turns each group into a kernel op (small constants copied into bodies),
/// then restores a topological op order. A group over the bound of Note
/// [Kernel parameter space] becomes several kernels (cutAtKernelBound).
void outlineGroups(Graph &g, const Plan &plan);

/// Whether outlining copies the constant `v` into a body instead of passing it.
bool isInlinedConstant(const Value *v);

//===--- Kernel bounds (FusionBounds.cpp) -----------------------------------===//

/// Splits each concat with more operands than one kernel takes into a tree of
/// concats (Note [Kernel parameter space]).
void splitWideConcats(Graph &g);

/// A group's ops (in program order) cut into the kernels they become: one
/// chunk when its parameters fit, else consecutive chunks that do, the one
/// with the anchors keeping the template and the others pointwise.
std::vector<std::vector<Op *>> cutAtKernelBound(const Group &grp, const std::vector<Op *> &ops);

/// Writes one line per unfused producer→consumer edge that touches a group.
void explainUnfused(const Graph &g, const Plan &plan, std::ostream &os);

} // namespace fusec::fusion
