// Kernel ops through the C++ API, where the text form cannot go: a kernel
// nested in a body, a body on another op, a kernel without one; and cloning,
// which must copy bodies rather than share them.
#include "ir/Builder.h"
#include "ir/Graph.h"
#include "ir/TextFormat.h"
#include "ir/Verifier.h"

#include <gtest/gtest.h>

using namespace fusec;

namespace {

const TensorType kF32x4{DType::F32, staticShape({4})};

/// A body computing neg(x) over f32[4].
std::unique_ptr<Graph> negBody() {
  auto body = std::make_unique<Graph>("body");
  Diagnostics diags;
  Builder b(*body, diags);
  body->setOutputs({b.neg(body->addInput("a", kF32x4))});
  return body;
}

Op *addKernel(Graph &g, Value *x, std::unique_ptr<Graph> body) {
  Op *k = g.createOp(OpKind::Kernel, {x}, {kF32x4}, {{"template", std::string("pointwise")}});
  k->setBody(std::move(body));
  return k;
}

bool hasError(const Diagnostics &diags, std::string_view text) {
  for (const Diagnostic &d : diags.all())
    if (d.message.find(text) != std::string::npos)
      return true;
  return false;
}

TEST(KernelOpTest, WellFormedKernelVerifies) {
  Graph g("t");
  Op *k = addKernel(g, g.addInput("x", kF32x4), negBody());
  g.setOutputs({k->result()});
  Diagnostics diags;
  EXPECT_TRUE(verify(g, diags));
}

TEST(KernelOpTest, NestedKernelIsAnError) {
  auto body = std::make_unique<Graph>("body");
  Op *inner = addKernel(*body, body->addInput("a", kF32x4), negBody());
  body->setOutputs({inner->result()});
  Graph g("t");
  Op *k = addKernel(g, g.addInput("x", kF32x4), std::move(body));
  g.setOutputs({k->result()});
  Diagnostics diags;
  EXPECT_FALSE(verify(g, diags));
  EXPECT_TRUE(hasError(diags, "'kernel' cannot be nested in another kernel's body"));
}

TEST(KernelOpTest, BodyOnlyOnKernels) {
  Graph g("t");
  Diagnostics diags;
  Builder b(g, diags);
  Value *n = b.neg(g.addInput("x", kF32x4));
  n->definingOp()->setBody(negBody());
  g.setOutputs({n});
  EXPECT_FALSE(verify(g, diags));
  EXPECT_TRUE(hasError(diags, "'neg' cannot have a body"));
}

TEST(KernelOpTest, KernelNeedsABody) {
  Graph g("t");
  Op *k = addKernel(g, g.addInput("x", kF32x4), nullptr);
  g.setOutputs({k->result()});
  Diagnostics diags;
  EXPECT_FALSE(verify(g, diags));
  EXPECT_TRUE(hasError(diags, "'kernel' has no body"));
}

TEST(KernelOpTest, BodyUsingAnOuterValueIsAnError) {
  Graph g("t");
  Value *x = g.addInput("x", kF32x4);
  auto body = std::make_unique<Graph>("body");
  body->addInput("a", kF32x4);
  Op *leak = body->createOp(OpKind::Neg, {x}, {kF32x4});
  body->setOutputs({leak->result()});
  Op *k = addKernel(g, x, std::move(body));
  g.setOutputs({k->result()});
  Diagnostics diags;
  EXPECT_FALSE(verify(g, diags));
  EXPECT_TRUE(hasError(diags, "is defined in another graph"));
}

TEST(KernelOpTest, CloneCopiesBodies) {
  Graph g("t");
  Op *k = addKernel(g, g.addInput("x", kF32x4), negBody());
  g.setOutputs({k->result()});
  std::unique_ptr<Graph> copy = g.clone();
  Op *copied = copy->ops().front().get();
  ASSERT_NE(copied->body(), nullptr);
  EXPECT_NE(copied->body(), k->body());
  EXPECT_EQ(toString(*copy), toString(g));
  // Changing the original's body leaves the copy's alone.
  k->body()->ops().front()->setAttr("unused", Attribute(int64_t(1)));
  EXPECT_NE(toString(*copy), toString(g));
  Diagnostics diags;
  EXPECT_TRUE(verify(*copy, diags));
}

} // namespace
