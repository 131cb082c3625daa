// canonicalize through the C++ API, for what fusec-opt cannot show: the pass
// without an injected constant folder, and the reference folder's limits.
#include "ir/TextFormat.h"
#include "ir/Verifier.h"
#include "passes/PassManager.h"
#include "runtime/reference/ConstantFolder.h"

#include <gtest/gtest.h>

using namespace fusec;

namespace {

/// Parses `text`, runs canonicalize with `opts` and returns the printed graph.
std::string canonicalize(const std::string &text, const PassOptions &opts) {
  Diagnostics diags;
  std::unique_ptr<Module> m = parseModule(text, "test.fir", diags);
  EXPECT_TRUE(m) << "bad test input";
  if (!m)
    return "";
  Graph &g = *m->graphs.front();
  EXPECT_TRUE(lookupPass("canonicalize")->run(g, opts, diags));
  EXPECT_TRUE(verify(g, diags));
  return toString(g);
}

const char *kMixed = R"(func @f(%x: f32[2]) -> (f32[2], f32[2]) {
  %c1 = const() {value = dense<[1.0, 2.0]>} : f32[2]
  %c2 = const() {value = dense<[1.0, 2.0]>} : f32[2]
  %zero = const() {value = dense<0.0>} : f32[]
  %s = add(%c1, %c2)
  %a = add(%x, %zero)
  %e1 = exp(%a)
  %e2 = exp(%x)
  %y = mul(%e1, %s)
  return %y, %e2
}
)";

TEST(CanonicalizeTest, WithoutAFolderEverythingElseStillHappens) {
  PassOptions opts; // foldConstant left null
  EXPECT_EQ(canonicalize(kMixed, opts), R"(func @f(%x: f32[2]) -> (f32[2], f32[2]) {
  %c1 = const() {value = dense<[1.0, 2.0]>} : f32[2]
  %s = add(%c1, %c1) : f32[2]
  %e1 = exp(%x) : f32[2]
  %y = mul(%e1, %s) : f32[2]
  return %y, %e1
}
)");
}

TEST(CanonicalizeTest, ReferenceFolderFoldsConstantOps) {
  PassOptions opts;
  opts.foldConstant = makeReferenceFolder();
  EXPECT_EQ(canonicalize(kMixed, opts), R"(func @f(%x: f32[2]) -> (f32[2], f32[2]) {
  %s = const() {value = dense<[2.0, 4.0]>} : f32[2]
  %e1 = exp(%x) : f32[2]
  %y = mul(%e1, %s) : f32[2]
  return %y, %e1
}
)");
}

TEST(CanonicalizeTest, ReferenceFolderRefusesResultsOverItsLimit) {
  PassOptions opts;
  opts.foldConstant = makeReferenceFolder(/*maxElements=*/1);
  // Over the limit, a result that holds more elements than its operands (a
  // broadcast, an outer sum) stays an op; one that holds no more (a cast or
  // transpose of a weight, an elementwise sum) folds.
  std::string out = canonicalize(R"(func @f() -> (f32[3,3], f32[3,3], f16[3]) {
  %c = const() {value = dense<[1.0, 2.0, 3.0]>} : f32[3]
  %r = reshape(%c) {shape = [3, 1]} : f32[3,1]
  %b = broadcast(%c) {shape = [3, 3]} : f32[3,3]
  %o = add(%r, %c) : f32[3,3]
  %h = cast(%c) {to = f16} : f16[3]
  return %b, %o, %h
}
)",
                                 opts);
  EXPECT_NE(out.find("%b = broadcast(%c) {shape = [3, 3]} : f32[3,3]"), std::string::npos) << out;
  EXPECT_NE(out.find("%o = add(%r, %c) : f32[3,3]"), std::string::npos) << out;
  EXPECT_NE(out.find("%h = const() {value = dense<[1.0, 2.0, 3.0]>} : f16[3]"), std::string::npos)
      << out;
}

TEST(CanonicalizeTest, ReferenceFolderGivesTheReferenceResult) {
  Diagnostics diags;
  std::unique_ptr<Module> m = parseModule(R"(func @f() -> (i32[2], i32[2]) {
  %n = const() {value = dense<[7, -7]>} : i32[2]
  %d = const() {value = dense<[2, 0]>} : i32[2]
  %two = const() {value = dense<2>} : i32[2]
  %q = div(%n, %two)
  %z = div(%n, %d)
  return %q, %z
}
)",
                                          "test.fir", diags);
  ASSERT_TRUE(m);
  std::vector<Op *> ops = m->graphs.front()->opsSnapshot();
  auto data = [](const Op *op) { return op->attr("value").get<DenseRef>(); };
  auto fold = makeReferenceFolder();
  DenseRef q = fold(*ops[3], {data(ops[0]), data(ops[2])});
  ASSERT_TRUE(q);
  EXPECT_EQ(q->dtype, DType::I32);
  EXPECT_EQ(q->shape, std::vector<int64_t>{2});
  EXPECT_EQ(q->elementAsDouble(0), 3); // truncated toward zero
  EXPECT_EQ(q->elementAsDouble(1), -3);
  EXPECT_FALSE(fold(*ops[4], {data(ops[0]), data(ops[1])})) << "division by zero folded";
}

// Note [Splat constants]: a pointwise or movement op on splats folds to data
// held as one element, whatever its size; a full operand gives full data.
TEST(CanonicalizeTest, ReferenceFolderKeepsSplats) {
  Diagnostics diags;
  std::unique_ptr<Module> m =
      parseModule(R"(func @f() -> (f16[4096,4096], i32[2,4096,4096], f32[2]) {
  %c = const() {value = dense<1.5>} : f32[4096,4096]
  %h = cast(%c) {to = f16}
  %i = cast(%c) {to = i32}
  %b = broadcast(%i) {shape = [2, 4096, 4096]}
  %l = const() {value = dense<[1.0, 2.0]>} : f32[2]
  %s = const() {value = dense<3.0>} : f32[2]
  %m = mul(%l, %s)
  return %h, %b, %m
}
)",
                  "test.fir", diags);
  ASSERT_TRUE(m);
  std::vector<Op *> ops = m->graphs.front()->opsSnapshot();
  auto data = [](const Op *op) { return op->attr("value").get<DenseRef>(); };
  auto fold = makeReferenceFolder();
  DenseRef h = fold(*ops[1], {data(ops[0])});
  ASSERT_TRUE(h);
  EXPECT_TRUE(h->isSplatForm());
  EXPECT_EQ(h->dtype, DType::F16);
  EXPECT_EQ(h->numElements(), size_t(4096) * 4096);
  EXPECT_EQ(h->elementAsDouble(12345), 1.5);
  DenseRef i = fold(*ops[2], {data(ops[0])});
  ASSERT_TRUE(i);
  DenseRef b = fold(*ops[3], {i});
  ASSERT_TRUE(b);
  EXPECT_TRUE(b->isSplatForm());
  EXPECT_EQ(b->shape, (std::vector<int64_t>{2, 4096, 4096}));
  EXPECT_EQ(b->elementAsDouble(0), 1); // truncated toward zero
  DenseRef product = fold(*ops[6], {data(ops[4]), data(ops[5])});
  ASSERT_TRUE(product);
  EXPECT_FALSE(product->isSplatForm());
  EXPECT_EQ(product->elementAsDouble(1), 6);
}

} // namespace
