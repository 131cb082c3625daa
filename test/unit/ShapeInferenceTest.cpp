// Shape inference and the verifier through the C++ API: the dim and
// broadcasting helpers, inference functions called directly, and the
// verifier errors that text cannot produce (the parser rejects those graphs
// first) but the Graph API can.
#include "ir/ShapeInference.h"

#include "ir/Builder.h"
#include "ir/Graph.h"
#include "ir/Verifier.h"

#include <gtest/gtest.h>
#include <limits>

using namespace fusec;

namespace {

Dim n(int64_t size) { return Dim::fixed(size); }
Dim sym(const char *name) { return Dim::named(name); }
Dim any() { return Dim::anonymous(); }

// "f32[2,batch,?]{nchw}" -> a TensorType (well-formed input only).
TensorType ty(std::string_view text) {
  TensorType t;
  size_t open = text.find('['), close = text.find(']');
  t.dtype = *parseDType(text.substr(0, open));
  std::string_view dims = text.substr(open + 1, close - open - 1);
  while (!dims.empty()) {
    std::string_view d = dims.substr(0, dims.find(','));
    dims.remove_prefix(std::min(dims.size(), d.size() + 1));
    if (d == "?")
      t.shape.push_back(any());
    else if (d.front() == '-' || isdigit(d.front()))
      t.shape.push_back(n(std::stoll(std::string(d))));
    else
      t.shape.push_back(sym(std::string(d).c_str()));
  }
  if (close + 1 < text.size())
    t.layout = *parseLayout(text.substr(close + 2, text.size() - close - 3));
  return t;
}

// Runs inference; returns the result type's text, or "error: <messages>".
std::string infer(OpKind kind, std::vector<std::string_view> operands, AttrList attrs = {}) {
  std::vector<TensorType> types, results;
  for (std::string_view o : operands)
    types.push_back(ty(o));
  Diagnostics diags;
  if (inferResultTypes(kind, types, attrs, Loc{}, diags, results))
    return results.at(0).str();
  std::string out = "error:";
  for (const Diagnostic &d : diags.all())
    out += " " + d.message;
  return out;
}

std::vector<std::string> messages(const Diagnostics &diags) {
  std::vector<std::string> out;
  for (const Diagnostic &d : diags.all())
    out.push_back(d.message);
  return out;
}

TEST(DimsAgree, FollowsTheCompatibilityRule) {
  EXPECT_TRUE(dimsAgree(n(4), n(4)));
  EXPECT_FALSE(dimsAgree(n(4), n(5)));
  EXPECT_TRUE(dimsAgree(sym("b"), sym("b")));
  EXPECT_FALSE(dimsAgree(sym("b"), sym("s")));
  EXPECT_FALSE(dimsAgree(sym("b"), n(4)));
  EXPECT_TRUE(dimsAgree(any(), n(4)));
  EXPECT_TRUE(dimsAgree(sym("b"), any()));
  EXPECT_TRUE(dimsAgree(any(), any()));
  EXPECT_FALSE(dimsAgree(n(1), n(4))); // broadcasting, not agreement, lets 1 through
}

TEST(BroadcastShapes, AlignsRightAndKeepsTheMorePreciseDim) {
  auto bc = [](Shape a, Shape b) {
    std::optional<Shape> s = broadcastShapes(a, b);
    return s ? shapeStr(*s) : "none";
  };
  EXPECT_EQ(bc({n(2), n(1), n(4)}, {n(3), n(1)}), "[2,3,4]");
  EXPECT_EQ(bc({}, {n(3)}), "[3]");
  EXPECT_EQ(bc({n(4)}, {n(5)}), "none");
  EXPECT_EQ(bc({sym("b"), n(1)}, {n(1), n(8)}), "[b,8]");
  EXPECT_EQ(bc({sym("b")}, {sym("s")}), "none");
  EXPECT_EQ(bc({sym("b")}, {n(4)}), "none");
  EXPECT_EQ(bc({any(), n(8)}, {n(3), any()}), "[3,8]");
  EXPECT_EQ(bc({any()}, {sym("b")}), "[b]");
  EXPECT_EQ(bc({n(1)}, {any()}), "[?]");
  EXPECT_EQ(bc({n(1)}, {n(1)}), "[1]");
  EXPECT_EQ(bc({sym("b")}, {n(1)}), "[b]");
}

TEST(Infer, Pointwise) {
  EXPECT_EQ(infer(OpKind::Add, {"f32[batch,1]", "f32[8]"}), "f32[batch,8]");
  EXPECT_EQ(infer(OpKind::Add, {"f32[1,3,4,4]{nhwc}", "f32[4]"}), "f32[1,3,4,4]{nhwc}");
  EXPECT_EQ(infer(OpKind::Add, {"f32[4]", "f32[5]"}),
            "error: 'add' operand shapes f32[4] and f32[5] do not broadcast");
  EXPECT_EQ(infer(OpKind::Mul, {"f32[4]", "i32[4]"}),
            "error: 'mul' operands must have one dtype, got f32[4] and i32[4]");
  EXPECT_EQ(infer(OpKind::Sub, {"bool[4]", "bool[4]"}),
            "error: 'sub' needs numeric operands, got bool[4] and bool[4]");
  EXPECT_EQ(infer(OpKind::Exp, {"i32[4]"}), "error: 'exp' needs a float operand, got i32[4]");
  EXPECT_EQ(infer(OpKind::Lt, {"i32[?]", "i32[3]"}), "bool[3]");
  EXPECT_EQ(infer(OpKind::Where, {"bool[2,1]", "f16[3]", "f16[1]"}), "f16[2,3]");
  EXPECT_EQ(infer(OpKind::Cast, {"f32[2,2,2,2]{nchw}"}, {{"to", DType::BF16}}),
            "bf16[2,2,2,2]{nchw}");
  EXPECT_EQ(infer(OpKind::Add, {"f32[1,2,3,4]{nchw}", "f32[1,2,3,4]{nhwc}"}),
            "error: 'add' operand layout tags differ: f32[1,2,3,4]{nchw} and f32[1,2,3,4]{nhwc}");
  // The tag is dropped when broadcasting raises the rank.
  EXPECT_EQ(infer(OpKind::Add, {"f32[1,2,3,4]{nchw}", "f32[5,1,1,1,1]"}), "f32[5,1,2,3,4]");
}

TEST(Infer, ReductionsAndNormalizations) {
  AttrList axes{{"axes", std::vector<int64_t>{-1, 0}}, {"keepdims", true}};
  EXPECT_EQ(infer(OpKind::ReduceSum, {"f32[2,3,4]"}, axes), "f32[1,3,1]");
  EXPECT_EQ(infer(OpKind::ReduceMax, {"f32[2,3]"}), "f32[]");
  EXPECT_EQ(infer(OpKind::ReduceMin, {"i32[2,3]"}, {{"axes", std::vector<int64_t>{1, -1}}}),
            "error: 'reduce_min' axes [1, -1] repeat axis 1 of i32[2,3]");
  EXPECT_EQ(infer(OpKind::ReduceProd, {"i64[b,3,4]"}, axes), "i64[1,3,1]");
  EXPECT_EQ(infer(OpKind::ReduceProd, {"bool[2]"}),
            "error: 'reduce_prod' needs a numeric operand, got bool[2]");
  EXPECT_EQ(infer(OpKind::LayerNorm, {"f16[b,4,8]", "f16[4,8]", "f16[4,8]"}, {{"axis", 1}}),
            "f16[b,4,8]");
  EXPECT_EQ(infer(OpKind::RmsNorm, {"f32[2,8]", "f32[4]"}),
            "error: 'rms_norm' gamma f32[4] does not match the normalized dims [8] of f32[2,8]");
  EXPECT_EQ(
      infer(OpKind::BatchNorm, {"f32[1,4,4,3]{nhwc}", "f32[3]", "f32[3]", "f32[3]", "f32[3]"}),
      "f32[1,4,4,3]{nhwc}");
}

TEST(Infer, Contractions) {
  EXPECT_EQ(infer(OpKind::MatMul, {"f32[2,3]", "f32[4,5]"}),
            "error: 'matmul' inner dims of f32[2,3] and f32[4,5] differ (3 vs 4)");
  EXPECT_EQ(infer(OpKind::MatMul, {"f32[b,1,3,2]", "f32[7,4,3]"}, {{"transpose_a", true}}),
            "error: 'matmul' inner dims of f32[b,1,3,2] and f32[7,4,3] differ (3 vs 4)");
  EXPECT_EQ(infer(OpKind::MatMul, {"f32[b,1,2,3]", "f32[7,3,4]"}), "f32[b,7,2,4]");
  EXPECT_EQ(infer(OpKind::MatMul, {"f32[2,3]", "f32[5,3]"}, {{"transpose_b", true}}), "f32[2,5]");
  EXPECT_EQ(infer(OpKind::Linear, {"f32[b,s,16]", "f32[32,16]", "f32[32]"}), "f32[b,s,32]");
  EXPECT_EQ(infer(OpKind::Attention, {"f32[2,h,5,8]", "f32[2,h,7,8]", "f32[2,h,7,4]", "f32[5,7]"}),
            "f32[2,h,5,4]");
}

TEST(Infer, Movement) {
  auto reshape = [](std::string_view x, Shape s) {
    return infer(OpKind::Reshape, {x}, {{"shape", std::move(s)}});
  };
  EXPECT_EQ(reshape("f32[2,3,4]", {n(-1), n(4)}), "f32[6,4]");
  // b*4 is no single dim, so the -1 becomes `?`.
  EXPECT_EQ(reshape("f32[b,s,8]", {sym("s"), n(-1), n(2)}), "f32[s,?,2]");
  EXPECT_EQ(reshape("f32[b,8]", {sym("b"), n(2), n(-1)}), "f32[b,2,4]");
  EXPECT_EQ(reshape("f32[b,8]", {n(8), n(-1)}), "f32[8,b]");
  EXPECT_EQ(reshape("f32[?,8]", {n(4), n(5)}), "f32[4,5]"); // `?`: checked at run time
  EXPECT_EQ(reshape("f32[2,3]", {n(4), n(2)}),
            "error: 'reshape' element counts of f32[2,3] and [4,2] differ");
  EXPECT_EQ(reshape("f32[b,3]", {n(3), sym("s")}),
            "error: 'reshape' element counts of f32[b,3] and [3,s] differ");
  // A transpose between the two layouts carries the tag; any other drops it.
  EXPECT_EQ(infer(OpKind::Transpose, {"f32[1,2,3,4]{nchw}"},
                  {{"perm", std::vector<int64_t>{0, 2, 3, 1}}}),
            "f32[1,3,4,2]{nhwc}");
  EXPECT_EQ(infer(OpKind::Transpose, {"f32[1,2,3,4]{nchw}"},
                  {{"perm", std::vector<int64_t>{0, 3, 2, 1}}}),
            "f32[1,4,3,2]");
  int64_t end = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(infer(OpKind::Slice, {"f32[10,b]"}, {{"axis", 0}, {"start", -3}, {"end", end}}),
            "f32[3,b]");
  EXPECT_EQ(infer(OpKind::Slice, {"f32[10,b]"}, {{"axis", 1}, {"start", 0}, {"end", end}}),
            "f32[10,b]");
  EXPECT_EQ(infer(OpKind::Slice, {"f32[10]"}, {{"axis", 0}, {"start", 1}, {"end", 8}, {"step", 3}}),
            "f32[3]");
  EXPECT_EQ(infer(OpKind::Concat, {"f32[?,3]", "f32[2,5]"}, {{"axis", -1}}), "f32[2,8]");
  EXPECT_EQ(infer(OpKind::Broadcast, {"f32[3,1]"}, {{"shape", Shape{sym("b"), n(3), n(4)}}}),
            "f32[b,3,4]");
  // cumsum keeps the shape and dtype, drops the tag.
  EXPECT_EQ(infer(OpKind::CumSum, {"i8[1,2,3,b]{nhwc}"}, {{"axis", -1}}), "i8[1,2,3,b]");
  EXPECT_EQ(infer(OpKind::CumSum, {"bool[3]"}, {{"axis", 0}}),
            "error: 'cumsum' needs a numeric operand, got bool[3]");
  // top_k: i64, the axis's dim replaced by k, untagged.
  EXPECT_EQ(infer(OpKind::TopK, {"f16[1,2,3,b]{nhwc}"}, {{"k", 2}, {"axis", 2}}), "i64[1,2,2,b]");
  EXPECT_EQ(infer(OpKind::TopK, {"i8[n,?]"}, {{"k", 9}}), "i64[n,9]");
  EXPECT_EQ(infer(OpKind::TopK, {"f32[4,3]"}, {{"k", 4}}),
            "error: 'top_k' k 4 is larger than axis 1 of f32[4,3]");
  EXPECT_EQ(infer(OpKind::TopK, {"f32[4,3]"}, {{"k", -1}}),
            "error: 'top_k' k must be at least 1, got -1");
  // gather: data.shape[:axis] + indices.shape + data.shape[axis+1:], untagged.
  EXPECT_EQ(infer(OpKind::Gather, {"f16[1,2,3,4]{nchw}", "i64[b,5]"}, {{"axis", -2}}),
            "f16[1,2,b,5,4]");
  EXPECT_EQ(infer(OpKind::Gather, {"bool[n,3]", "i32[]"}), "bool[3]");
  EXPECT_EQ(infer(OpKind::Gather, {"f32[0,3]", "i32[?]"}), "f32[?,3]");
  EXPECT_EQ(infer(OpKind::Gather, {"f32[0,3]", "i32[0,2]"}), "f32[0,2,3]");
  EXPECT_EQ(infer(OpKind::Gather, {"f32[0,3]", "i32[2]"}),
            "error: 'gather' indices i32[2] index axis 0 of f32[0,3], which is empty");
  EXPECT_EQ(infer(OpKind::Gather, {"f32[4]", "bool[2]"}),
            "error: 'gather' indices must be i32 or i64, got bool[2]");
  // gather_elements: the indices' shape, the data's dtype, untagged.
  EXPECT_EQ(infer(OpKind::GatherElements, {"f16[1,2,3,4]{nchw}", "i64[1,2,b,3]"}, {{"axis", 2}}),
            "f16[1,2,b,3]");
  EXPECT_EQ(infer(OpKind::GatherElements, {"f32[n,3]", "i32[?,9]"}, {{"axis", -1}}), "f32[?,9]");
  EXPECT_EQ(infer(OpKind::GatherElements, {"f32[2,3]", "i32[3,1]"}, {{"axis", 1}}),
            "error: 'gather_elements' indices i32[3,1] are longer than data f32[2,3] along axis 0");
  EXPECT_EQ(infer(OpKind::GatherElements, {"f32[2,3]", "i32[2]"}),
            "error: 'gather_elements' indices i32[2] must have the rank of data f32[2,3]");
  EXPECT_EQ(infer(OpKind::GatherElements, {"f32[2,3]", "f16[2,3]"}),
            "error: 'gather_elements' indices must be i32 or i64, got f16[2,3]");
}

TEST(Infer, Windowed) {
  EXPECT_EQ(
      infer(OpKind::Conv2d, {"f32[1,3,8,8]", "f32[16,3,3,3]"},
            {{"strides", std::vector<int64_t>{2, 2}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}}),
      "f32[1,16,4,4]");
  EXPECT_EQ(infer(OpKind::Conv2d, {"f32[n,8,8,4]{nhwc}", "f32[6,3,3,2]"}, {{"groups", 2}}),
            "f32[n,6,6,6]{nhwc}");
  EXPECT_EQ(infer(OpKind::MaxPool2d, {"f32[1,3,h,9]"}, {{"kernel", std::vector<int64_t>{2, 2}}}),
            "f32[1,3,?,4]");
  EXPECT_EQ(infer(OpKind::AvgPool2d, {"f32[1,3,2,2]"}, {{"kernel", std::vector<int64_t>{3, 3}}}),
            "error: 'avg_pool2d' output height 0 is not positive for input f32[1,3,2,2] and "
            "kernel [3, 3]");
}

TEST(Infer, ChecksOperandCountTypesAndAttributes) {
  EXPECT_EQ(infer(OpKind::Add, {"f32[4]"}), "error: 'add' takes 2 operands, got 1");
  EXPECT_EQ(infer(OpKind::Neg, {"f32[-1]"}),
            "error: 'neg' operand type f32[-1] has a negative dim");
  EXPECT_EQ(infer(OpKind::Transpose, {"f32[4]"}),
            "error: 'transpose' is missing required attribute 'perm'");
  EXPECT_EQ(infer(OpKind::Softmax, {"f32[4]"}, {{"axis", 0}, {"axis", 0}}),
            "error: 'softmax' attribute 'axis' is given twice");
  EXPECT_EQ(infer(OpKind::Neg, {"f32[4]"}, {{"axis", 0}}),
            "error: 'neg' takes no attributes, got 'axis'");
  // An int literal coerces to a float attribute.
  EXPECT_EQ(infer(OpKind::LayerNorm, {"f32[4]"}, {{"epsilon", 1}}), "f32[4]");
}

DenseRef dense(DType dtype, std::vector<int64_t> shape, size_t bytes) {
  return std::make_shared<DenseData>(
      DenseData{dtype, std::move(shape), std::vector<uint8_t>(bytes)});
}

TEST(Infer, ConstChecksItsData) {
  auto constant = [](DenseRef d) { return infer(OpKind::Const, {}, {{"value", std::move(d)}}); };
  EXPECT_EQ(constant(dense(DType::F16, {2, 3}, 12)), "f16[2,3]");
  EXPECT_EQ(constant(dense(DType::F32, {4}, 12)),
            "error: 'const' value holds 12 bytes, expected 16 for f32[4]");
  EXPECT_EQ(constant(dense(DType::F32, {-1}, 0)),
            "error: 'const' value shape [-1] has a negative dim");
  EXPECT_EQ(constant(dense(DType::F32, {int64_t(1) << 62, 4}, 0)),
            "error: 'const' value shape [4611686018427387904, 4] has too many elements");
  EXPECT_EQ(constant(nullptr), "error: 'const' value has no data");
}

//===--- The verifier on graphs the API builds ------------------------------===//

struct VerifierTest : ::testing::Test {
  Graph g{"f"};
  Diagnostics diags;
  Value *x = g.addInput("x", ty("f32[4]"));

  Op *op(OpKind kind, std::vector<Value *> operands, std::string_view type, AttrList attrs = {}) {
    return g.createOp(kind, operands, {ty(type)}, std::move(attrs), Loc::text("t.fir", 7, 8));
  }
};

TEST_F(VerifierTest, AcceptsAWellFormedGraph) {
  g.setOutputs({op(OpKind::Add, {x, x}, "f32[4]")->result()});
  EXPECT_TRUE(verify(g, diags));
  EXPECT_TRUE(diags.all().empty());
}

TEST_F(VerifierTest, ReportsEveryErrorAtItsOp) {
  Op *a = op(OpKind::Add, {x, x, x}, "f32[4]");
  Op *b = op(OpKind::Neg, {x}, "f32[5]");
  Op *c = op(OpKind::Exp, {x}, "f32[4]", {{"bogus", 1}});
  g.setOutputs({a->result(), b->result(), c->result()});
  EXPECT_FALSE(verify(g, diags));
  EXPECT_EQ(messages(diags),
            (std::vector<std::string>{"'add' takes 2 operands, got 3",
                                      "'neg' result type f32[5] does not match inferred f32[4]",
                                      "'exp' takes no attributes, got 'bogus'"}));
  EXPECT_EQ(diags.all()[1].loc.str(), "t.fir:7:8");
}

TEST_F(VerifierTest, OperandsMustBeDefinedEarlierInTheSameGraph) {
  Op *first = op(OpKind::Neg, {x}, "f32[4]");
  Op *second = op(OpKind::Exp, {first->result()}, "f32[4]");
  g.moveBefore(second, first);
  Graph other("other");
  Value *y = other.addInput("y", ty("f32[4]"));
  Op *third = op(OpKind::Add, {x, y}, "f32[4]");
  g.setOutputs({third->result()});
  EXPECT_FALSE(verify(g, diags));
  EXPECT_EQ(messages(diags),
            (std::vector<std::string>{"'exp' operand 0 (%0) is used before it is defined",
                                      "'add' operand 1 (%y) is defined in another graph"}));
}

TEST_F(VerifierTest, ChecksTypesNamesAndResultCounts) {
  g.addInput("t", ty("f32[2,3]{nchw}"));
  Op *a = op(OpKind::Neg, {x}, "f32[-4]");
  a->result()->setName("x");
  Op *b = g.createOp(OpKind::Neg, {x}, {ty("f32[4]"), ty("f32[4]")}, {}, Loc{});
  g.setOutputs({a->result(), b->result()});
  EXPECT_FALSE(verify(g, diags));
  EXPECT_EQ(messages(diags), (std::vector<std::string>{
                                 "input %t type f32[2,3]{nchw} has a layout tag but is not "
                                 "rank 4",
                                 "'neg' result %x type f32[-4] has a negative dim",
                                 "value %x is defined twice", "'neg' has 2 results, expected 1"}));
}

TEST_F(VerifierTest, InvalidOperandTypesAreReportedOnceAndNotInferredFrom) {
  // The tag says channels are dim 3, which a rank-2 type does not have.
  Value *t = g.addInput("t", ty("f32[2,3]{nhwc}"));
  Value *neg = g.addInput("n", ty("f32[-5]"));
  Value *p = g.addInput("p", ty("f32[3]"));
  Op *bn = op(OpKind::BatchNorm, {t, p, p, p, p}, "f32[2,3]");
  Op *s = op(OpKind::Slice, {neg}, "f32[1]", {{"axis", 0}, {"start", -2}, {"end", 9}});
  g.setOutputs({bn->result(), s->result()});
  EXPECT_FALSE(verify(g, diags));
  EXPECT_EQ(messages(diags),
            (std::vector<std::string>{"input %t type f32[2,3]{nhwc} has a layout tag but is not "
                                      "rank 4",
                                      "input %n type f32[-5] has a negative dim"}));
}

TEST_F(VerifierTest, ChecksOutputs) {
  Graph other("other");
  g.setOutputs({other.addInput("y", ty("f32[4]"))});
  EXPECT_FALSE(verify(g, diags));
  EXPECT_FALSE(verify(other, diags));
  EXPECT_EQ(messages(diags),
            (std::vector<std::string>{"graph @f output 0 (%y) is not defined in this graph",
                                      "graph @other has no outputs"}));
}

TEST(ModuleVerifier, ChecksGraphNamesAndEmptiness) {
  Diagnostics diags;
  Module m;
  EXPECT_FALSE(verify(m, diags));
  for (int i = 0; i < 2; ++i) {
    auto g = std::make_unique<Graph>("f");
    g->setLoc(Loc::text("t.fir", 3 + i, 1));
    g->setOutputs({g->addInput("x", ty("f32[]"))});
    m.graphs.push_back(std::move(g));
  }
  EXPECT_FALSE(verify(m, diags));
  EXPECT_EQ(messages(diags),
            (std::vector<std::string>{"module has no graphs", "graph @f is defined twice"}));
  EXPECT_EQ(diags.all()[1].loc.str(), "t.fir:4:1");
}

TEST_F(VerifierTest, ConstMayCarryALayoutTagButMustMatchItsData) {
  Op *c =
      op(OpKind::Const, {}, "f32[1,1,1,2]{nhwc}", {{"value", dense(DType::F32, {1, 1, 1, 2}, 8)}});
  Op *d = op(OpKind::Const, {}, "f32[3]", {{"value", dense(DType::F32, {2}, 8)}});
  g.setOutputs({c->result(), d->result()});
  EXPECT_FALSE(verify(g, diags));
  EXPECT_EQ(messages(diags), (std::vector<std::string>{
                                 "'const' result type f32[3] does not match inferred f32[2]"}));
}

} // namespace
