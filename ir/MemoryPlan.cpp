// Arena memory planning (ir/MemoryPlan.h): collect buffers in op order,
// merging in-place chains, then place them greedily by size with best fit.
//
// Cost: collecting is linear in ops and operands. Placing asks, per buffer,
// for the placed buffers whose live ranges overlap its own: buffers are made
// in op order, so they are sorted by the start of their ranges, and a tree of
// the latest end among placed buffers over that order finds exactly the
// overlapping ones, O(log n) each. Placement is O(n log n + overlaps · log n)
// rather than a scan of every placed buffer per buffer.
//
// Invariant of the result: two values whose byte ranges overlap are never
// live at the same program point, except a value and the operand whose
// buffer it took over, at the op that reads one and writes the other.
#include "ir/MemoryPlan.h"

#include "ir/Assert.h"
#include "ir/Kernel.h"

#include <algorithm>
#include <limits>

namespace fusec {

namespace {

int64_t alignUp(int64_t n) { return (n + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment; }

// Bytes of `t` with named dims bound by `dims`; nullopt when a dim is unbound
// or the product overflows.
std::optional<int64_t> typeBytes(const TensorType &t, const std::map<std::string, int64_t> &dims) {
  int64_t bytes = dtypeSize(t.dtype);
  for (const Dim &d : t.shape) {
    int64_t size = d.size;
    if (!d.isStatic()) {
      auto it = dims.find(d.symbol);
      if (d.isAnonymous() || it == dims.end())
        return std::nullopt;
      size = it->second;
    }
    if (size < 0 || (size > 0 && bytes > std::numeric_limits<int64_t>::max() / size))
      return std::nullopt;
    bytes *= size;
  }
  return bytes;
}

// A `pointwise` kernel whose body holds only pointwise ops and constants.
bool isPointwiseKernel(const Op &op) {
  if (op.kind() != OpKind::Kernel || !op.body() ||
      lookupKernelTemplate(op.getString("template")) != KernelTemplate::Pointwise)
    return false;
  for (const auto &inner : op.body()->ops())
    if (inner->info().cls != OpClass::Pointwise && inner->kind() != OpKind::Const)
      return false;
  return true;
}

// Ops that compute result element i from element i of each same-sized
// operand (or from none), so the result may be written over such an operand.
// A pointwise kernel qualifies only with one result: the generated kernels
// mark their pointers restrict/noalias, and with two results a store of one
// could be scheduled before a load, of the operand it overlays, that the
// other needs; a single result's store depends on that load.
bool writesOverOperand(const Op &op) {
  return op.info().cls == OpClass::Pointwise || op.kind() == OpKind::Reshape ||
         (isPointwiseKernel(op) && op.numResults() == 1);
}

/// The buffers placed so far, asked for those whose live ranges overlap a
/// range. `buffers` is sorted by live.first (made in op order); a max tree
/// over that order holds each placed buffer's live.last (-1 when unplaced),
/// so a walk visits only subtrees holding an overlapping buffer.
class PlacedBuffers {
public:
  explicit PlacedBuffers(const std::vector<ArenaBuffer> &buffers)
      : buffers(buffers), size(1), seq(buffers.size(), 0) {
    while (size < buffers.size())
      size *= 2;
    latest.assign(2 * size, -1);
  }

  void add(unsigned i) {
    seq[i] = ++count;
    size_t n = size + i;
    latest[n] = buffers[i].live.last;
    for (n /= 2; n >= 1; n /= 2)
      latest[n] = std::max(latest[2 * n], latest[2 * n + 1]);
  }

  /// The placed buffers live at some point of `range`, in placement order.
  std::vector<const ArenaBuffer *> overlapping(const LiveRange &range) const {
    // Buffers starting after range.last cannot overlap: search below `end`.
    size_t end =
        std::upper_bound(buffers.begin(), buffers.end(), range.last,
                         [](unsigned p, const ArenaBuffer &b) { return p < b.live.first; }) -
        buffers.begin();
    std::vector<unsigned> found;
    collect(1, 0, size, end, range.first, found);
    std::sort(found.begin(), found.end(), [&](unsigned a, unsigned b) { return seq[a] < seq[b]; });
    std::vector<const ArenaBuffer *> out;
    for (unsigned i : found)
      out.push_back(&buffers[i]);
    return out;
  }

private:
  // Placed buffers among [lo, hi) ∩ [0, end) whose live.last >= first.
  void collect(size_t n, size_t lo, size_t hi, size_t end, unsigned first,
               std::vector<unsigned> &found) const {
    if (lo >= end || latest[n] < int64_t(first))
      return;
    if (hi - lo == 1) {
      found.push_back(unsigned(lo));
      return;
    }
    size_t mid = (lo + hi) / 2;
    collect(2 * n, lo, mid, end, first, found);
    collect(2 * n + 1, mid, hi, end, first, found);
  }

  const std::vector<ArenaBuffer> &buffers;
  size_t size;
  std::vector<int64_t> latest;
  std::vector<size_t> seq; // placement order
  size_t count = 0;
};

/// Builds one plan: buffers first (collect), then offsets (place).
class Planner {
public:
  Planner(const Graph &g, const ByteSizeFn &bytesOf) : g(g), live(g), bytesOf(bytesOf) {}

  // One buffer per value that needs one, in-place chains merged. False, with
  // `unsized` set, when a value has no size.
  bool collect(const Value **unsized) {
    for (const auto &op : g.ops()) {
      std::optional<int64_t> span = writesOverOperand(*op) ? indexSpace(*op) : std::nullopt;
      for (unsigned i = 0; i < op->numResults(); ++i) {
        const Value &r = *op->result(i);
        if (!needsArenaBuffer(r))
          continue;
        std::optional<int64_t> bytes = bytesOf(r);
        if (!bytes) {
          if (unsized)
            *unsized = &r;
          return false;
        }
        addValue(*op, r, *bytes, span);
      }
    }
    return true;
  }

  void place() {
    std::vector<unsigned> order(plan.buffers.size());
    for (unsigned i = 0; i < order.size(); ++i)
      order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](unsigned a, unsigned b) {
      return plan.buffers[a].bytes > plan.buffers[b].bytes;
    });
    PlacedBuffers placed(plan.buffers);
    for (unsigned i : order) {
      ArenaBuffer &b = plan.buffers[i];
      b.offset = bestOffset(b, placed.overlapping(b.live));
      plan.peakBytes = std::max(plan.peakBytes, b.offset + b.bytes);
      placed.add(i);
    }
  }

  MemoryPlan plan;

private:
  void addValue(const Op &op, const Value &r, int64_t bytes, std::optional<int64_t> span) {
    if (std::optional<unsigned> reused = reusableBuffer(op, r, bytes, span)) {
      ArenaBuffer &b = plan.buffers[*reused];
      plan.reusedOperand[&r] = b.values.back();
      b.values.push_back(&r);
      b.live.last = live.range(r).last;
      plan.bufferOf[&r] = *reused;
      return;
    }
    plan.bufferOf[&r] = unsigned(plan.buffers.size());
    plan.buffers.push_back({0, bytes, live.range(r), {&r}});
  }

  // The buffer of an operand that `r` may take over: planned, dying at `op`,
  // the same bytes and element size, and not already taken by another result.
  // A kernel with results of several sizes runs over the largest (`span`,
  // elements): a smaller result's element is read by many threads, so only a
  // result as large as the index space may overlay an operand (a plain op's
  // one result always is).
  std::optional<unsigned> reusableBuffer(const Op &op, const Value &r, int64_t bytes,
                                         std::optional<int64_t> span) const {
    if (!writesOverOperand(op) || !span || bytes / dtypeSize(r.type().dtype) < *span)
      return std::nullopt;
    for (const Value *u : op.operands()) {
      auto it = plan.bufferOf.find(u);
      if (it == plan.bufferOf.end() || !live.diesAt(*u, op))
        continue;
      const ArenaBuffer &b = plan.buffers[it->second];
      if (b.bytes == bytes && b.values.back() == u &&
          dtypeSize(u->type().dtype) == dtypeSize(r.type().dtype))
        return it->second;
    }
    return std::nullopt;
  }

  // The elements of op's largest result, or nullopt when one has no size.
  std::optional<int64_t> indexSpace(const Op &op) const {
    int64_t elements = 0;
    for (unsigned i = 0; i < op.numResults(); ++i) {
      const Value &r = *op.result(i);
      std::optional<int64_t> bytes = bytesOf(r);
      if (!bytes)
        return std::nullopt;
      elements = std::max(elements, *bytes / dtypeSize(r.type().dtype));
    }
    return elements;
  }

  // The lowest-waste aligned gap for `b` among the placed buffers live with
  // it (`conflicts`, in the order they were placed), else the first aligned
  // offset above all of them.
  static int64_t bestOffset(const ArenaBuffer &b, std::vector<const ArenaBuffer *> conflicts) {
    std::sort(conflicts.begin(), conflicts.end(),
              [](const ArenaBuffer *x, const ArenaBuffer *y) { return x->offset < y->offset; });
    int64_t cursor = 0, best = -1, bestGap = std::numeric_limits<int64_t>::max();
    for (const ArenaBuffer *c : conflicts) {
      int64_t start = alignUp(cursor);
      int64_t gap = c->offset - start;
      if (gap >= b.bytes && gap < bestGap) {
        best = start;
        bestGap = gap;
      }
      cursor = std::max(cursor, c->offset + c->bytes);
    }
    return best >= 0 ? best : alignUp(cursor);
  }

  const Graph &g;
  Liveness live;
  const ByteSizeFn &bytesOf;
};

} // namespace

std::optional<int64_t> MemoryPlan::offsetOf(const Value &v) const {
  auto it = bufferOf.find(&v);
  if (it == bufferOf.end())
    return std::nullopt;
  return buffers[it->second].offset;
}

bool needsArenaBuffer(const Value &v) {
  if (v.isGraphInput() || v.definingOp()->kind() == OpKind::Const)
    return false;
  for (const Use &u : v.uses())
    if (!u.user)
      return false; // a graph output: the caller's buffer
  return true;
}

std::optional<MemoryPlan> planMemory(const Graph &g, const ByteSizeFn &bytesOf,
                                     const Value **unsized) {
  Planner planner(g, bytesOf);
  if (!planner.collect(unsized))
    return std::nullopt;
  planner.place();
  return std::move(planner.plan);
}

std::optional<MemoryPlan> planMemory(const Graph &g, const std::map<std::string, int64_t> &dims,
                                     const Value **unsized) {
  return planMemory(
      g, [&](const Value &v) { return typeBytes(v.type(), dims); }, unsized);
}

} // namespace fusec
