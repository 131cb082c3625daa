// The row_reduction template in LLVM IR: renders the Program and Schedule
// that the CUDA C++ writer renders (RowReduction.cpp describes the
// algorithm; RowReductionSweep.cpp is the CUDA counterpart of this file),
// with the same parameters and launch, so the runtime launches either back
// end's kernel the same way.
//
// The rows loop as in CUDA (a block a row, several rows a block, or a
// thread per (outer, inner) position). On the register path the thread's
// vectors and each vector's elements are unrolled here, so every register
// slot is a constant: held values and accumulators live in allocas that
// SROA turns into registers, as the C arrays they mirror. The loop and
// column paths are loops that LLVM unrolls as its cost model says (forced
// to 4, as CUDA's `#pragma unroll 4`, a softmax of long f32 rows spilled on
// sm_90a). Reductions across threads are xor shuffles
// (llvm.nvvm.shfl.sync.bfly; 64-bit values as two 32-bit halves) and, for
// a block, 32 slots of shared memory between llvm.nvvm.barrier0s.
//
// Note [Rows past the last]
// When a block runs several rows, its last rows may lie past the tensor:
// CUDA guards each of their vectors with `live`; here they compute on the
// last row (`row` is clamped) and only their stores are guarded. A guard
// around every vector let LLVM carry the held values through the guards'
// merges and compute on them there, keeping the row in registers twice
// (LayerNorm+GeLU f16 rows of 1024: 96 registers and a spill on sm_90a,
// 16% slower than NVRTC's; unguarded, 56 registers). A row past the last
// takes part in its own group's shuffles only, so it changes no live row.
#include "codegen/LlvmCodegen.h"
#include "codegen/LlvmKernel.h"
#include "codegen/LlvmMath.h"
#include "codegen/Nvptx.h"
#include "codegen/RowReductionPlan.h"
#include "ir/Assert.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/LLVMContext.h"

#include <map>

namespace fusec::codegen {

namespace {

using namespace rowred;

/// "v_x" -> "x": the IR-derived part of a node's C name.
std::string stem(const std::string &name) {
  return name.rfind("v_", 0) == 0 ? name.substr(2) : name;
}

class LlvmRowReduction {
public:
  LlvmRowReduction(const Op &kernel, const Program &prog, const Schedule &sched,
                   std::vector<KernelArg> args, std::string entry, llvm::Module &m)
      : kernel(kernel), prog(prog), sched(sched), args(std::move(args)), entry(std::move(entry)),
        m(m), ctx(m.getContext()), b(ctx), value(prog.nodes.size()), held(prog.nodes.size()),
        acc(prog.nodes.size()), rowPointer(prog.nodes.size()), dstPointer(prog.stores.size()) {}

  void run();

private:
  /// One element of a pass: its offset from the row's first element, its
  /// register slot (register path), and the values evaluated for it.
  struct Element {
    llvm::Value *col = nullptr, *vectorCol = nullptr; // i32: the element's, its vector's first
    unsigned slot = 0, w = 0;                         // w: its place in the vector
    std::map<unsigned, llvm::Value *> values;
  };

  llvm::Type *registerType(const Node &n) const { return llvmComputeType(ctx, n.type); }
  llvm::Value *input(unsigned j) { return fn->getArg(j); }
  llvm::Value *output(unsigned j) { return fn->getArg(kernel.numOperands() + j); }
  bool isHoisted(const Node &n) const {
    return n.mask == 0 && n.level == 0 && n.kind != NodeKind::Reduce;
  }

  void loopOverRows();
  void rowSetup();
  void rowScope(unsigned level);
  void sweep(unsigned s);
  void passBody(unsigned s, llvm::Value *q, unsigned k);
  void combine(unsigned s);

  llvm::Value *rowIndex(unsigned mask);
  llvm::Value *elementIndex(unsigned mask, const Element &e);
  llvm::Value *rowValue(unsigned i);
  /// `v` named after node `i`'s IR value, when it is an instruction.
  llvm::Value *named(llvm::Value *v, unsigned i) const {
    if (llvm::isa<llvm::Instruction>(v) && !v->hasName())
      v->setName(stem(prog.nodes[i].name));
    return v;
  }
  llvm::Value *exprValue(const Node &n, const std::vector<llvm::Value *> &a);
  llvm::Value *need(unsigned i, Element &e, unsigned s);
  llvm::Value *elementValue(unsigned i, Element &e, const std::vector<llvm::Value *> &a);
  llvm::Value *rowGuard();
  /// store(), guarded by `live` when a block has several rows.
  void storeIfLive(const std::function<void()> &store) {
    if (sched.rowsPerBlock > 1 && sched.mode != Mode::Column)
      emitIf(b, live, "store", store);
    else
      store();
  }

  llvm::Value *identity(ReduceKind k, DType t);
  llvm::Value *combineValues(ReduceKind k, llvm::Value *a, llvm::Value *c);
  llvm::Value *warpReduce(ReduceKind k, llvm::Value *v, unsigned width);
  llvm::Value *blockReduce(const Node &n, llvm::Value *v);

  const Op &kernel;
  const Program &prog;
  const Schedule &sched;
  std::vector<KernelArg> args;
  std::string entry;
  llvm::Module &m;
  llvm::LLVMContext &ctx;
  llvm::IRBuilder<> b;
  llvm::Function *fn = nullptr;
  llvm::Value *lane = nullptr, *row = nullptr, *inner = nullptr, *live = nullptr;
  std::vector<llvm::Value *> value;      // per-row, hoisted and reduced nodes of the current row
  std::vector<llvm::AllocaInst *> held;  // held nodes: their slots
  std::vector<llvm::AllocaInst *> acc;   // reductions: the accumulator
  std::vector<llvm::Value *> rowPointer; // elementwise loads: the row's first element
  std::vector<llvm::Value *> dstPointer; // elementwise stores: the row's first element
  std::map<unsigned, llvm::GlobalVariable *> tables;
  /// The vector loads of the current vector, per load node (register and loop paths).
  std::map<unsigned, llvm::Value *> vectorLoads;
  /// The narrowed values of the current vector, per store.
  std::map<unsigned, std::vector<llvm::Value *>> vectorStores;
};

llvm::Value *LlvmRowReduction::rowIndex(unsigned mask) {
  llvm::Value *index = nullptr;
  if (mask & Outer) {
    int64_t stride =
        ((mask & Reduced) ? prog.view.reduced : 1) * ((mask & Inner) ? prog.view.inner : 1);
    index = stride == 1 ? row : b.CreateMul(row, b.getInt64(stride));
  }
  if (mask & Inner)
    index = index ? b.CreateAdd(index, inner) : inner;
  return index ? index : b.getInt64(0);
}

/// The offset of the element from its row's first, for an operand spanning
/// `mask` (with Reduced).
llvm::Value *LlvmRowReduction::elementIndex(unsigned mask, const Element &e) {
  llvm::Value *col = b.CreateSExt(e.col, b.getInt64Ty());
  return (mask & Inner) ? b.CreateMul(col, b.getInt64(prog.view.inner)) : col;
}

llvm::Value *LlvmRowReduction::exprValue(const Node &n, const std::vector<llvm::Value *> &a) {
  llvm::Type *t = registerType(n);
  auto constant = [&](double v) { return llvm::ConstantFP::get(t, v); };
  switch (n.expr) {
  case ExprKind::Pointwise:
    return llvmPointwiseValue(b, *n.op, a);
  case ExprKind::Convert:
    return llvmCast(b, prog.nodes[n.args[0]].type, n.type, a[0]);
  case ExprKind::Mean:
    return b.CreateFDiv(a[0], constant(n.count));
  case ExprKind::Difference:
    return b.CreateFSub(a[0], a[1]);
  case ExprKind::Square:
    return b.CreateFMul(a[0], a[0]);
  case ExprKind::Rstd: {
    llvm::Value *variance =
        b.CreateFAdd(b.CreateFDiv(a[0], constant(n.count)), constant(n.epsilon));
    return b.CreateFDiv(constant(1), b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, variance));
  }
  case ExprKind::Normalize:
  case ExprKind::RmsNormalize: {
    bool isRms = n.expr == ExprKind::RmsNormalize;
    size_t p = isRms ? 2 : 3; // gamma and beta follow
    llvm::Value *y =
        isRms ? b.CreateFMul(a[0], a[1]) : b.CreateFMul(b.CreateFSub(a[0], a[1]), a[2]);
    if (a.size() > p)
      y = b.CreateFMul(y, a[p]);
    return a.size() > p + 1 ? b.CreateFAdd(y, a[p + 1]) : y;
  }
  case ExprKind::ExpDifference:
    return llvmExp(b, n.dtype, b.CreateFSub(a[0], a[1]));
  case ExprKind::Reciprocal:
    return b.CreateFDiv(constant(1), a[0]);
  case ExprKind::Product:
    return b.CreateFMul(a[0], a[1]);
  }
  FUSEC_ASSERT(false, "unknown expression kind");
}

llvm::Value *LlvmRowReduction::rowValue(unsigned i) {
  const Node &n = prog.nodes[i];
  std::vector<llvm::Value *> a;
  switch (n.kind) {
  case NodeKind::Load: {
    llvm::Type *st = llvmStorageType(ctx, n.dtype);
    return llvmWiden(b, n.dtype,
                     b.CreateLoad(st, b.CreateGEP(st, input(n.input), rowIndex(n.mask))));
  }
  case NodeKind::Table: {
    llvm::Type *t = registerType(n);
    return b.CreateLoad(t, b.CreateGEP(t, tables.at(i), rowIndex(n.mask)));
  }
  case NodeKind::Splat:
    return llvmConstant(ctx, *n.constant, 0);
  case NodeKind::Expr:
    for (unsigned arg : n.args)
      a.push_back(value[arg]);
    return exprValue(n, a);
  case NodeKind::Reduce:
    break;
  }
  FUSEC_ASSERT(false, "a reduction has no per-row expression");
}

llvm::Value *LlvmRowReduction::rowGuard() {
  llvm::Value *guard = sched.rowsPerBlock > 1 && sched.mode != Mode::Column ? live : nullptr;
  if (sched.mode != Mode::Column && sched.threads > 1) {
    llvm::Value *first = b.CreateICmpEQ(lane, b.getInt32(0));
    guard = guard ? b.CreateAnd(guard, first) : first;
  }
  return guard;
}

// Row pointers of elementwise operands and results.
void LlvmRowReduction::rowSetup() {
  for (unsigned i = 0; i < prog.nodes.size(); ++i) {
    const Node &n = prog.nodes[i];
    if (n.kind == NodeKind::Load && n.isElementwise())
      rowPointer[i] = b.CreateGEP(llvmStorageType(ctx, n.dtype), input(n.input), rowIndex(n.mask),
                                  "src_" + stem(n.name));
  }
  for (unsigned j = 0; j < prog.stores.size(); ++j) {
    const Store &s = prog.stores[j];
    if (s.mask & Reduced)
      dstPointer[j] = b.CreateGEP(llvmStorageType(ctx, s.dtype), output(s.result), rowIndex(s.mask),
                                  "dst_" + output(s.result)->getName());
  }
}

void LlvmRowReduction::rowScope(unsigned level) {
  for (unsigned i = 0; i < prog.nodes.size(); ++i) {
    const Node &n = prog.nodes[i];
    if (!n.isElementwise() && !isHoisted(n) && n.kind != NodeKind::Reduce && n.level == level)
      value[i] = named(rowValue(i), i);
  }
  for (const Store &s : prog.stores) {
    const Node &n = prog.nodes[s.node];
    if ((s.mask & Reduced) || n.level != level)
      continue;
    auto store = [&] {
      llvm::Type *st = llvmStorageType(ctx, s.dtype);
      b.CreateStore(llvmNarrow(b, s.dtype, value[s.node]),
                    b.CreateGEP(st, output(s.result), rowIndex(s.mask)));
    };
    if (llvm::Value *guard = rowGuard())
      emitIf(b, guard, "store", store);
    else
      store();
  }
}

llvm::Value *LlvmRowReduction::elementValue(unsigned i, Element &e,
                                            const std::vector<llvm::Value *> &a) {
  const Node &n = prog.nodes[i];
  switch (n.kind) {
  case NodeKind::Load: {
    llvm::Type *st = llvmStorageType(ctx, n.dtype);
    if (sched.vec == 1)
      return llvmWiden(b, n.dtype,
                       b.CreateLoad(st, b.CreateGEP(st, rowPointer[i], elementIndex(n.mask, e))));
    llvm::Value *&vector = vectorLoads[i];
    if (!vector) // the first element of the vector that needs it: load it whole
      vector = b.CreateAlignedLoad(
          llvm::FixedVectorType::get(st, sched.vec), b.CreateGEP(st, rowPointer[i], e.vectorCol),
          llvm::Align(dtypeSize(n.dtype) * sched.vec), "x_" + stem(n.name));
    return llvmWiden(b, n.dtype, b.CreateExtractElement(vector, uint64_t(e.w)));
  }
  case NodeKind::Table: {
    llvm::Type *t = registerType(n);
    llvm::Value *index = b.CreateAdd(rowIndex(n.mask), elementIndex(n.mask, e));
    return b.CreateLoad(t, b.CreateGEP(t, tables.at(i), index));
  }
  case NodeKind::Expr:
    return exprValue(n, a);
  default:
    FUSEC_ASSERT(false, "not an elementwise node");
  }
}

// Node `i` for element `e` of sweep `s`, after what it reads.
llvm::Value *LlvmRowReduction::need(unsigned i, Element &e, unsigned s) {
  const Node &n = prog.nodes[i];
  if (!n.isElementwise())
    return value[i];
  if (auto it = e.values.find(i); it != e.values.end())
    return it->second;
  llvm::Type *t = registerType(n);
  auto slot = [&] { return b.CreateConstGEP1_32(t, held[i], e.slot); };
  llvm::Value *v;
  if (n.held && n.level < s) {
    v = b.CreateLoad(t, slot());
  } else {
    std::vector<llvm::Value *> a;
    for (unsigned arg : n.args)
      a.push_back(need(arg, e, s));
    v = elementValue(i, e, a);
    if (n.held)
      b.CreateStore(v, slot());
  }
  return e.values[i] = named(v, i);
}

llvm::Value *LlvmRowReduction::identity(ReduceKind k, DType t) {
  if (t == DType::I64) {
    if (k == ReduceKind::Sum)
      return b.getInt64(0);
    return b.getInt64(k == ReduceKind::Max ? uint64_t(INT64_MIN) : uint64_t(INT64_MAX));
  }
  llvm::Type *type = llvmComputeType(ctx, t);
  if (k == ReduceKind::Sum)
    return llvm::ConstantFP::get(type, 0.0);
  return llvm::ConstantFP::getInfinity(type, k == ReduceKind::Max);
}

llvm::Value *LlvmRowReduction::combineValues(ReduceKind k, llvm::Value *a, llvm::Value *c) {
  switch (k) {
  case ReduceKind::Sum:
    return a->getType()->isIntegerTy() ? b.CreateAdd(a, c) : b.CreateFAdd(a, c);
  case ReduceKind::Max:
    return llvmArithmetic(b, OpKind::Max, a, c);
  case ReduceKind::Min:
    return llvmArithmetic(b, OpKind::Min, a, c);
  }
  FUSEC_ASSERT(false, "unknown reduction");
}

llvm::Value *LlvmRowReduction::warpReduce(ReduceKind k, llvm::Value *v, unsigned width) {
  for (unsigned offset = width >> 1; offset > 0; offset >>= 1)
    v = combineValues(k, v, emitShuffleXor(b, b.getInt32(0xffffffffu), v, offset));
  return v;
}

// Each warp's total through 32 shared slots; up to 8 warps every thread
// combines the partials itself, in one order (device/Reduction.cuh).
llvm::Value *LlvmRowReduction::blockReduce(const Node &n, llvm::Value *v) {
  llvm::Type *t = registerType(n);
  llvm::GlobalVariable *scratch = emitSharedArray(m, t, 32, entry + "_red_" + stem(n.name),
                                                  unsigned(t->getPrimitiveSizeInBits() / 8));
  unsigned warps = sched.threads / 32;
  llvm::Value *laneInWarp = b.CreateAnd(lane, b.getInt32(31));
  v = warpReduce(n.reduce, v, 32);
  llvm::Value *at = b.CreateGEP(t, scratch, b.CreateLShr(lane, b.getInt32(5)));
  emitIf(b, b.CreateICmpEQ(laneInWarp, b.getInt32(0)), "partial", [&] { b.CreateStore(v, at); });
  emitBarrier(b);
  if (warps <= 8) {
    v = b.CreateLoad(t, scratch);
    for (unsigned w = 1; w < warps; ++w)
      v = combineValues(n.reduce, v, b.CreateLoad(t, b.CreateConstGEP1_32(t, scratch, w)));
  } else {
    llvm::Value *mine = b.CreateLoad(t, b.CreateGEP(t, scratch, laneInWarp));
    // the load reads only the first `warps` slots on the lanes that use it
    v = b.CreateSelect(b.CreateICmpULT(laneInWarp, b.getInt32(warps)), mine,
                       identity(n.reduce, n.type));
    v = warpReduce(n.reduce, v, 32);
  }
  // Scratch written again before another barrier needs one after the reads;
  // with two or more reductions a row, the barrier of each one orders that.
  unsigned reductions = 0;
  for (const Node &x : prog.nodes)
    reductions += x.kind == NodeKind::Reduce;
  if (reductions == 1)
    emitBarrier(b);
  return v;
}

void LlvmRowReduction::combine(unsigned s) {
  for (unsigned i = 0; i < prog.nodes.size(); ++i) {
    const Node &n = prog.nodes[i];
    if (n.kind != NodeKind::Reduce || sweepOf(prog, i) != s)
      continue;
    llvm::Value *v = b.CreateLoad(registerType(n), acc[i]);
    if (sched.mode != Mode::Column && sched.threads > 1)
      v = sched.threads <= 32 ? warpReduce(n.reduce, v, sched.threads) : blockReduce(n, v);
    value[i] = named(v, i);
  }
}

// The elements of vector `q` (element `q` on the column path); `k` is the
// thread's vector on the register path.
void LlvmRowReduction::passBody(unsigned s, llvm::Value *q, unsigned k) {
  vectorLoads.clear();
  vectorStores.clear();
  llvm::Value *col = sched.vec > 1 ? b.CreateMul(q, b.getInt32(sched.vec), "col") : q;
  for (unsigned w = 0; w < sched.vec; ++w) {
    Element e;
    e.col = w ? b.CreateAdd(col, b.getInt32(w)) : col;
    e.vectorCol = col;
    e.slot = k * sched.vec + w;
    e.w = w;
    for (unsigned i = 0; i < prog.nodes.size(); ++i) {
      const Node &n = prog.nodes[i];
      if (n.kind == NodeKind::Reduce && sweepOf(prog, i) == s) {
        const Node &x = prog.nodes[n.args[0]];
        llvm::Value *v = llvmCast(b, x.type, n.type, need(n.args[0], e, s));
        llvm::Type *t = registerType(n);
        b.CreateStore(combineValues(n.reduce, b.CreateLoad(t, acc[i]), v), acc[i]);
      } else if (n.held && n.level == s) {
        need(i, e, s);
      }
    }
    for (unsigned j = 0; j < prog.stores.size(); ++j) {
      const Store &st = prog.stores[j];
      if (!(st.mask & Reduced) || prog.nodes[st.node].level != s)
        continue;
      llvm::Value *y = llvmNarrow(b, st.dtype, need(st.node, e, s));
      if (sched.vec > 1) {
        vectorStores[j].push_back(y);
        continue;
      }
      llvm::Value *at = b.CreateGEP(y->getType(), dstPointer[j], elementIndex(st.mask, e));
      storeIfLive([&] { b.CreateStore(y, at); });
    }
  }
  for (auto &[j, ys] : vectorStores) {
    DType t = prog.stores[j].dtype;
    llvm::Type *st = llvmStorageType(ctx, t);
    llvm::Value *vector = llvm::PoisonValue::get(llvm::FixedVectorType::get(st, sched.vec));
    for (unsigned w = 0; w < sched.vec; ++w)
      vector = b.CreateInsertElement(vector, ys[w], uint64_t(w));
    llvm::Value *at = b.CreateGEP(st, dstPointer[j], col);
    storeIfLive([&] { b.CreateAlignedStore(vector, at, llvm::Align(dtypeSize(t) * sched.vec)); });
  }
}

void LlvmRowReduction::sweep(unsigned s) {
  for (unsigned i = 0; i < prog.nodes.size(); ++i) {
    const Node &n = prog.nodes[i];
    if (n.kind == NodeKind::Reduce && sweepOf(prog, i) == s)
      b.CreateStore(identity(n.reduce, n.type), acc[i]);
  }
  int64_t numVectors = sched.numVectors;
  llvm::Value *end = b.getInt32(uint32_t(numVectors));
  std::string name = "pass" + std::to_string(s);
  if (sched.mode == Mode::Column) {
    emitCountedLoop(b, b.getInt32(0), end, b.getInt32(1), name,
                    [&](llvm::Value *col) { passBody(s, col, 0); });
  } else if (sched.mode == Mode::Loop) {
    emitCountedLoop(b, lane, end, b.getInt32(sched.threads), name,
                    [&](llvm::Value *q) { passBody(s, q, 0); });
  } else {
    bool overrun = int64_t(sched.vectors) * sched.threads != numVectors;
    for (unsigned k = 0; k < sched.vectors; ++k) {
      llvm::Value *q = b.CreateAdd(b.getInt32(k * sched.threads), lane, "q");
      if (overrun)
        emitIf(b, b.CreateICmpSLT(q, end), name + ".v" + std::to_string(k),
               [&] { passBody(s, q, k); });
      else
        passBody(s, q, k);
    }
  }
  combine(s);
}

void LlvmRowReduction::loopOverRows() {
  namespace I = llvm::Intrinsic;
  auto body = [&] {
    // The held slots live within one row: a slot a guard skips would
    // otherwise carry the last row's value, and every slot would stay live
    // (in registers) across the whole row loop.
    for (llvm::AllocaInst *slots : held)
      if (slots)
        b.CreateStore(llvm::PoisonValue::get(slots->getAllocatedType()), slots);
    rowSetup();
    for (unsigned level = 0; level <= prog.maxLevel; ++level) {
      rowScope(level);
      if (sched.sweep[level])
        sweep(level);
    }
  };
  llvm::Value *numRows = fn->getArg(unsigned(args.size() - 1));
  llvm::Value *block = readSpecialRegister(b, I::nvvm_read_ptx_sreg_ctaid_x);
  llvm::Value *blocks = readSpecialRegister(b, I::nvvm_read_ptx_sreg_nctaid_x);
  if (sched.mode == Mode::Column) {
    llvm::Value *extent = b.getInt64(prog.view.inner);
    llvm::Value *threads = readSpecialRegister(b, I::nvvm_read_ptx_sreg_ntid_x);
    llvm::Value *first = b.CreateAdd(b.CreateMul(block, threads),
                                     readSpecialRegister(b, I::nvvm_read_ptx_sreg_tid_x));
    emitCountedLoop(b, first, b.CreateMul(numRows, extent, "num_positions"),
                    b.CreateMul(blocks, threads, "step"), "pos", [&](llvm::Value *pos) {
                      row = b.CreateUDiv(pos, extent, "row");
                      inner = b.CreateURem(pos, extent, "inner");
                      body();
                    });
    return;
  }
  lane = readSpecialRegister(b, I::nvvm_read_ptx_sreg_tid_x, false);
  lane->setName("lane");
  if (sched.rowsPerBlock == 1) {
    emitCountedLoop(b, block, numRows, blocks, "row", [&](llvm::Value *r) {
      row = r;
      body();
    });
    return;
  }
  llvm::Value *rows = b.getInt64(sched.rowsPerBlock);
  emitCountedLoop(b, b.CreateMul(block, rows), numRows, b.CreateMul(blocks, rows), "first",
                  [&](llvm::Value *first) {
                    llvm::Value *rowId = b.CreateAdd(
                        first, readSpecialRegister(b, I::nvvm_read_ptx_sreg_tid_y), "row_id");
                    live = b.CreateICmpSLT(rowId, numRows, "live");
                    row = b.CreateSelect(live, rowId, b.CreateSub(numRows, b.getInt64(1)), "row");
                    body();
                  });
}

void LlvmRowReduction::run() {
  fn = declareLlvmKernel(m, entry, args);
  setLaunchBounds(*fn, sched.blockThreads(), sched.minBlocks);
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", fn));
  for (unsigned i = 0; i < prog.nodes.size(); ++i) {
    const Node &n = prog.nodes[i];
    if (n.kind == NodeKind::Table)
      tables[i] = emitConstantTable(m, *n.constant, n.table);
    if (n.held)
      held[i] = emitEntryAlloca(b, llvm::ArrayType::get(registerType(n), sched.vectors * sched.vec),
                                "h_" + stem(n.name));
    if (n.kind == NodeKind::Reduce)
      acc[i] = emitEntryAlloca(b, registerType(n), stem(n.name));
  }
  for (unsigned i = 0; i < prog.nodes.size(); ++i)
    if (isHoisted(prog.nodes[i]))
      value[i] = named(rowValue(i), i);
  loopOverRows();
  b.CreateRetVoid();
}

} // namespace

std::optional<GeneratedKernel> emitRowReductionLlvm(const Op &kernel, const std::string &entry,
                                                    Diagnostics &diags) {
  std::optional<Program> prog = buildProgram(kernel, entry, diags);
  if (!prog)
    return std::nullopt;
  Schedule sched = chooseSchedule(*prog);
  llvm::LLVMContext ctx;
  llvm::Module m(entry, ctx);
  prepareNvptxModule(m);
  GeneratedKernel out{entry, "", kernelArgs(kernel, *prog), launchOf(*prog, sched), Backend::Llvm};
  LlvmRowReduction(kernel, *prog, sched, out.args, entry, m).run();
  out.source = printModule(m);
  out.facts.schedule = describeSchedule(sched);
  return out;
}

} // namespace fusec::codegen
