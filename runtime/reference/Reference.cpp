// The CPU reference executor's driver: binds inputs, walks the ops in order,
// dispatches each to its kernel (ReferenceOps.h), checks the result against
// the op's declared type, and frees every intermediate after its last use.
//
// Dispatch is one switch over OpKind with no default, so that an op added
// to ir/Ops.def without a kernel does not compile. Symbolic dims are bound
// from the inputs; a named dim first produced by an op (say by `broadcast`)
// is bound from that op's actual result, and every later appearance must
// match. `?` dims are checked by the kernels, which see the actual shapes.
// A `kernel` op runs its body as a graph of its own, on its operands'
// tensors and with the enclosing graph's bindings.
#include "runtime/reference/Reference.h"

#include "ir/Assert.h"
#include "ir/Verifier.h"
#include "runtime/reference/Ops.h"

#include <cmath>
#include <functional>
#include <numeric>
#include <unordered_map>

namespace fusec {

namespace {

std::string inputName(const Graph &g, unsigned i) { return "'%" + g.input(i)->name() + "'"; }

} // namespace

bool bindInputs(const Graph &g, const std::vector<Tensor> &inputs, DimBindings &bindings,
                Diagnostics &diags) {
  if (inputs.size() != g.numInputs()) {
    diags.error(g.loc(), "graph '@" + g.name() + "' takes " + std::to_string(g.numInputs()) +
                             " inputs, got " + std::to_string(inputs.size()));
    return false;
  }
  for (unsigned i = 0; i < g.numInputs(); ++i) {
    const TensorType &type = g.input(i)->type();
    const Tensor &t = inputs[i];
    std::string what = "input " + inputName(g, i) + " of type " + type.str();
    if (t.dtype != type.dtype || t.shape.size() != type.rank()) {
      diags.error(g.loc(), what + " was given " + t.typeStr());
      return false;
    }
    std::string problem;
    if (!bindShape(type, t.shape, what + " given " + t.typeStr() + ":", bindings, problem)) {
      diags.error(g.loc(), problem);
      return false;
    }
  }
  return true;
}

std::vector<int64_t> resolveShape(const Shape &shape, const DimBindings &bindings) {
  std::vector<int64_t> sizes;
  for (const Dim &d : shape) {
    if (d.isStatic()) {
      sizes.push_back(d.size);
      continue;
    }
    auto it = bindings.find(d.symbol);
    FUSEC_ASSERT(it != bindings.end(), "resolveShape: unbound symbolic dim");
    sizes.push_back(it->second);
  }
  return sizes;
}

namespace {

bool runKernel(const ref::OpContext &ctx, Tensor &out) {
  using namespace ref;
  switch (ctx.op.kind()) {
  case OpKind::Const:
    return runConst(ctx, out);
  case OpKind::Neg:
  case OpKind::Abs:
  case OpKind::Exp:
  case OpKind::Log:
  case OpKind::Sqrt:
  case OpKind::Rsqrt:
  case OpKind::Tanh:
  case OpKind::Erf:
  case OpKind::Sigmoid:
  case OpKind::Relu:
  case OpKind::Gelu:
  case OpKind::Silu:
  case OpKind::Sin:
  case OpKind::Cos:
  case OpKind::Floor:
  case OpKind::Ceil:
  case OpKind::Round:
  case OpKind::Sign:
    return runUnary(ctx, out);
  case OpKind::Cast:
    return runCast(ctx, out);
  case OpKind::Add:
  case OpKind::Sub:
  case OpKind::Mul:
  case OpKind::Div:
  case OpKind::Pow:
  case OpKind::Max:
  case OpKind::Min:
    return runBinary(ctx, out);
  case OpKind::Eq:
  case OpKind::Ne:
  case OpKind::Lt:
  case OpKind::Le:
  case OpKind::Gt:
  case OpKind::Ge:
    return runCompare(ctx, out);
  case OpKind::Where:
    return runWhere(ctx, out);
  case OpKind::ReduceSum:
  case OpKind::ReduceMax:
  case OpKind::ReduceMin:
  case OpKind::ReduceMean:
  case OpKind::ReduceProd:
    return runReduce(ctx, out);
  case OpKind::LayerNorm:
  case OpKind::RmsNorm:
    return runLayerNorm(ctx, out);
  case OpKind::Softmax:
    return runSoftmax(ctx, out);
  case OpKind::BatchNorm:
    return runBatchNorm(ctx, out);
  case OpKind::MatMul:
    return runMatMul(ctx, out);
  case OpKind::Linear:
    return runLinear(ctx, out);
  case OpKind::Attention:
    return runAttention(ctx, out);
  case OpKind::Reshape:
    return runReshape(ctx, out);
  case OpKind::Transpose:
    return runTranspose(ctx, out);
  case OpKind::Slice:
    return runSlice(ctx, out);
  case OpKind::Concat:
    return runConcat(ctx, out);
  case OpKind::Broadcast:
    return runBroadcast(ctx, out);
  case OpKind::Gather:
    return runGather(ctx, out);
  case OpKind::GatherElements:
    return runGatherElements(ctx, out);
  case OpKind::CumSum:
    return runCumSum(ctx, out);
  case OpKind::TopK:
    return runTopK(ctx, out);
  case OpKind::Conv2d:
    return runConv2d(ctx, out);
  case OpKind::MaxPool2d:
  case OpKind::AvgPool2d:
    return runPool2d(ctx, out);
  case OpKind::Kernel:
    break; // runs its body (Executor::compute)
  }
  FUSEC_ASSERT(false, "unknown op kind");
}

/// Runs one graph: a slot per value, holding either a pointer to a caller's
/// input or the tensor an op produced.
class Executor {
public:
  Executor(const Graph &g, const std::vector<const Tensor *> &inputs, DimBindings bindings,
           MemoryBudget &memory, Diagnostics &diags)
      : graph(g), bindings(std::move(bindings)), memory(memory), diags(diags) {
    for (unsigned i = 0; i < g.numInputs(); ++i)
      slotOf(g.input(i)).view = inputs[i];
  }
  ~Executor() {
    for (auto &[v, slot] : slots)
      memory.release(slot.owned.bytes.size());
  }

  bool run(std::vector<Tensor> &outputs) {
    computeLastUses();
    size_t index = 0;
    for (const auto &op : graph.ops())
      if (!runOp(*op, index++))
        return false;
    outputs.clear();
    outputs.reserve(graph.outputs().size());
    for (Value *v : graph.outputs()) {
      Slot &s = slotOf(v);
      if (s.view != &s.owned) {
        outputs.push_back(*s.view);
        continue;
      }
      memory.release(s.owned.bytes.size()); // moved out: the caller's now
      outputs.push_back(std::move(s.owned));
      s.view = &outputs.back(); // a value returned twice is copied the second time
    }
    return true;
  }

private:
  struct Slot {
    Tensor owned;
    const Tensor *view = nullptr;
    size_t lastUse = 0; // index of the last op reading it; SIZE_MAX: a graph output
  };

  Slot &slotOf(const Value *v) { return slots[v]; }

  void computeLastUses() {
    size_t index = 0;
    for (const auto &op : graph.ops()) {
      for (Value *v : op->operands())
        slotOf(v).lastUse = index;
      for (unsigned i = 0; i < op->numResults(); ++i)
        slotOf(op->result(i)).lastUse = index; // unused results die at once
      ++index;
    }
    for (Value *v : graph.outputs())
      slotOf(v).lastUse = SIZE_MAX;
  }

  bool runOp(const Op &op, size_t index) {
    std::vector<const Tensor *> operands;
    for (Value *v : op.operands()) {
      FUSEC_ASSERT(slotOf(v).view, "operand used before it is defined or after it is freed");
      operands.push_back(slotOf(v).view);
    }
    std::vector<Tensor> results;
    if (!checkAllocations(op, operands) || !compute(op, operands, results))
      return false;
    FUSEC_ASSERT(results.size() == op.numResults(), "an op computed the wrong number of results");
    for (unsigned i = 0; i < op.numResults(); ++i) {
      if (!checkResult(op, i, results[i]))
        return false;
      Slot &result = slotOf(op.result(i));
      if (!memory.reserveBytes(results[i].bytes.size(), resultName(op, i), op.loc(), diags))
        return false;
      result.owned = std::move(results[i]);
      result.view = &result.owned;
    }
    for (Value *v : op.operands())
      release(v, index);
    for (unsigned i = 0; i < op.numResults(); ++i)
      release(op.result(i), index);
    return true;
  }

  /// Refuses an op whose results would exceed kMaxTensorBytes or the memory
  /// budget (Note [Memory budget]) before its kernel allocates them. Result types are inferred
  /// again from the operands' actual shapes, so `?` dims resolve too; where inference fails the
  /// kernel itself reports the mismatch. Kernel ops are checked op by op when their bodies run.
  bool checkAllocations(const Op &op, const std::vector<const Tensor *> &operands) {
    if (op.body())
      return true;
    std::vector<TensorType> actual;
    for (unsigned i = 0; i < operands.size(); ++i)
      actual.push_back(
          {operands[i]->dtype, staticShape(operands[i]->shape), op.operand(i)->type().layout});
    Diagnostics scratch;
    std::vector<TensorType> results;
    if (!inferResultTypes(op.kind(), actual, op.attrs(), op.loc(), scratch, results))
      return true;
    MemoryBudget trial = memory; // the results are charged once computed
    for (unsigned i = 0; i < results.size(); ++i) {
      const TensorType &t = results[i];
      std::vector<int64_t> shape;
      for (const Dim &d : t.shape) {
        auto bound = bindings.find(d.symbol);
        if (!d.isStatic() && bound == bindings.end())
          break; // an unbound name: the kernel binds it
        shape.push_back(d.isStatic() ? d.size : bound->second);
      }
      if (shape.size() == t.rank() &&
          !trial.reserve(t.dtype, shape, resultName(op, i), op.loc(), diags))
        return false;
    }
    return true;
  }

  /// A kernel op runs its body; every other op its one kernel.
  bool compute(const Op &op, const std::vector<const Tensor *> &operands,
               std::vector<Tensor> &results) {
    if (op.body())
      return Executor(*op.body(), operands, bindings, memory, diags).run(results);
    results.resize(1);
    return runKernel(ref::OpContext{op, operands, bindings, diags}, results[0]);
  }

  /// Frees a value's tensor once op `index` was its last reader.
  void release(const Value *v, size_t index) {
    Slot &s = slotOf(v);
    if (s.lastUse != index || v->isGraphInput())
      return;
    memory.release(s.owned.bytes.size());
    s.owned = Tensor();
    s.view = nullptr;
  }

  bool checkResult(const Op &op, unsigned i, const Tensor &t) {
    const TensorType &type = op.result(i)->type();
    FUSEC_ASSERT(t.dtype == type.dtype && t.shape.size() == type.rank(),
                 "a kernel's result dtype or rank differs from the inferred type");
    std::string problem;
    std::string what = "'" + std::string(op.name()) + "' result of type " + type.str();
    if (bindShape(type, t.shape, what + " computed as " + t.typeStr() + ":", bindings, problem))
      return true;
    diags.error(op.loc(), problem);
    return false;
  }

  static std::string resultName(const Op &op, unsigned i) {
    return "'" + std::string(op.name()) + "' result '%" + op.result(i)->name() + "'";
  }

  const Graph &graph;
  DimBindings bindings;
  MemoryBudget &memory;
  Diagnostics &diags;
  std::unordered_map<const Value *, Slot> slots;
};

} // namespace

bool runReference(const Graph &g, const std::vector<Tensor> &inputs, std::vector<Tensor> &outputs,
                  Diagnostics &diags, MemoryBudget *budget) {
  MemoryBudget machine;
  MemoryBudget &memory = budget ? *budget : machine;
  DimBindings bindings;
  if (!bindInputs(g, inputs, bindings, diags))
    return false;
  std::vector<const Tensor *> views;
  for (const Tensor &t : inputs)
    views.push_back(&t);
  return Executor(g, views, std::move(bindings), memory, diags).run(outputs);
}

namespace {
/// The reduction length K when `v` is the weight operand of a contraction
/// (matmul's b, linear's w, conv2d's w), also through casts and into kernel
/// bodies (an optimized graph casts and fuses its weights); 0 when it is not.
int64_t weightFanIn(const Value &v, const std::vector<int64_t> &shape) {
  if (shape.size() < 2)
    return 0;
  for (const Use &u : v.uses()) {
    if (!u.user)
      continue;
    int64_t k = 0;
    switch (u.user->kind()) {
    case OpKind::Kernel:
      k = weightFanIn(*u.user->body()->input(u.index), shape);
      break;
    case OpKind::Cast:
      k = weightFanIn(*u.user->result(), shape);
      break;
    case OpKind::MatMul:
      k = u.index == 1 ? shape[shape.size() - (u.user->getBool("transpose_b") ? 1 : 2)] : 0;
      break;
    case OpKind::Linear:
      k = u.index == 1 ? shape.back() : 0;
      break;
    case OpKind::Conv2d:
      k = u.index == 1 ? std::accumulate(shape.begin() + 1, shape.end(), int64_t(1),
                                         std::multiplies<int64_t>())
                       : 0;
      break;
    default:
      break;
    }
    if (k)
      return k;
  }
  return 0;
}

/// Whether `v` is the running variance of a batch_norm (operand 4), also
/// through casts and into kernel bodies: a variance is never negative, and
/// a random negative one would make the normalization NaN.
bool isVariance(const Value &v) {
  for (const Use &u : v.uses()) {
    if (!u.user)
      continue;
    if ((u.user->kind() == OpKind::BatchNorm && u.index == 4) ||
        (u.user->kind() == OpKind::Kernel && isVariance(*u.user->body()->input(u.index))) ||
        (u.user->kind() == OpKind::Cast && isVariance(*u.user->result())))
      return true;
  }
  return false;
}

/// The extent of the axis that `v` indexes as the indices of a gather or gather_elements (its
/// operand 1): the
/// smallest over such uses, or 0 when there is none or one indexes an axis of symbolic or zero
/// extent. Random indices drawn from [-d, d) are in range, so a random run does not fail.
int64_t gatherExtent(const Value &v) {
  int64_t extent = 0;
  for (const Use &u : v.uses()) {
    if (!u.user || !isIndexedRead(u.user->kind()) || u.index != 1)
      continue;
    const TensorType &data = u.user->operand(0)->type();
    const Dim &d = data.shape[*normalizeAxis(u.user->getInt("axis"), data.rank())];
    if (!d.isStatic() || d.size <= 0)
      return 0;
    extent = extent ? std::min(extent, d.size) : d.size;
  }
  return extent;
}

} // namespace

bool randomInput(const Value &input, const std::vector<int64_t> &shape, uint64_t seed, Tensor &out,
                 Diagnostics &diags) {
  if (std::string problem = allocationProblem(input.type().dtype, shape); !problem.empty()) {
    diags.error(Loc{}, "input '%" + input.name() + "' of type " + problem);
    return false;
  }
  Tensor t(input.type().dtype, shape);
  int64_t fanIn = isFloat(t.dtype) ? weightFanIn(input, shape) : 0;
  double bound = fanIn > 0 ? 1.0 / std::sqrt(double(fanIn)) : 1.0;
  if (isFloat(t.dtype) && isVariance(input))
    fillRandom(t, seed, 0.5, 1.5);
  else if (int64_t extent = isInteger(t.dtype) ? gatherExtent(input) : 0; extent > 0)
    fillRandom(t, seed, -double(extent), double(extent - 1));
  else
    fillRandom(t, seed, -bound, bound);
  out = std::move(t);
  return true;
}

} // namespace fusec
