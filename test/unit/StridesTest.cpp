// Strides of views (codegen/templates/Index.h): a reshape read in place, as the attention
// template reads the head split and merge around it.
#include "codegen/templates/Index.h"

#include <gtest/gtest.h>

namespace fusec::templates {
namespace {

using Sizes = std::vector<int64_t>;

TEST(Strides, Contiguous) {
  EXPECT_EQ(contiguousStrides({2, 3, 4}), (Sizes{12, 4, 1}));
  EXPECT_EQ(contiguousStrides({}), Sizes{});
}

TEST(Strides, ReshapeOfContiguousIsContiguous) {
  // [B, S, 768] -> [B, S, 12, 64]: the head split.
  auto s = reshapedStrides({2, 100, 768}, contiguousStrides({2, 100, 768}), {2, 100, 12, 64});
  ASSERT_TRUE(s);
  EXPECT_EQ(*s, contiguousStrides({2, 100, 12, 64}));
}

TEST(Strides, MergeOfTransposedHeads) {
  // O [B, H, S, D] laid out as [B, S, H, D] (strides of the head merge), then [B, S, H * D]:
  // reshaping back from the merged tensor's strides gives O's.
  auto s = reshapedStrides({2, 100, 768}, {76800, 768, 1}, {2, 100, 12, 64});
  ASSERT_TRUE(s);
  EXPECT_EQ(*s, (Sizes{76800, 768, 64, 1}));
  // The transposed heads [B, H, S, D] (strides 76800, 64, 768, 1) cannot merge H and S.
  EXPECT_FALSE(reshapedStrides({2, 12, 100, 64}, {76800, 64, 768, 1}, {2, 1200, 64}));
  // ... but may merge B and nothing else, or split D.
  auto split = reshapedStrides({2, 12, 100, 64}, {76800, 64, 768, 1}, {2, 12, 100, 2, 32});
  ASSERT_TRUE(split);
  EXPECT_EQ(*split, (Sizes{76800, 64, 768, 32, 1}));
}

TEST(Strides, UnitDimsTakeNoPart) {
  // A slice [1, B, H, S, D] of a transposed stack, the unit dim dropped.
  auto s = reshapedStrides({1, 2, 3, 100, 64}, {192, 57600, 64, 576, 1}, {2, 3, 100, 64});
  ASSERT_TRUE(s);
  EXPECT_EQ(*s, (Sizes{57600, 64, 576, 1}));
  // A unit dim inside a run: [4, 1, 8] with 4 not 8 elements apart from its neighbour.
  EXPECT_FALSE(reshapedStrides({4, 1, 8}, {16, 999, 1}, {32}));
  auto merged = reshapedStrides({4, 1, 8}, {8, 999, 1}, {32});
  ASSERT_TRUE(merged);
  EXPECT_EQ(*merged, Sizes{1});
  auto added = reshapedStrides({6, 8}, {8, 1}, {6, 1, 8, 1});
  ASSERT_TRUE(added);
  EXPECT_EQ((*added)[0], 8);
  EXPECT_EQ((*added)[2], 1);
}

TEST(Strides, MismatchedProducts) {
  EXPECT_FALSE(reshapedStrides({6, 4}, {4, 1}, {5, 5}));
  auto empty = reshapedStrides({0, 4}, {4, 1}, {2, 0});
  ASSERT_TRUE(empty);
  EXPECT_EQ(*empty, (Sizes{0, 1}));
}

} // namespace
} // namespace fusec::templates
