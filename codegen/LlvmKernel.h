// What every kernel template of the LLVM back end builds its function
// with, internal to codegen/: the kernel's declaration from its
// KernelArg list, the special registers, counted loops, constant tables
// in global memory, launch bounds, and the finished module as text.
#pragma once

#include "codegen/GeneratedKernel.h"
#include "ir/Graph.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/Module.h"

#include <functional>
#include <string>
#include <vector>

namespace fusec::codegen {

/// The kernel `name` (calling convention ptx_kernel) with one parameter per
/// arg: pointers (noalias; inputs readonly) and i64 scalars, named as the
/// args are.
llvm::Function *declareLlvmKernel(llvm::Module &m, const std::string &name,
                                  const std::vector<KernelArg> &args);

/// The value of special register `id` (tid.x, ctaid.x, ...), widened to i64
/// when `wide`.
llvm::Value *readSpecialRegister(llvm::IRBuilder<> &b, llvm::Intrinsic::ID id, bool wide = true);

/// for (v = start; v < end; v += step) body(v): a signed comparison in
/// `start`'s type. The builder is left after the loop.
void emitCountedLoop(llvm::IRBuilder<> &b, llvm::Value *start, llvm::Value *end, llvm::Value *step,
                     const std::string &name, const std::function<void(llvm::Value *)> &body);

/// if (cond) then(); the builder is left after it.
void emitIf(llvm::IRBuilder<> &b, llvm::Value *cond, const std::string &name,
            const std::function<void()> &then);

/// __shfl_xor_sync(mask, v, offset, width): the value of lane ^ offset
/// among `mask`'s lanes, in groups of `width` lanes (a power of two <= 32);
/// 64-bit values go as two 32-bit halves.
llvm::Value *emitShuffleXor(llvm::IRBuilder<> &b, llvm::Value *mask, llvm::Value *v,
                            unsigned offset, unsigned width = 32);

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

} // namespace fusec::codegen
