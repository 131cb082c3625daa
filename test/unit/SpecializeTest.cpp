// Shape specialization: every type static after binding the inputs, kernel
// bodies included; a reshape's `?` and a broadcast's `?` resolved; inputs
// that do not fit their types, and shapes that disagree once known, are
// located errors.
#include "ir/Specialize.h"

#include "ir/TextFormat.h"
#include "ir/Verifier.h"

#include <gtest/gtest.h>

using namespace fusec;

namespace {

std::unique_ptr<Module> parse(const std::string &text, Diagnostics &diags) {
  std::unique_ptr<Module> m = parseModule(text, "test.fir", diags);
  EXPECT_TRUE(m && verify(*m, diags));
  return m;
}

TEST(Specialize, EveryTypeBecomesStaticInsideKernelsToo) {
  Diagnostics diags;
  auto m = parse(R"(func @f(%x: f32[rows,?], %b: f32[?]) -> f32[?,rows] {
  %y = kernel(%x, %b) {template = "pointwise"} : f32[rows,?] {
  body(%x: f32[rows,?], %b: f32[?]):
    %s = add(%x, %b) : f32[rows,?]
    return %s
  }
  %r = reshape(%y) {shape = [?, rows]} : f32[?,rows]
  return %r
}
)",
                 diags);
  ASSERT_TRUE(m) << diags.str();
  DimBindings bindings;
  auto g = specializeShapes(*m->graphs[0], {{3, 8}, {8}}, bindings, diags);
  ASSERT_TRUE(g) << diags.str();
  EXPECT_EQ(bindings.at("rows"), 3);
  EXPECT_EQ(g->outputs()[0]->type().str(), "f32[8,3]");
  const Op &k = *g->ops().front();
  EXPECT_EQ(k.body()->ops().front()->result()->type().str(), "f32[3,8]");
  Diagnostics check;
  EXPECT_TRUE(verify(*g, check)) << check.str();
}

TEST(Specialize, BroadcastKeepsItsQuestionMark) {
  Diagnostics diags;
  auto m = parse(R"(func @f(%x: f32[1,n,4]) -> f32[2,n,4] {
  %y = broadcast(%x) {shape = [2, ?, 4]} : f32[2,n,4]
  return %y
}
)",
                 diags);
  ASSERT_TRUE(m) << diags.str();
  DimBindings bindings;
  auto g = specializeShapes(*m->graphs[0], {{1, 5, 4}}, bindings, diags);
  ASSERT_TRUE(g) << diags.str();
  EXPECT_EQ(g->outputs()[0]->type().str(), "f32[2,5,4]");
}

TEST(Specialize, InputsThatDoNotFitAreErrors) {
  Diagnostics diags;
  auto m = parse(R"(func @f(%x: f32[n,4], %y: f32[n,4]) -> f32[n,4] {
  %s = add(%x, %y) : f32[n,4]
  return %s
}
)",
                 diags);
  ASSERT_TRUE(m) << diags.str();
  DimBindings b1, b2, b3;
  Diagnostics wrongStatic, conflict, count;
  EXPECT_FALSE(specializeShapes(*m->graphs[0], {{2, 5}, {2, 4}}, b1, wrongStatic));
  EXPECT_NE(wrongStatic.str().find("dim 1 is 5 but its type says 4"), std::string::npos)
      << wrongStatic.str();
  EXPECT_FALSE(specializeShapes(*m->graphs[0], {{2, 4}, {3, 4}}, b2, conflict));
  EXPECT_NE(conflict.str().find("'n' is already 2"), std::string::npos) << conflict.str();
  EXPECT_FALSE(specializeShapes(*m->graphs[0], {{2, 4}}, b3, count));
  EXPECT_NE(count.str().find("takes 2 inputs, got 1"), std::string::npos) << count.str();
}

TEST(Specialize, AnonymousDimsThatDisagreeAreLocatedErrors) {
  Diagnostics diags;
  auto m = parse(R"(func @f(%x: f32[?], %y: f32[?]) -> f32[?] {
  %s = add(%x, %y) : f32[?]
  return %s
}
)",
                 diags);
  ASSERT_TRUE(m) << diags.str();
  DimBindings bindings;
  Diagnostics errors;
  EXPECT_FALSE(specializeShapes(*m->graphs[0], {{3}, {4}}, bindings, errors));
  EXPECT_NE(errors.str().find("test.fir:2:"), std::string::npos) << errors.str();
}

} // namespace
