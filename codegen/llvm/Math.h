// The math of the pointwise ops in LLVM IR, for the LLVM back end: the
// counterpart of PointwiseMath.h with the same semantics (docs/ir.md; Note
// [Math of f16 and bf16 values] in cuda/device/Pointwise.cuh). Float math runs in
// f32 (f64 for f64), integers in their own width with wrapping, bool as i1.
// libdevice functions are declared (__nv_expf, ...) and linked by emitPtx.
// Internal to codegen/.
#pragma once

#include "codegen/kir/Kir.h"
#include "ir/Graph.h"

#include "llvm/IR/IRBuilder.h"

#include <vector>

namespace fusec::llvmir {

/// The register type of dtype `t`: float for f32/f16/bf16, double, iN, i1.
llvm::Type *llvmComputeType(llvm::LLVMContext &ctx, DType t);
/// The type of an element in memory: half, bfloat, i8 for bool, else the
/// compute type.
llvm::Type *llvmStorageType(llvm::LLVMContext &ctx, DType t);

/// An element loaded from memory (storage type) widened to the compute type.
llvm::Value *llvmWiden(llvm::IRBuilder<> &b, DType t, llvm::Value *stored);
/// A compute-type value narrowed to the storage type.
llvm::Value *llvmNarrow(llvm::IRBuilder<> &b, DType t, llvm::Value *v);
/// Element `i` of a constant as a compute-type constant.
llvm::Constant *llvmConstant(llvm::LLVMContext &ctx, const DenseData &d, size_t i);
/// exp(x) of a value of dtype `t` (its compute type), as the exp op computes it.
llvm::Value *llvmExp(llvm::IRBuilder<> &b, DType t, llvm::Value *x);
/// The binary arithmetic op `k` (add ... max, min) of two compute-type values.
llvm::Value *llvmArithmetic(llvm::IRBuilder<> &b, OpKind k, llvm::Value *a, llvm::Value *c);
/// `x` of dtype `from` cast to `to`, as the cast op casts (compute types).
llvm::Value *llvmCast(llvm::IRBuilder<> &b, DType from, DType to, llvm::Value *x);
/// The value of math `op` over `args` (its operands in compute types).
llvm::Value *llvmPointwiseValue(llvm::IRBuilder<> &b, const kir::MathOp &op,
                                const std::vector<llvm::Value *> &args);
/// The value of pointwise `op` over `args` (its operands in compute types).
llvm::Value *llvmPointwiseValue(llvm::IRBuilder<> &b, const Op &op,
                                const std::vector<llvm::Value *> &args);

} // namespace fusec::llvmir
