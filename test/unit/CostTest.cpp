// What an op must do (ir/Cost.h): bytes moved, contraction FLOPs counted the
// way bench/ reports them, and the ops a kernel fuses.
#include "ir/Cost.h"

#include "ir/TextFormat.h"
#include "ir/Verifier.h"

#include <gtest/gtest.h>

using namespace fusec;

namespace {

std::unique_ptr<Module> parse(const std::string &text) {
  Diagnostics diags;
  std::unique_ptr<Module> m = parseModule(text, "test.fir", diags);
  EXPECT_TRUE(m && verify(*m, diags)) << diags.str();
  return m;
}

/// The ops of the first graph, in order.
std::vector<const Op *> ops(const Module &m) {
  std::vector<const Op *> out;
  for (const auto &op : m.graphs.front()->ops())
    out.push_back(op.get());
  return out;
}

TEST(Cost, ContractionFlopsCountTwoPerMultiplyAdd) {
  auto m = parse(R"(func @f(%a: f16[3,5,7], %b: f16[7,11], %x: f32[2,4,9], %w: f32[6,4,3,3],
      %q: f16[2,8,4,33,64], %k: f16[2,8,1,47,64], %v: f16[2,8,1,47,32], %l: f32[13,9], %lw: f32[10,9])
      -> (f16[3,5,11], f16[3,11,5], f32[2,6,7,5], f16[2,8,4,33,32], f16[2,8,4,33,32], f32[13,10], f16[3,5,11]) {
  %c = matmul(%a, %b) : f16[3,5,11]
  %at = transpose(%a) {perm = [0, 2, 1]} : f16[3,7,5]
  %ct = matmul(%b, %at) {transpose_a = true} : f16[3,11,5]
  %xs = reshape(%x) {shape = [2, 4, 3, 3]} : f32[2,4,3,3]
  %xp = concat(%xs, %xs, %xs) {axis = 2} : f32[2,4,9,3]
  %xq = concat(%xp, %xp, %xp) {axis = 3} : f32[2,4,9,9]
  %y = conv2d(%xq, %w) {pads = [0, 0, 0, 0], strides = [1, 2]} : f32[2,6,7,4]
  %y2 = conv2d(%xq, %w) {pads = [0, 1, 0, 1]} : f32[2,6,7,9]
  %yy = slice(%y2) {axis = 3, start = 0, end = 5} : f32[2,6,7,5]
  %o = attention(%q, %k, %v) : f16[2,8,4,33,32]
  %oc = attention(%q, %k, %v) {causal = true} : f16[2,8,4,33,32]
  %li = linear(%l, %lw) : f32[13,10]
  %e = exp(%c) : f16[3,5,11]
  return %c, %ct, %yy, %o, %oc, %li, %e
})");
  ASSERT_TRUE(m);
  std::vector<const Op *> o = ops(*m);
  EXPECT_EQ(contractionFlops(*o[0]), 2u * 3 * 5 * 11 * 7);                  // matmul
  EXPECT_EQ(contractionFlops(*o[2]), 2u * 3 * 11 * 5 * 7);                  // K from transposed A
  EXPECT_EQ(contractionFlops(*o[3]), 0u);                                   // movement
  EXPECT_EQ(contractionFlops(*o[6]), 2u * 2 * 6 * 7 * 4 * 4 * 3 * 3);       // conv2d, strided
  EXPECT_EQ(contractionFlops(*o[9]), 2u * 2 * 8 * 4 * 33 * 47 * (64 + 32)); // attention
  EXPECT_EQ(contractionFlops(*o[10]), contractionFlops(*o[9]) / 2);         // causal
  EXPECT_EQ(contractionFlops(*o[11]), 2u * 13 * 10 * 9);                    // linear
  EXPECT_EQ(contractionFlops(*o[12]), 0u);                                  // pointwise
  EXPECT_EQ(mustMoveBytes(*o[0]), 2u * (3 * 5 * 7 + 7 * 11 + 3 * 5 * 11));
}

TEST(Cost, KernelsCountTheirBodyAndNameItsOps) {
  auto m = parse(R"(func @f(%a: f16[64,32], %b: f16[32,48], %bias: f32[48]) -> f16[64,48] {
  %y = kernel(%a, %b, %bias) {template = "gemm"} : f16[64,48] {
  body(%a: f16[64,32], %b: f16[32,48], %bias: f32[48]):
    %c = matmul(%a, %b) {acc = f32} : f16[64,48]
    %c32 = cast(%c) {to = f32} : f32[64,48]
    %d = add(%c32, %bias) : f32[64,48]
    %g = gelu(%d) : f32[64,48]
    %y = cast(%g) {to = f16} : f16[64,48]
    return %y
  }
  return %y
})");
  ASSERT_TRUE(m);
  const Op &k = *ops(*m)[0];
  EXPECT_EQ(contractionFlops(k), 2u * 64 * 48 * 32);
  EXPECT_EQ(fusedOpNames(k), "matmul+add+gelu");
  EXPECT_EQ(mustMoveBytes(k), 2u * 64 * 32 + 2u * 32 * 48 + 4u * 48 + 2u * 64 * 48);
}

TEST(Cost, AKernelOfCastsOnlyNamesThem) {
  auto m = parse(R"(func @f(%a: f32[8]) -> f16[8] {
  %y = kernel(%a) {template = "pointwise"} : f16[8] {
  body(%a: f32[8]):
    %y = cast(%a) {to = f16} : f16[8]
    return %y
  }
  return %y
})");
  ASSERT_TRUE(m);
  EXPECT_EQ(fusedOpNames(*ops(*m)[0]), "cast");
  EXPECT_EQ(contractionFlops(*ops(*m)[0]), 0u);
}

TEST(Cost, SymbolicShapesCountNothing) {
  auto m = parse(R"(func @f(%a: f32[n,8], %b: f32[8,8]) -> f32[n,8] {
  %c = matmul(%a, %b) : f32[n,8]
  return %c
})");
  ASSERT_TRUE(m);
  EXPECT_EQ(contractionFlops(*ops(*m)[0]), 0u);
  EXPECT_EQ(mustMoveBytes(*ops(*m)[0]), 4u * 64); // the static operand only
}

} // namespace
