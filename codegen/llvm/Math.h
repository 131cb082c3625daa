// The math of the pointwise ops in LLVM IR, for the LLVM back end: the counterpart of
// cuda/Math.h with the same semantics (docs/ir.md; Note [Math of f16 and bf16 values] in
// cuda/device/Pointwise.cuh). Float math runs in f32 (f64 for f64), integers in their own width
// with wrapping, bool as i1. libdevice functions are declared (__nv_expf, ...) and linked by
// emitPtx. Internal to codegen/.
#pragma once

#include "codegen/kir/Kir.h"
#include "ir/Graph.h"

#include "llvm/IR/IRBuilder.h"

#include <vector>

namespace fusec::llvmir {

/// The type of a kir element of dtype `t`: half, bfloat, float, double, iN, i1.
llvm::Type *llvmType(llvm::LLVMContext &ctx, DType t);
/// Element `i` of a constant as a constant of its compute type.
llvm::Constant *llvmConstant(llvm::LLVMContext &ctx, const DenseData &d, size_t i);
/// The value of math `op` over `args` (its operands in compute types).
llvm::Value *llvmPointwiseValue(llvm::IRBuilder<> &b, const kir::MathOp &op,
                                const std::vector<llvm::Value *> &args);

} // namespace fusec::llvmir
