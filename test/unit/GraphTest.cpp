// The graph mutation API: use lists, replace-all-uses, insert, erase, move,
// outputs, unique names and cloning.
#include "ir/Graph.h"

#include "ir/Builder.h"
#include "ir/TextFormat.h"
#include "ir/Verifier.h"

#include <gtest/gtest.h>

using namespace fusec;

namespace {

TensorType f32(std::vector<int64_t> sizes) { return {DType::F32, staticShape(sizes)}; }

struct GraphTest : ::testing::Test {
  Graph g{"t"};
  Diagnostics diags;
  Builder b{g, diags};
  Value *x = g.addInput("x", f32({4}));
  Value *y = g.addInput("y", f32({4}));
};

TEST_F(GraphTest, UsesTrackOperandsAndOutputs) {
  Value *s = b.add(x, y);
  Value *m = b.mul(s, s);
  g.setOutputs({m, s});
  std::vector<Use> uses(s->uses().begin(), s->uses().end());
  ASSERT_EQ(s->uses().size(), 3u); // two operands of mul, one output
  ASSERT_EQ(uses.size(), 3u);
  EXPECT_EQ(uses[0], (Use{m->definingOp(), 0}));
  EXPECT_EQ(uses[1], (Use{m->definingOp(), 1}));
  EXPECT_EQ(uses[2], (Use{nullptr, 1}));
  EXPECT_EQ(x->uses().size(), 1u);
  EXPECT_TRUE(verify(g, diags));
}

TEST_F(GraphTest, ReplaceAllUsesRepointsOperandsAndOutputs) {
  Value *s = b.add(x, y);
  Value *n = b.neg(s);
  g.setOutputs({s, n});
  Value *d = b.sub(x, y);
  s->replaceAllUsesWith(d);
  EXPECT_FALSE(s->hasUses());
  EXPECT_EQ(n->definingOp()->operand(0), d);
  EXPECT_EQ(g.outputs()[0], d);
  EXPECT_EQ(d->uses().size(), 2u);
  // The sub was appended after neg: move it before its first user.
  g.moveBefore(d->definingOp(), n->definingOp());
  g.erase(s->definingOp());
  EXPECT_TRUE(verify(g, diags)) << diags.all().size();
  EXPECT_EQ(g.numOps(), 2u);
}

TEST_F(GraphTest, InsertionPointAndSetOperand) {
  Value *n = b.neg(x);
  g.setOutputs({n});
  b.setInsertionPoint(n->definingOp());
  Value *a = b.relu(y);
  n->definingOp()->setOperand(0, a);
  EXPECT_EQ(g.ops().front().get(), a->definingOp());
  EXPECT_FALSE(x->hasUses());
  EXPECT_EQ(a->uses().size(), 1u);
  EXPECT_TRUE(verify(g, diags));
}

// Use lists are intrusive: dropping a use from the middle, from either end,
// or by replace-all-uses keeps the others in the order they were added.
TEST_F(GraphTest, UseListsKeepTheirOrder) {
  std::vector<Op *> users;
  for (int i = 0; i < 5; ++i)
    users.push_back(b.neg(x)->definingOp());
  g.setOutputs({x});
  auto order = [](const Value *v) {
    std::vector<Use> out(v->uses().begin(), v->uses().end());
    return out;
  };
  users[2]->setOperand(0, y); // the middle one
  users[0]->setOperand(0, y); // the first one
  EXPECT_EQ(order(x),
            (std::vector<Use>{{users[1], 0}, {users[3], 0}, {users[4], 0}, {nullptr, 0}}));
  g.setOutput(0, y); // the last one
  EXPECT_EQ(order(x), (std::vector<Use>{{users[1], 0}, {users[3], 0}, {users[4], 0}}));
  x->replaceAllUsesWith(y);
  EXPECT_FALSE(x->hasUses());
  EXPECT_EQ(order(y), (std::vector<Use>{{users[2], 0},
                                        {users[0], 0},
                                        {nullptr, 0},
                                        {users[1], 0},
                                        {users[3], 0},
                                        {users[4], 0}}));
  g.erase(users[3]);
  EXPECT_EQ(y->uses().size(), 5u);
  EXPECT_EQ(order(y).back(), (Use{users[4], 0}));
}

TEST_F(GraphTest, UniqueNamesNeverRepeat) {
  std::string a = g.uniqueName("h");
  std::string c = g.uniqueName("h");
  EXPECT_EQ(a, "h");
  EXPECT_EQ(c, "h.1");
  EXPECT_NE(g.uniqueName("x"), "x"); // an input's name is taken
  Value *s = b.add(x, y);
  Value *t = b.add(x, y);
  EXPECT_NE(s->name(), t->name());
  s->setName("h.3"); // taken behind the hint's back: skipped, not reused
  EXPECT_EQ(g.uniqueName("h"), "h.2");
  EXPECT_EQ(g.uniqueName("h"), "h.4");
  t->setName("h.5");
  EXPECT_EQ(g.uniqueName("h"), "h.6");
  EXPECT_EQ(g.uniqueName("h.1"), "h.1.1");
}

TEST_F(GraphTest, CloneIsDeepAndPrintsTheSame) {
  Value *c = b.constant(DType::F32, {4}, {1, 2, 3, 4});
  Value *s = b.add(x, c);
  g.setOutputs({b.relu(s)});
  std::unique_ptr<Graph> copy = g.clone();
  EXPECT_EQ(toString(*copy), toString(g));
  // Mutating the copy leaves the original alone.
  copy->setName("other");
  copy->outputs()[0]->definingOp()->setOperand(0, copy->input(1));
  EXPECT_NE(toString(*copy), toString(g));
  EXPECT_TRUE(verify(g, diags));
  EXPECT_TRUE(verify(*copy, diags));
}

TEST_F(GraphTest, BuilderReportsBadOperandsAndPropagatesNull) {
  Value *z = g.addInput("z", f32({5}));
  Value *bad = b.add(x, z);
  EXPECT_EQ(bad, nullptr);
  EXPECT_TRUE(diags.hasErrors());
  EXPECT_EQ(b.neg(bad), nullptr); // no second error for a null operand
  EXPECT_EQ(diags.errorCount(), 1u);
}

TEST_F(GraphTest, VerifierCatchesUseBeforeDefinition) {
  Value *n = b.neg(x);
  Value *a = b.relu(n);
  g.setOutputs({a});
  g.moveBefore(a->definingOp(), n->definingOp()); // abs now precedes neg
  EXPECT_FALSE(verify(g, diags));
}

} // namespace

namespace {
// An op built directly with an int where the signature says float passes
// through no coercion; the verifier must report it rather than let a later
// getFloat() read the wrong alternative.
TEST_F(GraphTest, VerifierReportsAttributeStoredAsTheWrongKind) {
  Value *n = b.softmax(x);
  g.setOutputs({n});
  Op *ln = g.createOp(OpKind::LayerNorm, {x}, {x->type()}, {{"epsilon", int64_t(1)}});
  g.setOutputs({ln->result()});
  EXPECT_FALSE(verify(g, diags));
  ASSERT_FALSE(diags.all().empty());
  EXPECT_EQ(diags.all().back().message,
            "'layer_norm' attribute 'epsilon' is stored as int, not float");
}
} // namespace
