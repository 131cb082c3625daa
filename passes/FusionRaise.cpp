// Raising primitive forms back to composites, the first stage of fusion.
//
// The decompose pass writes each composite in one primitive form (its file
// header lists them); models written by hand (examples/bert_layer.fir) use the
// same forms. Recognising them here means a model fuses into the same kernels
// whether it was written with composites, with primitives, or decomposed:
// kernel bodies hold composites. The matchers accept either operand order of
// add and mul, and constants equal to the form's value rounded to their own
// dtype. A pattern is raised only when its inner values have no other users
// (raising would otherwise compute them twice) and the composite type-checks
// to the pattern's result type. Raising changes rounding only: the composite
// computes in double and rounds once, where the primitives round each step.
//
// Sweeps run from the last op to the first, so that the longest form wins
// (layer_norm with γ and β before the bare normalization inside it).
//
// Exporters spell the same math in a few other ways, and each is accepted
// where the form has it: a square as pow(x, 2) and a cube as pow(x, 3), a
// scale by c as div(x, 1/c), rsqrt(y) as div(1, sqrt(y)), the normalization
// as div(c, sqrt(var + ε)), and gelu's product in any grouping of x, ½ and
// (1 + inner) (PyTorch's ONNX export writes mul(mul(x, 1 + erf(x / √2)), ½)).
#include "ir/Builder.h"
#include "passes/Fusion.h"

#include <cmath>
#include <numbers>
#include <unordered_set>

namespace fusec::fusion {

namespace {

/// A matched pattern: the composite to build and the ops it replaces (the
/// root, whose result it takes over, last).
struct Raised {
  OpKind kind;
  std::vector<Value *> operands;
  AttrList attrs;
  std::vector<Op *> ops;
};
using Matcher = std::optional<Raised> (*)(Op *root);

/// Calls f(a, b) on a binary op of kind k with its operands as written, then
/// swapped; true when one call is.
template <typename F> bool eitherOrder(Op *op, OpKind k, F f) {
  if (!op || op->kind() != k)
    return false;
  Value *a = op->operand(0), *b = op->operand(1);
  return f(a, b) || (a != b && f(b, a));
}

/// The single axis of a keepdims reduction, negative (counted from the end).
std::optional<int64_t> singleAxis(const Op &reduce) {
  const std::vector<int64_t> &axes = reduce.getInts("axes");
  if (axes.size() != 1 || !reduce.getBool("keepdims"))
    return std::nullopt;
  int64_t rank = int64_t(reduce.operand(0)->type().rank());
  return int64_t(*normalizeAxis(axes[0], size_t(rank))) - rank;
}

/// The trailing-block axis (negative) shared by two keepdims reductions.
std::optional<int64_t> sharedTrailingAxis(const Op &a, const Op &b) {
  std::optional<unsigned> sa = trailingReductionStart(a), sb = trailingReductionStart(b);
  if (!sa || sa != sb || !a.getBool("keepdims") || !b.getBool("keepdims") ||
      a.operand(0)->type().rank() != b.operand(0)->type().rank())
    return std::nullopt;
  return int64_t(*sa) - int64_t(a.operand(0)->type().rank());
}

/// Whether v is pow(x, n) with n the splat `exponent`; sets x.
bool matchPower(Value *v, double exponent, Value *&x, std::vector<Op *> &ops) {
  Op *pow = defOf(v, OpKind::Pow);
  if (!pow || !isSplatOf(pow->operand(1), exponent) || pow->result()->type() != v->type())
    return false;
  x = pow->operand(0);
  ops.push_back(pow);
  return true;
}

/// Whether v is x·x, as mul(x, x) or pow(x, 2); sets x.
bool matchSquare(Value *v, Value *&x, std::vector<Op *> &ops) {
  if (Op *mul = defOf(v, OpKind::Mul); mul && mul->operand(0) == mul->operand(1)) {
    x = mul->operand(0);
    ops.push_back(mul);
    return true;
  }
  return matchPower(v, 2.0, x, ops);
}

/// Whether v is 1/√y, as rsqrt(y) or div(1, sqrt(y)); sets y.
bool matchRsqrt(Value *v, Value *&y, std::vector<Op *> &ops) {
  if (Op *rsqrt = defOf(v, OpKind::Rsqrt)) {
    y = rsqrt->operand(0);
    ops.push_back(rsqrt);
    return true;
  }
  Op *div = defOf(v, OpKind::Div);
  Op *sqrt = div ? defOf(div->operand(1), OpKind::Sqrt) : nullptr;
  if (!sqrt || !isSplatOf(div->operand(0), 1.0) || div->result()->type() != v->type())
    return false;
  y = sqrt->operand(0);
  ops.insert(ops.end(), {sqrt, div});
  return true;
}

/// Whether v is n·(1/√y) as mul(n, rsqrt-form(y)), or n/√y as div(n, sqrt(y));
/// sets n and y.
bool matchTimesRsqrt(Value *v, Value *&n, Value *&y, std::vector<Op *> &ops) {
  Op *op = v->definingOp();
  if (Op *div = defOf(v, OpKind::Div)) {
    Op *sqrt = defOf(div->operand(1), OpKind::Sqrt);
    if (!sqrt)
      return false;
    n = div->operand(0), y = sqrt->operand(0);
    ops.insert(ops.end(), {sqrt, div});
    return true;
  }
  return eitherOrder(op, OpKind::Mul, [&](Value *a, Value *r) {
    std::vector<Op *> inner;
    if (!matchRsqrt(r, y, inner))
      return false;
    n = a;
    ops.insert(ops.end(), inner.begin(), inner.end());
    ops.push_back(op);
    return true;
  });
}

// div(e, reduce_sum(e){[a]}), e = exp(sub(x, reduce_max(x){[a]}))  →  softmax(x){axis = a}
std::optional<Raised> matchSoftmax(Op *root) {
  if (root->kind() != OpKind::Div)
    return std::nullopt;
  Op *e = defOf(root->operand(0), OpKind::Exp), *sum = defOf(root->operand(1), OpKind::ReduceSum);
  if (!e || !sum || sum->operand(0) != e->result())
    return std::nullopt;
  Op *sub = defOf(e->operand(0), OpKind::Sub);
  Op *max = sub ? defOf(sub->operand(1), OpKind::ReduceMax) : nullptr;
  if (!max || max->operand(0) != sub->operand(0))
    return std::nullopt;
  std::optional<int64_t> axis = singleAxis(*max);
  if (!axis || singleAxis(*sum) != axis)
    return std::nullopt;
  return Raised{OpKind::Softmax, {sub->operand(0)}, {{"axis", *axis}}, {max, sub, e, sum, root}};
}

/// The normalization inside layer_norm / rms_norm: the input, ε and axis.
struct NormCore {
  Value *x;
  double epsilon;
  int64_t axis;
  std::vector<Op *> ops;
};

/// add(var, ε) with ε a splat constant that does not change var's type.
bool matchPlusEpsilon(Op *add, OpKind varKind, Op *&var, double &epsilon) {
  return eitherOrder(add, OpKind::Add, [&](Value *v, Value *eps) {
    var = defOf(v, varKind);
    if (!var || !splatValue(eps) || add->result()->type() != v->type())
      return false;
    epsilon = splatAsAttribute(eps);
    return true;
  });
}

// mul(c, rsqrt(add(reduce_mean(mul(c, c)), ε))), c = sub(x, reduce_mean(x)),
// both means over one trailing block: layer_norm(x) without γ, β.
std::optional<NormCore> matchLayerNormCore(Value *v) {
  std::vector<Op *> scale;
  Value *c = nullptr, *varEpsV = nullptr;
  if (!matchTimesRsqrt(v, c, varEpsV, scale))
    return std::nullopt;
  Op *centered = defOf(c, OpKind::Sub);
  if (!centered)
    return std::nullopt;
  Value *x = centered->operand(0);
  Op *mean = defOf(centered->operand(1), OpKind::ReduceMean), *var = nullptr;
  double eps = 0;
  Op *varEps = defOf(varEpsV, OpKind::Add);
  if (!mean || mean->operand(0) != x || !matchPlusEpsilon(varEps, OpKind::ReduceMean, var, eps))
    return std::nullopt;
  std::vector<Op *> square;
  Value *c2 = nullptr;
  std::optional<int64_t> axis = sharedTrailingAxis(*mean, *var);
  if (!matchSquare(var->operand(0), c2, square) || c2 != c || !axis)
    return std::nullopt;
  std::vector<Op *> ops{mean, centered};
  ops.insert(ops.end(), square.begin(), square.end());
  ops.insert(ops.end(), {var, varEps});
  ops.insert(ops.end(), scale.begin(), scale.end());
  return NormCore{x, eps, *axis, std::move(ops)};
}

// mul(x, rsqrt(add(reduce_mean(mul(x, x)), ε))): rms_norm(x) without γ.
std::optional<NormCore> matchRmsNormCore(Value *v) {
  std::vector<Op *> scale;
  Value *x = nullptr, *msEpsV = nullptr;
  if (!matchTimesRsqrt(v, x, msEpsV, scale))
    return std::nullopt;
  Op *msEps = defOf(msEpsV, OpKind::Add), *meanSq = nullptr;
  double eps = 0;
  if (!matchPlusEpsilon(msEps, OpKind::ReduceMean, meanSq, eps))
    return std::nullopt;
  std::vector<Op *> square;
  Value *x2 = nullptr;
  std::optional<int64_t> axis = sharedTrailingAxis(*meanSq, *meanSq);
  if (!matchSquare(meanSq->operand(0), x2, square) || x2 != x || !axis)
    return std::nullopt;
  std::vector<Op *> ops = square;
  ops.insert(ops.end(), {meanSq, msEps});
  ops.insert(ops.end(), scale.begin(), scale.end());
  return NormCore{x, eps, *axis, std::move(ops)};
}

using CoreMatcher = std::optional<NormCore> (*)(Value *);

Raised fromCore(OpKind kind, NormCore core, std::vector<Value *> params, std::vector<Op *> tail) {
  params.insert(params.begin(), core.x);
  core.ops.insert(core.ops.end(), tail.begin(), tail.end());
  return Raised{kind,
                std::move(params),
                {{"axis", core.axis}, {"epsilon", core.epsilon}},
                std::move(core.ops)};
}

// [add(mul(core, γ), β) | mul(core, γ) | core]  →  kind(x, γ?, β?); the
// longest tail the op allows (rms_norm has no β).
std::optional<Raised> matchNorm(Op *root, OpKind kind, CoreMatcher matchCore) {
  std::optional<Raised> out;
  auto scaled = [&](Op *mul, Value *beta, std::vector<Op *> tail) {
    return eitherOrder(mul, OpKind::Mul, [&](Value *n, Value *gamma) {
      std::optional<NormCore> core = matchCore(n);
      if (!core)
        return false;
      std::vector<Value *> params{gamma};
      if (beta)
        params.push_back(beta);
      tail.insert(tail.begin(), mul);
      out = fromCore(kind, *core, params, tail);
      return true;
    });
  };
  if (kind == OpKind::LayerNorm && eitherOrder(root, OpKind::Add, [&](Value *s, Value *beta) {
        return scaled(s->definingOp(), beta, {root});
      }))
    return out;
  if (scaled(root, nullptr, {}))
    return out;
  if (std::optional<NormCore> core = matchCore(root->result()))
    return fromCore(kind, *core, {}, {});
  return std::nullopt;
}

std::optional<Raised> matchLayerNorm(Op *root) {
  return matchNorm(root, OpKind::LayerNorm, matchLayerNormCore);
}

std::optional<Raised> matchRmsNorm(Op *root) {
  return matchNorm(root, OpKind::RmsNorm, matchRmsNormCore);
}

/// Whether v is `mul(a, c)` (either order) with c the splat `value`, or
/// `div(a, c)` with c the splat 1 / value; sets a.
bool matchScaledBy(Value *v, double value, Value *&a, std::vector<Op *> &ops) {
  if (Op *div = defOf(v, OpKind::Div); div && isSplatOf(div->operand(1), 1.0 / value)) {
    a = div->operand(0);
    ops.push_back(div);
    return true;
  }
  Op *mul = defOf(v, OpKind::Mul);
  bool ok = eitherOrder(mul, OpKind::Mul, [&](Value *x, Value *c) {
    a = x;
    return isSplatOf(c, value);
  });
  if (ok)
    ops.push_back(mul);
  return ok;
}

// erf(mul(x, 1/√2))
bool matchErfInner(Value *t, Value *x, std::vector<Op *> &ops) {
  Op *erf = defOf(t, OpKind::Erf);
  Value *a = nullptr;
  if (!erf || !matchScaledBy(erf->operand(0), 1.0 / std::numbers::sqrt2, a, ops) || a != x)
    return false;
  ops.push_back(erf);
  return true;
}

// mul(mul(x, x), x), or pow(x, 3)
bool matchCube(Value *v, Value *x, std::vector<Op *> &ops) {
  if (Value *base = nullptr; matchPower(v, 3.0, base, ops))
    return base == x;
  Op *cube = defOf(v, OpKind::Mul);
  return eitherOrder(cube, OpKind::Mul, [&](Value *sqV, Value *x1) {
    Op *sq = defOf(sqV, OpKind::Mul);
    if (x1 != x || !sq || sq->operand(0) != x || sq->operand(1) != x)
      return false;
    ops.insert(ops.end(), {sq, cube});
    return true;
  });
}

// tanh(mul(add(x, mul(x³, 0.044715)), √(2/π)))
bool matchTanhInner(Value *t, Value *x, std::vector<Op *> &ops) {
  Op *tanh = defOf(t, OpKind::Tanh);
  Value *in = nullptr;
  if (!tanh || !matchScaledBy(tanh->operand(0), std::sqrt(2.0 / std::numbers::pi), in, ops))
    return false;
  Op *inner = defOf(in, OpKind::Add);
  bool ok = eitherOrder(inner, OpKind::Add, [&](Value *x1, Value *cubic) {
    Value *cube = nullptr;
    return x1 == x && matchScaledBy(cubic, 0.044715, cube, ops) && matchCube(cube, x, ops);
  });
  ops.insert(ops.end(), {inner, tanh});
  return ok;
}

// add(erf(…) | tanh(…), 1) on x: the gelu's `approximate`.
std::optional<std::string> matchOnePlusInner(Value *p, Value *x, std::vector<Op *> &ops) {
  Op *onePlus = defOf(p, OpKind::Add);
  std::optional<std::string> approximate;
  eitherOrder(onePlus, OpKind::Add, [&](Value *t, Value *one) {
    std::vector<Op *> erf, tanh;
    if (!isSplatOf(one, 1.0))
      return false;
    if (matchErfInner(t, x, erf))
      approximate = "none";
    else if (matchTanhInner(t, x, tanh))
      approximate = "tanh";
    else
      return false;
    const std::vector<Op *> &inner = *approximate == "none" ? erf : tanh;
    ops.insert(ops.end(), inner.begin(), inner.end());
    ops.push_back(onePlus);
    return true;
  });
  return approximate;
}

// mul(mul(x, ½), add(inner(x), 1))  →  gelu(x) {approximate}; also
// mul(mul(x, add(inner(x), 1)), ½) and mul(x, mul(add(inner(x), 1), ½)).
std::optional<Raised> matchGelu(Op *root) {
  std::optional<Raised> out;
  auto found = [&](Value *x, std::vector<Op *> ops, const std::string &approximate) {
    ops.push_back(root);
    out = Raised{OpKind::Gelu, {x}, {{"approximate", approximate}}, std::move(ops)};
    return true;
  };
  // (x·½)·(1 + inner)
  bool matched = eitherOrder(root, OpKind::Mul, [&](Value *h, Value *p) {
    std::vector<Op *> ops;
    Value *x = nullptr;
    if (!matchScaledBy(h, 0.5, x, ops))
      return false;
    std::optional<std::string> approximate = matchOnePlusInner(p, x, ops);
    return approximate && found(x, ops, *approximate);
  });
  // (x·(1 + inner))·½ and x·((1 + inner)·½)
  matched = matched || eitherOrder(root, OpKind::Mul, [&](Value *m, Value *half) {
              Op *mul = defOf(m, OpKind::Mul);
              return isSplatOf(half, 0.5) && eitherOrder(mul, OpKind::Mul, [&](Value *x, Value *p) {
                       std::vector<Op *> ops;
                       std::optional<std::string> approximate = matchOnePlusInner(p, x, ops);
                       ops.push_back(mul);
                       return approximate && found(x, ops, *approximate);
                     });
            });
  if (!matched)
    eitherOrder(root, OpKind::Mul, [&](Value *x, Value *m) {
      std::vector<Op *> ops;
      Value *p = nullptr;
      if (!matchScaledBy(m, 0.5, p, ops))
        return false;
      std::optional<std::string> approximate = matchOnePlusInner(p, x, ops);
      return approximate && found(x, ops, *approximate);
    });
  return out;
}

/// matmul(x, w){transpose_b} with w a matrix and x of rank ≥ 2: linear's form.
bool isLinearMatMul(const Op *mm) {
  return mm && mm->kind() == OpKind::MatMul && mm->getBool("transpose_b") &&
         !mm->getBool("transpose_a") && mm->operand(1)->type().rank() == 2 &&
         mm->operand(0)->type().rank() >= 2;
}

AttrList accOf(const Op &op) {
  if (const Attribute *acc = op.attrIfPresent("acc"))
    return {{"acc", *acc}};
  return {};
}

// add(matmul(x, w){transpose_b}, b) → linear(x, w, b);  matmul(x, w){transpose_b} → linear(x, w)
std::optional<Raised> matchLinear(Op *root) {
  std::optional<Raised> out;
  eitherOrder(root, OpKind::Add, [&](Value *m, Value *b) {
    Op *mm = m->definingOp();
    if (!isLinearMatMul(mm) || b->type().rank() != 1)
      return false;
    out = Raised{OpKind::Linear, {mm->operand(0), mm->operand(1), b}, accOf(*mm), {mm, root}};
    return true;
  });
  if (!out && isLinearMatMul(root))
    out = Raised{OpKind::Linear, {root->operand(0), root->operand(1)}, accOf(*root), {root}};
  return out;
}

/// Builds the composite before the root and replaces the pattern with it,
/// when the pattern is closed, no operand comes from inside it, and the
/// composite has the root's type. Adds the erased ops to `gone`.
void apply(Graph &g, Op *root, Raised &r, std::unordered_set<const Op *> &gone) {
  std::unordered_set<const Op *> inside(r.ops.begin(), r.ops.end());
  for (Value *v : r.operands)
    if (inside.count(v->definingOp()))
      return;
  if (!isClosedPattern(r.ops, root))
    return;
  Diagnostics scratch; // a composite that does not type-check is simply not raised
  Builder b(g, scratch);
  b.setInsertionPoint(root);
  b.setLoc(root->loc());
  Op *composite = b.createOp(r.kind, r.operands, r.attrs);
  if (!composite)
    return;
  if (composite->result()->type() != root->result()->type()) {
    g.erase(composite);
    return;
  }
  for (const Op *op : replacePattern(g, root, composite->result(), r.ops))
    gone.insert(op);
}

/// One sweep, last op first, raising what `match` recognises.
void sweep(Graph &g, Matcher match) {
  std::vector<Op *> ops = g.opsSnapshot();
  std::unordered_set<const Op *> gone;
  for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
    Op *root = *it;
    if (gone.count(root) || root->numResults() != 1 || !root->result()->hasUses())
      continue;
    if (std::optional<Raised> r = match(root))
      apply(g, root, *r, gone);
  }
}

} // namespace

void raiseComposites(Graph &g) {
  for (Matcher m : {matchSoftmax, matchLayerNorm, matchRmsNorm, matchGelu})
    sweep(g, m);
  raiseAttention(g);
  sweep(g, matchLinear);
}

} // namespace fusec::fusion
