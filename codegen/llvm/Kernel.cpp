// The building blocks of the LLVM back end's kernels (see LlvmKernel.h).
#include "codegen/llvm/Kernel.h"

#include "codegen/llvm/Math.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/Metadata.h"
#include "llvm/Support/raw_ostream.h"

namespace fusec::llvmir {

llvm::Value *readSpecialRegister(llvm::IRBuilder<> &b, llvm::Intrinsic::ID id, bool wide) {
  llvm::Value *v = b.CreateIntrinsic(id, {}, {});
  return wide ? b.CreateZExt(v, b.getInt64Ty()) : v;
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

} // namespace fusec::llvmir
