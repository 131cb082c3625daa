// kir, the kernel IR: one GPU kernel as a small, typed, structured program that every kernel
// template builds once and each back end renders (the CUDA C++ renderer in codegen/cuda/, the LLVM
// IR renderer in codegen/llvm/). kir knows GPUs, not kernel families; the device semantics of its
// math (the pointwise ops of ir/Ops.def) each renderer defines once.
//
// Form. A kernel is a tree of blocks of instructions. An instruction may define one value (SSA:
// defined once, used only after its definition in its own block or in blocks nested there) and may
// own regions (a loop's body, an if's branches). Values live in Kernel::values and are named by
// ValueId; names are hints (renderers make them unique), never identity.
//
// Types. A value is a scalar or a vector of `lanes` scalars of a DType, or a pointer into an
// address space. Memory holds *storage* types and math runs in *compute* types
// (storageType/computeType below); `widen` and `narrow` convert between the two, `cast` (the
// pointwise op) between compute types.
//
// Growing it. A new primitive (shuffles, mma, cp.async, wgmma, TMA, mbarriers) is one Opcode, one
// case in the verifier, the printer and each renderer. See docs/codegen.md.
#pragma once

#include "ir/Graph.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fusec::kir {

/// Param: a kernel parameter passed by value that an instruction takes by address (a TMA tensor
/// map, `const __grid_constant__`).
enum class Space : uint8_t { None, Global, Shared, Local, Param };

/// A register of `lanes` elements of `elem`, or, when `space` is not None, a pointer to elements of
/// `elem` in that address space.
struct Type {
  DType elem = DType::I64;
  uint8_t lanes = 1;
  Space space = Space::None;

  static Type scalar(DType t) { return {t, 1, Space::None}; }
  static Type vector(DType t, unsigned lanes) { return {t, uint8_t(lanes), Space::None}; }
  static Type pointer(DType t, Space s) { return {t, 1, s}; }
  static Type index() { return scalar(DType::I64); }
  /// A TMA tensor map (CUtensorMap: 128 bytes, 64-aligned), a parameter only tensorLoad reads.
  static Type tensorMap() { return {DType::I8, 1, Space::Param}; }
  bool isPointer() const { return space != Space::None; }
  bool operator==(const Type &o) const = default;
};

/// The type of dtype `t`'s elements in memory: i8 for bool, else `t` (f16, bf16 themselves).
inline DType storageType(DType t) { return t == DType::Bool ? DType::I8 : t; }
/// The type math on dtype `t` runs in: f32 for f16 and bf16, else `t`.
inline DType computeType(DType t) { return isNarrowFloat(t) ? DType::F32 : t; }

using ValueId = uint32_t;
inline constexpr ValueId kNoValue = ~0u;

enum class Opcode : uint8_t {
  Param,         ///< kernel parameter `imm`
  Const,         ///< integer constant `imm` of the result type
  Literal,       ///< element 0 of `dense`, of computeType(dense.dtype)
  Special,       ///< special register `special`, as an index
  Index,         ///< `indexOp` of i64 operands 0 and 1 (never negative for div, rem)
  Math,          ///< pointwise `math` of ir/Ops.def over compute-type operands
  Widen,         ///< operand 0 from storageType(`dtype`) to computeType(`dtype`)
  Narrow,        ///< operand 0 from computeType(`dtype`) to storageType(`dtype`); both
                 ///< convert an f16 or bf16 pair (2 lanes) too, as one 32-bit word
  Load,          ///< `lanes` elements at operand 0 + operand 1 (element index)
  Store,         ///< operand 2 (`lanes` elements) to operand 0 + operand 1
  Alloca,        ///< an array of `imm` elements of `dtype` in the result's space
                 ///< (local: per thread; shared: per block, uninitialized)
  Table,         ///< Kernel::tables[`imm`]: a global pointer
  For,           ///< for (result = op0; result < op1; result += op2) regions[0]
  If,            ///< if (operand 0) regions[0] else regions[1]
  Barrier,       ///< every thread of the block waits here (bar.sync 0); with an operand, named
                 ///< barrier i32 operand 0 (1 to 15) of `imm` threads (a multiple of 32): the
                 ///< thread waits there until `imm` threads arrived (bar.sync id, imm), or with
                 ///< `arrive` only counts itself and goes on (bar.arrive id, imm); with
                 ///< `cluster` (sm_90, no operand), every thread of the block's cluster waits
                 ///< here, the writes to shared memory before it seen by each after it
                 ///< (barrier.cluster.arrive.release, then .wait.acquire); with `warp` (no
                 ///< operand), the lanes of the thread's warp, all of which run it, wait for
                 ///< each other, the memory accesses of each before it seen by every one after
                 ///< it (bar.warp.sync with every lane: CUDA's __syncwarp)
  Shuffle,       ///< operand 0 (a 4- or 8-byte scalar) from the lane `shuffle` names by operand 1,
                 ///< within groups of `imm` lanes (a power of two <= 32), among the lanes of the
                 ///< warp whose bits are set in operand 2 (an i64; every lane named must take part)
  DynamicShared, ///< the block's dynamic shared memory (the launch's sharedBytes) as an array of
                 ///< `dtype`; every one aliases the same bytes, aligned to the largest `align`
  Async,         ///< asynchronous copies, by `async` (AsyncOp); later TMA and mbarriers
  Matrix,        ///< warp- and warpgroup-wide matrix instructions, by `matrix` (MatrixOp)
  Select,        ///< operand 1 if predicate operand 0, else operand 2 (any one type)
  Pack,          ///< f32 operands 0 (low half) and 1 rounded to `dtype` (f16, bf16),
                 ///< packed into one i32 word (cvt.rn.f16x2.f32)
  Unpack,        ///< the `dtype` (f16, bf16) half of i32 operand 0 that `imm` names (0 the low,
                 ///< 1 the high: Pack's order) as f32, exactly
  Exp2,          ///< 2^operand 0 of f32, approximate (ex2.approx.ftz: relative error ~2^-22,
                 ///< subnormal results flushed to 0, exp2(-inf) = 0)
  AtomicAdd,     ///< the i32 at global operand 0 + element index operand 1 += i32 operand 2, at
                 ///< once for every thread of the GPU (relaxed); the result is the value before
  Fence,         ///< this thread's memory accesses before it happen before those after it for
                 ///< every thread of the GPU (membar.gl, CUDA's __threadfence)
  MBarrier,      ///< a shared-memory barrier object (sm_90), by `mbarrier` (MBarrierOp)
  SetMaxRegisters, ///< the warpgroup's registers a thread become `imm` (24 to 256, a multiple of
                   ///< 8): setmaxnreg.inc (`raise`) or .dec; every thread of the warpgroup runs it
};

enum class Special : uint8_t { TidX, TidY, NtidX, CtaidX, NctaidX };
/// Index math; Lt gives a predicate; Shl shifts left by operand 1 (< 64). And also takes two
/// predicates; Shr is a logical shift (operands are never negative).
enum class IndexOp : uint8_t { Add, Sub, Mul, Div, Rem, Shl, Lt, And, Xor, Shr };
/// Which lane a shuffle reads: lane ^ d, lane + d, lane - d, or d itself (within its group; a lane
/// past the group's end reads its own value).
enum class ShuffleMode : uint8_t { Xor, Down, Up, Idx };
/// The asynchronous copies of sm_80 (cp.async):
/// - Copy: `imm` (16) bytes from global operand 2 + element index operand 3 to shared operand 0 +
///   element index operand 1, zeros instead when predicate operand 4 is false (the source is then
///   not read);
/// - Commit: the copies this thread issued since the last commit form a group;
/// - Wait: until at most `imm` of this thread's groups are in flight;
/// - ProxyFence: this thread's writes to shared memory so far become visible to the asynchronous
///   proxy (wgmma's operand reads): fence.proxy.async.shared::cta, before the barrier that
///   publishes them.
/// and the tensor memory accelerator (sm_90):
/// - TensorLoad: the box of the tensor map operand 2 at the `imm` i32 coordinates (operands 5
///   on, innermost first) to shared operand 0 + element index operand 1 (1024-byte aligned for a
///   128-byte swizzle), completing its bytes on the mbarrier at shared i64 operand 3 + element
///   index operand 4 (cp.async.bulk.tensor.Nd ... mbarrier::complete_tx::bytes); elements
///   outside the tensor are zeros. With a `ctaMask`, the box lands at the same offset in the
///   shared memory of every block of the cluster whose rank's bit is set, completing on the
///   mbarrier at the same offset in each (.multicast::cluster). With `im2col` offsets (operands
///   after the coordinates, i32 values below 2^16, one a spatial dim: imm - 2 of them, for 3 to
///   5 dims), the map is an im2col one (cuTensorMapEncodeIm2col) and the box its pixels' channels:
///   the coordinates name the first pixel's window corner, the offsets the filter tap
///   (.im2col).
/// - TensorStore: shared operand 0 + element index operand 1 to the box of the tensor map operand
///   2 at the `imm` i32 coordinates (operands 3 on, innermost first); elements of the box outside
///   the tensor are not written (cp.async.bulk.tensor.Nd.global.shared::cta.bulk_group). The
///   shared memory must not be written again before a BulkWait covers the store;
/// - BulkCommit: the tensor stores this thread issued since the last commit form a bulk group;
/// - BulkWait: until at most `imm` of this thread's bulk groups are still reading shared memory
///   (cp.async.bulk.wait_group.read).
enum class AsyncOp : uint8_t {
  Copy,
  Commit,
  Wait,
  ProxyFence,
  TensorLoad,
  TensorStore,
  BulkCommit,
  BulkWait
};
/// The mbarriers of sm_90, each an i64 in shared memory named by operand 0 (a shared i64 array)
/// + element index operand 1. A barrier completes a phase when its expected arrivals arrived and
/// its expected transaction bytes landed; the phases alternate parity 0, 1, 0, ... from 0.
/// - Init: expects `imm` arrivals a phase (mbarrier.init);
/// - InitFence: the inits before it are visible to the asynchronous proxy (TMA) and, after the
///   block's next barrier, to every thread (fence.mbarrier_init.release.cluster);
/// - Arrive: one arrival (mbarrier.arrive);
/// - ExpectTx: one arrival that also expects `imm` more bytes this phase
///   (mbarrier.arrive.expect_tx);
/// - Wait: until the phase of parity i32 operand 2 completed: a barrier in phase 0 has completed
///   parity 1's (mbarrier.try_wait.parity in a loop);
/// - ArriveRemote: one arrival on the barrier at the same offset in the shared memory of the
///   cluster's block of rank i32 operand 2 (mapa, then mbarrier.arrive.shared::cluster).
enum class MBarrierOp : uint8_t { Init, InitFence, Arrive, ExpectTx, Wait, ArriveRemote };
/// Warp-wide fragments of the tensor cores (sm_80 and later), every lane taking part:
/// - LoadX4: ldmatrix.x4 (.trans with `imm` 1) of four 8x8 b16 matrices whose rows this lane's
///   shared operand 0 + element index operand 1 names (an i8 array gives byte offsets): i32x4;
/// - MmaM16N8K16: mma.sync.m16n8k16.row.col, f32x4 operand 2 + the product of A (i32x4 operand 0,
///   `dtype` pairs) and B (i32x2 operand 1): f32x4.
/// and warpgroup-wide ones (sm_90a; the 128 threads of a warpgroup all take part):
/// - Wgmma: wgmma.mma_async m64n`imm`k16 of `dtype` (f16, bf16) into f32: the local array operand
///   0 (`imm` / 2 elements, the mma.m16n8k16 accumulator layout of each warp's 16 rows and n8
///   tile after n8 tile) += A · B. A is a shared tile (operands 1-3: layout, shared pointer, byte
///   index; K-major) or registers (operand 1: i32x4, the mma A fragment of the warp's 16 rows);
///   B is a shared tile (the last three operands), K-major or, with `transposeB`, MN-major. A
///   layout is an i64: the matrix descriptor (PTX ISA "Matrix Descriptor Format") less its start
///   address (Builder::wgmmaLayout). Asynchronous: the accumulators may be read only after the
///   WgmmaWait that covers it;
/// - WgmmaFence: orders this warpgroup's register and shared-memory writes before its next wgmma;
///   its operands are the local arrays (accumulators, register A) whose writes must not move
///   below it;
/// - WgmmaCommit: the wgmmas issued since the last commit form a group;
/// - WgmmaWait: until at most `imm` groups are in flight; its operands are the accumulator arrays
///   whose reads must not move above it.
enum class MatrixOp : uint8_t { LoadX4, MmaM16N8K16, Wgmma, WgmmaFence, WgmmaCommit, WgmmaWait };
/// What a wgmma does with its accumulator: adds A · B to it, or overwrites it with A · B (PTX's
/// scale-d false: the first k slice of a fresh tile, whose registers are then neither zeroed nor
/// read).
enum class Accumulate : uint8_t { Add, Overwrite };
struct Inst;
using Block = std::vector<Inst>;

/// Math by an op of ir/Ops.def: `kind` over operands of IR dtype `operand` (widened to compute
/// types), giving IR dtype `result`; `tanh` selects gelu's tanh approximation.
struct MathOp {
  OpKind kind = OpKind::Add;
  DType operand = DType::F32;
  DType result = DType::F32;
  bool tanh = false;
};

/// The math of pointwise op `op` of a graph.
MathOp mathOf(const Op &op);

struct Inst {
  Opcode op;
  ValueId result = kNoValue;
  std::vector<ValueId> operands = {};
  int64_t imm = 0;          ///< Param, Const, Alloca (count), Table, For (unroll: 0 none, -1 full),
                            ///< Shuffle (width), Async (bytes, groups), Matrix (LoadX4: transposed)
  DType dtype = DType::F32; ///< Widen, Narrow, Alloca, DynamicShared, Matrix (Mma), Pack, Unpack
  unsigned lanes = 1;       ///< Load, Store
  Special special = Special::TidX;
  IndexOp indexOp = IndexOp::Add;
  ShuffleMode shuffle = ShuffleMode::Xor;
  AsyncOp async = AsyncOp::Copy;
  MatrixOp matrix = MatrixOp::LoadX4;
  MBarrierOp mbarrier = MBarrierOp::Init;
  MathOp math = {};
  DenseData dense = {}; ///< Literal
  std::vector<Block> regions = {};
  unsigned align = 16;     ///< Alloca, DynamicShared: the array's alignment in bytes
  bool transposeB = false; ///< Matrix Wgmma: B is MN-major
  Accumulate accumulate = Accumulate::Add; ///< Matrix Wgmma
  bool arrive = false;                     ///< Barrier (named): arrive without waiting
  bool raise = false;                      ///< SetMaxRegisters: inc (else dec)
  bool cluster = false;                    ///< Barrier: the cluster's, not the block's
  bool warp = false;                       ///< Barrier: the warp's, not the block's
  /// For: code that does not change between iterations stays in the body (LLVM:
  /// llvm.licm.disable), for loops whose every register is taken (Note [Tile loop invariants]
  /// in codegen/templates/gemm/Gemm.cpp)
  bool keepInvariants = false;
  uint16_t ctaMask = 0; ///< Async TensorLoad: the cluster's blocks it multicasts to (0: none)
  uint8_t im2col = 0;   ///< Async TensorLoad: im2col offsets after the coordinates (0: tiled)
};

/// A kernel parameter: a global pointer, an index scalar or a tensor map.
struct Param {
  std::string name; ///< the name every renderer gives it (a C identifier)
  Type type;
  bool readOnly = false; ///< pointers: never written through (and not aliased)
};

/// A constant table in global memory: `data` in computeType(data.dtype).
struct Table {
  std::string name;
  DenseData data;
};

struct ValueInfo {
  Type type;
  std::string name; ///< a hint: renderers print it made unique
};

struct Kernel {
  std::string name;                 ///< the extern "C" entry point
  std::vector<std::string> comment; ///< lines each renderer prints above it
  std::vector<Param> params;
  std::vector<Table> tables;
  std::vector<ValueInfo> values;
  Block body;
  unsigned maxThreads = 0; ///< threads a block at most (launch bounds); 0: unsaid
  unsigned minBlocks = 0;  ///< blocks an SM must hold at once (launch bounds); 0: unsaid
  /// sm_90: launched to start before the kernel before it on the stream ends, every thread first
  /// waits until the grids it depends on completed and their writes are visible
  /// (griddepcontrol.wait); Note [Dependent launch] in codegen/Codegen.cpp.
  bool dependent = false;

  const Type &typeOf(ValueId v) const { return values[v].type; }
};

/// Builds a kernel from the outside in: instructions go to the end of the innermost open block;
/// forLoop opens a loop body for the callback. An index constant or special register already
/// defined in an open block is reused.
class Builder {
public:
  Builder(Kernel &k) : k(k), scopes{{&k.body, {}}} {}

  ValueId param(const std::string &name, Type type, bool readOnly = false);
  /// Gives `v` the name hint `name` (a value built by a shared helper).
  void rename(ValueId v, const std::string &name) { k.values[v].name = name; }
  unsigned table(const std::string &name, const DenseData &data);

  /// An integer constant of type `t` (i32, wrapped to 32 bits, or i64).
  ValueId constant(DType t, int64_t v);
  ValueId index(int64_t v) { return constant(DType::I64, v); }
  /// The value of `v` when it is an index constant this builder made.
  std::optional<int64_t> constantOf(ValueId v) const {
    auto it = constants.find(v);
    return it == constants.end() ? std::nullopt : std::optional(it->second);
  }
  ValueId literal(const DenseData &splat, const std::string &name);
  /// `v` as a literal of f32, f64 or an integer type (an integer `v` exact).
  ValueId literal(DType t, double v, const std::string &name);
  ValueId special(Special s);
  /// `op` of a and b; x * 1, x / 1, x + 0 and x - 0 give x itself, x % 1 the constant 0, and two
  /// constants (div and rem by nonzero) a constant.
  ValueId arith(IndexOp op, ValueId a, ValueId b, const std::string &name = "");
  ValueId add(ValueId a, ValueId b, const std::string &name = "") {
    return arith(IndexOp::Add, a, b, name);
  }
  ValueId mul(ValueId a, ValueId b, const std::string &name = "") {
    return arith(IndexOp::Mul, a, b, name);
  }
  ValueId less(ValueId a, ValueId b) { return arith(IndexOp::Lt, a, b); }
  /// `v` converted to integer type `t` (a cast: wraps when it narrows).
  ValueId convert(DType t, ValueId v, const std::string &name = "");
  ValueId math(const MathOp &m, const std::vector<ValueId> &args, const std::string &name);
  /// widen/narrow for dtype `t` of a scalar or (f16, bf16) of a pair; the value itself when the two
  /// types agree.
  ValueId widen(DType t, ValueId v, const std::string &name);
  ValueId narrow(DType t, ValueId v);
  ValueId load(ValueId ptr, ValueId index, unsigned lanes = 1, const std::string &name = "");
  void store(ValueId ptr, ValueId index, ValueId value, unsigned lanes = 1);
  ValueId localArray(DType t, unsigned count, const std::string &name);
  /// A shared array, aligned to `align` bytes (16 lets vectors of any width through; the element
  /// size keeps a back end from merging scalar reads).
  ValueId sharedArray(DType t, unsigned count, const std::string &name, unsigned align = 16);
  void barrier();
  ValueId atomicAdd(ValueId ptr, ValueId index, ValueId value, const std::string &name = "");
  void fence();
  /// `v` as lane `mode`(`lane`) of this lane's group of `width` holds it, among the lanes of `mask`
  /// (kNoValue: the whole warp).
  ValueId shuffle(ShuffleMode mode, ValueId v, ValueId lane, unsigned width = 32,
                  ValueId mask = kNoValue);
  ValueId tableAddress(unsigned table);
  /// The dynamic shared memory as an array of `t`, aligned to `align` bytes (a swizzled wgmma
  /// tile needs 1024).
  ValueId dynamicShared(DType t, const std::string &name, unsigned align = 128);
  /// cp.async of 16 bytes, zeros where !valid (AsyncOp::Copy).
  void copyAsync(ValueId dst, ValueId dstIndex, ValueId src, ValueId srcIndex, ValueId valid);
  void commitAsync();
  void waitAsync(unsigned pending);
  ValueId loadMatrix(ValueId ptr, ValueId index, bool transposed, const std::string &name = "");
  /// c + a * b on the tensor cores, a and b pairs of `t` (f16 or bf16).
  ValueId mma(DType t, ValueId a, ValueId b, ValueId c, const std::string &name = "");
  /// A shared tile of a wgmma operand: ptr[index] (a byte index), laid out as `layout` says.
  struct SharedTile {
    ValueId ptr, index, layout;
  };
  /// The layout fields of a matrix descriptor: 16-byte chunks swizzled over `swizzleBytes` (128,
  /// 64, 32; 0 for none), 8-row groups `strideBytes` apart, `leadingBytes` between the groups of
  /// the other dim (MN-major panels; 16 where unused).
  static int64_t wgmmaLayout(unsigned swizzleBytes, unsigned strideBytes, unsigned leadingBytes);
  /// acc += A · B, a 64 x n x 16 tile on the warpgroup's tensor cores (MatrixOp::Wgmma).
  void wgmma(DType t, unsigned n, ValueId acc, const SharedTile &a, const SharedTile &b,
             bool transposeB, Accumulate into = Accumulate::Add);
  /// The same with A in registers (i32x4).
  void wgmma(DType t, unsigned n, ValueId acc, ValueId a, const SharedTile &b, bool transposeB,
             Accumulate into = Accumulate::Add);
  /// wgmma.fence; `registers` (local arrays) are written before it.
  void wgmmaFence(const std::vector<ValueId> &registers);
  void wgmmaCommit();
  /// Waits until at most `pending` wgmma groups are in flight; `accumulators` (local arrays) are
  /// read only after it.
  void wgmmaWait(unsigned pending, const std::vector<ValueId> &accumulators);
  /// fence.proxy.async.shared::cta (AsyncOp::ProxyFence).
  void proxyFence();
  /// A tensor map parameter (Type::tensorMap()).
  ValueId tensorMapParam(const std::string &name) { return param(name, Type::tensorMap(), true); }
  /// The box of tensor map `map` at i32 `coords` (innermost first) to shared `dst`[`dstIndex`],
  /// completing on mbarrier `bar`[`barIndex`] (AsyncOp::TensorLoad); with a `ctaMask`, to every
  /// block of the cluster whose rank's bit is set in it.
  void tensorLoad(ValueId dst, ValueId dstIndex, ValueId map, ValueId bar, ValueId barIndex,
                  const std::vector<ValueId> &coords, uint16_t ctaMask = 0);
  /// The pixels of an im2col tensor map `map` from the window corner at i32 `coords` (innermost
  /// first) at the filter tap `offsets` (i32, innermost spatial dim first), as tensorLoad.
  void tensorLoadIm2col(ValueId dst, ValueId dstIndex, ValueId map, ValueId bar, ValueId barIndex,
                        const std::vector<ValueId> &coords, const std::vector<ValueId> &offsets);
  /// Shared `src`[`srcIndex`] to the box of tensor map `map` at i32 `coords` (innermost first)
  /// (AsyncOp::TensorStore); then the bulk group's commit, and the wait until at most `pending`
  /// groups still read shared memory.
  void tensorStore(ValueId src, ValueId srcIndex, ValueId map, const std::vector<ValueId> &coords);
  void bulkCommit();
  void bulkWait(unsigned pending);
  /// Every thread of the cluster waits here (Barrier with `cluster`).
  void clusterBarrier();
  /// Every lane of the warp waits here (Barrier with `warp`).
  void warpBarrier();
  /// Named barrier i32 `id` of `threads` threads: wait there (bar.sync id, threads), or only
  /// arrive (bar.arrive id, threads).
  void barrier(ValueId id, unsigned threads);
  void barrierArrive(ValueId id, unsigned threads);
  /// The mbarrier at shared i64 `bar`[`index`] (MBarrierOp): init to `count` arrivals a phase,
  /// the fence after the inits, an arrival, an arrival expecting `bytes` more, a wait for the
  /// phase of parity `parity` (i32).
  void mbarrierInit(ValueId bar, ValueId index, unsigned count);
  void mbarrierInitFence();
  void mbarrierArrive(ValueId bar, ValueId index);
  void mbarrierExpectTx(ValueId bar, ValueId index, unsigned bytes);
  void mbarrierWait(ValueId bar, ValueId index, ValueId parity);
  /// An arrival on the barrier at `bar`[`index`] of the cluster's block of rank `rank` (i32).
  void mbarrierArriveRemote(ValueId bar, ValueId index, ValueId rank);
  /// setmaxnreg.inc (raise) or .dec to `count` registers a thread, for the whole warpgroup.
  void setMaxRegisters(unsigned count, bool raise);
  ValueId select(ValueId cond, ValueId a, ValueId b, const std::string &name = "");
  ValueId pack(DType t, ValueId lo, ValueId hi, const std::string &name = "");
  /// The f32 value of half `half` (0 low, 1 high) of `word`, a pair of `t` (Opcode::Unpack).
  ValueId unpack(DType t, ValueId word, unsigned half, const std::string &name = "");
  ValueId exp2(ValueId x, const std::string &name = "");
  /// for (i = start; i < end; i += step) body(i); unroll: 0 none, -1 full; `keepInvariants`
  /// as Inst's.
  void forLoop(ValueId start, ValueId end, ValueId step, const std::string &name, int unroll,
               const std::function<void(ValueId)> &body, bool keepInvariants = false);
  /// if (cond) then() else otherwise(); `otherwise` may be empty.
  void ifThenElse(ValueId cond, const std::function<void()> &then,
                  const std::function<void()> &otherwise = {});

private:
  Inst &append(Inst inst);
  /// Appends `inst`, defining its result of type `t`.
  ValueId emit(Type t, const std::string &name, Inst inst);
  /// The value `key` names in an open block, else emit(t, "", inst) under `key`.
  ValueId reused(const std::string &key, Type t, Inst inst);
  /// Runs `build` with `block` open.
  void inBlock(Block &block, const std::function<void()> &build);

  /// An open block and the constants and registers defined in it, by key.
  struct Scope {
    Block *block;
    std::map<std::string, ValueId> known;
  };
  Kernel &k;
  std::vector<Scope> scopes;
  std::map<ValueId, int64_t> constants;
};

/// What is wrong with `k` (empty when nothing): a use before its definition or outside its scope,
/// operand types an opcode does not take, a store through a read-only parameter. kir comes from
/// templates, so a failure is a bug in one.
std::vector<std::string> verify(const Kernel &k);

/// A name for every value of `k` (indexed by ValueId): parameters keep theirs, other values get
/// their hint (or "t") made a C identifier, then _1, _2, ... where that is taken. What the printer
/// and the CUDA renderer print; stable for a given kernel.
std::vector<std::string> uniqueNames(const Kernel &k);

/// The text form of `k` (`fusec compile --emit=kir`).
std::string print(const Kernel &k);

/// "i64", "f16x8", "ptr<global f16>".
std::string typeName(Type t);

/// The inline PTX of wgmma `i` (MatrixOp::Wgmma), its operands numbered as both renderers pass
/// them and written `sigil` + number ('%' in CUDA C++, '$' in LLVM IR): the N/2 accumulators,
/// then A (a descriptor, or 4 words), B's descriptor and a word that is 1 (scale-d).
std::string wgmmaPtx(const Inst &i, char sigil);

/// The inline PTX of sm_90 instruction `i` (a TensorLoad or TensorStore, a bulk group's commit or
/// wait, an MBarrier op, a named Barrier or a SetMaxRegisters), its operands numbered as both
/// renderers pass them and written `sigil` + number: a shared address is 32 bits, the tensor
/// map's a 64-bit generic one. TensorLoad: the destination, the map, the mbarrier, the
/// coordinates; TensorStore: the source, the map, the coordinates; MBarrier: the barrier, then
/// Wait's parity; a named Barrier: its id. Several waits may share a function (scoped labels).
std::string hopperPtx(const Inst &i, char sigil);

} // namespace fusec::kir
