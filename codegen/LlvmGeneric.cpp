// Generic kernels in LLVM IR: the counterparts of GenericMovement.cpp
// (reshape, transpose, slice, broadcast, concat) and GenericWindow.cpp
// (conv2d, max_pool2d, avg_pool2d), with the same parameters (KernelBuilder),
// the same launch (genericLaunch) and the same arithmetic: one thread per
// output element over a grid-stride loop, sizes and strides as constants.
// Movement copies storage bits; conv2d and pooling accumulate as the CUDA
// kernels do (f32 for f32/f16/bf16, f64, wrapping i64 for integers, C's
// promotions of the tap's product). Other op families are an error at the
// op that names the NVRTC back end.
#include "codegen/Generic.h"
#include "codegen/GenericSupport.h"
#include "codegen/LlvmCodegen.h"
#include "codegen/LlvmKernel.h"
#include "codegen/LlvmMath.h"
#include "codegen/Nvptx.h"
#include "ir/Assert.h"
#include "ir/Kernel.h"

#include "llvm/IR/LLVMContext.h"

#include <array>

namespace fusec::codegen {

namespace {

using namespace generic;

class LlvmGenericEmitter {
public:
  LlvmGenericEmitter(const Op &op, const KernelBuilder &k, llvm::Module &m)
      : op(op), k(k), m(m), ctx(m.getContext()), b(ctx) {}

  /// The kernel `entry`; returns the blocks it launches.
  int64_t run(const std::string &entry);

private:
  llvm::Value *in(unsigned j) { return fn->getArg(j); }
  llvm::Value *out() { return fn->getArg(op.numOperands()); }
  llvm::Value *i64(int64_t v) { return b.getInt64(uint64_t(v)); }
  /// The coordinates of flat index `i` in the row-major space `dims`.
  std::vector<llvm::Value *> coordinates(llvm::Value *i, const Sizes &dims);
  /// base + Σ coords[k] · strides[k].
  llvm::Value *offset(const std::vector<llvm::Value *> &coords, const Sizes &strides, int64_t base);
  /// for (i = thread; i < count; i += all threads) body(i).
  void gridStride(int64_t count, const std::function<void(llvm::Value *)> &body);
  /// Element `index` of `ptr` (dtype `t`) in its compute type.
  llvm::Value *load(DType t, llvm::Value *ptr, llvm::Value *index);
  /// Stores the accumulator `x` (dtype `acc`) as result element `i`.
  void storeFromAcc(DType acc, llvm::Value *x, llvm::Value *i);
  /// `x`, of compute dtype `t`, widened as C widens it into an `acc` sum.
  llvm::Value *toAcc(DType t, DType acc, llvm::Value *x);

  int64_t movement();
  int64_t conv(const Window &win);
  int64_t pool(const Window &win);
  /// n, oc, oh, ow of output element `i`, in the op's layout.
  std::array<llvm::Value *, 4> outputCoordinates(const Window &win, llvm::Value *i);
  /// The offset of input element (n, channel, ih, iw).
  llvm::Value *inputAt(const Window &win, llvm::Value *n, llvm::Value *channel, llvm::Value *ih,
                       llvm::Value *iw);

  const Op &op;
  const KernelBuilder &k;
  llvm::Module &m;
  llvm::LLVMContext &ctx;
  llvm::IRBuilder<> b;
  llvm::Function *fn = nullptr;
};

std::vector<llvm::Value *> LlvmGenericEmitter::coordinates(llvm::Value *i, const Sizes &dims) {
  std::vector<llvm::Value *> c(dims.size());
  llvm::Value *rem = i;
  for (size_t a = dims.size(); a-- > 0;) {
    if (a == 0) {
      c[0] = rem;
      break;
    }
    c[a] = b.CreateURem(rem, i64(dims[a]), "c" + std::to_string(a)); // never negative
    rem = b.CreateUDiv(rem, i64(dims[a]));
  }
  c[0]->setName("c0");
  return c;
}

llvm::Value *LlvmGenericEmitter::offset(const std::vector<llvm::Value *> &coords,
                                        const Sizes &strides, int64_t base) {
  llvm::Value *sum = i64(base);
  for (size_t a = 0; a < coords.size(); ++a)
    if (strides[a] != 0)
      sum = b.CreateAdd(sum, b.CreateMul(coords[a], i64(strides[a])));
  return sum;
}

void LlvmGenericEmitter::gridStride(int64_t count, const std::function<void(llvm::Value *)> &body) {
  namespace I = llvm::Intrinsic;
  llvm::Value *threads = readSpecialRegister(b, I::nvvm_read_ptx_sreg_ntid_x);
  llvm::Value *first =
      b.CreateAdd(b.CreateMul(readSpecialRegister(b, I::nvvm_read_ptx_sreg_ctaid_x), threads),
                  readSpecialRegister(b, I::nvvm_read_ptx_sreg_tid_x));
  llvm::Value *step =
      b.CreateMul(readSpecialRegister(b, I::nvvm_read_ptx_sreg_nctaid_x), threads, "step");
  emitCountedLoop(b, first, i64(count), step, "i", body);
}

llvm::Value *LlvmGenericEmitter::load(DType t, llvm::Value *ptr, llvm::Value *index) {
  llvm::Type *st = llvmStorageType(ctx, t);
  return llvmWiden(b, t, b.CreateLoad(st, b.CreateGEP(st, ptr, index)));
}

void LlvmGenericEmitter::storeFromAcc(DType acc, llvm::Value *x, llvm::Value *i) {
  DType t = op.result()->type().dtype;
  llvm::Value *v = llvmNarrow(b, t, llvmCast(b, acc, t, x)); // f64 -> f16/bf16 rounds once
  b.CreateStore(v, b.CreateGEP(llvmStorageType(ctx, t), out(), i));
}

llvm::Value *LlvmGenericEmitter::toAcc(DType t, DType acc, llvm::Value *x) {
  if (acc == DType::I64)
    return t == DType::Bool ? b.CreateZExt(x, b.getInt64Ty())
                            : b.CreateSExtOrTrunc(x, b.getInt64Ty());
  llvm::Type *target = llvmComputeType(ctx, acc);
  if (x->getType()->isIntegerTy())
    return t == DType::Bool ? b.CreateUIToFP(x, target) : b.CreateSIToFP(x, target);
  return x->getType() == target ? x : b.CreateFPExt(x, target);
}

int64_t LlvmGenericEmitter::movement() {
  Sizes outSizes = sizesOf(*op.result()), inSizes = sizesOf(*op.operand(0));
  int64_t numel = product(outSizes);
  llvm::Type *st = llvmStorageType(ctx, op.result()->type().dtype);
  auto copy = [&](unsigned operand, llvm::Value *from, llvm::Value *to) {
    b.CreateStore(b.CreateLoad(st, b.CreateGEP(st, in(operand), from)), b.CreateGEP(st, out(), to));
  };
  gridStride(numel, [&](llvm::Value *i) {
    if (op.kind() == OpKind::Reshape)
      return copy(0, i, i);
    std::vector<llvm::Value *> c = coordinates(i, outSizes);
    if (op.kind() != OpKind::Concat) {
      auto [strides, base] = gatherOf(op, inSizes, outSizes);
      return copy(0, offset(c, strides, base), i);
    }
    // The operand whose extent along the axis holds the coordinate; operands
    // of extent 0 are skipped, and the last one needs no test.
    size_t axis = *normalizeAxis(op.getInt("axis"), outSizes.size());
    auto *done = llvm::BasicBlock::Create(ctx, "copied", fn);
    int64_t begin = 0;
    std::vector<unsigned> present;
    for (unsigned j = 0; j < op.numOperands(); ++j)
      if (sizesOf(*op.operand(j))[axis] > 0)
        present.push_back(j);
    for (size_t n = 0; n < present.size(); ++n) {
      Sizes strides = contiguousStrides(sizesOf(*op.operand(present[n])));
      int64_t end = begin + sizesOf(*op.operand(present[n]))[axis];
      llvm::BasicBlock *next = nullptr;
      if (n + 1 < present.size()) {
        auto *take =
            llvm::BasicBlock::Create(ctx, "operand" + std::to_string(present[n]), fn, done);
        next = llvm::BasicBlock::Create(ctx, "next", fn, done);
        b.CreateCondBr(b.CreateICmpULT(c[axis], i64(end)), take, next);
        b.SetInsertPoint(take);
      }
      copy(present[n], offset(c, strides, -begin * strides[axis]), i);
      b.CreateBr(done);
      if (next)
        b.SetInsertPoint(next);
      begin = end;
    }
    b.SetInsertPoint(done);
  });
  return blocksFor(numel);
}

std::array<llvm::Value *, 4> LlvmGenericEmitter::outputCoordinates(const Window &win,
                                                                   llvm::Value *i) {
  std::vector<llvm::Value *> c = coordinates(i, win.nhwc ? Sizes{win.n, win.oh, win.ow, win.o}
                                                         : Sizes{win.n, win.o, win.oh, win.ow});
  std::array<llvm::Value *, 4> r = {c[0], c[win.nhwc ? 3 : 1], c[win.nhwc ? 1 : 2],
                                    c[win.nhwc ? 2 : 3]};
  const char *names[] = {"n", "oc", "oh", "ow"};
  for (size_t a = 0; a < 4; ++a)
    if (r[a] != i)
      r[a]->setName(names[a]);
  return r;
}

llvm::Value *LlvmGenericEmitter::inputAt(const Window &win, llvm::Value *n, llvm::Value *channel,
                                         llvm::Value *ih, llvm::Value *iw) {
  auto madd = [&](llvm::Value *x, int64_t scale, llvm::Value *y) {
    return b.CreateAdd(b.CreateMul(x, i64(scale)), y);
  };
  if (win.nhwc)
    return madd(madd(madd(n, win.h, ih), win.w, iw), win.c, channel);
  return madd(madd(madd(n, win.c, channel), win.h, ih), win.w, iw);
}

// Σ over the taps inside the input and the group's input channels of x · w,
// as GenericWindow.cpp's kConvLoop.
int64_t LlvmGenericEmitter::conv(const Window &win) {
  DType t = op.result()->type().dtype, acc = accDType(t, accAttr(op));
  DType xt = op.operand(0)->type().dtype, wt = op.operand(1)->type().dtype;
  int64_t cg = sizesOf(*op.operand(1))[win.nhwc ? 3 : 1], perGroup = win.o / op.getInt("groups");
  llvm::Type *accType = llvmComputeType(ctx, acc);
  llvm::AllocaInst *sum = nullptr;
  {
    llvm::IRBuilder<> eb(&fn->getEntryBlock(), fn->getEntryBlock().begin());
    sum = eb.CreateAlloca(accType, nullptr, "acc");
  }
  int64_t numel = product(sizesOf(*op.result()));
  gridStride(numel, [&](llvm::Value *i) {
    auto [n, oc, oh, ow] = outputCoordinates(win, i);
    b.CreateStore(llvm::Constant::getNullValue(accType), sum);
    emitCountedLoop(b, i64(0), i64(win.kh), i64(1), "kh", [&](llvm::Value *kh) {
      llvm::Value *ih = b.CreateAdd(b.CreateSub(b.CreateMul(oh, i64(win.sh)), i64(win.pt)),
                                    b.CreateMul(kh, i64(win.dh)), "ih");
      llvm::Value *rowInside =
          b.CreateAnd(b.CreateICmpSGE(ih, i64(0)), b.CreateICmpSLT(ih, i64(win.h)));
      emitIf(b, rowInside, "row", [&] {
        emitCountedLoop(b, i64(0), i64(win.kw), i64(1), "kw", [&](llvm::Value *kw) {
          llvm::Value *iw = b.CreateAdd(b.CreateSub(b.CreateMul(ow, i64(win.sw)), i64(win.pl)),
                                        b.CreateMul(kw, i64(win.dw)), "iw");
          llvm::Value *inside =
              b.CreateAnd(b.CreateICmpSGE(iw, i64(0)), b.CreateICmpSLT(iw, i64(win.w)));
          emitIf(b, inside, "tap", [&] {
            emitCountedLoop(b, i64(0), i64(cg), i64(1), "c", [&](llvm::Value *c) {
              llvm::Value *channel =
                  perGroup == win.o
                      ? c
                      : b.CreateAdd(b.CreateMul(b.CreateUDiv(oc, i64(perGroup)), i64(cg)), c);
              llvm::Value *weightAt =
                  win.nhwc
                      ? b.CreateAdd(
                            b.CreateMul(
                                b.CreateAdd(
                                    b.CreateMul(b.CreateAdd(b.CreateMul(oc, i64(win.kh)), kh),
                                                i64(win.kw)),
                                    kw),
                                i64(cg)),
                            c)
                      : b.CreateAdd(
                            b.CreateMul(
                                b.CreateAdd(b.CreateMul(b.CreateAdd(b.CreateMul(oc, i64(cg)), c),
                                                        i64(win.kh)),
                                            kh),
                                i64(win.kw)),
                            kw);
              llvm::Value *x = load(xt, in(0), inputAt(win, n, channel, ih, iw));
              llvm::Value *w = load(wt, in(1), weightAt);
              llvm::Value *tap;
              if (acc == DType::I64) {
                tap = b.CreateMul(toAcc(xt, acc, x), toAcc(wt, acc, w));
              } else { // C multiplies in the wider of the two, then widens into the sum
                bool wide = x->getType()->isDoubleTy() || w->getType()->isDoubleTy();
                DType product = wide ? DType::F64 : DType::F32;
                tap =
                    toAcc(product, acc, b.CreateFMul(toAcc(xt, product, x), toAcc(wt, product, w)));
              }
              llvm::Value *total = b.CreateLoad(accType, sum);
              b.CreateStore(acc == DType::I64 ? b.CreateAdd(total, tap) : b.CreateFAdd(total, tap),
                            sum);
            });
          });
        });
      });
    });
    llvm::Value *result = b.CreateLoad(accType, sum);
    if (op.numOperands() > 2) {
      DType bt = op.operand(2)->type().dtype;
      llvm::Value *bias = toAcc(bt, acc, load(bt, in(2), oc));
      result = acc == DType::I64 ? b.CreateAdd(result, bias) : b.CreateFAdd(result, bias);
    }
    storeFromAcc(acc, result, i);
  });
  return blocksFor(numel);
}

// The window clipped to the input, as GenericWindow.cpp's kPoolLoop.
int64_t LlvmGenericEmitter::pool(const Window &win) {
  bool isMax = op.kind() == OpKind::MaxPool2d;
  DType t = op.result()->type().dtype, acc = accDType(t);
  llvm::Type *accType = llvmComputeType(ctx, acc);
  llvm::AllocaInst *sum = nullptr;
  {
    llvm::IRBuilder<> eb(&fn->getEntryBlock(), fn->getEntryBlock().begin());
    sum = eb.CreateAlloca(accType, nullptr, "acc");
  }
  llvm::Value *init = llvm::Constant::getNullValue(accType);
  if (isMax)
    init = acc == DType::I64 ? static_cast<llvm::Value *>(b.getInt64(uint64_t(INT64_MIN)))
                             : llvm::ConstantFP::getInfinity(accType, true);
  int64_t numel = product(sizesOf(*op.result()));
  gridStride(numel, [&](llvm::Value *i) {
    auto [n, oc, oh, ow] = outputCoordinates(win, i);
    llvm::Value *h0 = b.CreateSub(b.CreateMul(oh, i64(win.sh)), i64(win.pt));
    llvm::Value *w0 = b.CreateSub(b.CreateMul(ow, i64(win.sw)), i64(win.pl));
    llvm::Value *hLo = b.CreateSelect(b.CreateICmpSGT(h0, i64(0)), h0, i64(0), "h_lo");
    llvm::Value *hEnd = b.CreateAdd(h0, i64(win.kh));
    llvm::Value *hHi = b.CreateSelect(b.CreateICmpSLT(hEnd, i64(win.h)), hEnd, i64(win.h), "h_hi");
    llvm::Value *wLo = b.CreateSelect(b.CreateICmpSGT(w0, i64(0)), w0, i64(0), "w_lo");
    llvm::Value *wEnd = b.CreateAdd(w0, i64(win.kw));
    llvm::Value *wHi = b.CreateSelect(b.CreateICmpSLT(wEnd, i64(win.w)), wEnd, i64(win.w), "w_hi");
    b.CreateStore(init, sum);
    emitCountedLoop(b, hLo, hHi, i64(1), "ih", [&](llvm::Value *ih) {
      emitCountedLoop(b, wLo, wHi, i64(1), "iw", [&](llvm::Value *iw) {
        llvm::Value *x = toAcc(t, acc, load(t, in(0), inputAt(win, n, oc, ih, iw)));
        llvm::Value *total = b.CreateLoad(accType, sum);
        llvm::Value *next = isMax               ? llvmArithmetic(b, OpKind::Max, total, x)
                            : acc == DType::I64 ? b.CreateAdd(total, x)
                                                : b.CreateFAdd(total, x);
        b.CreateStore(next, sum);
      });
    });
    llvm::Value *result = b.CreateLoad(accType, sum);
    if (!isMax) {
      llvm::Value *count;
      if (op.getBool("count_include_pad"))
        count = llvm::ConstantFP::get(accType, double(win.kh * win.kw));
      else
        count = b.CreateSIToFP(b.CreateMul(b.CreateSub(hHi, hLo), b.CreateSub(wHi, wLo)), accType);
      result = b.CreateFDiv(result, count);
    }
    storeFromAcc(acc, result, i);
  });
  return blocksFor(numel);
}

int64_t LlvmGenericEmitter::run(const std::string &entry) {
  fn = declareLlvmKernel(m, entry, k.args());
  setLaunchBounds(*fn, unsigned(kBlock), 0);
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", fn));
  int64_t blocks;
  if (op.info().cls == OpClass::Movement)
    blocks = movement();
  else if (op.kind() == OpKind::Conv2d)
    blocks = conv(windowOf(op));
  else
    blocks = pool(windowOf(op));
  b.CreateRetVoid();
  return blocks;
}

} // namespace

std::optional<GeneratedKernel> emitGenericLlvm(const Op &op, std::string_view graphName,
                                               Diagnostics &diags) {
  OpClass cls = op.info().cls;
  if (cls != OpClass::Movement && cls != OpClass::Window) {
    diags.error(op.loc(), describeLaunchedOp(op) + " is not generated by the LLVM back end yet (" +
                              kLlvmRenders + ")");
    return std::nullopt;
  }
  if (!checkGenericOp(op, diags))
    return std::nullopt;
  KernelBuilder k(op, graphName);
  std::string entry = kernelEntryName(op, graphName);
  llvm::LLVMContext ctx;
  llvm::Module m(entry, ctx);
  prepareNvptxModule(m);
  LlvmGenericEmitter emitter(op, k, m);
  int64_t blocks = emitter.run(entry);
  GeneratedKernel out{entry, printModule(m), k.args(), genericLaunch(blocks), Backend::Llvm};
  return out;
}

} // namespace fusec::codegen
