// The LLVM IR renderer (Render.h): one case per kir opcode. Values map to LLVM values named for
// their kir hints; a local array is an entry-block alloca (SROA promotes it once the loops over it
// are unrolled), a shared one an addrspace(3) global; a loop is a header with a phi, its unroll
// hint as llvm.loop metadata on the latch; launch bounds are nvvm.annotations. Math goes through
// Math.h, the pointwise ops' semantics in LLVM IR.
#include "codegen/llvm/Render.h"

#include "codegen/llvm/Math.h"
#include "codegen/llvm/Nvptx.h"
#include "ir/Assert.h"

#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"

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
  llvm::Type *type(DType t) const { return llvmType(ctx, t); }
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
  /// A load's or store's alignment: a vector of `lanes` elements is aligned to its size.
  llvm::Align alignment(const Inst &i) const {
    return llvm::Align(dtypeSize(k.typeOf(i.operands[0]).elem) * i.lanes);
  }
  /// Operand `at` advanced by operand `at + 1` elements.
  llvm::Value *elementAddress(const Inst &i, size_t at) {
    return b.CreateGEP(type(k.typeOf(i.operands[at]).elem), get(i.operands[at]),
                       get(i.operands[at + 1]));
  }
  llvm::GlobalVariable *sharedArray(llvm::ArrayType *t, const std::string &name, bool dynamic,
                                    unsigned align);
  llvm::Value *array(const Inst &i);
  void table(const kir::Table &t);
  void launchBounds();
  void gridConstants();
  void async(const Inst &i);
  void hopper(const Inst &i);
  /// The 32-bit shared-window address of operand `at` + operand `at + 1` elements.
  llvm::Value *sharedAddress(const Inst &i, size_t at) {
    return b.CreatePtrToInt(elementAddress(i, at), b.getInt32Ty());
  }
  llvm::Value *matrix(const Inst &i);
  void warpgroup(const Inst &i);
  /// Inline PTX with side effects that may touch memory (LLVM 19 has no intrinsic for it).
  llvm::Value *asmStatement(const std::string &ptx, llvm::Type *result = nullptr,
                            const std::string &constraints = "",
                            std::vector<llvm::Value *> args = {});
  /// The matrix descriptor of the shared tile whose layout is operand `at`.
  llvm::Value *descriptor(const Inst &i, size_t at);
  /// Element `e` of local array `array` (an alloca).
  llvm::Value *element(ValueId array, unsigned e) {
    llvm::Type *t = llvm::cast<llvm::AllocaInst>(get(array))->getAllocatedType();
    return b.CreateConstGEP1_32(t->getArrayElementType(), get(array), e);
  }
  llvm::Value *pack(const Inst &i);
  /// The vector of the members of an intrinsic's struct result.
  llvm::Value *vectorOf(llvm::Value *members, unsigned n);
  void loop(const Inst &i);
  void branch(const Inst &i);

  const kir::Kernel &k;
  llvm::Module &m;
  llvm::LLVMContext &ctx;
  llvm::IRBuilder<> b;
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
    if (k.params[p].type == kir::Type::tensorMap()) { // Note [Tensor maps in LLVM IR]
      auto *bytes = llvm::ArrayType::get(b.getInt8Ty(), 128);
      f->addParamAttr(p, llvm::Attribute::getWithByValType(ctx, bytes));
      f->addParamAttr(p, llvm::Attribute::getWithAlignment(ctx, llvm::Align(64)));
      continue;
    }
    if (!k.params[p].type.isPointer())
      continue;
    f->addParamAttr(p, llvm::Attribute::NoAlias);
    if (k.params[p].readOnly)
      f->addParamAttr(p, llvm::Attribute::ReadOnly);
  }
  return f;
}

llvm::Value *Renderer::special(kir::Special s) {
  namespace I = llvm::Intrinsic;
  // Indexed by kir::Special.
  static constexpr I::ID kRegisters[] = {
      I::nvvm_read_ptx_sreg_tid_x, I::nvvm_read_ptx_sreg_tid_y, I::nvvm_read_ptx_sreg_ntid_x,
      I::nvvm_read_ptx_sreg_ctaid_x, I::nvvm_read_ptx_sreg_nctaid_x};
  static_assert(std::size(kRegisters) == size_t(kir::Special::NctaidX) + 1);
  llvm::Value *v = b.CreateIntrinsic(kRegisters[size_t(s)], {}, {});
  return b.CreateZExt(v, b.getInt64Ty());
}

llvm::Value *Renderer::index(const Inst &i) {
  llvm::Value *x = get(i.operands[0]), *y = get(i.operands[1]);
  if (i.indexOp == kir::IndexOp::Lt)
    return b.CreateICmpSLT(x, y);
  using I = llvm::Instruction;
  // Indexed by kir::IndexOp, Lt's row unused; division and shifts are unsigned, as index values
  // are never negative.
  static constexpr I::BinaryOps kOps[] = {I::Add, I::Sub,          I::Mul, I::UDiv, I::URem,
                                          I::Shl, I::BinaryOpsEnd, I::And, I::Xor,  I::LShr};
  static_assert(std::size(kOps) == size_t(kir::IndexOp::Shr) + 1);
  return b.CreateBinOp(kOps[size_t(i.indexOp)], x, y);
}

llvm::Value *Renderer::shuffle(const Inst &i) {
  namespace I = llvm::Intrinsic;
  // Indexed by kir::ShuffleMode: the f32 and the i32 shuffle.
  static constexpr std::pair<I::ID, I::ID> kModes[] = {
      {I::nvvm_shfl_sync_bfly_f32, I::nvvm_shfl_sync_bfly_i32},
      {I::nvvm_shfl_sync_down_f32, I::nvvm_shfl_sync_down_i32},
      {I::nvvm_shfl_sync_up_f32, I::nvvm_shfl_sync_up_i32},
      {I::nvvm_shfl_sync_idx_f32, I::nvvm_shfl_sync_idx_i32}};
  static_assert(std::size(kModes) == size_t(kir::ShuffleMode::Idx) + 1);
  auto [f32, i32] = kModes[size_t(i.shuffle)];
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

/// An array in shared memory (addrspace(3)): the kernel's own, or the launch's dynamic one.
llvm::GlobalVariable *Renderer::sharedArray(llvm::ArrayType *t, const std::string &name,
                                            bool dynamic, unsigned align) {
  auto *g = new llvm::GlobalVariable(m, t, false,
                                     dynamic ? llvm::GlobalValue::ExternalLinkage
                                             : llvm::GlobalValue::InternalLinkage,
                                     dynamic ? nullptr : llvm::UndefValue::get(t), name, nullptr,
                                     llvm::GlobalValue::NotThreadLocal, 3);
  g->setAlignment(llvm::Align(align));
  return g;
}

/// A shared array named for the kernel too, or an alloca at the start of the entry block (where
/// SROA and mem2reg promote it).
llvm::Value *Renderer::array(const Inst &i) {
  auto *t = llvm::ArrayType::get(type(i.dtype), uint64_t(i.imm));
  const std::string &name = k.values[i.result].name;
  if (k.typeOf(i.result).space == kir::Space::Shared)
    return sharedArray(t, k.name + "_" + name, false, i.align);
  llvm::IRBuilder<> entry(&fn->getEntryBlock(), fn->getEntryBlock().begin());
  llvm::AllocaInst *a = entry.CreateAlloca(t, nullptr, name);
  a->setAlignment(llvm::Align(i.align));
  return a;
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
  case kir::AsyncOp::ProxyFence:
    asmStatement("fence.proxy.async.shared::cta;");
    return;
  case kir::AsyncOp::TensorLoad:
  case kir::AsyncOp::TensorStore:
  case kir::AsyncOp::BulkCommit:
  case kir::AsyncOp::BulkWait:
    return hopper(i);
  }
}

/// The sm_90 instructions: setmaxnreg and a named barrier's sync by their NVVM intrinsics, the
/// rest as inline PTX (kir::hopperPtx; LLVM 19 has no TMA or mbarrier::complete_tx intrinsics).
/// Shared addresses are 32-bit words, a tensor map is its parameter's generic address.
void Renderer::hopper(const Inst &i) {
  namespace I = llvm::Intrinsic;
  if (i.op == Opcode::SetMaxRegisters) {
    auto id =
        i.raise ? I::nvvm_setmaxnreg_inc_sync_aligned_u32 : I::nvvm_setmaxnreg_dec_sync_aligned_u32;
    b.CreateIntrinsic(id, {}, {b.getInt32(i.imm)});
    return;
  }
  if (i.op == Opcode::Barrier && !i.arrive && !i.cluster) {
    b.CreateIntrinsic(I::nvvm_barrier_sync_cnt, {}, {get(i.operands[0]), b.getInt32(i.imm)});
    return;
  }
  std::vector<llvm::Value *> args;
  std::string constraints;
  auto add = [&](llvm::Value *v, const char *constraint) {
    args.push_back(v);
    constraints += (constraints.empty() ? "" : ",") + std::string(constraint);
  };
  if (i.op == Opcode::Barrier) {
    if (!i.cluster)
      add(get(i.operands[0]), "r");
  } else if (i.op == Opcode::Async && i.async == kir::AsyncOp::TensorLoad) {
    add(sharedAddress(i, 0), "r");
    add(get(i.operands[2]), "l");
    add(sharedAddress(i, 3), "r");
    size_t offsets = i.operands.size() - i.im2col; // im2col offsets are 16-bit registers
    for (size_t c = 5; c < i.operands.size(); ++c)
      if (c < offsets)
        add(get(i.operands[c]), "r");
      else
        add(b.CreateTrunc(get(i.operands[c]), b.getInt16Ty()), "h");
  } else if (i.op == Opcode::Async && i.async == kir::AsyncOp::TensorStore) {
    add(sharedAddress(i, 0), "r");
    add(get(i.operands[2]), "l");
    for (size_t c = 3; c < i.operands.size(); ++c)
      add(get(i.operands[c]), "r");
  } else if (i.op == Opcode::Async) { // a bulk group's commit or wait: no operands
  } else if (i.mbarrier != kir::MBarrierOp::InitFence) {
    add(sharedAddress(i, 0), "r");
    if (i.mbarrier == kir::MBarrierOp::Wait || i.mbarrier == kir::MBarrierOp::ArriveRemote)
      add(get(i.operands[2]), "r");
  }
  llvm::Value *call = asmStatement(kir::hopperPtx(i, '$'), nullptr, constraints, std::move(args));
  if (i.op == Opcode::Barrier) // the warps that arrive must not be split by control flow
    llvm::cast<llvm::CallInst>(call)->addFnAttr(llvm::Attribute::Convergent);
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

llvm::Value *Renderer::asmStatement(const std::string &ptx, llvm::Type *result,
                                    const std::string &constraints,
                                    std::vector<llvm::Value *> args) {
  std::vector<llvm::Type *> types;
  for (llvm::Value *a : args)
    types.push_back(a->getType());
  auto *t = llvm::FunctionType::get(result ? result : b.getVoidTy(), types, false);
  std::string all = constraints.empty() ? "~{memory}" : constraints + ",~{memory}";
  return b.CreateCall(llvm::InlineAsm::get(t, ptx, all, true), args);
}

llvm::Value *Renderer::descriptor(const Inst &i, size_t at) {
  llvm::Value *address = b.CreatePtrToInt(elementAddress(i, at + 1), b.getInt64Ty());
  llvm::Value *field = b.CreateLShr(b.CreateAnd(address, b.getInt64(0x3FFFF)), b.getInt64(4));
  return b.CreateOr(get(i.operands[at]), field);
}

/// The warpgroup matrix instructions, as inline PTX (LLVM 19 has no wgmma intrinsics): a wgmma
/// takes each accumulator register as an operand tied to its result (none where it overwrites
/// them); a fence and a wait pin each
/// register they guard, so that no write of one moves below the fence and no read above the wait.
void Renderer::warpgroup(const Inst &i) {
  auto pin = [&] { // each register of the guarded arrays through an empty asm
    for (ValueId array : i.operands) {
      auto *t = llvm::cast<llvm::AllocaInst>(get(array))->getAllocatedType();
      llvm::Type *e = t->getArrayElementType();
      for (unsigned r = 0; r < t->getArrayNumElements(); ++r) {
        llvm::Value *at = element(array, r);
        llvm::Value *x = b.CreateLoad(e, at);
        b.CreateStore(asmStatement("", e, e->isFloatTy() ? "=f,0" : "=r,0", {x}), at);
      }
    }
  };
  switch (i.matrix) {
  case kir::MatrixOp::WgmmaFence:
    pin();
    asmStatement("wgmma.fence.sync.aligned;");
    return;
  case kir::MatrixOp::WgmmaCommit:
    asmStatement("wgmma.commit_group.sync.aligned;");
    return;
  case kir::MatrixOp::WgmmaWait:
    asmStatement("wgmma.wait_group.sync.aligned " + std::to_string(i.imm) + ";");
    pin();
    return;
  case kir::MatrixOp::Wgmma: {
    unsigned n = unsigned(i.imm) / 2;
    bool sharedA = i.operands.size() == 7;
    std::vector<llvm::Value *> args;
    std::string constraints;
    for (unsigned r = 0; r < n; ++r)
      constraints += (r ? ",=f" : "=f");
    if (sharedA) {
      args.push_back(descriptor(i, 1));
      constraints += ",l";
    } else {
      llvm::Value *a = get(i.operands[1]);
      for (unsigned q = 0; q < 4; ++q) {
        args.push_back(b.CreateExtractElement(a, uint64_t(q)));
        constraints += ",r";
      }
    }
    bool overwrite = i.accumulate == kir::Accumulate::Overwrite; // registers written, not read
    args.push_back(descriptor(i, i.operands.size() - 3));
    args.push_back(b.getInt32(overwrite ? 0 : 1));
    constraints += ",l,r";
    for (unsigned r = 0; r < n && !overwrite; ++r) {
      args.push_back(b.CreateLoad(b.getFloatTy(), element(i.operands[0], r)));
      constraints += "," + std::to_string(r);
    }
    std::string ptx = kir::wgmmaPtx(i, '$');
    std::vector<llvm::Type *> members(n, b.getFloatTy());
    llvm::Value *d =
        asmStatement(ptx, llvm::StructType::get(ctx, members), constraints, std::move(args));
    for (unsigned r = 0; r < n; ++r) {
      llvm::Value *x = b.CreateExtractValue(d, r);
      b.CreateStore(x, element(i.operands[0], r));
    }
    return;
  }
  case kir::MatrixOp::LoadX4:
  case kir::MatrixOp::MmaM16N8K16:
    break;
  }
  FUSEC_ASSERT(false, "not a warpgroup instruction");
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
  std::vector<llvm::Metadata *> hints = {nullptr}; // the loop's id first
  if (i.imm != 0)
    hints.push_back(
        i.imm < 0 ? llvm::MDNode::get(ctx, llvm::MDString::get(ctx, "llvm.loop.unroll.full"))
                  : llvm::MDNode::get(ctx, {llvm::MDString::get(ctx, "llvm.loop.unroll.count"),
                                            llvm::ConstantAsMetadata::get(b.getInt32(i.imm))}));
  if (i.keepInvariants)
    hints.push_back(llvm::MDNode::get(ctx, llvm::MDString::get(ctx, "llvm.licm.disable")));
  if (hints.size() > 1) {
    llvm::MDNode *id = llvm::MDNode::getDistinct(ctx, hints);
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
  case Opcode::Widen: // bool from i8, else f16 or bf16 (or a pair of them) to f32
    if (i.dtype == DType::Bool)
      return set(i, b.CreateICmpNE(get(i.operands[0]), b.getInt8(0)));
    return set(i, b.CreateFPExt(get(i.operands[0]), type(k.typeOf(i.result))));
  case Opcode::Narrow: // rounds to nearest even; a pair by cvt.rn.f16x2.f32 where there is one
    if (i.dtype == DType::Bool)
      return set(i, b.CreateZExt(get(i.operands[0]), b.getInt8Ty()));
    return set(i, b.CreateFPTrunc(get(i.operands[0]), type(k.typeOf(i.result))));
  case Opcode::Load: {
    llvm::Value *at = elementAddress(i, 0);
    return set(i, b.CreateAlignedLoad(type(k.typeOf(i.result)), at, alignment(i)));
  }
  case Opcode::Store: {
    llvm::Value *at = elementAddress(i, 0);
    b.CreateAlignedStore(get(i.operands[2]), at, alignment(i));
    return;
  }
  case Opcode::Alloca:
    return set(i, array(i));
  case Opcode::Table:
    return set(i, tables[i.imm]);
  case Opcode::For:
    return loop(i);
  case Opcode::If:
    return branch(i);
  case Opcode::Barrier:
    if (i.warp) {
      b.CreateIntrinsic(llvm::Intrinsic::nvvm_bar_warp_sync, {}, {b.getInt32(-1)});
      return;
    }
    if (!i.operands.empty() || i.cluster)
      return hopper(i);
    b.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});
    return;
  case Opcode::MBarrier:
  case Opcode::SetMaxRegisters:
    return hopper(i);
  case Opcode::Shuffle:
    return set(i, shuffle(i));
  case Opcode::DynamicShared: {
    std::string name = k.name + "_dynamic_shared";
    llvm::GlobalVariable *g = m.getNamedGlobal(name);
    if (!g)
      g = sharedArray(llvm::ArrayType::get(b.getInt8Ty(), 0), name, true, i.align);
    if (g->getAlign().valueOrOne().value() < i.align)
      g->setAlignment(llvm::Align(i.align));
    return set(i, g);
  }
  case Opcode::Async:
    return async(i);
  case Opcode::Matrix:
    if (i.matrix != kir::MatrixOp::LoadX4 && i.matrix != kir::MatrixOp::MmaM16N8K16)
      return warpgroup(i);
    return set(i, matrix(i));
  case Opcode::Pack:
    return set(i, pack(i));
  case Opcode::Unpack: { // the half's 16 bits as the narrow type, then widened (exact)
    llvm::Value *word = get(i.operands[0]);
    llvm::Value *bits = b.CreateTrunc(i.imm ? b.CreateLShr(word, 16) : word, b.getInt16Ty());
    return set(i, b.CreateFPExt(b.CreateBitCast(bits, type(i.dtype)), b.getFloatTy()));
  }
  case Opcode::Exp2:
    return set(i,
               b.CreateIntrinsic(llvm::Intrinsic::nvvm_ex2_approx_ftz_f, {}, {get(i.operands[0])}));
  case Opcode::Select:
    return set(i, b.CreateSelect(get(i.operands[0]), get(i.operands[1]), get(i.operands[2])));
  case Opcode::AtomicAdd:
    return set(i,
               b.CreateAtomicRMW(llvm::AtomicRMWInst::Add, elementAddress(i, 0), get(i.operands[2]),
                                 llvm::Align(4), llvm::AtomicOrdering::Monotonic,
                                 ctx.getOrInsertSyncScopeID("device")));
  case Opcode::Fence: // membar.gl, as CUDA's __threadfence (NVPTX selects no gpu-scope fence)
    b.CreateIntrinsic(llvm::Intrinsic::nvvm_membar_gl, {}, {});
    return;
  }
}

void Renderer::block(const kir::Block &blk) {
  for (const Inst &i : blk)
    inst(i);
}

/// A constant table in global memory holding its elements in their compute type.
void Renderer::table(const kir::Table &t) {
  std::vector<llvm::Constant *> elements;
  for (size_t e = 0; e < t.data.numElements(); ++e)
    elements.push_back(llvmConstant(ctx, t.data, e));
  auto *type = llvm::ArrayType::get(llvmType(ctx, kir::computeType(t.data.dtype)), elements.size());
  tables.push_back(new llvm::GlobalVariable(m, type, true, llvm::GlobalValue::InternalLinkage,
                                            llvm::ConstantArray::get(type, elements), t.name,
                                            nullptr, llvm::GlobalValue::NotThreadLocal, 1));
}

// Note [Tensor maps in LLVM IR]
// cp.async.bulk.tensor reads a tensor map (128 bytes) at a generic address in the kernel's
// parameter space, as CUDA's `const __grid_constant__` parameter has it. In LLVM 19 that is a
// `ptr byval([128 x i8]) align 64` parameter named in nvvm.annotations as "grid_constant" (the
// list of its 1-based indices): NVPTXLowerArgs then gives a use that takes its address (our
// inline asm's "l" operand) cvta.param of the parameter itself; without the annotation it would
// copy the parameter to local memory, whose address the TMA cannot read.

/// The "grid_constant" annotation of the tensor-map parameters, if any.
void Renderer::gridConstants() {
  std::vector<llvm::Metadata *> indices;
  for (unsigned p = 0; p < k.params.size(); ++p)
    if (k.params[p].type == kir::Type::tensorMap())
      indices.push_back(llvm::ConstantAsMetadata::get(b.getInt32(p + 1)));
  if (indices.empty())
    return;
  llvm::Metadata *ops[] = {llvm::ValueAsMetadata::get(fn),
                           llvm::MDString::get(ctx, "grid_constant"),
                           llvm::MDNode::get(ctx, indices)};
  m.getOrInsertNamedMetadata("nvvm.annotations")->addOperand(llvm::MDNode::get(ctx, ops));
}

/// __launch_bounds__(maxThreads, minBlocks).
void Renderer::launchBounds() {
  llvm::NamedMDNode *annotations = m.getOrInsertNamedMetadata("nvvm.annotations");
  auto add = [&](const char *key, unsigned value) {
    llvm::Metadata *ops[] = {llvm::ValueAsMetadata::get(fn), llvm::MDString::get(ctx, key),
                             llvm::ConstantAsMetadata::get(b.getInt32(value))};
    annotations->addOperand(llvm::MDNode::get(ctx, ops));
  };
  add("maxntidx", k.maxThreads);
  if (k.minBlocks)
    add("minctasm", k.minBlocks);
}

void Renderer::run() {
  for (const kir::Table &t : k.tables)
    table(t);
  fn = declare();
  if (k.maxThreads)
    launchBounds();
  gridConstants();
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", fn));
  if (k.dependent) { // Note [Dependent launch] in codegen/Codegen.cpp
    asmStatement("griddepcontrol.wait;");
  }
  block(k.body);
  b.CreateRetVoid();
}

} // namespace

std::string render(const kir::Kernel &k) {
  llvm::LLVMContext ctx;
  llvm::Module m(k.name, ctx);
  prepareNvptxModule(m);
  Renderer(k, m).run();
  std::string text;
  llvm::raw_string_ostream os(text);
  m.print(os, nullptr);
  return text;
}

} // namespace fusec::llvmir
