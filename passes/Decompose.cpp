// decompose: lowers the composite ops (layer_norm, rms_norm, softmax,
// batch_norm, gelu, linear, attention) to primitive ops, exactly as
// docs/ir.md defines them.
//
// Each composite is replaced in place by one fixed primitive form, built just
// before it; the forms below are canonical: the fusion pass recognises
// exactly these (operand order included), so a change here is a change to
// its matchers too. Conventions: reductions name their axes negatively,
// counted from the end, with keepdims = true; a constant is a binary op's
// right operand and has x's dtype; every new value is named
// `<result>.<role>` (`%y.eps`), and the last one takes the composite's name.
// The arithmetic follows the reference's order, so f32 results agree within
// rounding; in f16/bf16 each primitive rounds to the dtype, which the
// reference's single rounding does not (expected, within those tolerances).
//
//   layer_norm(x, γ?, β?) {axis, epsilon}; axes = [axis−rank, …, −1]:
//     mean = reduce_mean(x){axes}  centered = sub(x, mean)  sq = mul(centered, centered)
//     var = reduce_mean(sq){axes}  var_eps = add(var, eps)  rstd = rsqrt(var_eps)
//     norm = mul(centered, rstd)  [scaled = mul(norm, γ)]  [shifted = add(·, β)]
//   rms_norm(x, γ?) {axis, epsilon}:
//     sq = mul(x, x)  mean_sq = reduce_mean(sq){axes}  ms_eps = add(mean_sq, eps)
//     rrms = rsqrt(ms_eps)  norm = mul(x, rrms)  [scaled = mul(norm, γ)]
//   softmax(x) {axis}:
//     max = reduce_max(x){[axis]}  shifted = sub(x, max)  exp = exp(shifted)
//     sum = reduce_sum(exp){[axis]}  probs = div(exp, sum)
//   batch_norm(x, scale, bias, mean, var) {epsilon}; channel axis c (3 for nhwc, else 1):
//     var_eps = add(var, eps)  std = sqrt(var_eps)  factor = div(scale, std)
//     the [C] parameters mean, factor, bias reshaped to [C,1,…,1] (rank − c dims;
//     none for nhwc): mean.bc, factor.bc, bias.bc
//     centered = sub(x, mean.bc)  scaled = mul(centered, factor.bc)  shifted = add(scaled, bias.bc)
//   gelu(x) {approximate = "none"}: 0.5·x·(1 + erf(x·(1/√2)))
//     scaled = mul(x, rsqrt2)  erf = erf(scaled)  one_plus = add(erf, one)
//     half_x = mul(x, half)  out = mul(half_x, one_plus)
//   gelu(x) {approximate = "tanh"}: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))
//     sq = mul(x, x)  cube = mul(sq, x)  cubic = mul(cube, cubic_coef)
//     inner = add(x, cubic)  scaled = mul(inner, sqrt_2_over_pi)  tanh = tanh(scaled)
//     one_plus = add(tanh, one)  half_x = mul(x, half)  out = mul(half_x, one_plus)
//   linear(x, w, b?): mm = matmul(x, w){transpose_b = true}  [biased = add(mm, b)];
//     a rank-1 x is reshaped to [1, in] first and the product back to [out].
//   attention(q, k, v, mask?) {scale?, causal}:
//     scores = matmul(q, k){transpose_b = true}  scaled = mul(scores, scale)
//     [masked = add(·, mask)]  [causal = add(·, causal_mask)], causal_mask a
//     const [Sq, Sk] of 0 (key ≤ query) and −inf; then the softmax form
//     above along −1 (max … probs); out = matmul(probs, v).
// Contractions keep the composite's `acc` attribute.
//
// Not lowered, left for the fusion pass's composite matchers: an attention
// without `scale` whose head dim D is symbolic (1/√D is no constant), and a
// causal attention whose Sq or Sk is symbolic or whose mask would exceed
// 2^22 elements, and an attention whose mask has a dtype other than q's (the
// mask is added at the accumulation precision, which no primitive add of the
// low-precision scores expresses). A form whose result type would differ from the composite's
// (possible only with `?` dims) is not built either. Kernel bodies are not
// entered: decompose runs before fusion.
#include "ir/Builder.h"
#include "passes/PassManager.h"

#include <cmath>
#include <limits>
#include <numbers>
#include <optional>

namespace fusec {

namespace {

/// Builds the primitive form of one composite just before it, remembering
/// every op it makes so that an unusable form can be taken back.
class Lowering {
public:
  Lowering(Graph &g, Op &composite)
      : graph(g), composite(composite), builder(g, scratch), prefix(composite.result()->name()) {
    builder.setInsertionPoint(&composite);
    builder.setLoc(composite.loc());
  }

  DType dtype() const { return composite.result()->type().dtype; }

  /// `kind(operands)` named `<prefix>.<role>`; null if it does not type-check.
  Value *make(OpKind kind, const std::vector<Value *> &operands, std::string_view role,
              AttrList attrs = {}) {
    return keep(builder.create(kind, operands, std::move(attrs)), role);
  }
  /// A keepdims reduction over `axes`.
  Value *reduce(OpKind kind, Value *x, std::vector<int64_t> axes, std::string_view role) {
    return make(kind, {x}, role, {{"axes", std::move(axes)}, {"keepdims", true}});
  }
  /// A scalar constant of the result's dtype.
  Value *scalar(double v, std::string_view role) { return keep(builder.scalar(dtype(), v), role); }
  Value *constant(const std::vector<int64_t> &shape, const std::vector<double> &values,
                  std::string_view role) {
    return keep(builder.constant(dtype(), shape, values), role);
  }

  /// Replaces the composite with `result` when it has the composite's type;
  /// otherwise (or for null) erases what was built and keeps the composite.
  bool replace(Value *result) {
    if (!result || result->type() != composite.result()->type()) {
      for (auto it = built.rbegin(); it != built.rend(); ++it)
        graph.erase(*it);
      return false;
    }
    std::string name = composite.result()->name();
    composite.result()->replaceAllUsesWith(result);
    graph.erase(&composite);
    result->setName(std::move(name));
    return true;
  }

private:
  Value *keep(Value *v, std::string_view role) {
    if (!v)
      return nullptr;
    built.push_back(v->definingOp());
    v->setName(graph.uniqueName(prefix + "." + std::string(role)));
    return v;
  }

  Graph &graph;
  Op &composite;
  Diagnostics scratch; // a form that does not type-check is not built: no user error
  Builder builder;
  std::string prefix;
  std::vector<Op *> built;
};

/// The negative axes axis..rank-1 of a normalization over trailing dims.
std::vector<int64_t> trailingAxes(const Op &op) {
  int64_t rank = int64_t(op.operand(0)->type().rank());
  std::vector<int64_t> axes;
  for (int64_t a = int64_t(*normalizeAxis(op.getInt("axis"), size_t(rank))); a < rank; ++a)
    axes.push_back(a - rank);
  return axes;
}

/// The composite's `acc` attribute, if any, added to `attrs`.
AttrList withAcc(const Op &op, AttrList attrs) {
  if (const Attribute *acc = op.attrIfPresent("acc"))
    attrs.push_back({"acc", *acc});
  return attrs;
}

// softmax(x) along axis → div(exp(sub(x, max)), sum(exp(sub(x, max)))), with
// max and sum keepdims reductions along the axis.
Value *softmaxForm(Lowering &l, Value *x, int64_t axis) {
  Value *max = l.reduce(OpKind::ReduceMax, x, {axis}, "max");
  Value *exp = l.make(OpKind::Exp, {l.make(OpKind::Sub, {x, max}, "shifted")}, "exp");
  Value *sum = l.reduce(OpKind::ReduceSum, exp, {axis}, "sum");
  return l.make(OpKind::Div, {exp, sum}, "probs");
}

// softmax(x) {axis} → softmaxForm(x, axis − rank).
Value *lowerSoftmax(Lowering &l, const Op &op) {
  int64_t rank = int64_t(op.operand(0)->type().rank());
  int64_t axis = int64_t(*normalizeAxis(op.getInt("axis"), size_t(rank))) - rank;
  return softmaxForm(l, op.operand(0), axis);
}

// layer_norm(x, γ, β) → (x − mean(x))·rsqrt(mean((x − mean(x))²) + ε)·γ + β.
Value *lowerLayerNorm(Lowering &l, const Op &op) {
  Value *x = op.operand(0);
  std::vector<int64_t> axes = trailingAxes(op);
  Value *mean = l.reduce(OpKind::ReduceMean, x, axes, "mean");
  Value *centered = l.make(OpKind::Sub, {x, mean}, "centered");
  Value *sq = l.make(OpKind::Mul, {centered, centered}, "sq");
  Value *var = l.reduce(OpKind::ReduceMean, sq, axes, "var");
  Value *varEps = l.make(OpKind::Add, {var, l.scalar(op.getFloat("epsilon"), "eps")}, "var_eps");
  Value *rstd = l.make(OpKind::Rsqrt, {varEps}, "rstd");
  Value *y = l.make(OpKind::Mul, {centered, rstd}, "norm");
  if (op.numOperands() > 1)
    y = l.make(OpKind::Mul, {y, op.operand(1)}, "scaled");
  if (op.numOperands() > 2)
    y = l.make(OpKind::Add, {y, op.operand(2)}, "shifted");
  return y;
}

// rms_norm(x, γ) → x·rsqrt(mean(x²) + ε)·γ.
Value *lowerRmsNorm(Lowering &l, const Op &op) {
  Value *x = op.operand(0);
  Value *sq = l.make(OpKind::Mul, {x, x}, "sq");
  Value *meanSq = l.reduce(OpKind::ReduceMean, sq, trailingAxes(op), "mean_sq");
  Value *msEps = l.make(OpKind::Add, {meanSq, l.scalar(op.getFloat("epsilon"), "eps")}, "ms_eps");
  Value *y = l.make(OpKind::Mul, {x, l.make(OpKind::Rsqrt, {msEps}, "rrms")}, "norm");
  if (op.numOperands() > 1)
    y = l.make(OpKind::Mul, {y, op.operand(1)}, "scaled");
  return y;
}

// batch_norm(x, scale, bias, mean, var) → (x − mean)·(scale/√(var + ε)) + bias,
// the [C] parameters reshaped to [C,1,…,1] to broadcast along the channel axis.
Value *lowerBatchNorm(Lowering &l, const Op &op) {
  const TensorType &x = op.operand(0)->type();
  size_t channelAxis = x.layout == Layout::NHWC ? 3 : 1;
  Value *varEps =
      l.make(OpKind::Add, {op.operand(4), l.scalar(op.getFloat("epsilon"), "eps")}, "var_eps");
  Value *stddev = l.make(OpKind::Sqrt, {varEps}, "std");
  Value *factor = l.make(OpKind::Div, {op.operand(1), stddev}, "factor");
  Shape perChannel{x.shape[channelAxis]};
  perChannel.resize(x.rank() - channelAxis, Dim::fixed(1));
  auto alongChannels = [&](Value *param, std::string_view role) {
    if (perChannel.size() == 1)
      return param;
    return l.make(OpKind::Reshape, {param}, std::string(role) + ".bc", {{"shape", perChannel}});
  };
  Value *centered =
      l.make(OpKind::Sub, {op.operand(0), alongChannels(op.operand(3), "mean")}, "centered");
  Value *scaled = l.make(OpKind::Mul, {centered, alongChannels(factor, "factor")}, "scaled");
  return l.make(OpKind::Add, {scaled, alongChannels(op.operand(2), "bias")}, "shifted");
}

// gelu(x) → 0.5·x·(1 + erf(x·(1/√2)))  or, approximate = "tanh",
//           0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
Value *lowerGelu(Lowering &l, const Op &op) {
  Value *x = op.operand(0), *t;
  if (op.getString("approximate") == "tanh") {
    Value *cube = l.make(OpKind::Mul, {l.make(OpKind::Mul, {x, x}, "sq"), x}, "cube");
    Value *cubic = l.make(OpKind::Mul, {cube, l.scalar(0.044715, "cubic_coef")}, "cubic");
    Value *inner = l.make(OpKind::Add, {x, cubic}, "inner");
    double k = std::sqrt(2.0 / std::numbers::pi);
    t = l.make(OpKind::Mul, {inner, l.scalar(k, "sqrt_2_over_pi")}, "scaled");
    t = l.make(OpKind::Tanh, {t}, "tanh");
  } else {
    t = l.make(OpKind::Mul, {x, l.scalar(1.0 / std::numbers::sqrt2, "rsqrt2")}, "scaled");
    t = l.make(OpKind::Erf, {t}, "erf");
  }
  Value *onePlus = l.make(OpKind::Add, {t, l.scalar(1.0, "one")}, "one_plus");
  Value *halfX = l.make(OpKind::Mul, {x, l.scalar(0.5, "half")}, "half_x");
  return l.make(OpKind::Mul, {halfX, onePlus}, "out");
}

// linear(x, w, b) → matmul(x, w){transpose_b} + b; a rank-1 x goes through
// [1, in] and back.
Value *lowerLinear(Lowering &l, const Op &op) {
  Value *x = op.operand(0), *w = op.operand(1);
  bool vector = x->type().rank() == 1;
  if (vector)
    x = l.make(OpKind::Reshape, {x}, "row", {{"shape", Shape{Dim::fixed(1), x->type().shape[0]}}});
  Value *y = l.make(OpKind::MatMul, {x, w}, "mm", withAcc(op, {{"transpose_b", true}}));
  if (vector)
    y = l.make(OpKind::Reshape, {y}, "vec", {{"shape", Shape{w->type().shape[0]}}});
  if (op.numOperands() > 2)
    y = l.make(OpKind::Add, {y, op.operand(2)}, "biased");
  return y;
}

/// The attention scale: the attribute, else 1/√D for a static head dim D.
std::optional<double> attentionScale(const Op &op) {
  if (op.attrIfPresent("scale"))
    return op.getFloat("scale");
  const Dim &d = op.operand(0)->type().shape.back();
  if (!d.isStatic())
    return std::nullopt;
  return 1.0 / std::sqrt(double(d.size));
}

/// The causal mask: a [Sq, Sk] constant, 0 where key j ≤ query i, −inf
/// elsewhere; null for symbolic or oversized Sq, Sk.
Value *causalMask(Lowering &l, const Op &op) {
  constexpr int64_t kMaxElements = int64_t(1) << 22;
  const Dim &sq = op.operand(0)->type().shape.end()[-2];
  const Dim &sk = op.operand(1)->type().shape.end()[-2];
  if (!sq.isStatic() || !sk.isStatic() || sq.size * sk.size > kMaxElements)
    return nullptr;
  std::vector<double> values(size_t(sq.size * sk.size), 0.0);
  for (int64_t i = 0; i < sq.size; ++i)
    for (int64_t j = i + 1; j < sk.size; ++j)
      values[size_t(i * sk.size + j)] = -std::numeric_limits<double>::infinity();
  return l.constant({sq.size, sk.size}, values, "causal_mask");
}

// attention(q, k, v, mask) → matmul(softmax(matmul(q, kᵀ)·scale + mask [+ causal]), v).
Value *lowerAttention(Lowering &l, const Op &op) {
  std::optional<double> scale = attentionScale(op);
  bool maskOfOwnDType = op.numOperands() > 3 &&
                        op.operand(3)->type().dtype != op.operand(0)->type().dtype;
  if (!scale || maskOfOwnDType) // a mask kept at its own precision has no primitive form
    return nullptr;
  Value *causal = nullptr;
  if (op.getBool("causal") && !(causal = causalMask(l, op)))
    return nullptr;
  Value *s = l.make(OpKind::MatMul, {op.operand(0), op.operand(1)}, "scores",
                    withAcc(op, {{"transpose_b", true}}));
  s = l.make(OpKind::Mul, {s, l.scalar(*scale, "scale")}, "scaled");
  if (op.numOperands() > 3)
    s = l.make(OpKind::Add, {s, op.operand(3)}, "masked");
  if (causal)
    s = l.make(OpKind::Add, {s, causal}, "causal");
  Value *probs = softmaxForm(l, s, -1);
  return l.make(OpKind::MatMul, {probs, op.operand(2)}, "out", withAcc(op, {}));
}

using LowerFn = Value *(*)(Lowering &, const Op &);

LowerFn loweringFor(OpKind kind) {
  switch (kind) {
  case OpKind::LayerNorm:
    return lowerLayerNorm;
  case OpKind::RmsNorm:
    return lowerRmsNorm;
  case OpKind::Softmax:
    return lowerSoftmax;
  case OpKind::BatchNorm:
    return lowerBatchNorm;
  case OpKind::Gelu:
    return lowerGelu;
  case OpKind::Linear:
    return lowerLinear;
  case OpKind::Attention:
    return lowerAttention;
  default:
    return nullptr;
  }
}

} // namespace

bool runDecompose(Graph &g, const PassOptions &, Diagnostics &) {
  for (Op *op : g.opsSnapshot()) {
    LowerFn lower = loweringFor(op->kind());
    if (!lower)
      continue;
    Lowering lowering(g, *op);
    lowering.replace(lower(lowering, *op));
  }
  return true;
}

} // namespace fusec
