// The local rewrites of canonicalize: algebraic identities and shape-op
// simplifications, one short function each with its formula above it, and
// the table that says which op kind each applies to.
//
// A pattern looks only at its op and the producers of its operands, never at
// users, so the driver's forward sweep meets every pattern's inputs already
// canonical. Patterns that build a new op (cast of cast, transpose and reshape
// chains) build the plain merged op and leave it to the identity patterns,
// which see it next, to remove it when it does nothing. Every rewrite is
// exact under the semantics of docs/ir.md, except for the sign of a zero
// sum (Note [Signed zero]); a candidate whose type differs from the op's
// (say a zero that broadcasts) is dropped by applyPatterns.
//
// Note [Signed zero]: x + 0 → x (and x − (−0) → x) differ from the op only
// for x = −0, where the op gives +0. Like XLA's algebraic simplifier, we take
// the sign of a zero sum as insignificant; every other identity here is
// exact, NaN and ±inf included.
#include "ir/Numerics.h"
#include "passes/Canonicalize.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace fusec::canonicalize {

namespace {

/// The op defining `v` when it is of kind `k`, else null.
const Op *producer(const Value *v, OpKind k) {
  const Op *def = v->definingOp();
  return def && def->kind() == k ? def : nullptr;
}

/// True when `v` is a constant whose elements all equal `x` (−0 equals 0).
bool isSplatConstant(const Value *v, double x) {
  const Op *c = producer(v, OpKind::Const);
  if (!c)
    return false;
  const DenseData &data = c->getDense("value");
  for (size_t i = 0; i < data.numStoredElements(); ++i)
    if (data.elementAsDouble(i) != x)
      return false;
  return true;
}

/// For op(x, e), or op(e, x) when the op commutes: x, when e is a constant
/// of identity elements and x already has the result's type (an e that
/// broadcasts x to a larger shape makes the op more than the identity).
Value *operandBesideIdentity(const Op &op, double identity, bool commutes) {
  const TensorType &type = op.result()->type();
  Value *lhs = op.operand(0), *rhs = op.operand(1);
  if (lhs->type() == type && isSplatConstant(rhs, identity))
    return lhs;
  if (commutes && rhs->type() == type && isSplatConstant(lhs, identity))
    return rhs;
  return nullptr;
}

bool isIdentityPerm(const std::vector<int64_t> &perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != int64_t(i))
      return false;
  return true;
}

/// True when a reshape of `input` to `target` has one outcome, fixed by the
/// element count: each named dim of target is one of input's (so it is bound
/// whenever input is) and at most one dim (`?` or -1) is left to infer.
bool reshapeIsDeterminate(const Shape &target, const TensorType &input) {
  unsigned inferred = 0;
  for (const Dim &d : target) {
    if (d.isAnonymous() || d.isStaticValue(-1))
      ++inferred;
    else if (!d.isStatic() &&
             std::find(input.shape.begin(), input.shape.end(), d) == input.shape.end())
      return false;
  }
  return inferred <= 1;
}

// add(x, 0) → x, add(0, x) → x   (Note [Signed zero])
Value *addZero(Rewriter &, const Op &op) { return operandBesideIdentity(op, 0.0, true); }

// sub(x, 0) → x   (Note [Signed zero])
Value *subZero(Rewriter &, const Op &op) { return operandBesideIdentity(op, 0.0, false); }

// mul(x, 1) → x, mul(1, x) → x   (never x · 0 → 0: NaN · 0 and inf · 0 are NaN)
Value *mulOne(Rewriter &, const Op &op) { return operandBesideIdentity(op, 1.0, true); }

// div(x, 1) → x
Value *divOne(Rewriter &, const Op &op) { return operandBesideIdentity(op, 1.0, false); }

// neg(neg(x)) → x   (exact for wrapping integers too)
Value *doubleNegation(Rewriter &, const Op &op) {
  const Op *inner = producer(op.operand(0), OpKind::Neg);
  return inner ? inner->operand(0) : nullptr;
}

// cast(x: T, to = T) → x
Value *castToOwnDType(Rewriter &, const Op &op) {
  Value *x = op.operand(0);
  return x->type().dtype == op.getDType("to") ? x : nullptr;
}

// cast(cast(x: T0, to = T1), to = T2) → cast(x, to = T2) when T0 → T1 is exact
// (and does not turn a wrapping integer narrowing into a saturating one)
Value *castOfExactCast(Rewriter &rw, const Op &op) {
  const Op *inner = producer(op.operand(0), OpKind::Cast);
  if (!inner ||
      !castPairFolds(inner->operand(0)->type().dtype, inner->getDType("to"), op.getDType("to")))
    return nullptr;
  return rw.create(OpKind::Cast, {inner->operand(0)}, {{"to", op.getDType("to")}});
}

// transpose(x, perm = [0, 1, ..., n-1]) → x
Value *identityTranspose(Rewriter &, const Op &op) {
  return isIdentityPerm(op.getInts("perm")) ? op.operand(0) : nullptr;
}

// transpose(transpose(x, p), q) → transpose(x, r) with r[i] = p[q[i]]
Value *transposeOfTranspose(Rewriter &rw, const Op &op) {
  const Op *inner = producer(op.operand(0), OpKind::Transpose);
  if (!inner)
    return nullptr;
  const std::vector<int64_t> &p = inner->getInts("perm");
  std::vector<int64_t> r;
  for (int64_t qi : op.getInts("perm"))
    r.push_back(p[size_t(qi)]);
  return rw.create(OpKind::Transpose, {inner->operand(0)}, {{"perm", std::move(r)}});
}

// reshape(x, shape) → x when the result type is x's and the shape is determinate
Value *identityReshape(Rewriter &, const Op &op) {
  Value *x = op.operand(0);
  if (x->type() != op.result()->type() || !reshapeIsDeterminate(op.getShape("shape"), x->type()))
    return nullptr;
  return x;
}

// reshape(reshape(x, s), t) → reshape(x, t) when t is determinate from x
Value *reshapeOfReshape(Rewriter &rw, const Op &op) {
  const Op *inner = producer(op.operand(0), OpKind::Reshape);
  if (!inner || !reshapeIsDeterminate(op.getShape("shape"), inner->operand(0)->type()))
    return nullptr;
  return rw.create(OpKind::Reshape, {inner->operand(0)}, {{"shape", op.getShape("shape")}});
}

// broadcast(x, shape) → x when the result type is x's
Value *identityBroadcast(Rewriter &, const Op &op) {
  Value *x = op.operand(0);
  return x->type() == op.result()->type() ? x : nullptr;
}

// broadcast(broadcast(x, s), t) → broadcast(x, t) for a static t (a symbolic
// dim of t may be taken from the operand at run time, which differs)
Value *broadcastOfBroadcast(Rewriter &rw, const Op &op) {
  const Op *inner = producer(op.operand(0), OpKind::Broadcast);
  if (!inner || !isStatic(op.getShape("shape")))
    return nullptr;
  return rw.create(OpKind::Broadcast, {inner->operand(0)}, {{"shape", op.getShape("shape")}});
}

// slice(x, axis, start, end, step) → x when it takes the whole axis
Value *wholeAxisSlice(Rewriter &, const Op &op) {
  Value *x = op.operand(0);
  if (x->type() != op.result()->type())
    return nullptr;
  // A static dim keeps its size only when every element is taken; `?` stays
  // `?` under any slice, so a symbolic axis needs the whole-axis form.
  const Dim &dim = x->type().shape[*normalizeAxis(op.getInt("axis"), x->type().rank())];
  bool whole = dim.isStatic() || (op.getInt("start") == 0 && op.getInt("step") == 1 &&
                                  op.getInt("end") == std::numeric_limits<int64_t>::max());
  return whole ? x : nullptr;
}

// concat(x) → x
Value *singleOperandConcat(Rewriter &, const Op &op) {
  return op.numOperands() == 1 ? op.operand(0) : nullptr;
}

// batch_norm(conv2d(x, w, b), s, β, μ, σ²) → conv2d(x, w · f, (b − μ) · f + β), f = s / √(σ² + ε)
// along the filter's output channels (axis 0 of OIHW and OHWI alike; b is 0 when absent), when
// the filter, the bias and the statistics are constants and the conv has no other use: the
// conv's epilogue loses the normalization. The new filter and bias are computed here, in double
// and rounded once to the conv's dtype (the constant folder would refuse a filter of more than
// 65536 elements, leaving the rescaling to run on every call). Looking at the conv's uses is
// this pattern's one glance past its op: folding a conv read elsewhere would compute it twice.
Value *batchNormOfConv(Rewriter &rw, const Op &op) {
  const Op *conv = producer(op.operand(0), OpKind::Conv2d);
  DType t = op.result()->type().dtype;
  if (!conv || conv->result()->uses().size() != 1 || !isFloat(t))
    return nullptr;
  // The constants' data: the filter, the conv's bias (if any), scale, shift, mean, variance.
  std::vector<const DenseData *> data;
  auto take = [&](const Value *v) {
    const Op *c = producer(v, OpKind::Const);
    if (c)
      data.push_back(&c->getDense("value"));
    return c != nullptr;
  };
  bool constant = take(conv->operand(1)) && (conv->numOperands() < 3 || take(conv->operand(2)));
  for (unsigned i = 1; constant && i < op.numOperands(); ++i)
    constant = take(op.operand(i));
  if (!constant)
    return nullptr;
  const DenseData &w = *data.front();
  const DenseData *b = conv->numOperands() > 2 ? data[1] : nullptr;
  const DenseData &scale = *data[data.size() - 4], &shift = *data[data.size() - 3];
  const DenseData &mean = *data[data.size() - 2], &var = *data.back();
  int64_t channels = w.shape[0];
  size_t perChannel = w.numElements() / size_t(channels), size = dtypeSize(t);
  std::vector<uint8_t> filter(w.numElements() * size), bias(size_t(channels) * size);
  double eps = op.getFloat("epsilon");
  for (int64_t o = 0; o < channels; ++o) {
    double f = scale.elementAsDouble(size_t(o)) / std::sqrt(var.elementAsDouble(size_t(o)) + eps);
    for (size_t i = size_t(o) * perChannel; i < size_t(o + 1) * perChannel; ++i)
      storeElement(t, w.elementAsDouble(i) * f, &filter[i * size]);
    double before = (b ? b->elementAsDouble(size_t(o)) : 0.0) - mean.elementAsDouble(size_t(o));
    storeElement(t, before * f + shift.elementAsDouble(size_t(o)), &bias[size_t(o) * size]);
  }
  Value *scaled = rw.constant(std::make_shared<DenseData>(t, w.shape, std::move(filter)));
  Value *shifted =
      rw.constant(std::make_shared<DenseData>(t, std::vector<int64_t>{channels}, std::move(bias)));
  if (!scaled || !shifted)
    return nullptr;
  return rw.create(OpKind::Conv2d, {conv->operand(0), scaled, shifted}, conv->attrs());
}

struct Rule {
  OpKind kind;
  Pattern pattern;
};

// Identities before merges: a merge builds a new op, an identity does not.
constexpr Rule kRules[] = {
    {OpKind::Add, addZero},
    {OpKind::Sub, subZero},
    {OpKind::Mul, mulOne},
    {OpKind::Div, divOne},
    {OpKind::Neg, doubleNegation},
    {OpKind::Cast, castToOwnDType},
    {OpKind::Cast, castOfExactCast},
    {OpKind::Transpose, identityTranspose},
    {OpKind::Transpose, transposeOfTranspose},
    {OpKind::Reshape, identityReshape},
    {OpKind::Reshape, reshapeOfReshape},
    {OpKind::Broadcast, identityBroadcast},
    {OpKind::Broadcast, broadcastOfBroadcast},
    {OpKind::Slice, wholeAxisSlice},
    {OpKind::Concat, singleOperandConcat},
    {OpKind::BatchNorm, batchNormOfConv},
};

} // namespace

Value *applyPatterns(Rewriter &rw, const Op &op) {
  for (const Rule &rule : kRules) {
    if (rule.kind != op.kind())
      continue;
    Value *v = rule.pattern(rw, op);
    if (v && v->type() == op.result()->type())
      return v;
    rw.discard(); // a rejected candidate leaves nothing behind
  }
  return nullptr;
}

} // namespace fusec::canonicalize
