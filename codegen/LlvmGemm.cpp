// The gemm template in LLVM IR, for the plans whose operands are f16/bf16
// matrices read as they are (both copied by cp.async), one chain (with its
// bias and pointwise epilogue) without a batch, and static shapes: the
// tensor-core kernel
// of GemmTensorCore.cpp (which describes the algorithm) from the same Plan
// (planGemm), with the same parameters and launch. Its pieces become NVVM
// intrinsics: llvm.nvvm.cp.async.cg.shared.global.16.s (zero-filled past
// the edges), cp.async.commit/wait_group, llvm.nvvm.ldmatrix (.trans for an
// operand stored the other way round) and llvm.nvvm.mma.m16n8k16 with f32
// accumulators; the stages live in dynamic shared memory, XOR-swizzled as
// device/Gemm.cuh swizzles them. Other plans are refused: the runtime runs
// such a kernel op by op (Lowering.h).
#include "codegen/GemmPlan.h"
#include "codegen/LlvmCodegen.h"
#include "codegen/LlvmKernel.h"
#include "codegen/LlvmMath.h"
#include "codegen/Nvptx.h"
#include "ir/Assert.h"
#include "ir/Kernel.h"

#include "llvm/IR/LLVMContext.h"

#include <map>

namespace fusec::codegen {

namespace {

using namespace gemm;

/// Why the LLVM renderer does not take `plan` yet, or "".
std::string unsupported(const Plan &plan) {
  if (!plan.tensorCores || !plan.a.async || !plan.b.async)
    return "its operands are not f16/bf16 matrices read as they are, in rows of whole 16-byte "
           "chunks";
  if (plan.chains.size() != 1)
    return "it is a grouped gemm";
  if (!plan.staticShapes || plan.batches != lit(1) || plan.a.batchOffset != "0" ||
      plan.b.batchOffset != "0")
    return "its shapes are symbolic or batched";
  return "";
}

class LlvmGemm {
public:
  LlvmGemm(const Plan &plan, llvm::Module &m)
      : plan(plan), t(plan.tile), m(m), ctx(m.getContext()), b(ctx) {}

  void run();

  int sharedBytes() const { return std::max(t.stages * stageBytes(), t.bm * ldc() * 4); }

private:
  // Geometry (GemmTensorCore.cpp)
  int threads() const { return t.threads(); }
  int wm() const { return t.bm / t.warpsM; }
  int wn() const { return t.bn / t.warpsN; }
  int mi() const { return wm() / 16; }
  int ni() const { return wn() / 8; }
  int aBytes() const { return t.bm * t.bk * 2; }
  int stageBytes() const { return aBytes() + t.bn * t.bk * 2; }
  int kTiles() const { return int((plan.k + t.bk - 1) / t.bk); }
  int ldc() const { return t.bn + 8; }

  llvm::Value *i32(int64_t v) { return b.getInt32(uint32_t(v)); }
  llvm::Value *i64(int64_t v) { return b.getInt64(uint64_t(v)); }
  /// The 16-byte chunk index of chunk `chunk` of row `row` in a swizzled
  /// tile of `chunks` chunks a row (fusec_swizzle).
  llvm::Value *swizzle(llvm::Value *row, llvm::Value *chunk, int chunks);
  /// This lane's byte offset of its first A (or B) fragment in a stage.
  llvm::Value *laneOffset(bool isA);
  /// The shared address `offset` bytes into dynamic shared memory.
  llvm::Value *sharedAt(llvm::Value *offset) { return b.CreateGEP(b.getInt8Ty(), smem, offset); }

  struct Loader {
    const Matrix *x;
    int rows, chunks, step, perThread, offset;
    bool edge;
    llvm::Value *row = nullptr, *chunk = nullptr; // this thread's first row and its chunk
    llvm::Value *src = nullptr;                   // this thread's first element (global)
    llvm::Value *bound = nullptr; // rows left (K-major) or whether its column is inside
  };
  Loader loader(bool isA, llvm::Value *mn0);
  /// The cp.async copies of K step `kt` into the stage at byte `stage`.
  void issue(Loader &l, llvm::Value *stage, llvm::Value *kt);
  /// The math of the stage at byte `stage`: bk/16 slices of ldmatrix + mma.
  void stageMath(llvm::Value *stage);
  void epilogue(llvm::Value *m0, llvm::Value *n0);
  /// The chain's epilogue on the accumulator `sum` of element (row, col) of
  /// the result seen as rows x N (GemmEpilogue.cpp's function): the anchor
  /// rounded to its dtype after linear's bias, then the chain's pointwise
  /// ops; returns each stored result, narrowed to its storage type.
  std::vector<llvm::Value *> epilogueValues(llvm::Value *sum, llvm::Value *row, llvm::Value *col);
  /// The element of a value of shape `shape` broadcast to the result, at
  /// (row, col) (GemmEpilogue.cpp's operandIndex, static shapes).
  llvm::Value *operandIndex(const Shape &shape, llvm::Value *row, llvm::Value *col);

  const Plan &plan;
  const TileConfig &t;
  llvm::Module &m;
  llvm::LLVMContext &ctx;
  llvm::IRBuilder<> b;
  llvm::Function *fn = nullptr;
  llvm::GlobalVariable *smem = nullptr;
  llvm::Value *tid = nullptr, *lane = nullptr, *warpRow = nullptr, *warpCol = nullptr;
  llvm::Value *aLane = nullptr, *bLane = nullptr;
  llvm::AllocaInst *acc = nullptr;                     // [mi][ni][4] floats
  std::map<const Op *, llvm::GlobalVariable *> tables; // the epilogue's non-splat constants
  Loader la{}, lb{};
};

llvm::Value *LlvmGemm::swizzle(llvm::Value *row, llvm::Value *chunk, int chunks) {
  llvm::Value *s = chunks >= 8   ? b.CreateAnd(row, i32(7))
                   : chunks == 4 ? b.CreateAnd(b.CreateLShr(row, i32(1)), i32(3))
                                 : b.CreateAnd(b.CreateLShr(row, i32(2)), i32(1));
  return b.CreateAdd(b.CreateMul(row, i32(chunks)), b.CreateXor(chunk, s));
}

llvm::Value *LlvmGemm::laneOffset(bool isA) {
  const Matrix &x = isA ? plan.a : plan.b;
  int chunks = x.kMajor ? t.bk / 8 : (isA ? t.bm : t.bn) / 8;
  llvm::Value *l7 = b.CreateAnd(lane, i32(7)), *l15 = b.CreateAnd(lane, i32(15));
  llvm::Value *bit3 = b.CreateAnd(b.CreateLShr(lane, i32(3)), i32(1)),
              *hi = b.CreateLShr(lane, i32(4));
  llvm::Value *row, *chunk;
  if (isA && x.kMajor) {
    row = b.CreateAdd(warpRow, l15), chunk = hi;
  } else if (isA) {
    row = b.CreateAdd(l7, b.CreateMul(hi, i32(8)));
    chunk = b.CreateAdd(b.CreateUDiv(warpRow, i32(8)), bit3);
  } else if (x.kMajor) {
    row = b.CreateAdd(warpCol, b.CreateAdd(l7, b.CreateMul(hi, i32(8)))), chunk = bit3;
  } else {
    row = b.CreateAdd(l7, b.CreateMul(bit3, i32(8)));
    chunk = b.CreateAdd(b.CreateUDiv(warpCol, i32(8)), hi);
  }
  return b.CreateMul(swizzle(row, chunk, chunks), i32(16), isA ? "a_lane" : "b_lane");
}

// Thread tid stages chunk tid % chunks of rows tid / chunks + j * step
// (GemmLoad.cpp): one source pointer and one bound per tile.
LlvmGemm::Loader LlvmGemm::loader(bool isA, llvm::Value *mn0) {
  Loader l;
  l.x = isA ? &plan.a : &plan.b;
  int mn = isA ? t.bm : t.bn;
  l.rows = l.x->kMajor ? mn : t.bk;
  l.chunks = (l.x->kMajor ? t.bk : mn) / 8;
  l.step = threads() / l.chunks;
  l.perThread = l.rows * l.chunks / threads();
  l.offset = isA ? 0 : aBytes();
  int64_t extent = l.x->kMajor ? std::stoll(l.x->outer) : l.x->inner;
  l.edge = extent % mn != 0;
  DType stored = l.x->sources.front().stored;
  llvm::Type *st = llvmStorageType(ctx, stored);
  llvm::Value *base = fn->getArg(l.x->sources.front().input);
  l.row = b.CreateUDiv(tid, i32(l.chunks));
  l.chunk = b.CreateURem(tid, i32(l.chunks));
  llvm::Value *row = l.row, *chunk = l.chunk;
  llvm::Value *mn64 = b.CreateZExt(mn0, b.getInt64Ty());
  llvm::Value *first8 = b.CreateZExt(b.CreateMul(chunk, i32(8)), b.getInt64Ty());
  llvm::Value *row64 = b.CreateZExt(row, b.getInt64Ty());
  if (l.x->kMajor) { // rows along M (or N), chunks along K
    l.src = b.CreateGEP(
        st, base, b.CreateAdd(b.CreateMul(b.CreateAdd(mn64, row64), i64(l.x->inner)), first8));
    if (l.edge) {
      llvm::Value *left = b.CreateSub(i64(extent), mn64);
      left = b.CreateSelect(b.CreateICmpSLT(left, i64(l.rows)), left, i64(l.rows));
      l.bound = b.CreateSub(b.CreateTrunc(left, b.getInt32Ty()), row);
    }
  } else { // rows along K, chunks along M (or N)
    l.src = b.CreateGEP(
        st, base, b.CreateAdd(b.CreateMul(row64, i64(l.x->inner)), b.CreateAdd(mn64, first8)));
    if (l.edge)
      l.bound = b.CreateICmpSLT(b.CreateAdd(mn64, first8), i64(l.x->inner));
  }
  return l;
}

void LlvmGemm::issue(Loader &l, llvm::Value *stage, llvm::Value *kt) {
  llvm::Type *st = llvmStorageType(ctx, l.x->sources.front().stored);
  llvm::Value *row = l.row, *chunk = l.chunk;
  llvm::Value *kt64 = b.CreateZExt(kt, b.getInt64Ty());
  for (int j = 0; j < l.perThread; ++j) {
    llvm::Value *valid = b.getTrue();
    if (l.edge)
      valid = l.x->kMajor ? b.CreateICmpSGT(l.bound, i32(int64_t(j) * l.step)) : l.bound;
    if (plan.k % t.bk != 0) { // the K tail: along the chunks, or down the rows
      llvm::Value *k = b.CreateMul(kt, i32(t.bk));
      llvm::Value *at = l.x->kMajor ? b.CreateAdd(k, b.CreateMul(chunk, i32(8)))
                                    : b.CreateAdd(k, b.CreateAdd(row, i32(int64_t(j) * l.step)));
      valid = b.CreateAnd(valid, b.CreateICmpSLT(at, i32(plan.k)));
    }
    int64_t kStep = l.x->kMajor ? t.bk : int64_t(t.bk) * l.x->inner;
    llvm::Value *src = b.CreateGEP(
        st, l.src,
        b.CreateAdd(i64(int64_t(j) * l.step * l.x->inner), b.CreateMul(kt64, i64(kStep))));
    llvm::Value *dst = b.CreateAdd(
        b.CreateAdd(stage, i32(l.offset)),
        b.CreateMul(swizzle(b.CreateAdd(row, i32(int64_t(j) * l.step)), chunk, l.chunks), i32(16)));
    b.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_cg_shared_global_16_s, {},
                      {sharedAt(dst), b.CreateAddrSpaceCast(src, b.getPtrTy(1)),
                       b.CreateSelect(valid, i32(16), i32(0))});
  }
}

void LlvmGemm::stageMath(llvm::Value *stage) {
  auto ldmatrix = [&](bool trans, llvm::Value *offset) {
    llvm::Value *r =
        b.CreateIntrinsic(trans ? llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_trans_b16
                                : llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_b16,
                          {b.getPtrTy(3)}, {sharedAt(offset)});
    std::array<llvm::Value *, 4> out;
    for (unsigned q = 0; q < 4; ++q)
      out[q] = b.CreateExtractValue(r, q);
    return out;
  };
  // stage + (lane ^ xored * 32) + stepped * stepBytes (Note [Fragment addresses])
  auto fragment = [&](llvm::Value *base, llvm::Value *laneOff, int xored, int stepped,
                      int stepBytes) {
    return b.CreateAdd(b.CreateAdd(base, b.CreateXor(laneOff, i32(xored * 32))),
                       i32(int64_t(stepped) * stepBytes));
  };
  llvm::Value *stageB = b.CreateAdd(stage, i32(aBytes()));
  bool isBf16 = plan.operand == DType::BF16;
  auto *half2 = llvm::FixedVectorType::get(b.getHalfTy(), 2);
  auto operand = [&](llvm::Value *word) { return isBf16 ? word : b.CreateBitCast(word, half2); };
  for (int kk = 0; kk < t.bk / 16; ++kk) {
    std::vector<std::array<llvm::Value *, 4>> fa(static_cast<size_t>(mi()));
    std::vector<std::array<llvm::Value *, 2>> fb(static_cast<size_t>(ni()));
    for (int i = 0; i < mi(); ++i)
      fa[size_t(i)] = plan.a.kMajor ? ldmatrix(false, fragment(stage, aLane, kk, i, 16 * t.bk * 2))
                                    : ldmatrix(true, fragment(stage, aLane, i, kk, 16 * t.bm * 2));
    for (int nj = 0; nj < ni() / 2; ++nj) {
      std::array<llvm::Value *, 4> r =
          plan.b.kMajor ? ldmatrix(false, fragment(stageB, bLane, kk, nj, 16 * t.bk * 2))
                        : ldmatrix(true, fragment(stageB, bLane, nj, kk, 16 * t.bn * 2));
      fb[size_t(2 * nj)] = {r[0], r[1]};
      fb[size_t(2 * nj + 1)] = {r[2], r[3]};
    }
    for (int i = 0; i < mi(); ++i)
      for (int n = 0; n < ni(); ++n) {
        std::vector<llvm::Value *> args;
        for (llvm::Value *w : fa[size_t(i)])
          args.push_back(operand(w));
        for (llvm::Value *w : fb[size_t(n)])
          args.push_back(operand(w));
        std::vector<llvm::Value *> slots;
        for (int q = 0; q < 4; ++q) {
          slots.push_back(
              b.CreateConstGEP1_32(b.getFloatTy(), acc, unsigned((i * ni() + n) * 4 + q)));
          args.push_back(b.CreateLoad(b.getFloatTy(), slots.back()));
        }
        llvm::Value *d =
            b.CreateIntrinsic(isBf16 ? llvm::Intrinsic::nvvm_mma_m16n8k16_row_col_bf16
                                     : llvm::Intrinsic::nvvm_mma_m16n8k16_row_col_f32_f32,
                              {}, args);
        for (unsigned q = 0; q < 4; ++q)
          b.CreateStore(b.CreateExtractValue(d, q), slots[q]);
      }
  }
}

// The accumulators through shared memory (reusing the stages), then each
// thread runs the epilogue on four adjacent columns and stores them at once
// (GemmEpilogue.cpp's loop).
void LlvmGemm::epilogue(llvm::Value *m0, llvm::Value *n0) {
  auto *float2 = llvm::FixedVectorType::get(b.getFloatTy(), 2);
  for (int i = 0; i < mi(); ++i)
    for (int n = 0; n < ni(); ++n)
      for (int h = 0; h < 2; ++h) {
        llvm::Value *r =
            b.CreateAdd(warpRow, b.CreateAdd(i32(i * 16 + h * 8), b.CreateLShr(lane, i32(2))));
        llvm::Value *c = b.CreateAdd(
            warpCol, b.CreateAdd(i32(n * 8), b.CreateMul(b.CreateAnd(lane, i32(3)), i32(2))));
        llvm::Value *at = b.CreateMul(b.CreateAdd(b.CreateMul(r, i32(ldc())), c), i32(4));
        llvm::Value *pair = llvm::PoisonValue::get(float2);
        for (unsigned q = 0; q < 2; ++q)
          pair = b.CreateInsertElement(
              pair,
              b.CreateLoad(b.getFloatTy(),
                           b.CreateConstGEP1_32(b.getFloatTy(), acc,
                                                unsigned((i * ni() + n) * 4 + 2 * h + q))),
              uint64_t(q));
        b.CreateAlignedStore(pair, sharedAt(at), llvm::Align(8));
      }
  emitBarrier(b);
  const Chain &chain = plan.chains[0];
  int64_t rowsM = std::stoll(plan.m);
  emitCountedLoop(
      b, tid, i32(int64_t(t.bm) * t.bn / 4), i32(threads()), "quad", [&](llvm::Value *q) {
        llvm::Value *r = b.CreateUDiv(q, i32(t.bn / 4)),
                    *c = b.CreateMul(b.CreateURem(q, i32(t.bn / 4)), i32(4));
        llvm::Value *row = b.CreateZExt(b.CreateAdd(m0, r), b.getInt64Ty(), "m");
        llvm::Value *col = b.CreateZExt(b.CreateAdd(n0, c), b.getInt64Ty(), "col");
        llvm::Value *inside =
            b.CreateAnd(b.CreateICmpSLT(row, i64(rowsM)), b.CreateICmpSLT(col, i64(plan.n)));
        emitIf(b, inside, "quad", [&] {
          llvm::Value *first = b.CreateAdd(b.CreateMul(row, i64(plan.n)), col);
          // The epilogue of element (row, col + e): the chain's stored results.
          auto element = [&](int e) {
            llvm::Value *at = b.CreateMul(
                b.CreateAdd(b.CreateMul(r, i32(ldc())), b.CreateAdd(c, i32(e))), i32(4));
            llvm::Value *sum = b.CreateLoad(b.getFloatTy(), sharedAt(at));
            return epilogueValues(sum, row, e ? b.CreateAdd(col, i64(e)) : col);
          };
          auto output = [&](size_t k) {
            unsigned j = chain.results[k];
            DType rt = plan.kernel->result(j)->type().dtype;
            return std::pair(llvmStorageType(ctx, rt), fn->getArg(plan.kernel->numOperands() + j));
          };
          if (plan.n % 4 != 0) { // each element checked against N before it is touched
            for (int e = 0; e < 4; ++e)
              emitIf(b, b.CreateICmpSLT(b.CreateAdd(col, i64(e)), i64(plan.n)), "element", [&] {
                std::vector<llvm::Value *> v = element(e);
                for (size_t k = 0; k < v.size(); ++k) {
                  auto [st, out] = output(k);
                  b.CreateStore(v[k], b.CreateGEP(st, out, b.CreateAdd(first, i64(e))));
                }
              });
            return;
          }
          std::vector<std::array<llvm::Value *, 4>> results(chain.results.size());
          for (int e = 0; e < 4; ++e) {
            std::vector<llvm::Value *> v = element(e);
            for (size_t k = 0; k < v.size(); ++k)
              results[k][size_t(e)] = v[k];
          }
          for (size_t k = 0; k < results.size(); ++k) { // four adjacent elements at once
            auto [st, out] = output(k);
            llvm::Value *quad = llvm::PoisonValue::get(llvm::FixedVectorType::get(st, 4));
            for (unsigned e = 0; e < 4; ++e)
              quad = b.CreateInsertElement(quad, results[k][e], uint64_t(e));
            b.CreateAlignedStore(quad, b.CreateGEP(st, out, first),
                                 llvm::Align(4 * st->getPrimitiveSizeInBits() / 8));
          }
        });
      });
  emitBarrier(b);
}

llvm::Value *LlvmGemm::operandIndex(const Shape &shape, llvm::Value *row, llvm::Value *col) {
  const Shape &space = plan.chains[0].anchor->result()->type().shape;
  size_t rank = space.size(), lead = rank - shape.size();
  auto moves = [&](size_t k) { return k >= lead && shape[k - lead].size != 1; };
  std::vector<int64_t> stride(rank);
  int64_t after = 1;
  for (size_t k = rank; k-- > 0;) {
    stride[k] = after;
    if (moves(k))
      after *= space[k].size;
  }
  llvm::Value *index = moves(rank - 1) ? col : i64(0);
  bool all = rank >= 2, none = true;
  for (size_t k = 0; k + 1 < rank; ++k) {
    all = all && moves(k);
    none = none && !moves(k);
  }
  if (all)
    return b.CreateAdd(index, b.CreateMul(row, i64(stride[rank - 2])));
  for (size_t k = 0; !none && k + 1 < rank; ++k) {
    if (!moves(k))
      continue;
    int64_t inner = 1;
    for (size_t i = k + 1; i + 1 < rank; ++i)
      inner *= space[i].size;
    llvm::Value *coord = b.CreateURem(b.CreateUDiv(row, i64(inner)), i64(space[k].size));
    index = b.CreateAdd(index, b.CreateMul(coord, i64(stride[k])));
  }
  return index;
}

std::vector<llvm::Value *> LlvmGemm::epilogueValues(llvm::Value *sum, llvm::Value *row,
                                                    llvm::Value *col) {
  const Chain &chain = plan.chains[0];
  std::map<const Value *, llvm::Value *> value;
  if (chain.bias) { // acc + (float)bias, the bias through its prologue casts
    const Source &src = *chain.bias;
    llvm::Type *st = llvmStorageType(ctx, src.stored);
    llvm::Value *x =
        llvmWiden(b, src.stored, b.CreateLoad(st, b.CreateGEP(st, fn->getArg(src.input), col)));
    DType from = src.stored;
    for (DType to : src.casts) {
      x = llvmCast(b, from, to, x);
      from = to;
    }
    sum = b.CreateFAdd(sum, llvmCast(b, src.type(), DType::F32, x));
  }
  value[chain.anchor->result()] = llvmCast(b, plan.acc, plan.result, sum);
  auto valueOf = [&](const Value *v) -> llvm::Value * {
    if (auto it = value.find(v); it != value.end())
      return it->second;
    FUSEC_ASSERT(v->isGraphInput(), "epilogue value used before it is computed");
    DType t = v->type().dtype;
    llvm::Type *st = llvmStorageType(ctx, t);
    llvm::Value *at =
        b.CreateGEP(st, fn->getArg(v->index()), operandIndex(v->type().shape, row, col));
    return value[v] = llvmWiden(b, t, b.CreateLoad(st, at));
  };
  for (const Op *op : chain.ops) {
    if (op->kind() == OpKind::Const) {
      const DenseData &d = op->getDense("value");
      if (d.isSplat()) {
        value[op->result()] = llvmConstant(ctx, d, 0);
        continue;
      }
      llvm::GlobalVariable *&table = tables[op];
      if (!table)
        table = emitConstantTable(m, d, plan.entry + "_table_" + op->result()->name());
      llvm::Type *et = llvmComputeType(ctx, d.dtype);
      value[op->result()] = b.CreateLoad(
          et, b.CreateGEP(et, table, operandIndex(op->result()->type().shape, row, col)));
      continue;
    }
    std::vector<llvm::Value *> args;
    for (const Value *v : op->operands())
      args.push_back(valueOf(v));
    value[op->result()] = llvmPointwiseValue(b, *op, args);
  }
  std::vector<llvm::Value *> out;
  for (unsigned j : chain.results) {
    DType t = plan.kernel->result(j)->type().dtype;
    out.push_back(llvmNarrow(b, t, valueOf(plan.body->outputs()[j])));
  }
  return out;
}

void LlvmGemm::run() {
  namespace I = llvm::Intrinsic;
  fn = declareLlvmKernel(m, plan.entry, plan.args);
  setLaunchBounds(*fn, unsigned(threads()), 1);
  auto *smemType = llvm::ArrayType::get(b.getInt8Ty(), 0);
  smem =
      new llvm::GlobalVariable(m, smemType, false, llvm::GlobalValue::ExternalLinkage, nullptr,
                               plan.entry + "_smem", nullptr, llvm::GlobalValue::NotThreadLocal, 3);
  smem->setAlignment(llvm::Align(128));
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", fn));
  acc = b.CreateAlloca(llvm::ArrayType::get(b.getFloatTy(), uint64_t(mi() * ni() * 4)), nullptr,
                       "acc");
  tid = readSpecialRegister(b, I::nvvm_read_ptx_sreg_tid_x, false);
  lane = b.CreateAnd(tid, i32(31), "lane");
  llvm::Value *warp = b.CreateLShr(tid, i32(5));
  warpRow = b.CreateMul(b.CreateUDiv(warp, i32(t.warpsN)), i32(wm()), "warp_row");
  warpCol = b.CreateMul(b.CreateURem(warp, i32(t.warpsN)), i32(wn()), "warp_col");
  aLane = laneOffset(true);
  bLane = laneOffset(false);
  int64_t tilesM = (std::stoll(plan.m) + t.bm - 1) / t.bm, tilesN = (plan.n + t.bn - 1) / t.bn;
  FUSEC_ASSERT(tilesM * tilesN < 0x7fffffff, "tile index past int");
  llvm::Value *first = readSpecialRegister(b, I::nvvm_read_ptx_sreg_ctaid_x, false);
  llvm::Value *step = readSpecialRegister(b, I::nvvm_read_ptx_sreg_nctaid_x, false);
  emitCountedLoop(b, first, i32(tilesM * tilesN), step, "tile", [&](llvm::Value *u) {
    // Groups of groupM tile rows walked column by column (GemmKernel.cpp).
    llvm::Value *perGroup = i32(int64_t(t.groupM) * tilesN);
    llvm::Value *firstM = b.CreateMul(b.CreateUDiv(u, perGroup), i32(t.groupM));
    llvm::Value *left = b.CreateSub(i32(tilesM), firstM);
    llvm::Value *groupRows =
        b.CreateSelect(b.CreateICmpSLT(left, i32(t.groupM)), left, i32(t.groupM));
    llvm::Value *m0 = b.CreateMul(b.CreateAdd(firstM, b.CreateURem(u, groupRows)), i32(t.bm), "m0");
    llvm::Value *n0 =
        b.CreateMul(b.CreateUDiv(b.CreateURem(u, perGroup), groupRows), i32(t.bn), "n0");
    la = loader(true, m0);
    lb = loader(false, n0);
    b.CreateStore(llvm::Constant::getNullValue(acc->getAllocatedType()), acc);
    auto stageAt = [&](llvm::Value *kt) {
      return b.CreateMul(b.CreateURem(kt, i32(t.stages)), i32(stageBytes()));
    };
    // The first stages - 1 K steps in flight.
    for (int kt = 0; kt < t.stages - 1; ++kt) {
      if (kt < kTiles()) {
        issue(la, i32(int64_t(kt) * stageBytes()), i32(kt));
        issue(lb, i32(int64_t(kt) * stageBytes()), i32(kt));
      }
      b.CreateIntrinsic(I::nvvm_cp_async_commit_group, {}, {});
    }
    emitCountedLoop(b, i32(0), i32(kTiles()), i32(1), "kt", [&](llvm::Value *kt) {
      b.CreateIntrinsic(I::nvvm_cp_async_wait_group, {}, {i32(t.stages - 2)});
      emitBarrier(b);
      llvm::Value *next = b.CreateAdd(kt, i32(t.stages - 1), "next");
      emitIf(b, b.CreateICmpSLT(next, i32(kTiles())), "prefetch", [&] {
        issue(la, stageAt(next), next);
        issue(lb, stageAt(next), next);
      });
      b.CreateIntrinsic(I::nvvm_cp_async_commit_group, {}, {});
      stageMath(stageAt(kt));
    });
    b.CreateIntrinsic(I::nvvm_cp_async_wait_group, {}, {i32(0)});
    emitBarrier(b); // the accumulator tile reuses the stages
    epilogue(m0, n0);
  });
  b.CreateRetVoid();
}

} // namespace

std::optional<GeneratedKernel> emitGemmLlvm(const Op &kernel, const std::string &entry,
                                            Diagnostics &diags) {
  Plan plan;
  if (!planGemm(kernel, entry, plan, diags))
    return std::nullopt;
  if (std::string why = unsupported(plan); !why.empty()) {
    diags.error(kernel.loc(), describeLaunchedOp(kernel) +
                                  " is not generated by the LLVM back end yet: " + why +
                                  " (--backend=nvrtc renders every template)");
    return std::nullopt;
  }
  llvm::LLVMContext ctx;
  llvm::Module m(plan.entry, ctx);
  prepareNvptxModule(m);
  LlvmGemm gemm(plan, m);
  gemm.run();
  GeneratedKernel out{plan.entry, printModule(m), plan.args,
                      staticLaunch(plan, gemm.sharedBytes()), Backend::Llvm};
  out.facts.schedule = gemm::tensorCoreSchedule(plan);
  return out;
}

} // namespace fusec::codegen
