// The kernel graph of fusion's grouping (Fusion.h, KernelDag): ops as nodes,
// producer→user edges, each group contracted into one node as it forms.
//
// Grouping asks, before every merge, whether the two nodes are joined by a
// path through a third node (merging them would then make a cycle). Nodes
// keep ranks that order them topologically, so only nodes ranked between the
// two can lie on such a path: the search is bounded by the ranks, and in a
// chain or a tree, where merges join neighbours, it looks at nothing but the
// neighbours. A merge keeps the order topological as Pearce and Kelly's
// dynamic topological sort does when an edge closes against the order: with
// `lo` ranked before `hi`, the nodes between them that `lo` reaches (F) and
// those that reach `hi` (B) are disjoint (no path through a third node), so
// B, then the merged node, then F, each in their old order, take the ranks B,
// F, lo and hi had; every other node keeps its rank. A node's edge lists may
// name nodes merged away since and repeat nodes; a walk resolves and
// compacts them (union-find with path halving), so stale and repeated
// entries do not pile up in a growing group's lists.
//
// Cost: a query or merge visits the nodes ranked between the two that the
// search reaches, and the edges of those nodes (a group's own edges to the
// outside included: a group read by thousands of ops outside it is walked
// per question). That is all of fusion's
// grouping in a chain or a diamond; an adversarial order of merges can still
// make the ranks move often (Pearce and Kelly's bound is not linear), which
// has not been seen on models.
#include "ir/Assert.h"
#include "passes/Fusion.h"

#include <algorithm>

namespace fusec::fusion {

KernelDag::KernelDag(const Graph &g, const std::unordered_map<const Op *, size_t> &position)
    : parent(g.numOps()), order(g.numOps()), succ(g.numOps()), pred(g.numOps()),
      seen(g.numOps(), 0), visited(g.numOps(), 0) {
  for (const auto &op : g.ops()) {
    unsigned i = unsigned(position.at(op.get()));
    parent[i] = i;
    order[i] = i; // the graph's order is topological
    for (unsigned r = 0; r < op->numResults(); ++r)
      for (const Use &u : op->result(r)->uses()) {
        if (!u.user)
          continue;
        unsigned j = unsigned(position.at(u.user));
        succ[i].push_back(j);
        pred[j].push_back(i);
      }
  }
}

unsigned KernelDag::find(unsigned n) {
  while (parent[n] != n) {
    parent[n] = parent[parent[n]];
    n = parent[n];
  }
  return n;
}

// The node's neighbours (succ or pred) as representatives, each once, the
// node itself left out; the list is rewritten so.
const std::vector<unsigned> &KernelDag::neighbours(std::vector<std::vector<unsigned>> &lists,
                                                   unsigned n) {
  std::vector<unsigned> &list = lists[n];
  ++seenStamp;
  size_t kept = 0;
  for (unsigned e : list) {
    unsigned r = find(e);
    if (r == n || seen[r] == seenStamp)
      continue;
    seen[r] = seenStamp;
    list[kept++] = r;
  }
  list.resize(kept);
  return list;
}

// Nodes reachable from `from` (not through `avoid`) ranked strictly between
// the two bounds, following succ (forward) or pred; `hit` is set when the
// walk meets `target` other than by a direct edge from `from`.
std::vector<unsigned> KernelDag::between(unsigned from, unsigned avoid, bool forward,
                                         unsigned target, bool &hit) {
  auto &lists = forward ? succ : pred;
  unsigned lo = std::min(order[from], order[avoid]), hi = std::max(order[from], order[avoid]);
  std::vector<unsigned> reached, stack;
  ++visitStamp;
  auto push = [&](unsigned m) {
    if (order[m] > lo && order[m] < hi && visited[m] != visitStamp) {
      visited[m] = visitStamp;
      reached.push_back(m);
      stack.push_back(m);
    }
  };
  for (unsigned m : neighbours(lists, from))
    if (m != avoid)
      push(m);
  while (!stack.empty()) {
    unsigned n = stack.back();
    stack.pop_back();
    for (unsigned m : neighbours(lists, n)) {
      if (m == target)
        hit = true;
      if (m != avoid)
        push(m);
    }
  }
  return reached;
}

bool KernelDag::wouldCycle(size_t a, size_t b) {
  unsigned x = find(unsigned(a)), y = find(unsigned(b));
  if (x == y)
    return false;
  if (order[x] > order[y])
    std::swap(x, y); // a path can only run from the earlier node to the later
  bool hit = false;
  between(x, y, /*forward=*/true, y, hit);
  return hit;
}

void KernelDag::merge(size_t a, size_t b) {
  unsigned x = find(unsigned(a)), y = find(unsigned(b));
  if (x == y)
    return;
  if (order[x] > order[y])
    std::swap(x, y);
  bool hit = false;
  std::vector<unsigned> f = between(x, y, /*forward=*/true, y, hit);
  std::vector<unsigned> bk = between(y, x, /*forward=*/false, x, hit);
  FUSEC_ASSERT(!hit, "merging two kernels joined through a third");
  auto byOrder = [&](unsigned p, unsigned q) { return order[p] < order[q]; };
  std::sort(f.begin(), f.end(), byOrder);
  std::sort(bk.begin(), bk.end(), byOrder);
  std::vector<unsigned> ranks{order[x], order[y]};
  for (unsigned n : f)
    ranks.push_back(order[n]);
  for (unsigned n : bk)
    ranks.push_back(order[n]);
  std::sort(ranks.begin(), ranks.end());
  // The merged node keeps x's succ and pred lists when they are the longer.
  unsigned keep = succ[x].size() + pred[x].size() >= succ[y].size() + pred[y].size() ? x : y;
  unsigned gone = keep == x ? y : x;
  size_t next = 0;
  for (unsigned n : bk)
    order[n] = ranks[next++];
  order[keep] = ranks[next++];
  ++next; // one rank of the two is left unused
  for (unsigned n : f)
    order[n] = ranks[next++];
  parent[gone] = keep;
  succ[keep].insert(succ[keep].end(), succ[gone].begin(), succ[gone].end());
  pred[keep].insert(pred[keep].end(), pred[gone].begin(), pred[gone].end());
  std::vector<unsigned>().swap(succ[gone]);
  std::vector<unsigned>().swap(pred[gone]);
}

} // namespace fusec::fusion
