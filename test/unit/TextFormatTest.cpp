// The parts of the text format that fusec-opt cannot reach: attribute
// literals and signatures (Ops.def), string escapes, attribute order and
// dense forms of graphs built through the C++ API. Text in, text out is
// tested by lit (test/lit/parse, test/lit/roundtrip).
#include "ir/TextFormat.h"

#include "ir/Builder.h"

#include <cmath>
#include <cstring>
#include <gtest/gtest.h>

using namespace fusec;

TEST(AttributeLiteral, ParsesEveryKind) {
  EXPECT_EQ(parseAttributeLiteral("-3"), Attribute(int64_t(-3)));
  EXPECT_EQ(parseAttributeLiteral("1e-05"), Attribute(1e-05));
  EXPECT_EQ(parseAttributeLiteral("-inf"), Attribute(-INFINITY));
  EXPECT_TRUE(std::isnan(parseAttributeLiteral("nan")->get<double>()));
  EXPECT_EQ(parseAttributeLiteral("\"tanh\""), Attribute("tanh"));
  EXPECT_EQ(parseAttributeLiteral("false"), Attribute(false));
  EXPECT_EQ(parseAttributeLiteral("bf16"), Attribute(DType::BF16));
  EXPECT_EQ(parseAttributeLiteral("[]"), Attribute(std::vector<int64_t>{}));
  EXPECT_EQ(parseAttributeLiteral("[0, -2, 1]"), Attribute(std::vector<int64_t>{0, -2, 1}));
  Shape shape{Dim::named("batch"), Dim::anonymous(), Dim::fixed(64)};
  EXPECT_EQ(parseAttributeLiteral("[batch, ?, 64]"), Attribute(shape));
}

TEST(AttributeLiteral, RejectsMalformedAndOutOfRange) {
  for (const char *bad : {"", "dense<1.0>", "1 2", "[1, 2", "[[1]]", "tanh", "9223372036854775808",
                          "1e400", "-nan", "\"open", "[1.5]", "1.2.3"})
    EXPECT_FALSE(parseAttributeLiteral(bad)) << bad;
  EXPECT_EQ(parseAttributeLiteral("-9223372036854775808"), Attribute(INT64_MIN));
}

TEST(AttributeSignature, ParsesOpsDefStrings) {
  std::vector<AttrSpec> specs = parseAttrSignature("axes: ints = [], keepdims: bool = false");
  ASSERT_EQ(specs.size(), 2u);
  EXPECT_EQ(specs[0].name, "axes");
  EXPECT_EQ(specs[0].kind, AttrKind::Ints);
  EXPECT_TRUE(specs[0].optional);
  EXPECT_EQ(specs[0].deflt, Attribute(std::vector<int64_t>{}));
  EXPECT_EQ(specs[1].deflt, Attribute(false));

  specs = parseAttrSignature("?scale: float, shape: shape, epsilon: float = 1");
  ASSERT_EQ(specs.size(), 3u);
  EXPECT_TRUE(specs[0].optional);
  EXPECT_FALSE(specs[0].deflt);
  EXPECT_FALSE(specs[1].optional);           // required
  EXPECT_EQ(specs[2].deflt, Attribute(1.0)); // coerced to the declared kind
  EXPECT_TRUE(parseAttrSignature("").empty());
}

TEST(AttributeSignature, MalformedSignatureIsABug) {
  EXPECT_DEATH(parseAttrSignature("axis int"), "malformed attribute signature");
  EXPECT_DEATH(parseAttrSignature("axis: vector"), "malformed attribute signature");
  EXPECT_DEATH(parseAttrSignature("flag: bool = 3"), "malformed attribute signature");
}

TEST(AttributePrinting, StringsEscapeAndReadBack) {
  std::string raw = "a\"b\\c\nd\te\x01\x7f";
  std::string printed = toString(Attribute(raw));
  EXPECT_EQ(printed, "\"a\\\"b\\\\c\\nd\\te\\01\\7F\"");
  EXPECT_EQ(parseAttributeLiteral(printed), Attribute(raw));
}

TEST(AttributePrinting, EveryKind) {
  EXPECT_EQ(toString(Attribute(int64_t(-7))), "-7");
  EXPECT_EQ(toString(Attribute(2.0)), "2.0");
  EXPECT_EQ(toString(Attribute(1e-05)), "1e-05");
  EXPECT_EQ(toString(Attribute(-INFINITY)), "-inf");
  EXPECT_EQ(toString(Attribute(true)), "true");
  EXPECT_EQ(toString(Attribute(DType::I8)), "i8");
  EXPECT_EQ(toString(Attribute(std::vector<int64_t>{1, -1})), "[1, -1]");
  EXPECT_EQ(toString(Attribute(Shape{Dim::named("n"), Dim::anonymous(), Dim::fixed(3)})),
            "[n, ?, 3]");
}

static DenseRef floats(const std::vector<float> &values) {
  std::vector<uint8_t> bytes(values.size() * 4);
  if (!values.empty())
    std::memcpy(bytes.data(), values.data(), bytes.size());
  return std::make_shared<DenseData>(DType::F32, std::vector<int64_t>{int64_t(values.size())},
                                     std::move(bytes));
}

static DenseRef splatOf(float value, std::vector<int64_t> shape) {
  std::vector<uint8_t> element(4);
  std::memcpy(element.data(), &value, 4);
  return std::make_shared<DenseData>(DenseData::makeSplat(DType::F32, std::move(shape), element));
}

TEST(AttributePrinting, DenseForms) {
  EXPECT_EQ(toString(Attribute(floats({2.5f, 2.5f, 2.5f}))), "dense<2.5>");
  EXPECT_EQ(toString(Attribute(floats({1.0f, 0.1f}))), "dense<[1.0, 0.1]>");
  EXPECT_EQ(toString(Attribute(floats({1.0f, NAN}))), "dense<\"0x0000803F0000C07F\">");
  EXPECT_EQ(toString(Attribute(floats({}))), "dense<[]>");
  // A NaN with a payload cannot be spelled `nan`, even when all elements agree.
  uint32_t payload = 0x7fc00001;
  float nanWithPayload;
  std::memcpy(&nanWithPayload, &payload, 4);
  EXPECT_EQ(toString(Attribute(floats({nanWithPayload}))), "dense<\"0x0100C07F\">");
  // Data held as a splat prints as one, never expanded (a gigabyte here); a
  // NaN with a payload as hex of its one element, which parses as a splat.
  EXPECT_EQ(toString(Attribute(splatOf(2.5f, {16000, 16000}))), "dense<2.5>");
  EXPECT_EQ(toString(Attribute(splatOf(nanWithPayload, {16000, 16000}))), "dense<\"0x0100C07F\">");
  EXPECT_EQ(toString(Attribute(floats({nanWithPayload, nanWithPayload}))),
            "dense<\"0x0100C07F0100C07F\">");
}

// Built through the API: attributes set out of signature order print in
// signature order, and the printed text reads back to the same text.
TEST(GraphPrinting, ApiGraphRoundTrips) {
  Graph g("api");
  Diagnostics diags;
  Builder b(g, diags);
  Value *x = g.addInput("x", {DType::F32, {Dim::named("batch"), Dim::fixed(8)}});
  Value *c = b.constant(DType::F32, {8}, {0, 1, 2, 3, 4, 5, 6, 7});
  Op *ln = b.createOp(OpKind::LayerNorm, {b.add(x, c)}, {{"epsilon", 0.5}, {"axis", int64_t(1)}});
  ASSERT_TRUE(ln) << diags.errorCount();
  g.setOutputs({ln->result()});
  std::string text = toString(g);
  EXPECT_NE(text.find("layer_norm(%" + ln->operand(0)->name() + ") {axis = 1, epsilon = 0.5}"),
            std::string::npos)
      << text;
  std::unique_ptr<Module> m = parseModule(text, "api.fir", diags);
  ASSERT_TRUE(m) << text;
  EXPECT_EQ(toString(*m->graphs[0]), text);
}
