// The C++ builder: creates ops with inferred result types at an insertion
// point. A bad combination of operands is a user error: it is reported to the
// builder's Diagnostics and the call returns null.
//
//   Graph g("mlp");
//   Diagnostics diags;
//   Builder b(g, diags);
//   Value *x = g.addInput("x", {DType::F32, {Dim::named("batch"), Dim::fixed(784)}});
//   Value *h = b.gelu(b.matmul(x, w));
//   g.setOutputs({h});
#pragma once

#include "ir/Graph.h"

namespace fusec {

class Builder {
public:
  Builder(Graph &g, Diagnostics &diags) : graph(g), diags(diags) {}

  /// New ops go before `op` (null: at the end of the graph).
  void setInsertionPoint(Op *op) { before = op; }
  void setLoc(Loc l) { loc = std::move(l); }

  /// Creates an op, inferring its result types. Null on error (reported), or
  /// if any operand is null (an earlier error, already reported).
  Op *createOp(OpKind kind, const std::vector<Value *> &operands, AttrList attrs = {});
  /// createOp for single-result ops: the result, or null.
  Value *create(OpKind kind, const std::vector<Value *> &operands, AttrList attrs = {});

  Value *constant(DenseRef data);
  Value *constant(DType dtype, const std::vector<int64_t> &shape, const std::vector<double> &values);
  Value *scalar(DType dtype, double v) { return constant(dtype, {}, {v}); }
  /// A constant of `shape` whose every element is v, held as one element.
  Value *splat(DType dtype, const std::vector<int64_t> &shape, double v);

#define FUSEC_BUILDER_UNARY(Id, fn)                                                                \
  Value *fn(Value *x, AttrList attrs = {}) { return create(OpKind::Id, {x}, std::move(attrs)); }
#define FUSEC_BUILDER_BINARY(Id, fn)                                                               \
  Value *fn(Value *a, Value *b) { return create(OpKind::Id, {a, b}); }
  FUSEC_BUILDER_UNARY(Neg, neg)
  FUSEC_BUILDER_UNARY(Exp, exp)
  FUSEC_BUILDER_UNARY(Sqrt, sqrt)
  FUSEC_BUILDER_UNARY(Rsqrt, rsqrt)
  FUSEC_BUILDER_UNARY(Tanh, tanh)
  FUSEC_BUILDER_UNARY(Relu, relu)
  FUSEC_BUILDER_UNARY(Gelu, gelu)
  FUSEC_BUILDER_UNARY(Silu, silu)
  FUSEC_BUILDER_UNARY(Softmax, softmax)
  FUSEC_BUILDER_BINARY(Add, add)
  FUSEC_BUILDER_BINARY(Sub, sub)
  FUSEC_BUILDER_BINARY(Mul, mul)
  FUSEC_BUILDER_BINARY(Div, div)
  FUSEC_BUILDER_BINARY(Max, max)
  FUSEC_BUILDER_BINARY(Min, min)
#undef FUSEC_BUILDER_UNARY
#undef FUSEC_BUILDER_BINARY

  Value *cast(Value *x, DType to) { return create(OpKind::Cast, {x}, {{"to", to}}); }
  Value *matmul(Value *a, Value *b, bool transposeA = false, bool transposeB = false);
  Value *reshape(Value *x, Shape shape) { return create(OpKind::Reshape, {x}, {{"shape", shape}}); }
  Value *transpose(Value *x, std::vector<int64_t> perm) {
    return create(OpKind::Transpose, {x}, {{"perm", std::move(perm)}});
  }

private:
  Graph &graph;
  Diagnostics &diags;
  Op *before = nullptr;
  Loc loc;
};

} // namespace fusec
