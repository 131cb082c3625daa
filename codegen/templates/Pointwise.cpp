// The pointwise template's kir builder: one kernel, a grid-stride loop over
// the flattened output index space (PointwisePlan.cpp), that loads each
// operand element, evaluates the body's ops in order (one math instruction
// per op) and stores every result. Splat constants are literals; other
// constants are tables in global memory.
//
// Vector path (PointwisePlan::width = V > 1): a loop over vectors of V
// elements: one vector load per flat-indexed operand into a local array, the
// element body in a fully unrolled loop over the V lanes, one vector store
// per result from its local array; the numel % V tail elements run the
// scalar loop. Base pointers are 16-byte aligned (a runtime guarantee), so
// vector i is aligned to its size.
//
// Not done here: reporting an integer division by zero (it gives 0).
#include "codegen/templates/Pointwise.h"

#include "codegen/templates/PointwisePlan.h"
#include "codegen/templates/Index.h"
#include "ir/Assert.h"

#include <map>

namespace fusec::codegen {

namespace {

using kir::ValueId;

class PointwiseBuilder {
public:
  PointwiseBuilder(const Op &kernel, const PointwisePlan &plan)
      : kernel(kernel), body(*kernel.body()), plan(plan), b(k) {}

  kir::Kernel run();

private:
  /// Where the lanes of the vector path live: a local array per flat
  /// operand and per result, and the lane.
  struct Lanes {
    std::map<const Value *, ValueId> arrays;
    ValueId lane = kir::kNoValue;
  };

  ValueId scalar(const PointwiseScalar &s) { return s.value ? b.index(*s.value) : params[s.arg]; }
  ValueId pointer(const Value *v) const { return params[plan.pointerArg.at(v)]; }
  bool isFlat(const Value *v) const {
    auto it = plan.index.find(v);
    return it != plan.index.end() && it->second.flat;
  }
  void declareParams();
  void declareConstants();
  std::map<unsigned, ValueId> coordinates(ValueId i);
  ValueId indexOf(const PointwiseIndex &index, ValueId i, const std::map<unsigned, ValueId> &c);
  void element(ValueId i, const Lanes *lanes);
  void vectorLoop(ValueId first, ValueId numVectors, ValueId step);
  std::vector<std::string> comment() const;

  const Op &kernel;
  const Graph &body;
  const PointwisePlan &plan;
  kir::Kernel k;
  kir::Builder b;
  std::vector<ValueId> params;              // by KernelArg index
  std::map<const Value *, ValueId> splats;  // splat constants: their literal
  std::map<const Value *, unsigned> tables; // other constants: their table
};

void PointwiseBuilder::declareParams() {
  for (const KernelArg &a : plan.args) {
    if (!a.isPointer()) {
      params.push_back(b.param(a.name, kir::Type::index()));
      continue;
    }
    bool in = a.kind == KernelArg::Kind::Input;
    DType t = (in ? kernel.operand(a.index) : kernel.result(a.index))->type().dtype;
    params.push_back(
        b.param(a.name, kir::Type::pointer(kir::storageType(t), kir::Space::Global), in));
  }
}

void PointwiseBuilder::declareConstants() {
  Namer tableNames;
  for (const auto &op : body.ops()) {
    if (op->kind() != OpKind::Const)
      continue;
    const DenseData &d = op->getDense("value");
    if (d.isSplat())
      splats[op->result()] = b.literal(d, "v_" + op->result()->name());
    else
      tables[op->result()] =
          b.table(tableNames.fresh(plan.entry + "_table_", op->result()->name()), d);
  }
}

std::map<unsigned, ValueId> PointwiseBuilder::coordinates(ValueId i) {
  return codegen::coordinates(b, i, unsigned(plan.space.size()), plan.coords,
                              [&](unsigned axis) { return scalar(plan.extents[axis]); });
}

/// `i` itself, or the sum of coordinate * stride over the index's terms.
ValueId PointwiseBuilder::indexOf(const PointwiseIndex &index, ValueId i,
                                  const std::map<unsigned, ValueId> &c) {
  if (index.flat)
    return i;
  std::vector<std::pair<unsigned, ValueId>> terms;
  for (const auto &[axis, stride] : index.terms)
    terms.push_back({axis, scalar(stride)});
  return stridedOffset(b, c, terms);
}

/// The body for element `i`: loads, one math instruction per op, stores.
/// On the vector path flat operands and results go through `lanes`.
void PointwiseBuilder::element(ValueId i, const Lanes *lanes) {
  std::map<unsigned, ValueId> c = coordinates(i);
  std::map<const Value *, ValueId> value;
  for (const Value *v : body.inputs()) {
    if (!v->hasUses())
      continue;
    DType t = v->type().dtype;
    std::string name = "v_" + v->name(), loaded = kir::storageType(t) == kir::computeType(t) ? name : "";
    ValueId x = lanes && isFlat(v) ? b.load(lanes->arrays.at(v), lanes->lane, 1, loaded)
                                   : b.load(pointer(v), indexOf(plan.index.at(v), i, c), 1, loaded);
    value[v] = b.widen(t, x, name);
  }
  for (const auto &op : body.ops()) {
    const Value *r = op->result();
    if (auto s = splats.find(r); s != splats.end())
      value[r] = s->second;
    else if (auto t = tables.find(r); t != tables.end()) {
      ValueId table = b.tableAddress(t->second);
      value[r] = b.load(table, indexOf(plan.index.at(r), i, c), 1, "v_" + r->name());
    } else {
      std::vector<ValueId> args;
      for (const Value *v : op->operands())
        args.push_back(value.at(v));
      value[r] = b.math(kir::mathOf(*op), args, "v_" + r->name());
    }
  }
  for (unsigned j = 0; j < kernel.numResults(); ++j) {
    ValueId y = b.narrow(kernel.result(j)->type().dtype, value.at(body.outputs()[j]));
    if (lanes)
      b.store(lanes->arrays.at(kernel.result(j)), lanes->lane, y);
    else
      b.store(pointer(kernel.result(j)), i, y);
  }
}

void PointwiseBuilder::vectorLoop(ValueId first, ValueId numVectors, ValueId step) {
  unsigned width = plan.width;
  b.forLoop(first, numVectors, step, "vi", 0, [&](ValueId vi) {
    ValueId base = b.mul(vi, b.index(width), "base");
    Lanes lanes;
    auto array = [&](const Value *v, ValueId ptr) {
      DType t = kir::storageType(v->type().dtype);
      return lanes.arrays[v] = b.localArray(t, width, k.values[ptr].name + "_v");
    };
    ValueId zero = b.index(0);
    for (const Value *v : body.inputs()) {
      if (!v->hasUses() || !isFlat(v))
        continue;
      ValueId a = array(v, pointer(v));
      b.store(a, zero, b.load(pointer(v), base, width), width);
    }
    for (unsigned j = 0; j < kernel.numResults(); ++j)
      array(kernel.result(j), pointer(kernel.result(j)));
    ValueId lanesEnd = b.index(width), one = b.index(1);
    b.forLoop(zero, lanesEnd, one, "e", -1, [&](ValueId e) {
      lanes.lane = e;
      element(b.add(base, e, "element"), &lanes);
    });
    for (unsigned j = 0; j < kernel.numResults(); ++j) {
      const Value *r = kernel.result(j);
      b.store(pointer(r), base, b.load(lanes.arrays.at(r), zero, width), width);
    }
  });
}

std::vector<std::string> PointwiseBuilder::comment() const {
  std::string ops;
  for (const auto &op : body.ops())
    if (op->kind() != OpKind::Const)
      ops += (ops.empty() ? "" : ", ") + std::string(op->name());
  return {plan.entry + ": pointwise kernel over " + shapeStr(plan.space),
          "fuses: " + (ops.empty() ? "(copies only)" : ops)};
}

kir::Kernel PointwiseBuilder::run() {
  k.name = plan.entry;
  k.comment = comment();
  declareParams();
  declareConstants();
  // Each instruction in its own statement: argument order is unspecified,
  // and the kernel must come out the same from every compiler.
  auto [step, first] = gridStride(b);
  auto numelArg = std::find_if(plan.args.begin(), plan.args.end(), [](const KernelArg &a) {
    return a.kind == KernelArg::Kind::NumElements;
  });
  ValueId numel = params[numelArg - plan.args.begin()];
  ValueId start = first;
  if (plan.width > 1) {
    ValueId width = b.index(plan.width);
    ValueId numVectors = b.arith(kir::IndexOp::Div, numel, width, "numVectors");
    vectorLoop(first, numVectors, step);
    start = b.add(b.mul(numVectors, width), first, "tail");
  }
  b.forLoop(start, numel, step, "i", 0, [&](ValueId i) { element(i, nullptr); });
  return std::move(k);
}

} // namespace

std::optional<KirKernel> buildPointwise(const Op &kernel, const std::string &entry,
                                        Diagnostics &diags) {
  FUSEC_ASSERT(kernel.kind() == OpKind::Kernel && kernel.body(), "not a kernel op");
  FUSEC_ASSERT(kernel.getString("template") == "pointwise", "not a pointwise kernel");
  std::optional<PointwisePlan> plan = planPointwise(kernel, entry, diags);
  if (!plan)
    return std::nullopt;
  std::string schedule = "grid-stride, one element a thread a step" +
                         (plan->width > 1 ? ", vectors of " + std::to_string(plan->width) : std::string());
  return KirKernel{PointwiseBuilder(kernel, *plan).run(), plan->args, plan->launch, schedule};
}

} // namespace fusec::codegen
