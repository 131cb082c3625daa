// The pointwise template in LLVM IR: renders the PointwisePlan that the
// CUDA C++ emitter renders (PointwisePlan.cpp), as the same grid-stride
// loops: a vector loop of PointwisePlan::width elements (one <V x T> load
// per flat-indexed operand, the element body V times, one <V x T> store per
// result) and a scalar loop over the rest. Parameters, their order and the
// launch are the plan's, so the runtime launches either back end's kernel
// the same way.
#include "codegen/LlvmCodegen.h"
#include "codegen/LlvmKernel.h"
#include "codegen/LlvmMath.h"
#include "codegen/Nvptx.h"
#include "codegen/PointwisePlan.h"
#include "ir/Assert.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

namespace fusec::codegen {

namespace {

class LlvmPointwiseEmitter {
public:
  LlvmPointwiseEmitter(const Op &kernel, PointwisePlan plan, llvm::Module &m)
      : kernel(kernel), body(*kernel.body()), plan(std::move(plan)), m(m), ctx(m.getContext()),
        b(ctx) {}

  void run();

private:
  llvm::Value *scalar(const PointwiseScalar &s) {
    return s.value ? b.getInt64(*s.value) : arg(s.arg);
  }
  llvm::Value *arg(unsigned i) { return fn->getArg(i); }
  /// `x` named after the IR value it computes (LLVM makes names unique).
  static llvm::Value *named(llvm::Value *x, const Value *v) {
    if (llvm::isa<llvm::Instruction>(x) && !x->hasName())
      x->setName(v->name());
    return x;
  }
  llvm::Value *pointer(const Value *v) { return arg(plan.pointerArg.at(v)); }
  llvm::Value *sreg(llvm::Intrinsic::ID id) { return readSpecialRegister(b, id); }
  void declareConstants();
  std::map<unsigned, llvm::Value *> coordinates(llvm::Value *i);
  llvm::Value *indexOf(const PointwiseIndex &index, llvm::Value *i,
                       const std::map<unsigned, llvm::Value *> &coords);
  /// The body for element `i`; `flat` holds the flat-indexed operands'
  /// values when they were loaded as vectors. Returns the results.
  std::vector<llvm::Value *> element(llvm::Value *i,
                                     const std::map<const Value *, llvm::Value *> &flat);
  void vectorLoop(llvm::Value *first, llvm::Value *step, llvm::Value *numVectors);

  const Op &kernel;
  const Graph &body;
  PointwisePlan plan;
  llvm::Module &m;
  llvm::LLVMContext &ctx;
  llvm::IRBuilder<> b;
  llvm::Function *fn = nullptr;
  std::map<const Value *, llvm::Value *> constants; // splats: the value; tables: the global
};

void LlvmPointwiseEmitter::declareConstants() {
  for (const auto &op : body.ops()) {
    if (op->kind() != OpKind::Const)
      continue;
    const DenseData &d = op->getDense("value");
    if (d.isSplat()) {
      constants[op->result()] = llvmConstant(ctx, d, 0);
      continue;
    }
    constants[op->result()] =
        emitConstantTable(m, d, plan.entry + "_table_" + op->result()->name());
  }
}

std::map<unsigned, llvm::Value *> LlvmPointwiseEmitter::coordinates(llvm::Value *i) {
  std::map<unsigned, llvm::Value *> c;
  if (plan.coords.empty())
    return c;
  llvm::Value *rem = i;
  for (unsigned k = unsigned(plan.space.size()); k-- > *plan.coords.begin();) {
    if (k == 0) {
      c[0] = rem;
      break;
    }
    llvm::Value *extent = scalar(plan.extents[k]);
    c[k] = b.CreateURem(rem, extent); // indices and extents are never negative
    if (k > *plan.coords.begin())
      rem = b.CreateUDiv(rem, extent);
  }
  return c;
}

llvm::Value *LlvmPointwiseEmitter::indexOf(const PointwiseIndex &index, llvm::Value *i,
                                           const std::map<unsigned, llvm::Value *> &coords) {
  if (index.flat)
    return i;
  llvm::Value *sum = b.getInt64(0);
  for (const auto &[axis, stride] : index.terms)
    sum = b.CreateAdd(sum, b.CreateMul(coords.at(axis), scalar(stride)));
  return sum;
}

std::vector<llvm::Value *>
LlvmPointwiseEmitter::element(llvm::Value *i, const std::map<const Value *, llvm::Value *> &flat) {
  std::map<unsigned, llvm::Value *> coords = coordinates(i);
  std::map<const Value *, llvm::Value *> value;
  for (const Value *v : body.inputs()) {
    if (!v->hasUses())
      continue;
    DType t = v->type().dtype;
    if (auto it = flat.find(v); it != flat.end()) {
      value[v] = named(llvmWiden(b, t, it->second), v);
      continue;
    }
    llvm::Type *st = llvmStorageType(ctx, t);
    llvm::Value *at = b.CreateGEP(st, pointer(v), indexOf(plan.index.at(v), i, coords));
    value[v] = named(llvmWiden(b, t, b.CreateLoad(st, at)), v);
  }
  for (const auto &op : body.ops()) {
    const Value *r = op->result();
    if (op->kind() == OpKind::Const) {
      llvm::Value *c = constants.at(r);
      if (auto *table = llvm::dyn_cast<llvm::GlobalVariable>(c)) {
        llvm::Type *et = llvmComputeType(ctx, r->type().dtype);
        c = named(b.CreateLoad(et, b.CreateGEP(et, table, indexOf(plan.index.at(r), i, coords))),
                  r);
      }
      value[r] = c;
      continue;
    }
    std::vector<llvm::Value *> args;
    for (const Value *v : op->operands())
      args.push_back(value.at(v));
    value[r] = named(llvmPointwiseValue(b, *op, args), r);
  }
  std::vector<llvm::Value *> results;
  for (const Value *v : body.outputs())
    results.push_back(value.at(v));
  return results;
}

void LlvmPointwiseEmitter::vectorLoop(llvm::Value *first, llvm::Value *step,
                                      llvm::Value *numVectors) {
  unsigned width = plan.width;
  emitCountedLoop(b, first, numVectors, step, "vi", [&](llvm::Value *vi) {
    llvm::Value *base = b.CreateMul(vi, b.getInt64(width));
    std::map<const Value *, llvm::Value *> vectors;
    for (const Value *v : body.inputs()) { // in order: the IR must not depend on addresses
      auto it = plan.index.find(v);
      if (it == plan.index.end() || !it->second.flat)
        continue;
      llvm::Type *st = llvmStorageType(ctx, v->type().dtype);
      auto *vt = llvm::FixedVectorType::get(st, width);
      vectors[v] = b.CreateAlignedLoad(vt, b.CreateGEP(st, pointer(v), base),
                                       llvm::Align(dtypeSize(v->type().dtype) * width));
    }
    std::vector<llvm::Value *> out(kernel.numResults());
    for (unsigned j = 0; j < kernel.numResults(); ++j)
      out[j] = llvm::PoisonValue::get(
          llvm::FixedVectorType::get(llvmStorageType(ctx, kernel.result(j)->type().dtype), width));
    for (unsigned e = 0; e < width; ++e) {
      std::map<const Value *, llvm::Value *> flat;
      for (const Value *v : body.inputs())
        if (auto it = vectors.find(v); it != vectors.end())
          flat[v] = b.CreateExtractElement(it->second, uint64_t(e));
      std::vector<llvm::Value *> r = element(b.CreateAdd(base, b.getInt64(e)), flat);
      for (unsigned j = 0; j < kernel.numResults(); ++j)
        out[j] = b.CreateInsertElement(out[j], llvmNarrow(b, kernel.result(j)->type().dtype, r[j]),
                                       uint64_t(e));
    }
    for (unsigned j = 0; j < kernel.numResults(); ++j) {
      DType t = kernel.result(j)->type().dtype;
      b.CreateAlignedStore(out[j],
                           b.CreateGEP(llvmStorageType(ctx, t), pointer(kernel.result(j)), base),
                           llvm::Align(dtypeSize(t) * width));
    }
  });
}

void LlvmPointwiseEmitter::run() {
  fn = declareLlvmKernel(m, plan.entry, plan.args);
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", fn));
  declareConstants();
  llvm::Value *first = b.CreateAdd(b.CreateMul(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x),
                                               sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x)),
                                   sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x));
  first->setName("first");
  llvm::Value *step = b.CreateMul(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x),
                                  sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x), "step");
  llvm::Value *numel = arg(unsigned(
      std::find_if(plan.args.begin(), plan.args.end(),
                   [](const KernelArg &a) { return a.kind == KernelArg::Kind::NumElements; }) -
      plan.args.begin()));
  llvm::Value *start = first;
  if (plan.width > 1) {
    llvm::Value *numVectors = b.CreateUDiv(numel, b.getInt64(plan.width), "num_vectors");
    vectorLoop(first, step, numVectors);
    start = b.CreateAdd(b.CreateMul(numVectors, b.getInt64(plan.width)), first);
  }
  emitCountedLoop(b, start, numel, step, "i", [&](llvm::Value *i) {
    std::vector<llvm::Value *> r = element(i, {});
    for (unsigned j = 0; j < kernel.numResults(); ++j) {
      DType t = kernel.result(j)->type().dtype;
      b.CreateStore(llvmNarrow(b, t, r[j]),
                    b.CreateGEP(llvmStorageType(ctx, t), pointer(kernel.result(j)), i));
    }
  });
  b.CreateRetVoid();
}

} // namespace

std::optional<GeneratedKernel> emitPointwiseLlvm(const Op &kernel, const std::string &entry,
                                                 Diagnostics &diags) {
  std::optional<PointwisePlan> plan = planPointwise(kernel, entry, diags);
  if (!plan)
    return std::nullopt;
  llvm::LLVMContext ctx;
  llvm::Module m(plan->entry, ctx);
  prepareNvptxModule(m);
  GeneratedKernel out{plan->entry, "", plan->args, plan->launch, Backend::Llvm};
  LlvmPointwiseEmitter(kernel, std::move(*plan), m).run();
  out.source = printModule(m);
  return out;
}

} // namespace fusec::codegen
