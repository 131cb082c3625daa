// The pointwise template in CUDA C++: one kernel, a grid-stride loop over
// the flattened output index space (PointwisePlan.cpp), that loads each
// operand element, evaluates the body's ops in order in registers (one
// `const` statement per op) and stores every result. Constants become
// literals (splats) or small __device__ tables.
//
// Not done here: reporting an integer division by zero (it gives 0).
#include "codegen/Pointwise.h"

#include "codegen/PointwiseEmitter.h"
#include "codegen/PointwiseMath.h"
#include "ir/Assert.h"

#include <algorithm>

namespace fusec {

namespace codegen {

std::string PointwiseEmitter::param(const KernelArg &a) const {
  switch (a.kind) {
  case KernelArg::Kind::Input:
    return "const " + std::string(storageType(kernel.operand(a.index)->type().dtype)) +
           " *__restrict__ " + a.name;
  case KernelArg::Kind::Output:
    return std::string(storageType(kernel.result(a.index)->type().dtype)) + " *__restrict__ " +
           a.name;
  default:
    return "long long " + a.name;
  }
}

/// A literal, or the parameter that carries the value.
std::string PointwiseEmitter::scalar(const PointwiseScalar &s) const {
  return s.value ? std::to_string(*s.value) + "LL" : plan.args[s.arg].name;
}

/// "i", or "c0 * s0 + c2 * s2", or "0".
std::string PointwiseEmitter::indexExpr(const PointwiseIndex &index) const {
  if (index.flat)
    return "i";
  std::string out;
  for (const auto &[axis, stride] : index.terms)
    out += (out.empty() ? "" : " + ") + ("c" + std::to_string(axis)) + " * " + scalar(stride);
  return out.empty() ? "0" : out;
}

void PointwiseEmitter::declareConst(const Op &op) {
  const DenseData &d = op.getDense("value");
  std::string type(computeType(d.dtype));
  const std::string &name = local[op.result()];
  if (d.isSplat()) {
    hoisted << "  const " << type << " " << name << " = " << constantLiteral(d, 0) << ";\n";
    return;
  }
  std::string table = plan.names.fresh(plan.entry + "_table_", op.result()->name());
  tables << "__device__ const " << type << " " << table << "[" << d.numElements() << "] = {";
  for (size_t i = 0; i < d.numElements(); ++i)
    tables << (i ? ", " : "") << constantLiteral(d, i);
  tables << "};\n\n";
  tableLoad[op.result()] = table + "[" + indexExpr(plan.index.at(op.result())) + "]";
}

/// Names the register of every used input and every op result, and
/// declares the constants (hoisted splats, tables).
void PointwiseEmitter::assignNames() {
  for (const Value *v : body.inputs())
    if (v->hasUses())
      local[v] = plan.names.fresh("v_", v->name());
  for (const auto &op : body.ops()) {
    local[op->result()] = plan.names.fresh("v_", op->result()->name());
    if (op->kind() == OpKind::Const)
      declareConst(*op);
  }
}

std::string PointwiseEmitter::comment() const {
  std::string ops;
  for (const auto &op : body.ops())
    if (op->kind() != OpKind::Const)
      ops += (ops.empty() ? "" : ", ") + std::string(op->name());
  return "// " + plan.entry + ": pointwise kernel over " + shapeStr(plan.space) +
         "\n// fuses: " + (ops.empty() ? "(copies only)" : ops) + "\n";
}

GeneratedKernel PointwiseEmitter::run() {
  assignNames();
  std::ostringstream src;
  src << tables.str() << comment() << "extern \"C\" __global__ void " << plan.entry << "(";
  for (size_t p = 0; p < plan.args.size(); ++p)
    src << (p ? ",\n    " : "\n    ") << param(plan.args[p]);
  src << ") {\n"
      << hoisted.str() << "  const long long step = (long long)gridDim.x * blockDim.x;\n"
      << "  const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n";
  if (plan.width > 1) {
    emitVectorLoop(src);
    emitScalarLoop(src, "numVectors * " + std::to_string(plan.width) + " + first");
  } else {
    emitScalarLoop(src, "first");
  }
  src << "}\n";
  return {plan.entry, src.str(), plan.args, plan.launch};
}

} // namespace codegen

std::optional<GeneratedKernel> emitPointwiseKernel(const Op &kernel, const std::string &entry,
                                                   Diagnostics &diags) {
  FUSEC_ASSERT(kernel.kind() == OpKind::Kernel && kernel.body(), "not a kernel op");
  FUSEC_ASSERT(kernel.getString("template") == "pointwise", "not a pointwise kernel");
  std::optional<codegen::PointwisePlan> plan = codegen::planPointwise(kernel, entry, diags);
  if (!plan)
    return std::nullopt;
  return codegen::PointwiseEmitter(kernel, std::move(*plan)).run();
}

} // namespace fusec
