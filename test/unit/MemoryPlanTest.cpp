// The arena planner (ir/MemoryPlan.h): on random graphs, no two buffers that
// are live at the same program point overlap in bytes (checked against
// liveness recomputed here from the use lists, not the planner's), offsets
// are aligned, in-place reuse is legal, and the peak is what the offsets say.
// Small fixed graphs pin down in-place chains and symbolic-shape deferral.
#include "ir/MemoryPlan.h"

#include "ir/Builder.h"
#include "ir/Verifier.h"

#include <gtest/gtest.h>
#include <random>

using namespace fusec;

namespace {

TensorType f32(std::vector<int64_t> sizes) { return {DType::F32, staticShape(sizes)}; }

/// A random graph over values of shapes [16,16], [16,1] and [16] (any two
/// broadcast), with pointwise, reduction, matmul, reshape, cast and constant
/// ops, and a few values returned.
class RandomGraph {
public:
  explicit RandomGraph(unsigned seed) : rng(seed), b(g, diags) {}

  Graph &build(unsigned numOps) {
    for (const char *name : {"x", "y"})
      pool.push_back(g.addInput(name, f32({16, 16})));
    pool.push_back(g.addInput("v", f32({16})));
    while (g.numOps() < numOps)
      pool.push_back(step());
    std::vector<Value *> outputs = {pool.back()};
    if (coin(2))
      outputs.push_back(pick());
    g.setOutputs(outputs);
    return g;
  }

  Diagnostics diags;

private:
  bool coin(unsigned n) { return std::uniform_int_distribution<unsigned>(0, n - 1)(rng) == 0; }
  Value *pick() { return pool[std::uniform_int_distribution<size_t>(0, pool.size() - 1)(rng)]; }
  Value *pickSquare() {
    for (;;)
      if (Value *v = pick(); v->type().shape.size() == 2 && v->type().shape[1].size == 16)
        return v;
  }

  Value *step() {
    switch (std::uniform_int_distribution<int>(0, 7)(rng)) {
    case 0:
      return b.exp(pick());
    case 1:
      return b.relu(pick());
    case 2:
      return coin(2) ? b.add(pick(), pick()) : b.mul(pick(), pick());
    case 3:
      return b.matmul(pickSquare(), pickSquare());
    case 4:
      return b.create(OpKind::ReduceSum, {pickSquare()},
                      {{"axes", std::vector<int64_t>{-1}}, {"keepdims", true}});
    case 5:
      return reshapeToOtherSmallShape();
    case 6:
      return b.cast(b.cast(pick(), DType::BF16), DType::F32);
    default:
      return b.add(pick(), b.constant(DType::F32, {16}, std::vector<double>(16, 1.0)));
    }
  }

  // [16,1] ↔ [16]; a [16,16] value is reduced first.
  Value *reshapeToOtherSmallShape() {
    Value *v = pick();
    if (v->type().shape.size() == 2 && v->type().shape[1].size == 16)
      v = b.create(OpKind::ReduceMax, {v}, {{"axes", std::vector<int64_t>{1}}});
    Shape to = v->type().shape.size() == 1 ? staticShape({16, 1}) : staticShape({16});
    return b.reshape(v, to);
  }

  std::mt19937 rng;
  Graph g{"random"};
  Builder b;
  std::vector<Value *> pool;
};

/// Live ranges recomputed from the use lists: [definition, last read].
std::unordered_map<const Value *, std::pair<unsigned, unsigned>> liveRanges(const Graph &g) {
  std::unordered_map<const Op *, unsigned> point;
  unsigned next = 0;
  for (const auto &op : g.ops())
    point[op.get()] = ++next;
  std::unordered_map<const Value *, std::pair<unsigned, unsigned>> ranges;
  for (const auto &op : g.ops())
    for (unsigned i = 0; i < op->numResults(); ++i) {
      const Value *v = op->result(i);
      unsigned last = point[op.get()];
      for (const Use &u : v->uses())
        last = std::max(last, u.user ? point[u.user] : unsigned(g.numOps()) + 1);
      ranges[v] = {point[op.get()], last};
    }
  return ranges;
}

struct PlanStats {
  unsigned inPlace = 0, sharedBytes = 0;
};

// Checks every property of the plan; counts in-place reuses and pairs of
// values that share bytes at different times.
void checkPlan(const Graph &g, const MemoryPlan &plan, PlanStats &stats) {
  auto ranges = liveRanges(g);
  std::vector<const Value *> planned;
  int64_t peak = 0;
  for (const auto &[v, range] : ranges) {
    ASSERT_EQ(needsArenaBuffer(*v), plan.offsetOf(*v).has_value()) << v->name();
    if (!plan.offsetOf(*v))
      continue;
    planned.push_back(v);
    const ArenaBuffer &buf = plan.buffers[plan.bufferOf.at(v)];
    EXPECT_EQ(buf.offset % kArenaAlignment, 0);
    EXPECT_EQ(buf.bytes, int64_t(*staticNumElements(v->type().shape) * dtypeSize(v->type().dtype)));
    peak = std::max(peak, buf.offset + buf.bytes);
  }
  EXPECT_EQ(plan.peakBytes, peak);
  for (const auto &[v, u] : plan.reusedOperand) {
    const Op &op = *v->definingOp();
    ++stats.inPlace;
    EXPECT_TRUE(op.info().cls == OpClass::Pointwise || op.kind() == OpKind::Reshape);
    EXPECT_EQ(ranges.at(u).second, ranges.at(v).first) << "operand must die where it is reused";
    EXPECT_EQ(*staticNumElements(u->type().shape), *staticNumElements(v->type().shape));
  }
  for (const Value *u : planned)
    for (const Value *v : planned) {
      if (u >= v)
        continue;
      const ArenaBuffer &bu = plan.buffers[plan.bufferOf.at(u)];
      const ArenaBuffer &bv = plan.buffers[plan.bufferOf.at(v)];
      bool bytesOverlap = bu.offset < bv.offset + bv.bytes && bv.offset < bu.offset + bu.bytes;
      auto [uf, ul] = ranges.at(u);
      auto [vf, vl] = ranges.at(v);
      bool timesOverlap = uf <= vl && vf <= ul;
      if (!bytesOverlap)
        continue;
      bool handoff = (plan.reusedOperand.count(v) && plan.reusedOperand.at(v) == u && ul == vf) ||
                     (plan.reusedOperand.count(u) && plan.reusedOperand.at(u) == v && vl == uf);
      EXPECT_TRUE(!timesOverlap || handoff)
          << "%" << u->name() << " and %" << v->name() << " overlap while both live";
      stats.sharedBytes += !timesOverlap;
    }
}

TEST(MemoryPlanTest, RandomGraphsNeverOverlapLiveBuffers) {
  PlanStats stats;
  for (unsigned seed = 0; seed < 200; ++seed) {
    RandomGraph random(seed);
    Graph &g = random.build(8 + seed % 24);
    ASSERT_TRUE(verify(g, random.diags)) << "seed " << seed;
    std::optional<MemoryPlan> plan = planMemory(g, std::map<std::string, int64_t>{});
    ASSERT_TRUE(plan) << "seed " << seed;
    SCOPED_TRACE("seed " + std::to_string(seed));
    checkPlan(g, *plan, stats);
  }
  // The property is not vacuous: the plans do reuse memory, both ways.
  EXPECT_GT(stats.inPlace, 50u);
  EXPECT_GT(stats.sharedBytes, 50u);
}

TEST(MemoryPlanTest, PointwiseChainRunsInOneBuffer) {
  Graph g("chain");
  Diagnostics diags;
  Builder b(g, diags);
  Value *x = g.addInput("x", f32({64}));
  Value *a = b.exp(x);        // x is the caller's: a new buffer
  Value *c = b.neg(b.exp(a)); // both overwrite their dying operand
  Value *y = b.add(c, x);     // a graph output: the caller's buffer
  g.setOutputs({y});
  std::optional<MemoryPlan> plan = planMemory(g, std::map<std::string, int64_t>{});
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->buffers.size(), 1u);
  EXPECT_EQ(plan->buffers[0].values.size(), 3u);
  EXPECT_EQ(plan->peakBytes, 256);
  EXPECT_FALSE(plan->offsetOf(*y));
}

TEST(MemoryPlanTest, OperandStillLiveIsNotOverwritten) {
  Graph g("fork");
  Diagnostics diags;
  Builder b(g, diags);
  Value *x = g.addInput("x", f32({100}));
  Value *a = b.exp(x);
  Value *c = b.neg(a); // a is read again below: c needs its own buffer
  g.setOutputs({b.add(a, c)});
  std::optional<MemoryPlan> plan = planMemory(g, std::map<std::string, int64_t>{});
  ASSERT_TRUE(plan);
  EXPECT_TRUE(plan->reusedOperand.empty());
  EXPECT_EQ(*plan->offsetOf(*a), 0);
  EXPECT_EQ(*plan->offsetOf(*c), 512); // 400 bytes, aligned up to 256
  EXPECT_EQ(plan->peakBytes, 912);
}

TEST(MemoryPlanTest, SymbolicShapesArePlannedOnceBound) {
  Graph g("sym");
  Diagnostics diags;
  Builder b(g, diags);
  Value *x = g.addInput("x", {DType::F32, {Dim::named("n"), Dim::fixed(4)}});
  Value *a = b.exp(x);
  g.setOutputs({b.matmul(a, b.transpose(a, {1, 0}))});
  const Value *unsized = nullptr;
  EXPECT_FALSE(planMemory(g, std::map<std::string, int64_t>{}, &unsized));
  EXPECT_EQ(unsized, a);
  std::optional<MemoryPlan> plan = planMemory(g, {{"n", 32}});
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->buffers.size(), 2u); // a and its transpose, both live at the matmul
  EXPECT_EQ(plan->peakBytes, 512 + 512);
}

} // namespace
