// precision: autocast an f32 graph to f16 or bf16 (`--precision`), keeping
// its inputs, outputs and meaning (within the low type's tolerance).
//
// One forward sweep decides, per op, where its f32 values are stored:
//  - contractions (matmul, linear, conv2d, attention) take every operand in
//    the low type and produce it, with `acc = f32` on the op: compiled code
//    accumulates in f32 (the reference accumulates in f64 in any case);
//  - reduce_sum, reduce_mean and reduce_prod keep f32 results, their
//    operands cast up to f32: a sum or mean is a statistic, and storing it
//    rounded would cancel badly in x − mean; a product in f16 overflows and
//    underflows long before its f32 one. reduce_max and reduce_min follow their operand's
//    storage like pointwise ops: rounding is monotonic, so the max of
//    rounded values is the rounded max;
//  - pointwise, movement, normalization and pooling ops whose f32 operands
//    are all available in the low type (values already lowered, constants,
//    casts from the low type; at least one not a constant) run on the low
//    type: storage is low, and codegen computes in f32 registers (the
//    reference in f64). Normalizations keep their statistics in f32 inside
//    the op: that is codegen's contract, as the reference's f64 is. Any other
//    such op runs in f32, its lowered operands cast back up;
//  - a cast reads its operand in whatever type it is stored in: widening a
//    lowered value to f32 is exact, so casting it to any type from the low
//    type gives what casting its f32 copy would;
//  - every other op (constants, kernels) is left as it was.
// A value is cast to another type at most once (casts are memoized and put
// before the first op that needs them); constants are converted, not cast.
// Lowered graph outputs are cast back to f32 at the end.
//
// Then: tensor-core alignment (PrecisionAlign.cpp) pads the static K and N
// dims of low-type matmul, linear and attention ops to multiples of 8, and
// redundant casts go: cast(x) to x's own type → x, and cast(cast(x, A), T)
// with x: T and A exactly holding T (bf16 → f32 → bf16) → x. Casts,
// constants and movement ops that this pass left unused are erased.
//
// A contraction's operand made by a reshape or transpose that feeds nothing
// else is cast before the movement instead of after it (exact: movement
// commutes with a cast), so the data moves in the low type and fusion can
// take the cast into its producer's epilogue.
//
// Deliberately not done: values that are not f32 (f64, integers, existing
// f16/bf16) keep their types, though low-type contractions among them get
// `acc = f32`; kernel bodies are not looked into (precision runs before
// fusion); general cast folding and constant folding are canonicalize's.
// `--precision=fp32` changes nothing. Running the pass twice gives the same
// graph as running it once.
#include "passes/Precision.h"

#include "ir/Assert.h"
#include "ir/Builder.h"
#include "ir/Verifier.h"
#include "passes/PassManager.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <unordered_set>

namespace fusec {

namespace {

bool isProducedBy(const Value &v, OpKind k) {
  return v.definingOp() && v.definingOp()->kind() == k;
}

bool isContraction(OpKind k) {
  return k == OpKind::MatMul || k == OpKind::Linear || k == OpKind::Attention ||
         k == OpKind::Conv2d;
}

// Ops whose result dtype is their operands' and whose math codegen does in
// f32 registers whatever the storage type.
bool followsOperandStorage(const Op &op) {
  switch (op.info().cls) {
  case OpClass::Pointwise:
    return op.kind() != OpKind::Cast;
  case OpClass::Reduction:
    return op.kind() == OpKind::ReduceMax || op.kind() == OpKind::ReduceMin;
  case OpClass::Normalization:
  case OpClass::Movement:
    return true;
  case OpClass::Window:
    return !isContraction(op.kind());
  default:
    return false;
  }
}

// Re-infers op's result types after its operand types changed.
void retype(Op &op) {
  std::vector<TensorType> operandTypes, results;
  for (Value *v : op.operands())
    operandTypes.push_back(v->type());
  Diagnostics scratch;
  bool ok =
      inferResultTypes(op.kind(), operandTypes, op.attrs(), op.loc(), scratch, results, op.body());
  FUSEC_ASSERT(ok && results.size() == op.numResults(), "autocast made an op ill-typed");
  for (unsigned i = 0; i < op.numResults(); ++i)
    op.result(i)->setType(results[i]);
}

/// The autocast sweep over one graph (see the file comment).
class Autocast {
public:
  Autocast(Graph &g, DType low) : g(g), low(low), builder(g, scratch) {}

  void run() {
    for (Op *op : g.opsSnapshot())
      process(*op);
    for (unsigned i = 0; i < g.outputs().size(); ++i)
      if (lowered.count(g.outputs()[i]))
        g.setOutput(i, toF32(g.outputs()[i], nullptr));
  }

  /// Values this sweep replaced somewhere: their producers may now be dead.
  std::unordered_set<const Value *> replaced;

private:
  void process(Op &op) {
    if (isContraction(op.kind()))
      return lowerContraction(op);
    if (op.kind() == OpKind::Cast)
      return; // reads any storage (see the file comment)
    if (followsOperandStorage(op) && canRunLow(op))
      return runLow(op);
    keepF32(op);
  }

  bool wasF32(const Value &v) const { return v.type().dtype == DType::F32 || lowered.count(&v); }

  // The value is in the low type already, or can be had in it exactly or for free.
  bool availableLow(const Value &v) const {
    if (lowered.count(&v) || isProducedBy(v, OpKind::Const))
      return true;
    return isProducedBy(v, OpKind::Cast) && v.definingOp()->operand(0)->type().dtype == low;
  }

  bool canRunLow(const Op &op) const {
    bool readsVariable = false;
    for (const Value *v : op.operands()) {
      if (!wasF32(*v))
        continue;
      if (!availableLow(*v))
        return false;
      readsVariable = readsVariable || !isProducedBy(*v, OpKind::Const);
    }
    return readsVariable;
  }

  void lowerContraction(Op &op) {
    if (op.result()->type().dtype == DType::F32) {
      for (unsigned i = 0; i < op.numOperands(); ++i)
        if (wasF32(*op.operand(i))) // an attention mask may have another dtype: it stays
          replaceOperand(op, i, toLow(op.operand(i), &op));
      retype(op);
      lowered.insert(op.result());
    }
    if (isNarrowFloat(op.result()->type().dtype))
      op.setAttr("acc", DType::F32);
  }

  void runLow(Op &op) {
    for (unsigned i = 0; i < op.numOperands(); ++i)
      if (wasF32(*op.operand(i)))
        replaceOperand(op, i, toLow(op.operand(i), &op));
    retype(op);
    for (unsigned i = 0; i < op.numResults(); ++i)
      if (op.result(i)->type().dtype == low)
        lowered.insert(op.result(i));
  }

  void keepF32(Op &op) {
    for (unsigned i = 0; i < op.numOperands(); ++i)
      if (lowered.count(op.operand(i)))
        replaceOperand(op, i, toF32(op.operand(i), &op));
  }

  void replaceOperand(Op &op, unsigned i, Value *v) {
    if (op.operand(i) != v)
      replaced.insert(op.operand(i));
    op.setOperand(i, v);
  }

  // `v` (f32, or lowered from f32) in the low type, made before `at`.
  Value *toLow(Value *v, Op *at) {
    if (lowered.count(v))
      return v;
    FUSEC_ASSERT(v->type().dtype == DType::F32, "autocasting a value that is not f32");
    Value *&copy = lowCopies[v];
    if (copy)
      return copy;
    if (isProducedBy(*v, OpKind::Cast) && v->definingOp()->operand(0)->type().dtype == low)
      return copy = v->definingOp()->operand(0);
    if (Value *moved = lowThroughMovement(*v, at))
      return copy = moved;
    builder.setInsertionPoint(at);
    builder.setLoc(at->loc());
    copy = isProducedBy(*v, OpKind::Const) ? lowConstant(*v) : builder.cast(v, low);
    FUSEC_ASSERT(copy, "cannot cast to the low type");
    copy->setName(g.uniqueName(v->name() + "." + std::string(dtypeName(low))));
    return copy;
  }

  // cast(reshape|transpose|slice(x)) → reshape|transpose|slice(cast(x)),
  // exact: when the movement op only feeds the contraction `at`, the data
  // moves in the low type and the cast lands beside x's producer, where fusion
  // can take it into an epilogue (the q, k, v of attention: a gemm then
  // reshapes and transposes). A tensor that `at` slices may have other
  // slices beside it (q, k and v sliced from one projection: each goes the
  // same way, and the tensor's low copy is made once). The f32 movement op is
  // left unused; eraseLeftovers erases it.
  Value *lowThroughMovement(const Value &v, Op *at) {
    Op *m = v.definingOp();
    bool onlyHere = std::all_of(v.uses().begin(), v.uses().end(), [&](const Use &u) {
      return u.user == at ||
             (u.user && u.user->kind() == OpKind::Slice && at->kind() == OpKind::Slice);
    });
    if (!m || !onlyHere ||
        (m->kind() != OpKind::Reshape && m->kind() != OpKind::Transpose &&
         m->kind() != OpKind::Slice))
      return nullptr;
    Value *x = toLow(m->operand(0), m);
    TensorType type = v.type();
    type.dtype = low;
    Op *copy = g.createOp(m->kind(), {x}, {type}, m->attrs(), m->loc(), at);
    retype(*copy);
    copy->result()->setName(g.uniqueName(v.name() + "." + std::string(dtypeName(low))));
    lowered.insert(copy->result());
    replaced.insert(&v);
    return copy->result();
  }

  // A lowered value back in f32, made before `at` (null: at the end).
  Value *toF32(Value *v, Op *at) {
    Value *&copy = f32Copies[v];
    if (copy)
      return copy;
    builder.setInsertionPoint(at);
    builder.setLoc(at ? at->loc() : g.loc());
    copy = builder.cast(v, DType::F32);
    FUSEC_ASSERT(copy, "cannot cast back to f32");
    copy->setName(g.uniqueName(v->name() + ".f32"));
    return copy;
  }

  // A constant's data rounded to the low type, layout tag kept. Finite
  // values beyond the low type's range saturate to its largest finite value:
  // a -1e9 "masked" score must stay a large finite number, not become -inf
  // (a fully masked row would turn from uniform into NaN under softmax, into
  // 0 under attention).
  Value *lowConstant(const Value &c) {
    const DenseData &data = c.definingOp()->getDense("value");
    double maxFinite = low == DType::F16 ? 65504.0 : 3.3895313892515355e38;
    std::vector<double> values(data.numStoredElements());
    for (size_t i = 0; i < values.size(); ++i) {
      double v = data.elementAsDouble(i);
      values[i] = std::isfinite(v) ? std::clamp(v, -maxFinite, maxFinite) : v;
    }
    Value *copy = data.isSplatForm() ? builder.splat(low, data.shape, values.front())
                                     : builder.constant(low, data.shape, values);
    TensorType type = copy->type();
    type.layout = c.type().layout;
    copy->setType(type);
    return copy;
  }

  Graph &g;
  DType low;
  Diagnostics scratch; // only bugs fail here, and those assert
  Builder builder;
  std::unordered_set<const Value *> lowered; // results retyped from f32 to `low`
  std::unordered_map<const Value *, Value *> lowCopies, f32Copies;
};

// cast(x) {to = T} with x: T  →  x
Value *castToOwnType(const Op &op) {
  Value *x = op.operand(0);
  return x->type() == op.result()->type() ? x : nullptr;
}

// cast(cast(x) {to = A}) {to = T} with x: T and every T exact in A  →  x
Value *castRoundTrip(const Op &op) {
  const Op *inner = op.operand(0)->definingOp();
  if (!inner || inner->kind() != OpKind::Cast)
    return nullptr;
  Value *x = inner->operand(0);
  bool exact = castIsExact(x->type().dtype, inner->getDType("to"));
  return exact && x->type() == op.result()->type() ? x : nullptr;
}

void removeRedundantCasts(Graph &g, std::unordered_set<const Value *> &replaced) {
  for (Op *op : g.opsSnapshot()) {
    if (op->kind() != OpKind::Cast)
      continue;
    Value *x = castToOwnType(*op);
    if (!x)
      x = castRoundTrip(*op);
    if (!x)
      continue;
    replaced.insert(op->result());
    op->result()->replaceAllUsesWith(x);
  }
}

// Erases the casts, constants and moved reshapes/transposes whose results
// this pass left unused; the reverse sweep meets a dead op before the dead
// op it reads.
void eraseLeftovers(Graph &g, std::unordered_set<const Value *> &replaced) {
  std::vector<Op *> ops = g.opsSnapshot();
  for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
    Op *op = *it;
    OpKind k = op->kind();
    bool ours = k == OpKind::Cast || k == OpKind::Const || k == OpKind::Reshape ||
                k == OpKind::Transpose || k == OpKind::Slice;
    if (!ours || op->result()->hasUses() || !replaced.count(op->result()))
      continue;
    if (k != OpKind::Const)
      replaced.insert(op->operand(0));
    g.erase(op);
  }
}

void alignContractions(Graph &g) {
  for (Op *op : g.opsSnapshot())
    if (isContraction(op->kind()) && isNarrowFloat(op->result()->type().dtype))
      precision::alignForTensorCores(g, *op);
}

} // namespace

bool runPrecision(Graph &g, const PassOptions &opts, Diagnostics &) {
  if (opts.precision == PrecisionChoice::FP32)
    return true;
  Autocast autocast(g, opts.precision == PrecisionChoice::FP16 ? DType::F16 : DType::BF16);
  autocast.run();
  alignContractions(g);
  removeRedundantCasts(g, autocast.replaced);
  eraseLeftovers(g, autocast.replaced);
  return true;
}

} // namespace fusec
