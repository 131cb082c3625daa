// What the LLVM renderer (codegen/llvm/Render.cpp) builds a kernel with,
// internal to codegen/: special registers, entry allocas, barriers, shared
// arrays, constant tables in global memory, launch bounds, and the finished
// module as text.
#pragma once

#include "codegen/GeneratedKernel.h"
#include "ir/Graph.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/Module.h"

#include <string>
#include <vector>

namespace fusec::llvmir {

/// The value of special register `id` (tid.x, ctaid.x, ...), widened to i64
/// when `wide`.
llvm::Value *readSpecialRegister(llvm::IRBuilder<> &b, llvm::Intrinsic::ID id, bool wide = true);

/// An alloca of `t` at the start of the entry block of the function being
/// built (where SROA and mem2reg promote it).
llvm::AllocaInst *emitEntryAlloca(llvm::IRBuilder<> &b, llvm::Type *t, const std::string &name);

/// __syncthreads().
void emitBarrier(llvm::IRBuilder<> &b);

/// An uninitialized array of `count` elements of `t` in shared memory.
llvm::GlobalVariable *emitSharedArray(llvm::Module &m, llvm::Type *t, uint64_t count,
                                      const std::string &name, unsigned align);

/// A constant table in global memory holding `d`'s elements in their compute
/// type (LlvmMath.h).
llvm::GlobalVariable *emitConstantTable(llvm::Module &m, const DenseData &d,
                                        const std::string &name);

/// __launch_bounds__(maxThreads, minBlocks) of kernel `f` (minBlocks 0: none).
void setLaunchBounds(llvm::Function &f, unsigned maxThreads, unsigned minBlocks);

/// The module as text, for GeneratedKernel::source.
std::string printModule(const llvm::Module &m);

} // namespace fusec::llvmir
