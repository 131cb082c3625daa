// Generic kernels in LLVM IR: the counterparts of GenericWindow.cpp (conv2d,
// max_pool2d, avg_pool2d), GenericMatMul.cpp, GenericAttention.cpp,
// GenericReduce.cpp and GenericNorm.cpp (the elementwise and movement ops are
// built in kir, templates/GenericElementwise.cpp), with the same parameters
// (KernelBuilder), the same launch (genericLaunch) and the same arithmetic,
// sizes and strides as constants. Conv2d and pooling accumulate as the CUDA
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
#include <cmath>
#include <tuple>

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

  /// A block-uniform loop over `tiles` tiles: blockIdx.x, + gridDim.x, ...
  void tileLoop(int64_t tiles, const std::function<void(llvm::Value *)> &body);
  /// A scratch array in shared memory of `count` elements of `t`.
  llvm::GlobalVariable *shared(llvm::Type *t, int64_t count, const std::string &name);

  int64_t matmul();
  int64_t attention();
  int64_t reduction();
  int64_t normalization();
  /// The group's combined `v` (every thread gets it) through the block's
  /// scratch `red`, as fusec_group_reduce (device/Generic.cuh): a tree of
  /// halving steps keeping the lower lane on the left of `combine`. Every
  /// thread of the block must reach it.
  llvm::Value *groupReduce(llvm::Value *v, OpKind combine, const GroupLayout &layout,
                           llvm::GlobalVariable *red, llvm::Value *group, llvm::Value *lane);
  /// group and lane of this thread in `layout` (GroupLayout::declare).
  std::pair<llvm::Value *, llvm::Value *> groupAndLane(const GroupLayout &layout);
  /// `kind` (Add, Max or Min) of two accumulator values.
  llvm::Value *combineAcc(OpKind kind, llvm::Value *a, llvm::Value *c);
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
  if (dims.empty())
    return c;
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
  return x->getType() == target ? x : b.CreateFPCast(x, target); // f64 operands may accumulate in f32
}

void LlvmGenericEmitter::tileLoop(int64_t tiles, const std::function<void(llvm::Value *)> &body) {
  namespace I = llvm::Intrinsic;
  emitCountedLoop(b, readSpecialRegister(b, I::nvvm_read_ptx_sreg_ctaid_x), i64(tiles),
                  readSpecialRegister(b, I::nvvm_read_ptx_sreg_nctaid_x), "tile", body);
}

llvm::GlobalVariable *LlvmGenericEmitter::shared(llvm::Type *t, int64_t count,
                                                 const std::string &name) {
  return emitSharedArray(m, t, uint64_t(count), (fn->getName() + "_" + name).str(), 8);
}

// 16x16 output tiles through shared memory, as GenericMatMul.cpp's
// kMatMulKernel: each K step stages a 16x16 tile of A and of B (converted
// to the accumulator type, zero past the edges; loads coalesced whatever
// the transposes), then every thread adds its row times its column.
int64_t LlvmGenericEmitter::matmul() {
  constexpr int64_t kTile = 16;
  MatMulShape p = matMulShapeOf(op);
  DType t = op.result()->type().dtype, acc = accDType(t, accAttr(op));
  DType ta = op.operand(0)->type().dtype, tb = op.operand(1)->type().dtype;
  llvm::Type *accType = llvmComputeType(ctx, acc);
  llvm::GlobalVariable *tileA = shared(accType, 16 * 17, "tile_a");
  llvm::GlobalVariable *tileB = shared(accType, 16 * 17, "tile_b");
  int64_t tilesM = (p.m + kTile - 1) / kTile, tilesN = (p.n + kTile - 1) / kTile;
  int64_t tiles = product(p.batch) * tilesM * tilesN;
  llvm::AllocaInst *sum = emitEntryAlloca(b, accType, "acc");
  llvm::Value *tid = readSpecialRegister(b, llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
  llvm::Value *tx = b.CreateURem(tid, i64(16), "tx"), *ty = b.CreateUDiv(tid, i64(16), "ty");
  auto at = [&](llvm::Value *tile, llvm::Value *row, llvm::Value *col) {
    return b.CreateGEP(accType, tile, b.CreateAdd(b.CreateMul(row, i64(17)), col));
  };
  auto multiplyAdd = [&](llvm::Value *total, llvm::Value *x, llvm::Value *y) {
    return acc == DType::I64 ? b.CreateAdd(total, b.CreateMul(x, y))
                             : b.CreateFAdd(total, b.CreateFMul(x, y));
  };
  tileLoop(tiles, [&](llvm::Value *tile) {
    llvm::Value *n0 = b.CreateMul(b.CreateURem(tile, i64(tilesN)), i64(16), "n0");
    llvm::Value *m0 =
        b.CreateMul(b.CreateURem(b.CreateUDiv(tile, i64(tilesN)), i64(tilesM)), i64(16), "m0");
    llvm::Value *batch = b.CreateUDiv(tile, i64(tilesM * tilesN), "batch");
    std::vector<llvm::Value *> bc = coordinates(batch, p.batch);
    llvm::Value *aBase = offset(bc, p.aStrides, 0), *bBase = offset(bc, p.bStrides, 0);
    b.CreateStore(llvm::Constant::getNullValue(accType), sum);
    llvm::Value *zero = llvm::Constant::getNullValue(accType);
    emitCountedLoop(b, i64(0), i64(p.k), i64(16), "k0", [&](llvm::Value *k0) {
      // A: row am (of M), column ak (of K); B: row bk, column bn.
      llvm::Value *aRow = p.ta ? tx : ty, *aCol = p.ta ? ty : tx;
      llvm::Value *am = b.CreateAdd(m0, aRow), *ak = b.CreateAdd(k0, aCol);
      llvm::Value *aAt = p.ta ? b.CreateAdd(b.CreateMul(ak, i64(p.m)), am)
                              : b.CreateAdd(b.CreateMul(am, i64(p.k)), ak);
      llvm::Value *aIn = b.CreateAnd(b.CreateICmpSLT(am, i64(p.m)), b.CreateICmpSLT(ak, i64(p.k)));
      llvm::Value *bRow = p.tb ? tx : ty, *bCol = p.tb ? ty : tx;
      llvm::Value *bk = b.CreateAdd(k0, bRow), *bn = b.CreateAdd(n0, bCol);
      llvm::Value *bAt = p.tb ? b.CreateAdd(b.CreateMul(bn, i64(p.k)), bk)
                              : b.CreateAdd(b.CreateMul(bk, i64(p.n)), bn);
      llvm::Value *bIn = b.CreateAnd(b.CreateICmpSLT(bk, i64(p.k)), b.CreateICmpSLT(bn, i64(p.n)));
      for (auto [inside, operand, dtype, base, index, tileOf, row, col] :
           {std::tuple(aIn, 0u, ta, aBase, aAt, tileA, aRow, aCol),
            std::tuple(bIn, 1u, tb, bBase, bAt, tileB, bRow, bCol)}) {
        llvm::Value *slot = at(tileOf, row, col);
        b.CreateStore(zero, slot);
        emitIf(b, inside, "load", [&] {
          llvm::Value *x = load(dtype, in(operand), b.CreateAdd(base, index));
          b.CreateStore(toAcc(dtype, acc, x), slot);
        });
      }
      emitBarrier(b);
      emitCountedLoop(b, i64(0), i64(16), i64(1), "kk", [&](llvm::Value *kk) {
        llvm::Value *x = b.CreateLoad(accType, at(tileA, ty, kk));
        llvm::Value *y = b.CreateLoad(accType, at(tileB, kk, tx));
        b.CreateStore(multiplyAdd(b.CreateLoad(accType, sum), x, y), sum);
      });
      emitBarrier(b);
    });
    llvm::Value *m = b.CreateAdd(m0, ty, "m"), *n = b.CreateAdd(n0, tx, "n");
    emitIf(b, b.CreateAnd(b.CreateICmpSLT(m, i64(p.m)), b.CreateICmpSLT(n, i64(p.n))), "store",
           [&] {
             llvm::Value *result = b.CreateLoad(accType, sum);
             if (p.bias) {
               DType bt = op.operand(2)->type().dtype;
               llvm::Value *bias = toAcc(bt, acc, load(bt, in(2), n));
               result = acc == DType::I64 ? b.CreateAdd(result, bias) : b.CreateFAdd(result, bias);
             }
             llvm::Value *index = b.CreateAdd(b.CreateMul(batch, i64(p.m * p.n)),
                                              b.CreateAdd(b.CreateMul(m, i64(p.n)), n));
             storeFromAcc(acc, result, index);
           });
  });
  return tiles;
}

// softmax(q · kᵀ · scale + mask) · v by an online softmax over the keys, as
// GenericAttention.cpp's kAttentionKernel: a group of `pieces` x `splits`
// lanes per query row (or output element), the row's running max, sum and
// value accumulators in registers, the splits merged by shuffles at the end.
int64_t LlvmGenericEmitter::attention() {
  AttentionShape a = attentionShapeOf(op);
  DType t = op.result()->type().dtype, acc = accDType(t, accAttr(op));
  llvm::Type *T = llvmComputeType(ctx, acc);
  Sizes out = sizesOf(*op.result());
  Sizes batchSizes(out.begin(), out.end() - 2);
  int64_t lanes = a.pieces * a.splits, width = a.perRow ? a.dv / a.pieces : 1;
  int64_t depth = a.d / a.pieces; // this lane's share of a q or k row
  bool qInRegisters = a.d > 0 && depth <= kMaxRegisterRow;
  int64_t rows = product(batchSizes) * a.sq;
  int64_t items = a.dv == 0 ? 0 : rows * (a.perRow ? 1 : a.dv) * lanes;
  llvm::Value *lowest = llvm::ConstantFP::getInfinity(T, true), *zero = llvm::ConstantFP::get(T, 0);
  double scaleValue =
      op.attrIfPresent("scale") ? op.getFloat("scale") : 1.0 / std::sqrt(double(a.d));
  llvm::Value *scale = llvm::ConstantFP::get(T, scaleValue);
  // The running state: allocas that SROA turns into registers.
  // (each goes first in the entry block: made in reverse)
  llvm::AllocaInst *rowSum = emitEntryAlloca(b, T, "row_sum");
  llvm::AllocaInst *rowMax = emitEntryAlloca(b, T, "row_max");
  llvm::AllocaInst *accs =
      emitEntryAlloca(b, llvm::ArrayType::get(T, uint64_t(std::max<int64_t>(width, 1))), "acc");
  auto accAt = [&](int64_t c) {
    return b.CreateConstGEP2_32(accs->getAllocatedType(), accs, 0, unsigned(c));
  };
  auto base = [&](unsigned j, const std::vector<llvm::Value *> &bc, int64_t matrixSize) {
    Sizes operand = sizesOf(*op.operand(j));
    Sizes strides = broadcastStrides(Sizes(operand.begin(), operand.end() - 2), batchSizes);
    for (int64_t &x : strides)
      x *= matrixSize;
    return offset(bc, strides, 0);
  };
  auto loadAcc = [&](unsigned j, llvm::Value *index) {
    DType dt = op.operand(j)->type().dtype;
    return toAcc(dt, acc, load(dt, in(j), index));
  };
  llvm::Value *tid = readSpecialRegister(b, llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x, false);
  gridStride(items, [&](llvm::Value *item) {
    llvm::Value *group = lanes == 1 ? item : b.CreateUDiv(item, i64(lanes));
    llvm::Value *row = a.perRow ? group : b.CreateUDiv(group, i64(a.dv), "row");
    llvm::Value *col = a.perRow ? nullptr : b.CreateURem(group, i64(a.dv), "col");
    llvm::Value *piece = a.pieces > 1 ? b.CreateURem(item, i64(a.pieces), "piece") : nullptr;
    llvm::Value *split =
        a.splits > 1 ? b.CreateURem(a.pieces == 1 ? item : b.CreateUDiv(item, i64(a.pieces)),
                                    i64(a.splits), "split")
                     : nullptr;
    llvm::Value *mask = nullptr;
    if (lanes > 1) // this group's lanes of the warp
      mask = b.CreateShl(
          b.getInt32(uint32_t((1ull << lanes) - 1)),
          b.CreateMul(b.CreateUDiv(b.CreateURem(tid, b.getInt32(32)), b.getInt32(uint32_t(lanes))),
                      b.getInt32(uint32_t(lanes))),
          "lanes");
    // Element c of this lane's share of a row of D (or Dv) elements.
    auto mine = [&](llvm::Value *c) {
      return a.pieces == 1 ? c : b.CreateAdd(b.CreateMul(c, i64(a.pieces)), piece);
    };
    llvm::Value *i = b.CreateURem(row, i64(a.sq), "i");
    std::vector<llvm::Value *> bc =
        batchSizes.empty() ? std::vector<llvm::Value *>{}
                           : coordinates(b.CreateUDiv(row, i64(a.sq), "batch"), batchSizes);
    llvm::Value *qRow = b.CreateAdd(base(0, bc, a.sq * a.d), b.CreateMul(i, i64(a.d)), "q_row");
    llvm::Value *kBase = base(1, bc, a.sk * a.d), *vBase = base(2, bc, a.sk * a.dv);
    llvm::Value *maskRow = nullptr;
    int64_t maskColStride = 0;
    if (op.numOperands() > 3) {
      Sizes scores = batchSizes;
      scores.push_back(a.sq);
      scores.push_back(a.sk);
      Sizes strides = broadcastStrides(sizesOf(*op.operand(3)), scores);
      int64_t rowStride = strides.end()[-2];
      maskColStride = a.sk > 1 ? strides.end()[-1] : 0;
      strides.resize(scores.size() - 2);
      maskRow = offset(bc, strides, 0);
      if (rowStride != 0 && a.sq > 1)
        maskRow = b.CreateAdd(maskRow, b.CreateMul(i, i64(rowStride)), "mask_row");
    }
    std::vector<llvm::Value *> q;
    for (int64_t c = 0; qInRegisters && c < depth; ++c)
      q.push_back(loadAcc(0, b.CreateAdd(qRow, mine(i64(c)))));
    for (int64_t c = 0; c < width; ++c)
      b.CreateStore(zero, accAt(c));
    b.CreateStore(lowest, rowMax);
    b.CreateStore(zero, rowSum);
    llvm::Value *keys = i64(a.sk);
    if (op.getBool("causal")) {
      llvm::Value *next = b.CreateAdd(i, i64(1));
      keys = b.CreateSelect(b.CreateICmpSLT(next, i64(a.sk)), next, i64(a.sk), "keys");
    }
    auto *partialType = llvm::ArrayType::get(T, 4);
    emitCountedLoop(b, i64(0), keys, i64(a.splits), "key", [&](llvm::Value *j0) {
      llvm::Value *j = split ? b.CreateAdd(j0, split, "j") : j0;
      llvm::Value *live = split ? b.CreateICmpSLT(j, keys, "live") : nullptr;
      llvm::Value *kRow = b.CreateAdd(kBase, b.CreateMul(j, i64(a.d)), "k_row");
      // Four interleaved partial sums of this lane's share of q · k_j.
      llvm::Value *partial = llvm::ConstantAggregateZero::get(partialType);
      auto dot = [&] {
        if (qInRegisters) {
          for (int64_t c = 0; c < depth; ++c) {
            llvm::Value *term =
                b.CreateFMul(q[size_t(c)], loadAcc(1, b.CreateAdd(kRow, mine(i64(c)))));
            unsigned slot = unsigned(c % 4);
            partial = b.CreateInsertValue(
                partial, b.CreateFAdd(b.CreateExtractValue(partial, slot), term), slot);
          }
          return;
        }
        llvm::AllocaInst *sums = emitEntryAlloca(b, partialType, "partial");
        b.CreateStore(partial, sums);
        emitCountedLoop(b, i64(0), i64(depth / 4 * 4), i64(4), "c", [&](llvm::Value *c0) {
          llvm::Value *p = b.CreateLoad(partialType, sums);
          for (unsigned slot = 0; slot < 4; ++slot) {
            llvm::Value *c = b.CreateAdd(c0, i64(slot));
            llvm::Value *term = b.CreateFMul(loadAcc(0, b.CreateAdd(qRow, mine(c))),
                                             loadAcc(1, b.CreateAdd(kRow, mine(c))));
            p = b.CreateInsertValue(p, b.CreateFAdd(b.CreateExtractValue(p, slot), term), slot);
          }
          b.CreateStore(p, sums);
        });
        partial = b.CreateLoad(partialType, sums);
        for (int64_t c = depth / 4 * 4; c < depth; ++c) {
          llvm::Value *term = b.CreateFMul(loadAcc(0, b.CreateAdd(qRow, mine(i64(c)))),
                                           loadAcc(1, b.CreateAdd(kRow, mine(i64(c)))));
          unsigned slot = unsigned(c % 4);
          partial = b.CreateInsertValue(
              partial, b.CreateFAdd(b.CreateExtractValue(partial, slot), term), slot);
        }
      };
      if (live) { // a lane past the keys computes nothing this round
        llvm::BasicBlock *before = b.GetInsertBlock();
        llvm::Value *none = partial;
        auto *then = llvm::BasicBlock::Create(ctx, "dot", fn);
        auto *after = llvm::BasicBlock::Create(ctx, "dot.end", fn);
        b.CreateCondBr(live, then, after);
        b.SetInsertPoint(then);
        dot();
        llvm::BasicBlock *end = b.GetInsertBlock();
        b.CreateBr(after);
        b.SetInsertPoint(after);
        llvm::PHINode *merged = b.CreatePHI(partialType, 2);
        merged->addIncoming(none, before);
        merged->addIncoming(partial, end);
        partial = merged;
      } else {
        dot();
      }
      auto part = [&](unsigned slot) { return b.CreateExtractValue(partial, slot); };
      llvm::Value *d =
          b.CreateFAdd(b.CreateFAdd(part(0), part(1)), b.CreateFAdd(part(2), part(3)), "dot");
      for (int64_t offset = a.pieces / 2; offset > 0; offset /= 2)
        d = b.CreateFAdd(d, emitShuffleXor(b, mask, d, unsigned(offset), unsigned(a.pieces)));
      llvm::Value *score = b.CreateFMul(d, scale);
      if (maskRow) { // a lane past the keys reads the first key's element, unused
        llvm::Value *key = live ? b.CreateSelect(live, j, i64(0)) : j;
        llvm::Value *at = maskColStride == 0
                              ? maskRow
                              : b.CreateAdd(maskRow, b.CreateMul(key, i64(maskColStride)));
        DType mt = op.operand(3)->type().dtype;
        score = b.CreateFAdd(score, llvmCast(b, mt, acc, load(mt, in(3), at)));
      }
      if (live)
        score = b.CreateSelect(live, score, lowest);
      score->setName("s");
      // A score of -inf contributes nothing.
      emitIf(b, b.CreateFCmpUNE(score, lowest), "key_counts", [&] {
        llvm::Value *max = b.CreateLoad(T, rowMax);
        emitIf(b, b.CreateFCmpOGT(score, max), "new_max", [&] {
          llvm::Value *correction = llvmExp(b, acc, b.CreateFSub(max, score));
          b.CreateStore(b.CreateFMul(b.CreateLoad(T, rowSum), correction), rowSum);
          for (int64_t c = 0; c < width; ++c)
            b.CreateStore(b.CreateFMul(b.CreateLoad(T, accAt(c)), correction), accAt(c));
          b.CreateStore(score, rowMax);
        });
        llvm::Value *p = llvmExp(b, acc, b.CreateFSub(score, b.CreateLoad(T, rowMax)));
        b.CreateStore(b.CreateFAdd(b.CreateLoad(T, rowSum), p), rowSum);
        llvm::Value *vRow = b.CreateAdd(vBase, b.CreateMul(j, i64(a.dv)), "v_row");
        for (int64_t c = 0; c < width; ++c) {
          llvm::Value *at = b.CreateAdd(vRow, a.perRow ? mine(i64(c)) : col);
          llvm::Value *sum =
              b.CreateFAdd(b.CreateLoad(T, accAt(c)), b.CreateFMul(p, loadAcc(2, at)));
          b.CreateStore(sum, accAt(c));
        }
      });
    });
    // The splits' (max, sum, accumulators) merge, lanes `offset` apart.
    for (int64_t offset = a.pieces; offset < lanes; offset *= 2) {
      llvm::Value *max = b.CreateLoad(T, rowMax), *sum = b.CreateLoad(T, rowSum);
      llvm::Value *otherMax = emitShuffleXor(b, mask, max, unsigned(offset));
      llvm::Value *otherSum = emitShuffleXor(b, mask, sum, unsigned(offset));
      llvm::Value *newMax = llvmArithmetic(b, OpKind::Max, max, otherMax);
      auto weight = [&](llvm::Value *m) {
        return b.CreateSelect(b.CreateFCmpOEQ(m, lowest), zero,
                              llvmExp(b, acc, b.CreateFSub(m, newMax)));
      };
      llvm::Value *mineWeight = weight(max), *theirs = weight(otherMax);
      b.CreateStore(b.CreateFAdd(b.CreateFMul(sum, mineWeight), b.CreateFMul(otherSum, theirs)),
                    rowSum);
      for (int64_t c = 0; c < width; ++c) {
        llvm::Value *x = b.CreateLoad(T, accAt(c));
        llvm::Value *other = emitShuffleXor(b, mask, x, unsigned(offset));
        b.CreateStore(b.CreateFAdd(b.CreateFMul(x, mineWeight), b.CreateFMul(other, theirs)),
                      accAt(c));
      }
      b.CreateStore(newMax, rowMax);
    }
    auto store = [&] {
      llvm::Value *sum = b.CreateLoad(T, rowSum);
      for (int64_t c = 0; c < width; ++c) {
        llvm::Value *x = b.CreateLoad(T, accAt(c));
        if (a.sk != 0)
          x = b.CreateFDiv(x, sum);
        llvm::Value *at = b.CreateAdd(b.CreateMul(row, i64(a.dv)), a.perRow ? mine(i64(c)) : col);
        storeFromAcc(acc, x, at);
      }
    };
    if (split)
      emitIf(b, b.CreateICmpEQ(split, i64(0)), "first_split", store);
    else
      store();
  });
  return blocksFor(items);
}

llvm::Value *LlvmGenericEmitter::combineAcc(OpKind kind, llvm::Value *a, llvm::Value *c) {
  if (kind == OpKind::Add)
    return a->getType()->isIntegerTy() ? b.CreateAdd(a, c) : b.CreateFAdd(a, c);
  return llvmArithmetic(b, kind, a, c);
}

std::pair<llvm::Value *, llvm::Value *>
LlvmGenericEmitter::groupAndLane(const GroupLayout &layout) {
  llvm::Value *tid = readSpecialRegister(b, llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x, false);
  llvm::Value *lanes = b.getInt32(uint32_t(layout.lanes)),
              *groups = b.getInt32(uint32_t(layout.groups));
  if (layout.lanesInner)
    return {b.CreateUDiv(tid, lanes, "group"), b.CreateURem(tid, lanes, "lane")};
  return {b.CreateURem(tid, groups, "group"), b.CreateUDiv(tid, groups, "lane")};
}

llvm::Value *LlvmGenericEmitter::groupReduce(llvm::Value *v, OpKind combine,
                                             const GroupLayout &layout, llvm::GlobalVariable *red,
                                             llvm::Value *group, llvm::Value *lane) {
  llvm::Type *T = v->getType();
  uint32_t groupStride = uint32_t(layout.lanesInner ? layout.lanes : 1);
  uint32_t laneStride = uint32_t(layout.lanesInner ? 1 : layout.groups);
  llvm::Value *mine = b.CreateGEP(T, red, b.CreateMul(group, b.getInt32(groupStride)));
  auto slot = [&](llvm::Value *l) {
    return b.CreateGEP(T, mine, b.CreateMul(l, b.getInt32(laneStride)));
  };
  b.CreateStore(v, slot(lane));
  emitBarrier(b);
  for (int64_t half = layout.lanes / 2; half > 0; half /= 2) {
    emitIf(b, b.CreateICmpULT(lane, b.getInt32(uint32_t(half))), "fold", [&] {
      llvm::Value *other = b.CreateLoad(T, slot(b.CreateAdd(lane, b.getInt32(uint32_t(half)))));
      b.CreateStore(combineAcc(combine, b.CreateLoad(T, slot(lane)), other), slot(lane));
    });
    emitBarrier(b);
  }
  llvm::Value *total = b.CreateLoad(T, mine);
  emitBarrier(b);
  return total;
}

// A group of lanes per output element striding over its reduced extent, as
// GenericReduce.cpp's kReduceKernel.
int64_t LlvmGenericEmitter::reduction() {
  ReduceShape shape = splitAxes(op);
  DType t = op.result()->type().dtype, xt = op.operand(0)->type().dtype, acc = accDType(t);
  llvm::Type *T = llvmComputeType(ctx, acc);
  int64_t outputs = product(shape.keptDims), extent = product(shape.redDims);
  GroupLayout layout = GroupLayout::choose(outputs, extent, shape.lastReduced);
  OpKind combine = op.kind() == OpKind::ReduceMax   ? OpKind::Max
                   : op.kind() == OpKind::ReduceMin ? OpKind::Min
                                                    : OpKind::Add;
  llvm::Value *init = llvm::Constant::getNullValue(T);
  if (combine != OpKind::Add) {
    bool isMax = combine == OpKind::Max;
    init = acc == DType::I64 ? static_cast<llvm::Value *>(
                                   b.getInt64(isMax ? uint64_t(INT64_MIN) : uint64_t(INT64_MAX)))
                             : llvm::ConstantFP::getInfinity(T, isMax);
  }
  llvm::GlobalVariable *red = shared(T, kBlock, "red");
  llvm::AllocaInst *partial = emitEntryAlloca(b, T, "acc");
  auto [group, lane] = groupAndLane(layout);
  tileLoop(layout.tiles(outputs), [&](llvm::Value *tile) {
    llvm::Value *o = b.CreateAdd(b.CreateMul(tile, i64(layout.groups)),
                                 b.CreateZExt(group, b.getInt64Ty()), "o");
    llvm::Value *live = b.CreateICmpSLT(o, i64(outputs));
    b.CreateStore(init, partial);
    emitIf(b, live, "output", [&] {
      llvm::Value *base = offset(coordinates(o, shape.keptDims), shape.keptStrides, 0);
      emitCountedLoop(b, b.CreateZExt(lane, b.getInt64Ty()), i64(extent), i64(layout.lanes), "r",
                      [&](llvm::Value *r) {
                        llvm::Value *at = b.CreateAdd(
                            base, offset(coordinates(r, shape.redDims), shape.redStrides, 0));
                        llvm::Value *x = toAcc(xt, acc, load(xt, in(0), at));
                        b.CreateStore(combineAcc(combine, b.CreateLoad(T, partial), x), partial);
                      });
    });
    llvm::Value *total = groupReduce(b.CreateLoad(T, partial), combine, layout, red, group, lane);
    if (op.kind() == OpKind::ReduceMean)
      total = b.CreateFDiv(total, llvm::ConstantFP::get(T, double(extent)));
    emitIf(b, b.CreateAnd(live, b.CreateICmpEQ(lane, b.getInt32(0))), "store",
           [&] { storeFromAcc(acc, total, o); });
  });
  return layout.tiles(outputs);
}

// A group of lanes per row, the row's statistics combined in shared memory
// and the row read again for each pass, as GenericNorm.cpp's kRowKernel.
int64_t LlvmGenericEmitter::normalization() {
  Rows rows = rowsOf(op);
  DType t = op.result()->type().dtype, xt = op.operand(0)->type().dtype, acc = accDType(t);
  llvm::Type *T = llvmComputeType(ctx, acc);
  GroupLayout layout = GroupLayout::choose(rows.count, rows.length, rows.inner == 1);
  llvm::GlobalVariable *red = shared(T, kBlock, "red");
  llvm::AllocaInst *part = emitEntryAlloca(b, T, "part");
  auto [group, lane] = groupAndLane(layout);
  llvm::Value *zero = llvm::ConstantFP::get(T, 0.0),
              *length = llvm::ConstantFP::get(T, double(rows.length));
  tileLoop(layout.tiles(rows.count), [&](llvm::Value *tile) {
    llvm::Value *row = b.CreateAdd(b.CreateMul(tile, i64(layout.groups)),
                                   b.CreateZExt(group, b.getInt64Ty()), "row");
    llvm::Value *active = b.CreateICmpSLT(row, i64(rows.count), "active");
    llvm::Value *base = rows.inner == 1
                            ? b.CreateMul(row, i64(rows.length))
                            : b.CreateAdd(b.CreateMul(b.CreateUDiv(row, i64(rows.inner)),
                                                      i64(rows.length * rows.inner)),
                                          b.CreateURem(row, i64(rows.inner)));
    // One pass over the row: each(j, at, x) for the lane's elements.
    auto pass = [&](const std::function<void(llvm::Value *, llvm::Value *, llvm::Value *)> &each) {
      emitIf(b, active, "pass", [&] {
        emitCountedLoop(b, b.CreateZExt(lane, b.getInt64Ty()), i64(rows.length), i64(layout.lanes),
                        "j", [&](llvm::Value *j) {
                          llvm::Value *at = b.CreateAdd(
                              base, rows.inner == 1 ? j : b.CreateMul(j, i64(rows.inner)), "at");
                          each(j, at, toAcc(xt, acc, load(xt, in(0), at)));
                        });
      });
    };
    auto accumulate = [&](OpKind kind, llvm::Value *init,
                          const std::function<llvm::Value *(llvm::Value *)> &term) {
      b.CreateStore(init, part);
      pass([&](llvm::Value *, llvm::Value *, llvm::Value *x) {
        b.CreateStore(combineAcc(kind, b.CreateLoad(T, part), term(x)), part);
      });
      return groupReduce(b.CreateLoad(T, part), kind, layout, red, group, lane);
    };
    auto store = [&](llvm::Value *at, llvm::Value *y) { storeFromAcc(acc, y, at); };
    if (op.kind() == OpKind::Softmax) {
      llvm::Value *maximum = accumulate(OpKind::Max, llvm::ConstantFP::getInfinity(T, true),
                                        [](llvm::Value *x) { return x; });
      llvm::Value *sum = accumulate(OpKind::Add, zero, [&](llvm::Value *x) {
        return llvmExp(b, acc, b.CreateFSub(x, maximum));
      });
      pass([&](llvm::Value *, llvm::Value *at, llvm::Value *x) {
        store(at, b.CreateFDiv(llvmExp(b, acc, b.CreateFSub(x, maximum)), sum));
      });
      return;
    }
    bool isRms = op.kind() == OpKind::RmsNorm;
    llvm::Value *mean = nullptr;
    if (!isRms)
      mean = b.CreateFDiv(accumulate(OpKind::Add, zero, [](llvm::Value *x) { return x; }), length,
                          "mean");
    auto centered = [&](llvm::Value *x) { return isRms ? x : b.CreateFSub(x, mean); };
    llvm::Value *variance = b.CreateFDiv(accumulate(OpKind::Add, zero,
                                                    [&](llvm::Value *x) {
                                                      llvm::Value *d = centered(x);
                                                      return b.CreateFMul(d, d);
                                                    }),
                                         length, "variance");
    llvm::Value *denom = b.CreateUnaryIntrinsic(
        llvm::Intrinsic::sqrt,
        b.CreateFAdd(variance, llvm::ConstantFP::get(T, op.getFloat("epsilon"))));
    pass([&](llvm::Value *j, llvm::Value *at, llvm::Value *x) {
      llvm::Value *y = b.CreateFDiv(centered(x), denom);
      for (unsigned p = 1; p < op.numOperands(); ++p) { // gamma, then beta
        DType pt = op.operand(p)->type().dtype;
        llvm::Value *v = toAcc(pt, acc, load(pt, in(p), j));
        y = p == 1 ? b.CreateFMul(y, v) : b.CreateFAdd(y, v);
      }
      store(at, y);
    });
  });
  return rows.length ? layout.tiles(rows.count) : 0;
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
  llvm::AllocaInst *sum = emitEntryAlloca(b, accType, "acc");
  int64_t numel = product(sizesOf(*op.result()));
  gridStride(numel, [&](llvm::Value *i) {
    auto [n, oc, oh, ow] = outputCoordinates(win, i);
    b.CreateStore(llvm::Constant::getNullValue(accType), sum);
    // The input position out · stride − pad + tap · dilation, and whether it
    // lies inside the input's `extent`.
    auto position = [&](llvm::Value *out, int64_t stride, int64_t pad, llvm::Value *tap,
                        int64_t dilation, int64_t extent, const char *name) {
      llvm::Value *at = b.CreateAdd(b.CreateSub(b.CreateMul(out, i64(stride)), i64(pad)),
                                    b.CreateMul(tap, i64(dilation)), name);
      return std::pair(at,
                       b.CreateAnd(b.CreateICmpSGE(at, i64(0)), b.CreateICmpSLT(at, i64(extent))));
    };
    emitCountedLoop(b, i64(0), i64(win.kh), i64(1), "kh", [&](llvm::Value *kh) {
      auto [ih, rowInside] = position(oh, win.sh, win.pt, kh, win.dh, win.h, "ih");
      emitIf(b, rowInside, "row", [&] {
        emitCountedLoop(b, i64(0), i64(win.kw), i64(1), "kw", [&](llvm::Value *kw) {
          auto [iw, inside] = position(ow, win.sw, win.pl, kw, win.dw, win.w, "iw");
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
  llvm::AllocaInst *sum = emitEntryAlloca(b, accType, "acc");
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
  if (op.kind() == OpKind::MatMul || op.kind() == OpKind::Linear)
    blocks = matmul();
  else if (op.kind() == OpKind::Attention)
    blocks = attention();
  else if (op.info().cls == OpClass::Reduction)
    blocks = reduction();
  else if (op.info().cls == OpClass::Normalization)
    blocks = normalization();
  else if (op.kind() == OpKind::Conv2d)
    blocks = conv(windowOf(op));
  else
    blocks = pool(windowOf(op));
  b.CreateRetVoid();
  return blocks;
}

} // namespace

std::optional<GeneratedKernel> emitGenericLlvm(const Op &op, const std::string &entry,
                                               Diagnostics &diags) {
  if (!checkGenericOp(op, diags))
    return std::nullopt;
  KernelBuilder k(op, entry);
  llvm::LLVMContext ctx;
  llvm::Module m(entry, ctx);
  prepareNvptxModule(m);
  LlvmGenericEmitter emitter(op, k, m);
  int64_t blocks = emitter.run(entry);
  GeneratedKernel out{entry, printModule(m), k.args(), genericLaunch(blocks), Backend::Llvm};
  return out;
}

} // namespace fusec::codegen
