// The math of the pointwise ops in LLVM IR (Math.h). Each case matches the CUDA C++ of
// cuda/Math.cpp and its helpers in cuda/device/Pointwise.cuh: max/min propagate NaN
// (llvm.maximum, max.NaN), integer ops wrap and divide toward zero with x / 0 = 0, float ->
// integer casts truncate and saturate with NaN -> 0 (llvm.fptosi.sat), and f64 narrows to
// f16/bf16 through an f32 rounded to odd, so once.
#include "codegen/llvm/Math.h"

#include "ir/Assert.h"
#include "ir/TextLiterals.h"

#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/Module.h"

namespace fusec::llvmir {

namespace {

llvm::Module &moduleOf(llvm::IRBuilder<> &b) { return *b.GetInsertBlock()->getModule(); }

/// A libdevice function of one or two arguments of `v`'s type: __nv_<name>f
/// for float, __nv_<name> for double.
llvm::Value *libdevice(llvm::IRBuilder<> &b, std::string_view name,
                       std::vector<llvm::Value *> args) {
  llvm::Type *t = args[0]->getType();
  std::string fn = "__nv_" + std::string(name) + (t->isDoubleTy() ? "" : "f");
  std::vector<llvm::Type *> params(args.size(), t);
  llvm::FunctionCallee callee =
      moduleOf(b).getOrInsertFunction(fn, llvm::FunctionType::get(t, params, false));
  return b.CreateCall(callee, args);
}

/// The constant `v` of `like`'s float type.
llvm::Value *fp(llvm::Value *like, double v) { return llvm::ConstantFP::get(like->getType(), v); }

/// ex2.approx.ftz of `x` (f32).
llvm::Value *exp2Approx(llvm::IRBuilder<> &b, llvm::Value *x) {
  return b.CreateIntrinsic(llvm::Intrinsic::nvvm_ex2_approx_ftz_f, {}, {x});
}

llvm::Value *sigmoid(llvm::IRBuilder<> &b, llvm::Value *x) {
  llvm::Value *e = libdevice(b, "exp", {b.CreateFNeg(x)});
  return b.CreateFDiv(fp(x, 1.0), b.CreateFAdd(fp(x, 1.0), e));
}

/// Note [Math of f16 and bf16 values]: x Phi(x) by the erfc form (its coefficients those of
/// fusec_gelu_narrow_f32 in codegen/cuda/device/Pointwise.cuh).
llvm::Value *geluNarrow(llvm::IRBuilder<> &b, llvm::Value *x) {
  constexpr double kLog2e = 1.44269504088896341;
  auto fma = [&](llvm::Value *m, llvm::Value *n, llvm::Value *a) {
    return b.CreateIntrinsic(llvm::Intrinsic::fma, {x->getType()}, {m, n, a});
  };
  llvm::Value *absX = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  llvm::Value *t = b.CreateIntrinsic(llvm::Intrinsic::nvvm_rcp_approx_ftz_f, {},
                                     {fma(absX, fp(x, 0.35355339059327373), fp(x, 1.0))});
  static const double kP[] = {0.23123851680391477, -0.71689088395907140, 0.48370833554712710,
                              0.24925300968442110, 1.01937109751734050};
  llvm::Value *p = fp(x, kP[0] * kLog2e); // P(t) log2 e, the halving folded in
  for (size_t k = 1; k < std::size(kP); ++k)
    p = fma(p, t, fp(x, kP[k] * kLog2e));
  p = fma(p, t, fp(x, -1.26667162439997120 * kLog2e - 1.0));
  llvm::Value *z2 = b.CreateFMul(x, fp(x, -0.5 * kLog2e));           // -z^2 log2 e = x z2
  llvm::Value *half = b.CreateFMul(t, exp2Approx(b, fma(z2, x, p))); // erfc(z) / 2
  llvm::Value *above = b.CreateFSub(fp(x, 1.0), half);
  llvm::Value *negative = b.CreateFCmpOLT(x, fp(x, 0.0));
  llvm::Value *phi = b.CreateSelect(negative, half, above);
  return b.CreateFMul(x, phi);
}

llvm::Value *gelu(llvm::IRBuilder<> &b, bool tanh, DType t, llvm::Value *x) {
  if (!tanh && isNarrowFloat(t))
    return geluNarrow(b, x);
  llvm::Value *half = b.CreateFMul(fp(x, 0.5), x);
  if (tanh) {
    // 0.044715 * x * x * x, in C's order
    llvm::Value *cubic = b.CreateFMul(b.CreateFMul(b.CreateFMul(fp(x, 0.044715), x), x), x);
    llvm::Value *inner = b.CreateFMul(fp(x, 0.79788456080286536), b.CreateFAdd(x, cubic));
    return b.CreateFMul(half, b.CreateFAdd(fp(x, 1.0), libdevice(b, "tanh", {inner})));
  }
  llvm::Value *erf = libdevice(b, "erf", {b.CreateFMul(x, fp(x, 0.70710678118654752))});
  return b.CreateFMul(half, b.CreateFAdd(fp(x, 1.0), erf));
}

/// a^b wrapped, an internal function of the module per integer width:
/// a negative b gives the integer part of the real result.
llvm::Function *integerPow(llvm::IRBuilder<> &b, llvm::IntegerType *t) {
  llvm::Module &m = moduleOf(b);
  std::string name = "fusec_pow_i" + std::to_string(t->getBitWidth());
  if (llvm::Function *f = m.getFunction(name))
    return f;
  auto *f = llvm::Function::Create(llvm::FunctionType::get(t, {t, t}, false),
                                   llvm::Function::InternalLinkage, name, m);
  llvm::LLVMContext &ctx = m.getContext();
  llvm::IRBuilder<> fb(llvm::BasicBlock::Create(ctx, "entry", f));
  llvm::Value *a = f->getArg(0), *e = f->getArg(1);
  auto *negative = llvm::BasicBlock::Create(ctx, "negative", f);
  auto *loop = llvm::BasicBlock::Create(ctx, "loop", f);
  auto *done = llvm::BasicBlock::Create(ctx, "done", f);
  llvm::Value *zero = llvm::ConstantInt::get(t, 0), *one = llvm::ConstantInt::get(t, 1);
  fb.CreateCondBr(fb.CreateICmpSLT(e, zero), negative, loop);
  fb.SetInsertPoint(negative);
  llvm::Value *odd = fb.CreateICmpNE(fb.CreateAnd(e, one), zero);
  llvm::Value *minusOne = llvm::ConstantInt::getSigned(t, -1);
  llvm::Value *sign = fb.CreateSelect(odd, minusOne, one);
  llvm::Value *isMinusOne = fb.CreateICmpEQ(a, minusOne);
  llvm::Value *ofMinusOne = fb.CreateSelect(isMinusOne, sign, zero);
  llvm::Value *isOne = fb.CreateICmpEQ(a, one);
  llvm::Value *r = fb.CreateSelect(isOne, one, ofMinusOne);
  fb.CreateRet(r);
  fb.SetInsertPoint(loop); // square and multiply while e > 0
  llvm::BasicBlock *entry = &f->getEntryBlock();
  llvm::PHINode *acc = fb.CreatePHI(t, 2), *base = fb.CreatePHI(t, 2), *exp = fb.CreatePHI(t, 2);
  acc->addIncoming(one, entry);
  base->addIncoming(a, entry);
  exp->addIncoming(e, entry);
  auto *body = llvm::BasicBlock::Create(ctx, "body", f, done);
  fb.CreateCondBr(fb.CreateICmpEQ(exp, zero), done, body);
  fb.SetInsertPoint(body);
  llvm::Value *bit = fb.CreateICmpNE(fb.CreateAnd(exp, one), zero);
  llvm::Value *nextAcc = fb.CreateSelect(bit, fb.CreateMul(acc, base), acc);
  acc->addIncoming(nextAcc, body);
  base->addIncoming(fb.CreateMul(base, base), body);
  exp->addIncoming(fb.CreateLShr(exp, one), body);
  fb.CreateBr(loop);
  fb.SetInsertPoint(done);
  fb.CreateRet(acc);
  return f;
}

llvm::Value *integerDiv(llvm::IRBuilder<> &b, llvm::Value *a, llvm::Value *d) {
  // x / 0 = 0 and x / -1 = -x (wrapping) without the poison of sdiv; the
  // divisor becomes 1 where the quotient is not sdiv's.
  llvm::Type *t = a->getType();
  llvm::Value *zero = llvm::ConstantInt::get(t, 0), *one = llvm::ConstantInt::get(t, 1);
  llvm::Value *isZero = b.CreateICmpEQ(d, zero);
  llvm::Value *isMinusOne = b.CreateICmpEQ(d, llvm::ConstantInt::getSigned(t, -1));
  llvm::Value *safe = b.CreateSelect(b.CreateOr(isZero, isMinusOne), one, d);
  llvm::Value *q = b.CreateSDiv(a, safe);
  return b.CreateSelect(isZero, zero, b.CreateSelect(isMinusOne, b.CreateSub(zero, a), q));
}

/// max/min: a NaN operand wins (the first if both), and of two equal values the first. f32 uses
/// llvm.maximum (max.NaN, which ranks -0 below +0); f64 has no such instruction and selects as
/// fusec_max_f64/fusec_min_f64 do.
llvm::Value *maxMin(llvm::IRBuilder<> &b, bool isMax, llvm::Value *a, llvm::Value *c) {
  llvm::Type *t = a->getType();
  if (t->isIntegerTy())
    return b.CreateSelect(isMax ? b.CreateICmpSLT(a, c) : b.CreateICmpSLT(c, a), c, a);
  if (!t->isDoubleTy())
    return b.CreateBinaryIntrinsic(isMax ? llvm::Intrinsic::maximum : llvm::Intrinsic::minimum, a,
                                   c);
  llvm::Value *cBeatsA = isMax ? b.CreateFCmpOLT(a, c) : b.CreateFCmpOLT(c, a);
  llvm::Value *takeC = b.CreateOr(b.CreateFCmpUNO(c, c), cBeatsA);
  llvm::Value *other = b.CreateSelect(takeC, c, a);
  return b.CreateSelect(b.CreateFCmpUNO(a, a), a, other);
}

llvm::Value *arithmetic(llvm::IRBuilder<> &b, OpKind k, llvm::Value *a, llvm::Value *c) {
  llvm::Type *t = a->getType();
  bool isInt = t->isIntegerTy();
  FUSEC_ASSERT(!t->isIntegerTy(1), "arithmetic on bool (type inference refuses it)");
  switch (k) {
  case OpKind::Add:
    return isInt ? b.CreateAdd(a, c) : b.CreateFAdd(a, c);
  case OpKind::Sub:
    return isInt ? b.CreateSub(a, c) : b.CreateFSub(a, c);
  case OpKind::Mul:
    return isInt ? b.CreateMul(a, c) : b.CreateFMul(a, c);
  case OpKind::Div:
    return isInt ? integerDiv(b, a, c) : b.CreateFDiv(a, c);
  case OpKind::Pow:
    if (isInt)
      return b.CreateCall(integerPow(b, llvm::cast<llvm::IntegerType>(t)), {a, c});
    return libdevice(b, "pow", {a, c});
  case OpKind::Max:
  case OpKind::Min:
    return maxMin(b, k == OpKind::Max, a, c);
  default:
    FUSEC_ASSERT(false, "not a binary arithmetic op");
  }
}

llvm::Value *compare(llvm::IRBuilder<> &b, OpKind k, llvm::Value *a, llvm::Value *c) {
  using P = llvm::CmpInst::Predicate;
  struct Row {
    OpKind kind;
    P fp, sint, uint; // bool compares unsigned: true > false
  };
  static constexpr Row kRows[] = {
      {OpKind::Eq, P::FCMP_OEQ, P::ICMP_EQ, P::ICMP_EQ},
      {OpKind::Ne, P::FCMP_UNE, P::ICMP_NE, P::ICMP_NE}, // C's != is true for NaN
      {OpKind::Lt, P::FCMP_OLT, P::ICMP_SLT, P::ICMP_ULT},
      {OpKind::Le, P::FCMP_OLE, P::ICMP_SLE, P::ICMP_ULE},
      {OpKind::Gt, P::FCMP_OGT, P::ICMP_SGT, P::ICMP_UGT},
      {OpKind::Ge, P::FCMP_OGE, P::ICMP_SGE, P::ICMP_UGE},
  };
  const Row &row = kRows[size_t(k) - size_t(OpKind::Eq)];
  FUSEC_ASSERT(row.kind == k, "comparisons follow Ops.def's order");
  llvm::Type *t = a->getType();
  P p = t->isFloatingPointTy() ? row.fp : t->isIntegerTy(1) ? row.uint : row.sint;
  return b.CreateCmp(p, a, c);
}

/// -1, 0 or +1 of `x`'s type; a float zero stays itself and a NaN stays NaN.
llvm::Value *sign(llvm::IRBuilder<> &b, llvm::Value *x) {
  llvm::Type *t = x->getType();
  llvm::Value *zero = llvm::Constant::getNullValue(t);
  bool isInt = t->isIntegerTy();
  llvm::Value *one = isInt ? llvm::ConstantInt::get(t, 1) : fp(x, 1.0);
  llvm::Value *minusOne = isInt ? llvm::ConstantInt::getSigned(t, -1) : fp(x, -1.0);
  llvm::Value *positive = isInt ? b.CreateICmpSGT(x, zero) : b.CreateFCmpOGT(x, zero);
  llvm::Value *negative = isInt ? b.CreateICmpSLT(x, zero) : b.CreateFCmpOLT(x, zero);
  llvm::Value *rest = b.CreateSelect(negative, minusOne, isInt ? zero : x);
  return b.CreateSelect(positive, one, rest);
}

llvm::Value *unary(llvm::IRBuilder<> &b, const kir::MathOp &op, DType t, llvm::Value *x) {
  bool isInt = x->getType()->isIntegerTy();
  FUSEC_ASSERT(!x->getType()->isIntegerTy(1), "a unary op on bool (type inference refuses it)");
  llvm::Value *zero = llvm::Constant::getNullValue(x->getType());
  switch (op.kind) {
  case OpKind::Neg:
    return isInt ? b.CreateSub(zero, x) : b.CreateFNeg(x);
  case OpKind::Abs:
    if (isInt) {
      llvm::Value *negated = b.CreateSub(zero, x);
      return b.CreateSelect(b.CreateICmpSLT(x, zero), negated, x);
    }
    return b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  case OpKind::Relu: // a NaN stays NaN
    return b.CreateSelect(isInt ? b.CreateICmpSLT(x, zero) : b.CreateFCmpOLT(x, zero), zero, x);
  case OpKind::Sqrt: // sqrt.rn, as CUDA's sqrtf
    return b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x);
  case OpKind::Exp:
    if (isNarrowFloat(t)) // Note [Math of f16 and bf16 values]
      return exp2Approx(b, b.CreateFMul(x, fp(x, 1.44269504088896341)));
    [[fallthrough]];
  case OpKind::Log:
  case OpKind::Rsqrt:
  case OpKind::Tanh:
  case OpKind::Erf:
  case OpKind::Sin:
  case OpKind::Cos:
    return libdevice(b, opInfo(op.kind).spelling, {x});
  case OpKind::Floor: // cvt.rmi, as CUDA's floorf
    return b.CreateUnaryIntrinsic(llvm::Intrinsic::floor, x);
  case OpKind::Ceil: // cvt.rpi
    return b.CreateUnaryIntrinsic(llvm::Intrinsic::ceil, x);
  case OpKind::Round: // cvt.rni: ties to even, as CUDA's rintf
    return b.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, x);
  case OpKind::Sign:
    return sign(b, x);
  case OpKind::Sigmoid:
    return sigmoid(b, x);
  case OpKind::Silu:
    return b.CreateFMul(x, sigmoid(b, x));
  case OpKind::Gelu:
    return gelu(b, op.tanh, t, x);
  default:
    FUSEC_ASSERT(false, "not a unary pointwise op");
  }
}

/// The f32 nearest to the double `x` toward zero, its last bit set when
/// inexact (rounding it once more to f16/bf16 is then exact).
llvm::Value *toF32Odd(llvm::IRBuilder<> &b, llvm::Value *x) {
  llvm::Value *f = b.CreateIntrinsic(llvm::Intrinsic::nvvm_d2f_rz, {}, {x});
  llvm::Value *ordered = b.CreateFCmpORD(x, x);
  llvm::Value *inexact = b.CreateAnd(b.CreateFCmpUNE(b.CreateFPExt(f, x->getType()), x), ordered);
  llvm::Value *bits = b.CreateBitCast(f, b.getInt32Ty());
  llvm::Value *odd = b.CreateBitCast(b.CreateOr(bits, b.getInt32(1)), b.getFloatTy());
  return b.CreateSelect(inexact, odd, f);
}

/// A float value (f32 or f64 registers) converted as `cast` specifies.
llvm::Value *castFromFloat(llvm::IRBuilder<> &b, llvm::Value *x, DType to) {
  llvm::LLVMContext &ctx = b.getContext();
  bool isDouble = x->getType()->isDoubleTy();
  switch (to) {
  case DType::F32:
    return isDouble ? b.CreateFPTrunc(x, b.getFloatTy()) : x;
  case DType::F64:
    return isDouble ? x : b.CreateFPExt(x, b.getDoubleTy());
  case DType::F16:
  case DType::BF16: { // rounds to the f16/bf16 grid, kept in f32
    llvm::Value *f = isDouble ? toF32Odd(b, x) : x;
    return b.CreateFPExt(b.CreateFPTrunc(f, llvmType(ctx, to)), b.getFloatTy());
  }
  case DType::I32:
  case DType::I64:
  case DType::I8:
    return b.CreateIntrinsic(llvm::Intrinsic::fptosi_sat, {llvmType(ctx, to), x->getType()}, {x});
  case DType::Bool:
    return b.CreateFCmpUNE(x, llvm::ConstantFP::get(x->getType(), 0.0));
  }
  FUSEC_ASSERT(false, "unknown dtype");
}

llvm::Value *cast(llvm::IRBuilder<> &b, DType from, DType to, llvm::Value *x) {
  if (from == to)
    return x;
  if (isFloat(from))
    return castFromFloat(b, x, to);
  llvm::Type *target = llvmType(b.getContext(), kir::computeType(to));
  if (to == DType::Bool)
    return b.CreateICmpNE(x, llvm::Constant::getNullValue(x->getType()));
  if (from == DType::Bool)
    return isFloat(to) ? b.CreateUIToFP(x, target) : b.CreateZExt(x, target);
  if (isNarrowFloat(to)) // integer -> f64 is exact below 2^53; rounds once to f16/bf16
    return castFromFloat(b, b.CreateSIToFP(x, b.getDoubleTy()), to);
  if (isFloat(to))
    return b.CreateSIToFP(x, target);
  return b.CreateSExtOrTrunc(x, target); // wraps
}

} // namespace

llvm::Type *llvmType(llvm::LLVMContext &ctx, DType t) {
  switch (t) {
  case DType::F32:
    return llvm::Type::getFloatTy(ctx);
  case DType::F16:
    return llvm::Type::getHalfTy(ctx);
  case DType::BF16:
    return llvm::Type::getBFloatTy(ctx);
  case DType::F64:
    return llvm::Type::getDoubleTy(ctx);
  case DType::I32:
    return llvm::Type::getInt32Ty(ctx);
  case DType::I64:
    return llvm::Type::getInt64Ty(ctx);
  case DType::I8:
    return llvm::Type::getInt8Ty(ctx);
  case DType::Bool:
    return llvm::Type::getInt1Ty(ctx);
  }
  FUSEC_ASSERT(false, "unknown dtype");
}

llvm::Constant *llvmConstant(llvm::LLVMContext &ctx, const DenseData &d, size_t i) {
  llvm::Type *t = llvmType(ctx, kir::computeType(d.dtype));
  if (d.numElements() == 0) // a kernel reading an empty constant runs over no elements
    return llvm::Constant::getNullValue(t);
  if (isFloat(d.dtype))
    return llvm::ConstantFP::get(t, d.dtype == DType::F64 ? d.elementAsDouble(i)
                                                          : double(float(d.elementAsDouble(i))));
  if (d.dtype == DType::Bool)
    return llvm::ConstantInt::get(t, elementBits(d, i) ? 1 : 0);
  unsigned bits = 8 * dtypeSize(d.dtype);
  uint64_t raw = elementBits(d, i);
  int64_t v = bits == 64 ? int64_t(raw) : int64_t(raw << (64 - bits)) >> (64 - bits);
  return llvm::ConstantInt::getSigned(t, v);
}

llvm::Value *llvmPointwiseValue(llvm::IRBuilder<> &b, const kir::MathOp &op,
                                const std::vector<llvm::Value *> &args) {
  DType t = op.operand;
  switch (op.kind) {
  case OpKind::Neg:
  case OpKind::Abs:
  case OpKind::Relu:
  case OpKind::Exp:
  case OpKind::Log:
  case OpKind::Sqrt:
  case OpKind::Rsqrt:
  case OpKind::Tanh:
  case OpKind::Erf:
  case OpKind::Sigmoid:
  case OpKind::Silu:
  case OpKind::Gelu:
  case OpKind::Sin:
  case OpKind::Cos:
  case OpKind::Floor:
  case OpKind::Ceil:
  case OpKind::Round:
  case OpKind::Sign:
    return unary(b, op, t, args[0]);
  case OpKind::Add:
  case OpKind::Sub:
  case OpKind::Mul:
  case OpKind::Div:
  case OpKind::Pow:
  case OpKind::Max:
  case OpKind::Min:
    return arithmetic(b, op.kind, args[0], args[1]);
  case OpKind::Eq:
  case OpKind::Ne:
  case OpKind::Lt:
  case OpKind::Le:
  case OpKind::Gt:
  case OpKind::Ge:
    return compare(b, op.kind, args[0], args[1]);
  case OpKind::Cast:
    return cast(b, t, op.result, args[0]);
  case OpKind::Where:
    return b.CreateSelect(args[0], args[1], args[2]);
#define FUSEC_CASES_Pointwise(Id)
#include "ir/OpCases.def"
    break;
  }
  FUSEC_ASSERT(false, "not a pointwise op");
}

} // namespace fusec::llvmir
