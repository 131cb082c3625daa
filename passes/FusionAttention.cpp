// Raising the attention pattern to the attention op, and the canonical
// attributes of composites (so that a composite written by hand and one
// raised from primitives print the same).
//
// The pattern, from its last op back:
//   out = matmul(p, v);  p = softmax(s){axis = -1};
//   s = [add(·, causal const)] [add(·, mask)] [mul(·, c) | div(·, c)] matmul(q, b)
// where b is kᵀ (or k, with transpose_b). Casts may sit between the stages, as
// the precision pass leaves them (bf16 scores widened to f32 for the softmax,
// probabilities narrowed back), provided none narrows below the dtype T of
// q, k and v: the attention op computes in double and rounds to T once, so it
// is at least as exact as the pattern. The mask keeps its own dtype (attention
// adds it to the scores at the accumulation precision).
// kᵀ is undone by folding the swap of the last two dims into the transpose
// (or cast of a transpose) that made it, or by a new transpose.
#include "ir/Assert.h"
#include "ir/Builder.h"
#include "ir/Verifier.h"
#include "passes/Fusion.h"

#include <cmath>
#include <unordered_set>

namespace fusec::fusion {

namespace {

/// Whether values stored in `a` are at least as exact as in `t`.
bool atLeastAsExact(DType a, DType t) {
  return a == t || a == DType::F64 || (a == DType::F32 && t != DType::F64);
}

/// Walks up from v through float casts whose result keeps T's precision.
Value *skipCasts(Value *v, DType t, std::vector<Op *> &ops) {
  while (Op *c = defOf(v, OpKind::Cast)) {
    if (!isFloat(c->operand(0)->type().dtype) || !atLeastAsExact(c->result()->type().dtype, t))
      break;
    ops.push_back(c);
    v = c->operand(0);
  }
  return v;
}

struct AttentionMatch {
  Op *scores = nullptr; // matmul(q, b)
  Value *mask = nullptr;
  bool causal = false;
  std::optional<double> scale; // nullopt: no scaling (1)
  std::vector<Op *> ops;
};

// [mul(·, c) | mul(c, ·) | div(·, c)] over casts over matmul(q, b) of dtype T.
bool matchScores(Value *s, DType t, AttentionMatch &m) {
  s = skipCasts(s, t, m.ops);
  Op *op = s->definingOp();
  if (op && (op->kind() == OpKind::Mul || op->kind() == OpKind::Div)) {
    for (unsigned i = 0; i < 2 && !m.scale; ++i) {
      Value *c = op->operand(1 - i);
      if ((i == 1 && op->kind() == OpKind::Div) || !splatValue(c) ||
          op->result()->type() != op->operand(i)->type())
        continue;
      double v = splatAsAttribute(c);
      m.scale = op->kind() == OpKind::Div ? 1.0 / v : v;
      m.ops.push_back(op);
      s = skipCasts(op->operand(i), t, m.ops);
    }
  }
  m.scores = defOf(s, OpKind::MatMul);
  return m.scores && !m.scores->getBool("transpose_a") && m.scores->result()->type().dtype == t;
}

/// Whether c is the causal mask for scores [..., Sq, Sk]: a [Sq, Sk] constant
/// of 0 where key j ≤ query i and −inf elsewhere.
bool isCausalMask(const Value *c, const TensorType &scores) {
  const Op *def = defOf(c, OpKind::Const);
  const Shape &s = scores.shape;
  if (!def || c->type().rank() != 2 || s.size() < 2 || c->type().shape[0] != s[s.size() - 2] ||
      c->type().shape[1] != s.back() || !isFloat(c->type().dtype))
    return false;
  const DenseData &d = def->getDense("value");
  int64_t sk = d.shape[1];
  for (size_t n = 0; n < d.numElements(); ++n) {
    double v = d.elementAsDouble(n);
    bool masked = int64_t(n) % sk > int64_t(n) / sk;
    if (masked ? !(std::isinf(v) && v < 0) : v != 0)
      return false;
  }
  return true;
}

// The scores below the softmax: [causal add] [mask add] scaled scores; the
// causal add, if any, is the outer one.
bool matchMaskedScores(Value *s, DType t, AttentionMatch &m, bool allowCausal = true) {
  s = skipCasts(s, t, m.ops);
  Op *add = defOf(s, OpKind::Add);
  if (!add)
    return matchScores(s, t, m);
  for (unsigned i = 0; i < 2; ++i) {
    Value *chain = add->operand(i), *other = add->operand(1 - i);
    if (add->result()->type() != chain->type())
      continue; // the mask would broadcast the scores to a larger shape
    AttentionMatch attempt = m;
    attempt.ops.push_back(add);
    bool ok;
    if (allowCausal && isCausalMask(other, add->result()->type())) {
      attempt.causal = true;
      ok = matchMaskedScores(chain, t, attempt, false);
    } else {
      attempt.mask = other;
      ok = matchScores(chain, t, attempt);
    }
    if (ok) {
      m = std::move(attempt);
      return true;
    }
  }
  return false;
}

/// Names a value made for the rewrite after the one it stands for.
Value *named(Graph &g, Value *v, const Value *standsFor, std::string_view suffix) {
  v->setName(g.uniqueName(standsFor->name() + std::string(suffix)));
  return v;
}

/// The last two dims of v swapped: the transpose that made v with the swap
/// folded in (when v is used only here), or a new transpose.
Value *swapLastTwo(Graph &g, Builder &b, Value *v) {
  size_t rank = v->type().rank();
  std::vector<int64_t> swap(rank);
  for (size_t i = 0; i < rank; ++i)
    swap[i] = int64_t(i);
  std::swap(swap[rank - 1], swap[rank - 2]);
  Op *def = defOf(v, OpKind::Transpose);
  if (!def || v->uses().size() != 1)
    return named(g, b.transpose(v, swap), v, ".t");
  const std::vector<int64_t> &perm = def->getInts("perm");
  std::vector<int64_t> composed(rank);
  bool identity = true;
  for (size_t i = 0; i < rank; ++i) {
    composed[i] = perm[size_t(swap[i])];
    identity = identity && composed[i] == int64_t(i);
  }
  return identity ? def->operand(0) : named(g, b.transpose(def->operand(0), composed), v, ".t");
}

/// k for attention from b = kᵀ: casts used only here are redone after the
/// swap, so that they stay next to the attention (its prologue).
Value *keyFrom(Graph &g, Builder &b, Value *kt) {
  std::vector<Op *> casts;
  Value *v = kt;
  for (Op *c = defOf(v, OpKind::Cast); c && v->uses().size() == 1; c = defOf(v, OpKind::Cast)) {
    casts.push_back(c);
    v = c->operand(0);
  }
  Value *k = swapLastTwo(g, b, v);
  for (auto it = casts.rbegin(); it != casts.rend(); ++it)
    k = named(g, b.cast(k, (*it)->getDType("to")), (*it)->result(), ".t");
  return k;
}

// matmul(softmax(scores), v)  →  attention(q, k, v, mask?) {scale?, causal?, acc?}
std::optional<AttentionMatch> matchAttention(Op *root) {
  if (root->kind() != OpKind::MatMul || root->getBool("transpose_a") ||
      root->getBool("transpose_b"))
    return std::nullopt;
  DType t = root->result()->type().dtype;
  AttentionMatch m;
  Op *softmax = defOf(skipCasts(root->operand(0), t, m.ops), OpKind::Softmax);
  size_t rank = softmax ? softmax->result()->type().rank() : 0;
  if (!softmax || normalizeAxis(softmax->getInt("axis"), rank) != rank - 1 ||
      !matchMaskedScores(softmax->operand(0), t, m))
    return std::nullopt;
  const Attribute *acc1 = m.scores->attrIfPresent("acc"), *acc2 = root->attrIfPresent("acc");
  if ((acc1 || acc2) && !(acc1 && acc2 && *acc1 == *acc2))
    return std::nullopt;
  m.ops.insert(m.ops.end(), {m.scores, softmax, root});
  std::unordered_set<const Op *> inside(m.ops.begin(), m.ops.end());
  for (const Value *v : {m.scores->operand(0), root->operand(1), m.mask})
    if (v && inside.count(v->definingOp()))
      return std::nullopt; // an operand computed by the pattern itself
  if (!isClosedPattern(m.ops, root))
    return std::nullopt;
  return m;
}

AttrList attentionAttrs(const AttentionMatch &m, const Op &root) {
  AttrList attrs{{"scale", m.scale.value_or(1.0)}};
  if (m.causal)
    attrs.push_back({"causal", true});
  if (const Attribute *acc = root.attrIfPresent("acc"))
    attrs.push_back({"acc", *acc});
  return attrs;
}

/// The type keyFrom gives for kᵀ: the last two dims swapped back.
TensorType keyType(const Value *kt) {
  TensorType t = kt->type();
  std::swap(t.shape[t.rank() - 1], t.shape[t.rank() - 2]);
  t.layout = Layout::None;
  return t;
}

/// Whether the attention op for a match type-checks to the root's type.
bool typeChecks(const Op &root, const AttentionMatch &m, const AttrList &attrs) {
  Value *kt = m.scores->operand(1);
  std::vector<TensorType> operands{m.scores->operand(0)->type(),
                                   m.scores->getBool("transpose_b") ? kt->type() : keyType(kt),
                                   root.operand(1)->type()};
  if (m.mask)
    operands.push_back(m.mask->type());
  Diagnostics scratch; // a pattern whose attention does not type-check is not raised
  std::vector<TensorType> results;
  return inferResultTypes(OpKind::Attention, operands, attrs, root.loc(), scratch, results) &&
         results.size() == 1 && results[0] == root.result()->type();
}

/// Builds the attention op for a match before `root` and replaces the
/// pattern with it. Returns the erased ops.
std::vector<const Op *> rewrite(Graph &g, Op *root, const AttentionMatch &m,
                                const AttrList &attrs) {
  Diagnostics diags;
  Builder b(g, diags);
  b.setInsertionPoint(root);
  b.setLoc(root->loc());
  Value *kt = m.scores->operand(1);
  Value *k = m.scores->getBool("transpose_b") ? kt : keyFrom(g, b, kt);
  std::vector<Value *> operands{m.scores->operand(0), k, root->operand(1)};
  if (m.mask) // added at the scores' precision, so kept in its own dtype
    operands.push_back(m.mask);
  Op *attention = b.createOp(OpKind::Attention, operands, attrs);
  FUSEC_ASSERT(attention && !diags.hasErrors(), "attention was type-checked before it was built");
  return replacePattern(g, root, attention->result(), m.ops);
}

} // namespace

// axis → axis − rank;  scale = 1/√D (in the operands' dtype) → absent;
// any attribute equal to its default → absent.
void canonicalizeCompositeAttrs(Op &op) {
  if (op.numOperands() == 0)
    return;
  const TensorType &x = op.operand(0)->type();
  const Attribute *axis = op.attrIfPresent("axis");
  if (axis && op.info().cls == OpClass::Normalization)
    if (std::optional<unsigned> a = normalizeAxis(axis->get<int64_t>(), x.rank()))
      op.setAttr("axis", int64_t(*a) - int64_t(x.rank()));
  if (const Attribute *scale = op.attrIfPresent("scale"); scale && op.kind() == OpKind::Attention) {
    const Dim &d = x.shape.back();
    if (d.isStatic() && d.size > 0 &&
        roundTo(x.dtype, scale->get<double>()) == roundTo(x.dtype, 1.0 / std::sqrt(double(d.size))))
      op.removeAttr("scale");
  }
  AttrList attrs = op.attrs();
  for (const NamedAttr &a : attrs)
    if (const AttrSpec *spec = op.info().findAttr(a.name);
        spec && spec->deflt && *spec->deflt == a.value)
      op.removeAttr(a.name);
}

void raiseAttention(Graph &g) {
  std::vector<Op *> ops = g.opsSnapshot();
  std::unordered_set<const Op *> gone;
  for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
    if (gone.count(*it))
      continue;
    std::optional<AttentionMatch> m = matchAttention(*it);
    if (!m)
      continue;
    AttrList attrs = attentionAttrs(*m, **it);
    if (!typeChecks(**it, *m, attrs))
      continue;
    for (const Op *op : rewrite(g, *it, *m, attrs))
      gone.insert(op);
  }
}

} // namespace fusec::fusion
