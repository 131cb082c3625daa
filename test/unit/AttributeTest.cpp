// Attributes and types: coercion, equality, spellings, axis normalization.
#include "ir/Attribute.h"

#include "ir/OpTable.h"
#include "ir/Types.h"

#include <cmath>
#include <gtest/gtest.h>

using namespace fusec;

TEST(Attribute, CoercesIntToFloatAndIntsToShape) {
  Attribute a(int64_t(3));
  EXPECT_TRUE(a.coerceTo(AttrKind::Float));
  EXPECT_EQ(a.get<double>(), 3.0);
  Attribute s(std::vector<int64_t>{2, 3});
  EXPECT_TRUE(s.coerceTo(AttrKind::Shape));
  EXPECT_EQ(s.get<Shape>(), staticShape({2, 3}));
  Attribute str("x");
  EXPECT_FALSE(str.coerceTo(AttrKind::Int));
  Attribute sym(Shape{Dim::named("b")});
  EXPECT_FALSE(sym.coerceTo(AttrKind::Ints));
}

TEST(Attribute, FloatEqualityIsBitwise) {
  EXPECT_EQ(Attribute(std::nan("")), Attribute(std::nan("")));
  EXPECT_NE(Attribute(0.0), Attribute(-0.0));
  EXPECT_NE(Attribute(int64_t(1)), Attribute(1.0));
}

TEST(Attribute, DenseComparesByContent) {
  auto a = std::make_shared<DenseData>(DenseData{DType::I8, {2}, {1, 2}});
  auto b = std::make_shared<DenseData>(DenseData{DType::I8, {2}, {1, 2}});
  auto c = std::make_shared<DenseData>(DenseData{DType::I8, {2}, {1, 3}});
  EXPECT_EQ(Attribute(DenseRef(a)), Attribute(DenseRef(b)));
  EXPECT_NE(Attribute(DenseRef(a)), Attribute(DenseRef(c)));
  EXPECT_EQ(a->elementAsDouble(1), 2.0);
}

// Note [Splat constants]: one element held for all; read through the same
// accessors as full data, equal to full data with the same elements.
TEST(Attribute, SplatHoldsOneElement) {
  DenseData s = DenseData::makeSplat(DType::I8, {3, 1000000000}, {7});
  EXPECT_TRUE(s.isSplatForm());
  EXPECT_TRUE(s.isSplat());
  EXPECT_EQ(s.storedBytes().size(), 1u);
  EXPECT_EQ(s.numElements(), size_t(3000000000));
  EXPECT_EQ(s.numStoredElements(), 1u);
  EXPECT_EQ(s.elementAsDouble(2999999999), 7.0);
  EXPECT_EQ(*s.element(5), 7);

  DenseData small = DenseData::makeSplat(DType::I8, {3}, {7});
  DenseData full(DType::I8, {3}, {7, 7, 7});
  DenseData other(DType::I8, {3}, {7, 7, 8});
  EXPECT_FALSE(full.isSplatForm());
  EXPECT_TRUE(full.isSplat());
  EXPECT_FALSE(other.isSplat());
  EXPECT_EQ(small.expandedBytes(), full.storedBytes());
  EXPECT_EQ(small, full);
  EXPECT_EQ(full, small);
  EXPECT_NE(small, other);
  EXPECT_NE(small, DenseData::makeSplat(DType::I8, {3}, {8}));
  EXPECT_NE(small, DenseData::makeSplat(DType::I8, {1, 3}, {7}));

  // No elements: the full form, so that a splat always has one.
  DenseData empty = DenseData::makeSplat(DType::F32, {0, 5}, {0, 0, 128, 63});
  EXPECT_FALSE(empty.isSplatForm());
  EXPECT_EQ(empty.numElements(), 0u);
  EXPECT_TRUE(empty.storedBytes().empty());
}

TEST(Types, SpellingsRoundTrip) {
  for (DType t : kAllDTypes)
    EXPECT_EQ(parseDType(dtypeName(t)), t);
  EXPECT_FALSE(parseDType("f17"));
  EXPECT_EQ(parseLayout("nhwc"), Layout::NHWC);
  TensorType t{DType::BF16, {Dim::named("batch"), Dim::anonymous(), Dim::fixed(4)}, Layout::None};
  EXPECT_EQ(t.str(), "bf16[batch,?,4]");
  TensorType img{DType::F32, staticShape({1, 3, 8, 8}), Layout::NCHW};
  EXPECT_EQ(img.str(), "f32[1,3,8,8]{nchw}");
  EXPECT_EQ(TensorType{}.str(), "f32[]");
}

TEST(Types, NumElementsRefusesOverflowAndSymbols) {
  EXPECT_EQ(staticNumElements(staticShape({2, 3, 4})), 24);
  EXPECT_EQ(staticNumElements({}), 1);
  EXPECT_FALSE(staticNumElements(staticShape({int64_t(1) << 40, int64_t(1) << 40})));
  EXPECT_FALSE(staticNumElements({Dim::named("n")}));
}

TEST(Types, NormalizeAxis) {
  EXPECT_EQ(normalizeAxis(-1, 3), 2u);
  EXPECT_EQ(normalizeAxis(0, 3), 0u);
  EXPECT_FALSE(normalizeAxis(3, 3));
  EXPECT_FALSE(normalizeAxis(-4, 3));
}

TEST(OpTable, EveryRowIsConsistent) {
  for (const OpInfo &info : allOps()) {
    EXPECT_EQ(lookupOp(info.spelling), info.kind) << info.spelling;
    EXPECT_TRUE(info.maxOperands == -1 || info.maxOperands >= info.minOperands) << info.spelling;
    for (const AttrSpec &spec : info.attrs) {
      if (!spec.deflt)
        continue;
      // A default must have the declared kind.
      EXPECT_EQ(spec.deflt->kind(), spec.kind) << info.spelling << "." << spec.name;
    }
  }
  EXPECT_FALSE(lookupOp("nonexistent"));
}
