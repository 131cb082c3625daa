// Bounds on the kernels fusion leaves, so that every graph that verifies
// compiles: wide concats become trees of concats, and a group whose kernel
// would take too many parameters is outlined as several kernels.
//
// Note [Kernel parameter space]: a kernel gets one pointer per operand and
// per result, plus, with symbolic shapes, sizes and a stride per dim of a
// broadcast operand, all as plain kernel parameters on both back ends. PTX
// caps them at 4352 bytes before ISA 8.1 (LLVM 19 writes 8.0: ptxas refuses
// the module) and at 32764 bytes from 8.1 (NVRTC: "Formal parameter space
// overflowed"). So a value costs 1 + rank 8-byte words (its pointer and a
// stride per dim) and a kernel may take kMaxKernelWords of them, 3584 bytes,
// which leaves room for sizes under the smaller cap. Two kinds of kernel can
// exceed it: an op outside kernels runs as one generic kernel, and only
// concat has unboundedly many operands; and a group may read or write
// hundreds of distinct values (a pointwise sum of many inputs). Ops still run
// as one kernel wherever they fit.
//
// A concat of more operands than its bound (kMaxConcatOperands, or fewer
// when its rank makes the words run out) becomes a tree: consecutive runs of
// operands concatenated first, named `<result>.part<i>`, then those, the
// root taking the result's name. 64 also keeps the generic kernel's
// per-element search through its operands short, and its compile time low
// (NVRTC and LLVM both grow faster than linearly in a concat's operands: 6 s
// for 681, 290 s for 5,000 through LLVM).
//
// A group over the bound is cut in program order: members join the current
// chunk while its interface (distinct outside values read, member values
// read outside, by the words above) stays in bound, never between the first
// and the last anchor; the chunk holding the anchors keeps the group's
// template, the others are pointwise kernels, cut again where the result
// shape changes (a pointwise kernel computes in one index space). Chunks in
// program order cannot make a cycle: a path from a later chunk back to an
// earlier one would leave and re-enter the group through another kernel,
// which grouping rules out. Not bounded: the anchors' span itself (a grouped
// GEMM of hundreds of siblings), and kernel ops written in the input.
#include "ir/Assert.h"
#include "ir/Builder.h"
#include "passes/Fusion.h"

#include <algorithm>
#include <unordered_set>

namespace fusec::fusion {

namespace {

constexpr size_t kMaxKernelWords = 448;
constexpr size_t kMaxConcatOperands = 64;

size_t paramWords(const Value *v) { return 1 + v->type().rank(); }

/// The parameter words of a set of ops that grows in program order: its
/// distinct outside operands and the member values read outside it. A small
/// constant counts as copied into the body (isInlinedConstant), though the
/// outliner passes one a gemm or attention anchor reads as an operand: the
/// count may fall short by those, only in the anchor spans this file leaves
/// unbounded.
class Interface {
public:
  /// The words with `op` added, the set unchanged.
  size_t with(const Op &op) const { return size_t(int64_t(words) + delta(op)); }

  void add(const Op &op) {
    words = size_t(int64_t(words) + delta(op));
    for (Value *v : op.operands()) {
      if (auto it = outsideUses.find(v); it != outsideUses.end())
        --it->second;
      else if (!isInlinedConstant(v))
        inputs.insert(v);
    }
    for (unsigned i = 0; i < op.numResults(); ++i)
      outsideUses[op.result(i)] = op.result(i)->uses().size();
  }

private:
  int64_t delta(const Op &op) const {
    int64_t d = 0;
    std::unordered_map<const Value *, size_t> reads; // op's uses of each operand
    for (Value *v : op.operands())
      ++reads[v];
    for (const auto &[v, n] : reads) {
      if (auto it = outsideUses.find(v); it != outsideUses.end())
        d -= it->second == n ? int64_t(paramWords(v)) : 0; // its last outside reader joins
      else if (!inputs.count(v) && !isInlinedConstant(v))
        d += int64_t(paramWords(v));
    }
    for (unsigned i = 0; i < op.numResults(); ++i)
      d += op.result(i)->hasUses() ? int64_t(paramWords(op.result(i))) : 0;
    return d;
  }

  std::unordered_set<const Value *> inputs;
  std::unordered_map<const Value *, size_t> outsideUses; // defined inside: reads from outside
  size_t words = 0;
};

/// Cuts `chunk` (no anchor) where the result shape changes.
void splitByShape(std::vector<Op *> chunk, std::vector<std::vector<Op *>> &out) {
  std::vector<Op *> run;
  for (Op *op : chunk) {
    if (!run.empty() && op->result()->type().shape != run.back()->result()->type().shape) {
      out.push_back(std::move(run));
      run.clear();
    }
    run.push_back(op);
  }
  out.push_back(std::move(run));
}

/// Builds concat(operands) {axis} before the builder's point.
Value *concatOf(Builder &b, const std::vector<Value *> &operands, int64_t axis) {
  Value *v = b.create(OpKind::Concat, operands, {{"axis", axis}});
  FUSEC_ASSERT(v, "a part of a concat that verified does not type-check");
  return v;
}

} // namespace

std::vector<std::vector<Op *>> cutAtKernelBound(const Group &grp, const std::vector<Op *> &ops) {
  std::vector<std::vector<Op *>> chunks(1);
  std::vector<bool> anchored(1, false);
  Interface iface;
  size_t anchorsSeen = 0;
  for (Op *op : ops) {
    bool coreOpen = anchorsSeen > 0 && anchorsSeen < grp.anchors.size();
    if (!chunks.back().empty() && !coreOpen && iface.with(*op) > kMaxKernelWords) {
      chunks.emplace_back();
      anchored.push_back(false);
      iface = Interface();
    }
    chunks.back().push_back(op);
    iface.add(*op);
    if (std::find(grp.anchors.begin(), grp.anchors.end(), op) != grp.anchors.end()) {
      ++anchorsSeen;
      anchored.back() = true;
    }
  }
  if (chunks.size() == 1)
    return chunks;
  std::vector<std::vector<Op *>> out;
  for (size_t i = 0; i < chunks.size(); ++i) {
    if (anchored[i])
      out.push_back(std::move(chunks[i]));
    else
      splitByShape(std::move(chunks[i]), out);
  }
  return out;
}

// concat(x1, …, xn) {axis}, n over the bound k  →
//   concat(concat(x1, …, xk), concat(xk+1, …, x2k), …) {axis}, again while the
//   root would have more than k operands
void splitWideConcats(Graph &g) {
  for (Op *op : g.opsSnapshot()) {
    if (op->kind() != OpKind::Concat)
      continue;
    size_t fanIn = std::min(kMaxConcatOperands, kMaxKernelWords / paramWords(op->result()) - 1);
    fanIn = std::max<size_t>(fanIn, 2);
    if (op->numOperands() <= fanIn)
      continue;
    Diagnostics scratch; // a part that does not type-check asserts
    Builder b(g, scratch);
    b.setInsertionPoint(op);
    b.setLoc(op->loc());
    int64_t axis = op->getInt("axis");
    std::vector<Value *> level = op->operands();
    unsigned part = 0;
    while (level.size() > fanIn) {
      std::vector<Value *> next;
      for (size_t i = 0; i < level.size(); i += fanIn) {
        std::vector<Value *> run(level.begin() + long(i),
                                 level.begin() + long(std::min(i + fanIn, level.size())));
        Value *v = run.size() == 1 ? run[0] : concatOf(b, run, axis);
        if (run.size() > 1)
          v->setName(g.uniqueName(op->result()->name() + ".part" + std::to_string(part++)));
        next.push_back(v);
      }
      level = std::move(next);
    }
    Value *root = concatOf(b, level, axis);
    FUSEC_ASSERT(root->type() == op->result()->type(), "a concat tree changed the type");
    std::string name = op->result()->name();
    op->result()->replaceAllUsesWith(root);
    g.erase(op);
    root->setName(std::move(name));
  }
}

} // namespace fusec::fusion
