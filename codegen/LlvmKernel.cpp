// The building blocks of the LLVM back end's kernels (see LlvmKernel.h).
#include "codegen/LlvmKernel.h"

#include "codegen/LlvmMath.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/Metadata.h"
#include "llvm/Support/raw_ostream.h"

namespace fusec::codegen {

llvm::Function *declareLlvmKernel(llvm::Module &m, const std::string &name,
                                  const std::vector<KernelArg> &args) {
  llvm::LLVMContext &ctx = m.getContext();
  std::vector<llvm::Type *> params;
  for (const KernelArg &a : args)
    params.push_back(a.isPointer() ? static_cast<llvm::Type *>(llvm::PointerType::get(ctx, 0))
                                   : llvm::Type::getInt64Ty(ctx));
  auto *f =
      llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), params, false),
                             llvm::Function::ExternalLinkage, name, m);
  f->setCallingConv(llvm::CallingConv::PTX_Kernel);
  for (unsigned i = 0; i < args.size(); ++i) {
    f->getArg(i)->setName(args[i].name);
    if (!args[i].isPointer())
      continue;
    f->addParamAttr(i, llvm::Attribute::NoAlias);
    if (args[i].kind == KernelArg::Kind::Input)
      f->addParamAttr(i, llvm::Attribute::ReadOnly);
  }
  return f;
}

llvm::Value *readSpecialRegister(llvm::IRBuilder<> &b, llvm::Intrinsic::ID id, bool wide) {
  llvm::Value *v = b.CreateIntrinsic(id, {}, {});
  return wide ? b.CreateZExt(v, b.getInt64Ty()) : v;
}

void emitCountedLoop(llvm::IRBuilder<> &b, llvm::Value *start, llvm::Value *end, llvm::Value *step,
                     const std::string &name, const std::function<void(llvm::Value *)> &body) {
  llvm::LLVMContext &ctx = b.getContext();
  llvm::Function *fn = b.GetInsertBlock()->getParent();
  llvm::BasicBlock *before = b.GetInsertBlock();
  auto *header = llvm::BasicBlock::Create(ctx, name + ".header", fn);
  auto *loopBody = llvm::BasicBlock::Create(ctx, name + ".body", fn);
  auto *exit = llvm::BasicBlock::Create(ctx, name + ".exit", fn);
  b.CreateBr(header);
  b.SetInsertPoint(header);
  llvm::PHINode *v = b.CreatePHI(start->getType(), 2, name);
  v->addIncoming(start, before);
  b.CreateCondBr(b.CreateICmpSLT(v, end), loopBody, exit);
  b.SetInsertPoint(loopBody);
  body(v);
  v->addIncoming(b.CreateAdd(v, step), b.GetInsertBlock());
  b.CreateBr(header);
  b.SetInsertPoint(exit);
}

void emitIf(llvm::IRBuilder<> &b, llvm::Value *cond, const std::string &name,
            const std::function<void()> &then) {
  llvm::Function *fn = b.GetInsertBlock()->getParent();
  auto *thenBlock = llvm::BasicBlock::Create(b.getContext(), name + ".then", fn);
  auto *after = llvm::BasicBlock::Create(b.getContext(), name + ".end", fn);
  b.CreateCondBr(cond, thenBlock, after);
  b.SetInsertPoint(thenBlock);
  then();
  b.CreateBr(after);
  b.SetInsertPoint(after);
}

llvm::AllocaInst *emitEntryAlloca(llvm::IRBuilder<> &b, llvm::Type *t, const std::string &name) {
  llvm::BasicBlock &entry = b.GetInsertBlock()->getParent()->getEntryBlock();
  llvm::IRBuilder<> eb(&entry, entry.begin());
  return eb.CreateAlloca(t, nullptr, name);
}

void emitBarrier(llvm::IRBuilder<> &b) {
  b.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});
}

llvm::GlobalVariable *emitSharedArray(llvm::Module &m, llvm::Type *t, uint64_t count,
                                      const std::string &name, unsigned align) {
  auto *type = llvm::ArrayType::get(t, count);
  auto *g = new llvm::GlobalVariable(m, type, false, llvm::GlobalValue::InternalLinkage,
                                     llvm::UndefValue::get(type), name, nullptr,
                                     llvm::GlobalValue::NotThreadLocal, 3);
  g->setAlignment(llvm::Align(align));
  return g;
}

llvm::Value *emitShuffleXor(llvm::IRBuilder<> &b, llvm::Value *mask, llvm::Value *v,
                            unsigned offset, unsigned width) {
  llvm::Value *clamp = b.getInt32(((32 - width) << 8) | 0x1f);
  auto shuffle = [&](llvm::Intrinsic::ID id, llvm::Value *x) {
    return b.CreateIntrinsic(id, {}, {mask, x, b.getInt32(offset), clamp});
  };
  llvm::Type *t = v->getType();
  if (t->isFloatTy())
    return shuffle(llvm::Intrinsic::nvvm_shfl_sync_bfly_f32, v);
  if (t->isIntegerTy(32))
    return shuffle(llvm::Intrinsic::nvvm_shfl_sync_bfly_i32, v);
  auto *halves = llvm::FixedVectorType::get(b.getInt32Ty(), 2);
  llvm::Value *x = b.CreateBitCast(v, halves), *r = llvm::PoisonValue::get(halves);
  for (uint64_t h = 0; h < 2; ++h)
    r = b.CreateInsertElement(
        r, shuffle(llvm::Intrinsic::nvvm_shfl_sync_bfly_i32, b.CreateExtractElement(x, h)), h);
  return b.CreateBitCast(r, t);
}

llvm::GlobalVariable *emitConstantTable(llvm::Module &m, const DenseData &d,
                                        const std::string &name) {
  std::vector<llvm::Constant *> elements;
  for (size_t i = 0; i < d.numElements(); ++i)
    elements.push_back(llvmConstant(m.getContext(), d, i));
  auto *type = llvm::ArrayType::get(llvmComputeType(m.getContext(), d.dtype), elements.size());
  return new llvm::GlobalVariable(m, type, true, llvm::GlobalValue::InternalLinkage,
                                  llvm::ConstantArray::get(type, elements), name, nullptr,
                                  llvm::GlobalValue::NotThreadLocal, 1);
}

void setLaunchBounds(llvm::Function &f, unsigned maxThreads, unsigned minBlocks) {
  llvm::LLVMContext &ctx = f.getContext();
  llvm::NamedMDNode *annotations = f.getParent()->getOrInsertNamedMetadata("nvvm.annotations");
  auto add = [&](const char *key, unsigned value) {
    llvm::Metadata *ops[] = {
        llvm::ValueAsMetadata::get(&f), llvm::MDString::get(ctx, key),
        llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx), value))};
    annotations->addOperand(llvm::MDNode::get(ctx, ops));
  };
  add("maxntidx", maxThreads);
  if (minBlocks)
    add("minctasm", minBlocks);
}

std::string printModule(const llvm::Module &m) {
  std::string text;
  llvm::raw_string_ostream os(text);
  m.print(os, nullptr);
  return text;
}

} // namespace fusec::codegen
