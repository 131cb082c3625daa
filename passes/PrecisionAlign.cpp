// Tensor-core alignment for the precision pass: f16/bf16 MMA tiles want the
// reduction dim K and the output dim N of a GEMM to be multiples of 8, so a
// low-type matmul, linear or attention whose static K or N is not gets its
// operands zero-padded and its result sliced back:
//
//   matmul(a[M,K], b[K,N])  →  slice(matmul(concat(a, 0[M,K8−K]), concat(b, 0[K8−K,N])))
//
// The rewrite is exact: zero terms add nothing to a K sum, and padded N
// columns are sliced off. For attention, the q·kᵀ reduction dim D is padded
// in q and k, with the default scale 1/√D written out since D changes, and
// Dv is padded in v and sliced off; the key count Sk is not padded (zero keys
// would take softmax weight: the attention kernel masks a ragged Sk tail).
// Constant operands held in full are padded now; others (splat constants
// included) through a broadcast zero block, which needs the operand's other
// dims static or named: an operand with a `?` there leaves its op as it is.
// Symbolic K and N are codegen's to handle.
//
// conv2d is not padded here: its channel dims sit in a layout-tagged tensor
// that concat and slice would untag (changing what conv2d reads), and an
// implicit-GEMM kernel pads the C·KH·KW reduction in shared memory anyway.
#include "ir/Assert.h"
#include "ir/Builder.h"
#include "passes/Precision.h"

#include <cmath>
#include <cstring>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace fusec::precision {

namespace {

struct OperandPad {
  unsigned operand;
  unsigned axis;
  int64_t to;
};

/// What to do to one op: pad operands (in order), slice the result's `axis`
/// back to `size`, set extra attributes.
struct AlignPlan {
  std::vector<OperandPad> pads;
  std::optional<std::pair<unsigned, int64_t>> sliceBack;
  AttrList extraAttrs;
};

// The padded size of a static dim that is not aligned.
std::optional<int64_t> paddedSize(const Dim &d) {
  if (!d.isStatic() || d.size % kTensorCoreMultiple == 0)
    return std::nullopt;
  return (d.size + kTensorCoreMultiple - 1) / kTensorCoreMultiple * kTensorCoreMultiple;
}

unsigned lastAxis(const Value *v) { return unsigned(v->type().rank() - 1); }

// matmul(a[..., M, K], b[..., K, N]), transposes swapping the last two dims.
void planMatMul(const Op &op, AlignPlan &plan) {
  const Shape &a = op.operand(0)->type().shape, &b = op.operand(1)->type().shape;
  unsigned ra = unsigned(a.size()), rb = unsigned(b.size());
  unsigned kA = op.getBool("transpose_a") ? ra - 2 : ra - 1;
  bool tb = op.getBool("transpose_b");
  unsigned kB = tb ? rb - 1 : rb - 2, nB = tb ? rb - 2 : rb - 1;
  if (std::optional<int64_t> k = paddedSize(a[kA]); k && b[kB].isStatic())
    plan.pads.insert(plan.pads.end(), {{0, kA, *k}, {1, kB, *k}});
  if (std::optional<int64_t> n = paddedSize(b[nB])) {
    plan.pads.push_back({1, nB, *n});
    plan.sliceBack = {lastAxis(op.result()), b[nB].size};
  }
}

// linear(x[..., K], w[N, K], bias[N]).
void planLinear(const Op &op, AlignPlan &plan) {
  const Shape &w = op.operand(1)->type().shape;
  const Dim &xk = op.operand(0)->type().shape.back();
  if (std::optional<int64_t> k = paddedSize(w[1]); k && xk.isStatic())
    plan.pads.insert(plan.pads.end(), {{0, lastAxis(op.operand(0)), *k}, {1, 1, *k}});
  // A bias whose N is not static ([?], agreeing with w's N only at run
  // time) cannot be padded by a block of known size: N stays as it is.
  bool biasStatic = op.numOperands() < 3 || op.operand(2)->type().shape[0].isStatic();
  if (std::optional<int64_t> n = paddedSize(w[0]); n && biasStatic) {
    plan.pads.push_back({1, 0, *n});
    if (op.numOperands() == 3)
      plan.pads.push_back({2, 0, *n});
    plan.sliceBack = {lastAxis(op.result()), w[0].size};
  }
}

// attention(q[..., Sq, D], k[..., Sk, D], v[..., Sk, Dv], mask?).
void planAttention(const Op &op, AlignPlan &plan) {
  const Dim &qd = op.operand(0)->type().shape.back(), &kd = op.operand(1)->type().shape.back();
  const Dim &dv = op.operand(2)->type().shape.back();
  if (std::optional<int64_t> d = paddedSize(qd); d && kd.isStatic()) {
    plan.pads.insert(plan.pads.end(),
                     {{0, lastAxis(op.operand(0)), *d}, {1, lastAxis(op.operand(1)), *d}});
    if (!op.attrIfPresent("scale"))
      plan.extraAttrs.push_back({"scale", 1.0 / std::sqrt(double(qd.size))});
  }
  if (std::optional<int64_t> n = paddedSize(dv)) {
    plan.pads.push_back({2, lastAxis(op.operand(2)), *n});
    plan.sliceBack = {lastAxis(op.result()), dv.size};
  }
}

AlignPlan planFor(const Op &op) {
  AlignPlan plan;
  if (op.kind() == OpKind::MatMul)
    planMatMul(op, plan);
  else if (op.kind() == OpKind::Linear)
    planLinear(op, plan);
  else if (op.kind() == OpKind::Attention)
    planAttention(op, plan);
  return plan;
}

bool isConstant(const Value *v) {
  return v->definingOp() && v->definingOp()->kind() == OpKind::Const;
}

// A zero block can be built beside `v` along `axis`: `v` is a constant, or
// its other dims can be named in a broadcast shape.
bool canPad(const Value *v, unsigned axis) {
  if (isConstant(v))
    return true;
  const Shape &shape = v->type().shape;
  for (unsigned i = 0; i < shape.size(); ++i)
    if (i != axis && shape[i].isAnonymous())
      return false;
  return true;
}

// `data` (in full form) with zero elements appended along `axis` up to `to`.
DenseRef padDense(const DenseData &data, unsigned axis, int64_t to) {
  FUSEC_ASSERT(!data.isSplatForm(), "a splat is padded by a concat, not expanded");
  size_t inner = dtypeSize(data.dtype), outer = 1;
  for (size_t i = axis + 1; i < data.shape.size(); ++i)
    inner *= size_t(data.shape[i]);
  for (size_t i = 0; i < axis; ++i)
    outer *= size_t(data.shape[i]);
  size_t oldRow = size_t(data.shape[axis]) * inner, newRow = size_t(to) * inner;
  std::vector<int64_t> shape = data.shape;
  shape[axis] = to;
  std::vector<uint8_t> bytes(outer * newRow, 0); // +0.0 in every float dtype
  for (size_t o = 0; oldRow != 0 && o < outer; ++o) // an empty row copies nothing (nor from null)
    std::memcpy(bytes.data() + o * newRow, data.storedBytes().data() + o * oldRow, oldRow);
  return std::make_shared<DenseData>(data.dtype, std::move(shape), std::move(bytes));
}

/// Builds the padded operands of one op before it, sharing one zero scalar.
class Padder {
public:
  Padder(Graph &g, Op &op) : g(g), builder(g, scratch) {
    builder.setInsertionPoint(&op);
    builder.setLoc(op.loc());
  }

  Builder &build() { return builder; }

  // concat(v, broadcast(0) {shape = v's with `axis` = to − v's}) {axis}, or
  // for a constant held in full, the padded constant (a splat stays one: the
  // concat keeps it one element; Note [Splat constants]).
  Value *pad(Value *v, unsigned axis, int64_t to) {
    Value *padded = nullptr;
    if (isConstant(v) && !v->definingOp()->getDense("value").isSplatForm()) {
      padded = builder.constant(padDense(v->definingOp()->getDense("value"), axis, to));
    } else {
      Shape blockShape = v->type().shape;
      blockShape[axis] = Dim::fixed(to - blockShape[axis].size);
      Value *block =
          builder.create(OpKind::Broadcast, {zero(v->type().dtype)}, {{"shape", blockShape}});
      FUSEC_ASSERT(block, "cannot broadcast a zero block");
      block->setName(g.uniqueName("zeros"));
      padded = builder.create(OpKind::Concat, {v, block}, {{"axis", int64_t(axis)}});
    }
    FUSEC_ASSERT(padded, "padding an operand failed");
    auto made = madeFrom.find(v); // padded twice: name it for the original
    std::string base = made == madeFrom.end() ? v->name() : made->second;
    padded->setName(g.uniqueName(base + ".padded"));
    madeFrom[padded] = base;
    return padded;
  }

private:
  Value *zero(DType t) {
    if (!zeroScalar || zeroScalar->type().dtype != t) {
      zeroScalar = builder.scalar(t, 0.0);
      zeroScalar->setName(g.uniqueName("zero"));
    }
    return zeroScalar;
  }

  Graph &g;
  Diagnostics scratch; // the rewrite is well-typed by construction; failures assert
  Builder builder;
  Value *zeroScalar = nullptr;
  std::unordered_map<const Value *, std::string> madeFrom;
};

// Erases the constants among `values` that nothing uses any more.
void eraseUnusedConstants(Graph &g, const std::vector<Value *> &values) {
  std::unordered_set<Value *> unused;
  for (Value *v : values)
    if (isConstant(v) && !v->hasUses())
      unused.insert(v);
  for (Value *v : unused)
    g.erase(v->definingOp());
}

} // namespace

bool alignForTensorCores(Graph &g, Op &op) {
  AlignPlan plan = planFor(op);
  if (plan.pads.empty())
    return false;
  for (const OperandPad &p : plan.pads)
    if (!canPad(op.operand(p.operand), p.axis))
      return false;
  Padder padder(g, op);
  std::vector<Value *> operands = op.operands(), replaced;
  for (const OperandPad &p : plan.pads) {
    replaced.push_back(operands[p.operand]);
    operands[p.operand] = padder.pad(operands[p.operand], p.axis, p.to);
  }
  AttrList attrs = op.attrs();
  attrs.insert(attrs.end(), plan.extraAttrs.begin(), plan.extraAttrs.end());
  std::string name = op.result()->name();
  Builder &b = padder.build();
  Value *result = b.create(op.kind(), operands, std::move(attrs));
  FUSEC_ASSERT(result, "padding made a contraction ill-typed");
  if (plan.sliceBack) {
    result->setName(g.uniqueName(name + ".padded"));
    auto [axis, size] = *plan.sliceBack;
    result = b.create(OpKind::Slice, {result},
                      {{"axis", int64_t(axis)}, {"start", int64_t(0)}, {"end", size}});
  }
  FUSEC_ASSERT(result && result->type() == op.result()->type(), "padding changed a type");
  op.result()->replaceAllUsesWith(result);
  g.erase(&op);
  eraseUnusedConstants(g, replaced);
  result->setName(name);
  return true;
}

} // namespace fusec::precision
