// The LLVM IR renderer (Render.h): one case per kir opcode. Values map to
// LLVM values named for their kir hints; a local array is an entry-block
// alloca (SROA promotes it once the loops over it are unrolled); a loop is a
// header with a phi, its unroll hint as llvm.loop metadata on the latch.
// Math goes through LlvmMath.h, the pointwise ops' semantics in LLVM IR.
#include "codegen/llvm/Render.h"

#include "codegen/llvm/Kernel.h"
#include "codegen/llvm/Math.h"
#include "codegen/llvm/Nvptx.h"
#include "ir/Assert.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

namespace fusec::llvmir {

namespace {

using kir::Inst;
using kir::Opcode;
using kir::ValueId;

class Renderer {
public:
  Renderer(const kir::Kernel &k, llvm::Module &m) : k(k), m(m), ctx(m.getContext()), b(ctx) {}

  void run();

private:
  llvm::Type *type(DType t) const {
    if (t == DType::F16)
      return b.getHalfTy();
    if (t == DType::BF16)
      return b.getBFloatTy();
    return llvmComputeType(ctx, t);
  }
  llvm::Type *type(kir::Type t) const {
    if (t.isPointer()) // shared memory is addrspace(3), the rest generic
      return llvm::PointerType::get(ctx, t.space == kir::Space::Shared ? 3 : 0);
    llvm::Type *e = type(t.elem);
    return t.lanes == 1 ? e : llvm::FixedVectorType::get(e, t.lanes);
  }
  llvm::Value *get(ValueId v) const { return values.at(v); }
  void set(const Inst &i, llvm::Value *v) {
    if (llvm::isa<llvm::Instruction>(v) && !v->hasName())
      v->setName(k.values[i.result].name);
    values[i.result] = v;
  }
  llvm::Function *declare();
  void block(const kir::Block &blk);
  void inst(const Inst &i);
  llvm::Value *special(kir::Special s);
  llvm::Value *index(const Inst &i);
  llvm::Value *shuffle(const Inst &i);
  llvm::Value *address(const Inst &i, llvm::Align &align);
  /// Operand `at` advanced by operand `at + 1` elements.
  llvm::Value *elementAddress(const Inst &i, size_t at) {
    return b.CreateGEP(type(k.typeOf(i.operands[at]).elem), get(i.operands[at]),
                       get(i.operands[at + 1]));
  }
  llvm::Value *dynamicShared(const Inst &i);
  void async(const Inst &i);
  llvm::Value *matrix(const Inst &i);
  llvm::Value *pack(const Inst &i);
  /// The vector of the members of an intrinsic's struct result.
  llvm::Value *vectorOf(llvm::Value *members, unsigned n);
  void loop(const Inst &i);
  void branch(const Inst &i);

  const kir::Kernel &k;
  llvm::Module &m;
  llvm::LLVMContext &ctx;
  mutable llvm::IRBuilder<> b;
  llvm::Function *fn = nullptr;
  std::vector<llvm::GlobalVariable *> tables;
  std::map<ValueId, llvm::Value *> values;
};

llvm::Function *Renderer::declare() {
  std::vector<llvm::Type *> params;
  for (const kir::Param &p : k.params)
    params.push_back(type(p.type));
  auto *f = llvm::Function::Create(llvm::FunctionType::get(b.getVoidTy(), params, false),
                                   llvm::Function::ExternalLinkage, k.name, m);
  f->setCallingConv(llvm::CallingConv::PTX_Kernel);
  for (unsigned p = 0; p < k.params.size(); ++p) {
    f->getArg(p)->setName(k.params[p].name);
    if (!k.params[p].type.isPointer())
      continue;
    f->addParamAttr(p, llvm::Attribute::NoAlias);
    if (k.params[p].readOnly)
      f->addParamAttr(p, llvm::Attribute::ReadOnly);
  }
  return f;
}

llvm::Value *Renderer::special(kir::Special s) {
  switch (s) {
  case kir::Special::TidX:
    return readSpecialRegister(b, llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
  case kir::Special::TidY:
    return readSpecialRegister(b, llvm::Intrinsic::nvvm_read_ptx_sreg_tid_y);
  case kir::Special::NtidX:
    return readSpecialRegister(b, llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x);
  case kir::Special::CtaidX:
    return readSpecialRegister(b, llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x);
  case kir::Special::NctaidX:
    return readSpecialRegister(b, llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x);
  }
  FUSEC_ASSERT(false, "unknown special register");
}

llvm::Value *Renderer::index(const Inst &i) {
  llvm::Value *x = get(i.operands[0]), *y = get(i.operands[1]);
  switch (i.indexOp) {
  case kir::IndexOp::Add:
    return b.CreateAdd(x, y);
  case kir::IndexOp::Sub:
    return b.CreateSub(x, y);
  case kir::IndexOp::Mul:
    return b.CreateMul(x, y);
  case kir::IndexOp::Div: // index values are never negative
    return b.CreateUDiv(x, y);
  case kir::IndexOp::Rem:
    return b.CreateURem(x, y);
  case kir::IndexOp::Shl:
    return b.CreateShl(x, y);
  case kir::IndexOp::Lt:
    return b.CreateICmpSLT(x, y);
  case kir::IndexOp::And:
    return b.CreateAnd(x, y);
  case kir::IndexOp::Xor:
    return b.CreateXor(x, y);
  case kir::IndexOp::Shr:
    return b.CreateLShr(x, y);
  }
  FUSEC_ASSERT(false, "unknown index op");
}

llvm::Value *Renderer::shuffle(const Inst &i) {
  using llvm::Intrinsic::ID;
  auto [f32, i32] = [&]() -> std::pair<ID, ID> {
    switch (i.shuffle) {
    case kir::ShuffleMode::Xor:
      return {llvm::Intrinsic::nvvm_shfl_sync_bfly_f32, llvm::Intrinsic::nvvm_shfl_sync_bfly_i32};
    case kir::ShuffleMode::Down:
      return {llvm::Intrinsic::nvvm_shfl_sync_down_f32, llvm::Intrinsic::nvvm_shfl_sync_down_i32};
    case kir::ShuffleMode::Up:
      return {llvm::Intrinsic::nvvm_shfl_sync_up_f32, llvm::Intrinsic::nvvm_shfl_sync_up_i32};
    case kir::ShuffleMode::Idx:
      break;
    }
    return {llvm::Intrinsic::nvvm_shfl_sync_idx_f32, llvm::Intrinsic::nvvm_shfl_sync_idx_i32};
  }();
  // The group's bounds as shfl.sync's c operand: its segment mask, and the
  // last lane to read (the first one for `up`).
  unsigned width = unsigned(i.imm);
  llvm::Value *c = b.getInt32(((32 - width) << 8) | (i.shuffle == kir::ShuffleMode::Up ? 0 : 31));
  llvm::Value *mask = b.CreateTrunc(get(i.operands[2]), b.getInt32Ty());
  llvm::Value *lane = b.CreateTrunc(get(i.operands[1]), b.getInt32Ty());
  llvm::Value *v = get(i.operands[0]);
  llvm::Type *t = v->getType();
  if (t->isFloatTy())
    return b.CreateIntrinsic(f32, {}, {mask, v, lane, c});
  if (t->isIntegerTy(32))
    return b.CreateIntrinsic(i32, {}, {mask, v, lane, c});
  auto *halves = llvm::FixedVectorType::get(b.getInt32Ty(), 2);
  llvm::Value *x = b.CreateBitCast(v, halves), *r = llvm::PoisonValue::get(halves);
  for (uint64_t h = 0; h < 2; ++h)
    r = b.CreateInsertElement(
        r, b.CreateIntrinsic(i32, {}, {mask, b.CreateExtractElement(x, h), lane, c}), h);
  return b.CreateBitCast(r, t);
}

/// The address of a load's or store's first element, and its alignment:
/// a vector of `lanes` elements is aligned to its size.
llvm::Value *Renderer::address(const Inst &i, llvm::Align &align) {
  DType elem = k.typeOf(i.operands[0]).elem;
  align = llvm::Align(dtypeSize(elem) * i.lanes);
  return b.CreateGEP(type(elem), get(i.operands[0]), get(i.operands[1]));
}

llvm::Value *Renderer::dynamicShared(const Inst &) {
  std::string name = k.name + "_dynamic_shared";
  if (llvm::GlobalVariable *g = m.getNamedGlobal(name))
    return g;
  auto *t = llvm::ArrayType::get(b.getInt8Ty(), 0);
  auto *g = new llvm::GlobalVariable(m, t, false, llvm::GlobalValue::ExternalLinkage, nullptr, name,
                                     nullptr, llvm::GlobalValue::NotThreadLocal, 3);
  g->setAlignment(llvm::Align(128));
  return g;
}

void Renderer::async(const Inst &i) {
  switch (i.async) {
  case kir::AsyncOp::Copy: {
    llvm::Value *dst = elementAddress(i, 0);
    llvm::Value *src = b.CreateAddrSpaceCast(elementAddress(i, 2), b.getPtrTy(1));
    llvm::Value *bytes = b.CreateSelect(get(i.operands[4]), b.getInt32(16), b.getInt32(0));
    b.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_cg_shared_global_16_s, {}, {dst, src, bytes});
    return;
  }
  case kir::AsyncOp::Commit:
    b.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_commit_group, {}, {});
    return;
  case kir::AsyncOp::Wait:
    b.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_wait_group, {}, {b.getInt32(i.imm)});
    return;
  }
}

llvm::Value *Renderer::vectorOf(llvm::Value *members, unsigned n) {
  llvm::Type *t = members->getType()->getStructElementType(0);
  llvm::Value *v = llvm::PoisonValue::get(llvm::FixedVectorType::get(t, n));
  for (unsigned q = 0; q < n; ++q)
    v = b.CreateInsertElement(v, b.CreateExtractValue(members, q), uint64_t(q));
  return v;
}

llvm::Value *Renderer::matrix(const Inst &i) {
  if (i.matrix == kir::MatrixOp::LoadX4) {
    auto id = i.imm ? llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_trans_b16
                    : llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_b16;
    return vectorOf(b.CreateIntrinsic(id, {b.getPtrTy(3)}, {elementAddress(i, 0)}), 4);
  }
  // f16 pairs go as <2 x half>, bf16 pairs as i32 words.
  bool bf16 = i.dtype == DType::BF16;
  auto *half2 = llvm::FixedVectorType::get(b.getHalfTy(), 2);
  std::vector<llvm::Value *> args;
  for (unsigned o = 0; o < 3; ++o) {
    llvm::Value *v = get(i.operands[o]);
    auto *vt = llvm::cast<llvm::FixedVectorType>(v->getType());
    for (unsigned q = 0; q < vt->getNumElements(); ++q) {
      llvm::Value *e = b.CreateExtractElement(v, uint64_t(q));
      args.push_back(o < 2 && !bf16 ? b.CreateBitCast(e, half2) : e);
    }
  }
  auto id = bf16 ? llvm::Intrinsic::nvvm_mma_m16n8k16_row_col_bf16
                 : llvm::Intrinsic::nvvm_mma_m16n8k16_row_col_f32_f32;
  return vectorOf(b.CreateIntrinsic(id, {}, args), 4);
}

llvm::Value *Renderer::pack(const Inst &i) {
  // fptrunc rounds to nearest even, as cvt.rn does.
  llvm::Type *half = type(i.dtype);
  llvm::Value *pair = llvm::PoisonValue::get(llvm::FixedVectorType::get(half, 2));
  for (unsigned q = 0; q < 2; ++q)
    pair = b.CreateInsertElement(pair, b.CreateFPTrunc(get(i.operands[q]), half), uint64_t(q));
  return b.CreateBitCast(pair, b.getInt32Ty());
}

void Renderer::loop(const Inst &i) {
  llvm::BasicBlock *before = b.GetInsertBlock();
  const std::string &name = k.values[i.result].name;
  auto *header = llvm::BasicBlock::Create(ctx, name + ".header", fn);
  auto *body = llvm::BasicBlock::Create(ctx, name + ".body", fn);
  auto *exit = llvm::BasicBlock::Create(ctx, name + ".exit", fn);
  b.CreateBr(header);
  b.SetInsertPoint(header);
  llvm::PHINode *v = b.CreatePHI(get(i.operands[0])->getType(), 2, name);
  v->addIncoming(get(i.operands[0]), before);
  b.CreateCondBr(b.CreateICmpSLT(v, get(i.operands[1])), body, exit);
  b.SetInsertPoint(body);
  values[i.result] = v;
  block(i.regions[0]);
  v->addIncoming(b.CreateAdd(v, get(i.operands[2])), b.GetInsertBlock());
  llvm::BranchInst *latch = b.CreateBr(header);
  if (i.imm != 0) {
    llvm::Metadata *hint =
        i.imm < 0 ? llvm::MDNode::get(ctx, llvm::MDString::get(ctx, "llvm.loop.unroll.full"))
                  : llvm::MDNode::get(ctx, {llvm::MDString::get(ctx, "llvm.loop.unroll.count"),
                                            llvm::ConstantAsMetadata::get(b.getInt32(i.imm))});
    llvm::MDNode *id = llvm::MDNode::getDistinct(ctx, {nullptr, hint});
    id->replaceOperandWith(0, id);
    latch->setMetadata(llvm::LLVMContext::MD_loop, id);
  }
  b.SetInsertPoint(exit);
}

void Renderer::branch(const Inst &i) {
  auto *then = llvm::BasicBlock::Create(ctx, "then", fn);
  auto *otherwise = llvm::BasicBlock::Create(ctx, "else", fn);
  auto *join = llvm::BasicBlock::Create(ctx, "join", fn);
  b.CreateCondBr(get(i.operands[0]), then, otherwise);
  for (auto [block, region] :
       {std::pair(then, &i.regions[0]), std::pair(otherwise, &i.regions[1])}) {
    b.SetInsertPoint(block);
    this->block(*region);
    b.CreateBr(join);
  }
  b.SetInsertPoint(join);
}

void Renderer::inst(const Inst &i) {
  llvm::Align align;
  switch (i.op) {
  case Opcode::Param:
    return set(i, fn->getArg(unsigned(i.imm)));
  case Opcode::Const:
    return set(i, llvm::ConstantInt::get(type(k.typeOf(i.result)), uint64_t(i.imm), true));
  case Opcode::Literal:
    return set(i, llvmConstant(ctx, i.dense, 0));
  case Opcode::Special:
    return set(i, special(i.special));
  case Opcode::Index:
    return set(i, index(i));
  case Opcode::Math: {
    std::vector<llvm::Value *> args;
    for (ValueId v : i.operands)
      args.push_back(get(v));
    return set(i, llvmPointwiseValue(b, i.math, args));
  }
  case Opcode::Widen:
    if (k.typeOf(i.result).lanes > 1) // an f16 or bf16 pair
      return set(i, b.CreateFPExt(get(i.operands[0]), type(k.typeOf(i.result))));
    return set(i, llvmWiden(b, i.dtype, get(i.operands[0])));
  case Opcode::Narrow:
    if (k.typeOf(i.result).lanes > 1) // a pair: cvt.rn.f16x2.f32 where the target has it
      return set(i, b.CreateFPTrunc(get(i.operands[0]), type(k.typeOf(i.result))));
    return set(i, llvmNarrow(b, i.dtype, get(i.operands[0])));
  case Opcode::Load: {
    llvm::Value *at = address(i, align);
    return set(i, b.CreateAlignedLoad(type(k.typeOf(i.result)), at, align));
  }
  case Opcode::Store: {
    llvm::Value *at = address(i, align);
    b.CreateAlignedStore(get(i.operands[2]), at, align);
    return;
  }
  case Opcode::Alloca: {
    if (k.typeOf(i.result).space == kir::Space::Shared)
      return set(i, emitSharedArray(m, type(i.dtype), uint64_t(i.imm),
                                    k.name + "_" + k.values[i.result].name, i.align));
    llvm::AllocaInst *a = emitEntryAlloca(b, llvm::ArrayType::get(type(i.dtype), uint64_t(i.imm)),
                                          k.values[i.result].name);
    a->setAlignment(llvm::Align(i.align));
    return set(i, a);
  }
  case Opcode::Table:
    return set(i, tables[i.imm]);
  case Opcode::For:
    return loop(i);
  case Opcode::If:
    return branch(i);
  case Opcode::Barrier:
    return emitBarrier(b);
  case Opcode::Shuffle:
    return set(i, shuffle(i));
  case Opcode::DynamicShared:
    return set(i, dynamicShared(i));
  case Opcode::Async:
    return async(i);
  case Opcode::Matrix:
    return set(i, matrix(i));
  case Opcode::Pack:
    return set(i, pack(i));
  case Opcode::Select:
    return set(i, b.CreateSelect(get(i.operands[0]), get(i.operands[1]), get(i.operands[2])));
  }
}

void Renderer::block(const kir::Block &blk) {
  for (const Inst &i : blk)
    inst(i);
}

void Renderer::run() {
  for (const kir::Table &t : k.tables)
    tables.push_back(emitConstantTable(m, t.data, t.name));
  fn = declare();
  if (k.maxThreads)
    setLaunchBounds(*fn, k.maxThreads, k.minBlocks);
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", fn));
  block(k.body);
  b.CreateRetVoid();
}

} // namespace

std::string render(const kir::Kernel &k) {
  llvm::LLVMContext ctx;
  llvm::Module m(k.name, ctx);
  prepareNvptxModule(m);
  Renderer(k, m).run();
  return printModule(m);
}

} // namespace fusec::llvmir
