// The attention template's kir builder (FlashAttention-2's design; the plan is Plan.h).
//
// A block owns `br` query rows of one batch index: on sm_90a one warpgroup, whose wgmmas run
// S = Q·Kᵀ from the swizzled shared tiles and O += P·V with P in registers; elsewhere 4 warps of
// mma.sync, warp w owning the m16 row blocks w * 16 * blocks + 16 i. Q goes to shared memory once
// (cp.async; mma.sync keeps its A fragments in registers where they fit); the keys go by in tiles
// of `bc`, K and V through `stages` shared stages. Per tile each warp computes its rows' scores in
// f32 accumulators, folds them into the online softmax (in log2 units: t = s · scale · log2 e +
// mask · log2 e, p = 2^(t - m)), rounds P to the operand dtype where it lies (Note [Attention
// fragments]) and accumulates O += P·V. The epilogue divides by the row sums and stores O. Shared
// tiles are rows of 16-byte chunks, swizzled (TensorCore.h), one lane address per operand as in
// Note [Fragment addresses] of gemm/Gemm.cpp; for wgmma, rows of at most 128 bytes in panels.
//
// Decode (a few queries; flash-decoding) reuses the mma.sync schedule with two turns: a block's
// rows are the queries of every head that reads its K/V (rowOffset), and each warp multiplies its
// own keys of every tile (warpKey), so the warps' states merge through shared memory at the end
// (merge). A unit's keys may be split across blocks, the last of which combines their parts from
// the scratch (combineIfLast).
//
// Note [Attention fragments]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~
// In mma.m16n8k16 lane l (g = l / 4, q = l % 4) holds accumulator elements c0, c1 at (row g,
// columns 2q, 2q + 1) and c2, c3 at row g + 8; its A fragment holds (row g, k 2q..2q+1), (g + 8,
// k 2q..), (g, k 2q+8..), (g + 8, k 2q+8..) (PTX ISA, "Matrix Fragments for mma.m16n8k16"). So
// the score tiles of keys 16t..16t+7 and 16t+8..16t+15, packed pairwise, are the A fragment of
// P·V's k slice t with no data movement. The B operand of S = Q·Kᵀ pairs two dims of one key row:
// ldmatrix of K's rows; that of P·V two keys of one column of V: ldmatrix.trans of V's rows.
// wgmma m64nNk16 gives warp w of the warpgroup rows 16w..16w+15 in this same per-n8 layout, and
// takes a register A in this same fragment: the softmax and the packing serve both schedules.
//
// Numerics (docs/ir.md, attention): max is max.NaN, so a NaN score makes its row NaN; m̂ = 0 when
// the running max is -inf, so -inf - -inf never happens and a row with no visible key gives 0;
// a finite mask is saturated at -FLT_MAX after the multiply by log2 e, so -3.4e38 stays finite.
#include "codegen/templates/attention/Attention.h"

#include "codegen/templates/TensorCore.h"
#include "codegen/templates/attention/Plan.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <sstream>

namespace fusec::attention {

namespace {

using kir::IndexOp;
using kir::ValueId;

/// Whether a key tile's softmax hides keys past Sk and, causal, after the query: never, always,
/// or where the tile holds one (a uniform branch).
enum class Hiding { Never, Always, WhereNeeded };

class AttentionBuilder {
public:
  explicit AttentionBuilder(const Plan &p) : p(p), b(k) {}

  templates::KirKernel run() {
    k.name = p.entry;
    std::string how = schedule();
    k.comment = {p.entry + ": attention kernel, " + p.attention->result()->type().str(), how};
    k.maxThreads = unsigned(p.threads());
    // Two decode blocks an SM at least: without the bound ptxas spills a few registers of the
    // one-tile kernels (Sk up to 64) to fit more.
    if (p.decode)
      k.minBlocks = 2;
    qBytes = p.br() * int(p.qkWidth()) * 2;
    kBytes = p.bc * int(p.qkWidth()) * 2;
    stageBytes = kBytes + p.bc * int(p.vWidth()) * 2;
    std::vector<ValueId> params = templates::declareParams(b, *p.kernel, p.args);
    q = params[p.q.input];
    key = params[p.k.input];
    value = params[p.v.input];
    if (p.maskTable) // its elements in f32 (kir::Table)
      mask = b.tableAddress(b.table(p.entry + "_mask", *p.maskTable));
    else if (p.hasMask)
      mask = params[p.mask.input];
    out = params[p.kernel->numOperands()];
    if (p.splits > 1) {
      parts = params.end()[-2];
      counters = params.back();
    }
    if (p.specialized) {
      k.minBlocks = 1; // setmaxnreg moves registers between the warpgroups of one block
      qMap = params.end()[-3];
      kMap = params.end()[-2];
      vMap = params.end()[-1];
    } else {
      setUp();
    }
    int64_t units = p.rows() == 0 ? 0 : p.units(); // no queries: nothing to stream
    int64_t tiles = p.decode ? units * p.splits : p.queryTiles() * p.batchCount();
    if (p.specialized)
      specialized(tiles);
    else
      eachTile(tiles, [&](ValueId tile) { queryTile(tile); });
    LaunchConfig launch{{unsigned(std::clamp<int64_t>(tiles, 1, 0x7fffffff)), 1, 1},
                        {unsigned(p.threads()), 1, 1},
                        unsigned(p.sharedBytes())};
    return templates::KirKernel{std::move(k), p.args, launch, how, p.scratchBytes()};
  }

private:
  ValueId i32(int64_t v) { return b.constant(DType::I32, v); }
  ValueId i64(int64_t v) { return b.index(v); }
  ValueId to64(ValueId v) { return b.convert(DType::I64, v); }
  ValueId op(IndexOp o, ValueId x, ValueId y, const std::string &name = "") {
    return b.arith(o, x, y, name);
  }
  ValueId math(OpKind kind, ValueId x, ValueId y, const std::string &name = "") {
    return b.math({kind, DType::F32, kind == OpKind::Eq ? DType::Bool : DType::F32}, {x, y}, name);
  }
  ValueId f32(double v, const std::string &name = "") { return b.literal(DType::F32, v, name); }
  /// for (i = 0; i < n; ++i) body(i), unrolled: the register arrays stay registers.
  void unrolled(int64_t n, const std::string &name, const std::function<void(ValueId)> &body) {
    ValueId zero = i64(0);
    ValueId end = i64(n);
    ValueId one = i64(1);
    b.forLoop(zero, end, one, name, -1, body);
  }
  /// The first slot of 4-element fragment `n` of row block `mb` (blocks of `perBlock`).
  ValueId fragment(ValueId mb, int64_t perBlock, ValueId n) {
    ValueId first = b.mul(mb, i64(perBlock));
    ValueId index = b.add(first, n);
    return b.mul(index, i64(4));
  }
  /// The byte offset of K/V stage `slot` (i32).
  ValueId stageAt(ValueId slot) {
    ValueId offset = b.mul(slot, i32(stageBytes));
    return b.add(offset, i32(qBytes), "stage");
  }
  /// A local array of `n` f32 set to `init`.
  ValueId registers(int64_t n, ValueId init, const std::string &name) {
    ValueId r = b.localArray(DType::F32, unsigned(n), name);
    unrolled(n, "e", [&](ValueId e) { b.store(r, e, init); });
    return r;
  }

  std::string schedule() const {
    std::ostringstream how;
    if (p.decode) {
      auto count = [](int64_t n, const char *one, const char *many) {
        return std::to_string(n) + " " + (n == 1 ? one : many);
      };
      how << "flash decoding (mma.sync m16n8k16 " << dtypeName(p.dtype) << ", f32 softmax); "
          << count(p.group, "head", "heads") << " x " << count(p.sq, "query", "queries") << " x "
          << p.bc << " keys a tile, " << p.warps << " warps of " << p.keysPerWarp()
          << " keys, K/V in " << p.stages << " stages, " << count(p.splits, "split", "splits")
          << " of " << p.splitKeys << " keys" << (p.splits > 1 ? " combined by the last" : "")
          << (p.causal ? ", causal" : "") << (p.hasMask ? ", additive mask" : "");
      return how.str();
    }
    if (p.specialized) {
      how << "flash attention (wgmma m64nNk16 " << dtypeName(p.dtype) << ", f32 softmax); "
          << p.br() << " queries x " << p.bc << " keys a tile, warp-specialized: a producer "
          << "warpgroup TMA-loads Q and K/V in " << p.stages << " stages for " << p.warps / 4
          << " consumer warpgroups of 64 rows taking turns" << (p.causal ? ", causal" : "")
          << (p.hasMask ? ", additive mask" : "");
      return how.str();
    }
    how << "flash attention (" << (p.wgmma ? "wgmma m64nNk16 " : "mma.sync m16n8k16 ")
        << dtypeName(p.dtype) << ", f32 softmax); " << p.br() << " queries x " << p.bc
        << " keys a tile, " << p.warps << " warps of " << 16 * p.blocks << " rows, Q in "
        << (p.qInRegisters ? "registers" : "shared memory") << ", K/V in " << p.stages << " stages"
        << (p.causal ? ", causal" : "") << (p.hasMask ? ", additive mask" : "");
    return how.str();
  }

  /// for (tile = blockIdx.x; tile < tiles; tile += gridDim.x) body(tile): any grid.
  void eachTile(int64_t tiles, const std::function<void(ValueId)> &body) {
    ValueId first = b.special(kir::Special::CtaidX);
    ValueId step = b.special(kir::Special::NctaidX);
    ValueId count = b.index(tiles);
    b.forLoop(first, count, step, "tile", 0, body);
  }

  /// The warp-specialized schedule (sm_90a; docs/codegen-attention.md section 5): warpgroup 0
  /// is the producer, one thread of which TMA-loads Q and the K/V tiles into their stages, each
  /// completing on its mbarrier; warpgroups 1 and 2 are the consumers, each on its 64 rows of
  /// the block's 128 queries, taking turns on the tensor cores (named barriers 1 and 2) so that
  /// one's softmax runs under the other's GEMMs. A stage is free again once all 256 consumer
  /// threads arrived on its empty barrier. Both sides count the key tiles they went through
  /// (`seen`) and the query tiles (`done`): a stage's slot and a barrier's phase follow from
  /// them across the query tiles of a block.
  void specialized(int64_t tiles) {
    bars = b.sharedArray(DType::I64, unsigned(kBarriers + 4 * p.stages), "bars", 8);
    smem = b.dynamicShared(DType::I8, "smem", 1024);
    ValueId tidWide = b.special(kir::Special::TidX);
    ValueId thread = b.convert(DType::I32, tidWide, "thread");
    ValueId first = i32(1);
    b.ifThenElse(b.less(thread, first), [&] {
      b.mbarrierInit(bars, i64(kQFull), 1);
      b.mbarrierInit(bars, i64(kQEmpty), 256);
      for (int st = 0; st < p.stages; ++st)
        for (int kind = 0; kind < 4; ++kind) // full barriers: the producer's arrival and bytes
          b.mbarrierInit(bars, i64(barrierOf(kind, st)), kind < 2 ? 1 : 256);
      b.mbarrierInitFence();
    });
    b.barrier();
    b.ifThenElse(
        b.less(thread, i32(128)),
        [&] {
          b.setMaxRegisters(24, false);
          b.ifThenElse(b.less(thread, first), [&] { produce(tiles); });
        },
        [&] {
          b.setMaxRegisters(240, true);
          consume(tiles);
        });
  }

  /// Mbarriers: Q full and empty, then per stage K full, V full, K empty, V empty.
  static constexpr int kQFull = 0, kQEmpty = 1, kBarriers = 2;
  static constexpr int kKFull = 0, kVFull = 1, kKEmpty = 2, kVEmpty = 3;
  int barrierOf(int kind, int stage) const { return kBarriers + stage * 4 + kind; }
  /// The element index (i64) of barrier `kind` of the stage `slot` (i64).
  ValueId barrierAt(int kind, ValueId slot) {
    ValueId first = b.mul(slot, i64(4));
    ValueId base = i64(kBarriers + kind);
    return b.add(first, base);
  }

  /// A counter in a register (an i64 local array of one), set to 0.
  ValueId counter(const std::string &name) {
    ValueId c = b.localArray(DType::I64, 1, name);
    ValueId zeroIndex = i64(0);
    b.store(c, zeroIndex, zeroIndex);
    return c;
  }
  void increment(ValueId c) {
    ValueId zeroIndex = i64(0);
    ValueId n = b.load(c, zeroIndex);
    ValueId one = i64(1);
    b.store(c, zeroIndex, b.add(n, one));
  }
  ValueId parityOf(ValueId n) { return templates::phaseParity(b, n); }
  /// The stage slot and its barriers' parity for key tile number `n` (i64) of the block.
  std::pair<ValueId, ValueId> slotOf(ValueId n) { return templates::ringSlot(b, n, p.stages); }

  /// The TMA coordinates (i32, innermost first) of row `row` (i64), column `column`, of operand
  /// `x` in the current batch index: the batch dims its tensor map keeps (Analysis.cpp,
  /// tensorView), last first.
  std::vector<ValueId> tmaCoords(const Operand &x, int64_t column, ValueId row) {
    std::vector<ValueId> at{i32(column), b.convert(DType::I32, row)};
    for (size_t i = p.batch.size(); i-- > 0;)
      if (p.batch[i] > 1 && x.batch[i] != 0)
        at.push_back(b.convert(DType::I32, coords[i]));
    return at;
  }

  /// TMA loads of a tile of `rows` rows of `width` elements of `x` from row `row` (i64) into
  /// shared byte `dst` (i64), one box a 64-column panel, completing on barrier `bar` (i64).
  void loadTile(ValueId map, const Operand &x, int64_t width, int rows, ValueId row, ValueId dst,
                ValueId bar) {
    int panelBytes = rows * rowBytes(width), panels = int(width * 2 / rowBytes(width));
    b.mbarrierExpectTx(bars, bar, unsigned(panels * panelBytes));
    for (int panel = 0; panel < panels; ++panel) {
      ValueId to = b.add(dst, i64(int64_t(panel) * panelBytes));
      b.tensorLoad(smem, to, map, bars, bar, tmaCoords(x, panel * 64, row));
    }
  }

  /// The producer: for each query tile, Q once its space is free, then each key tile's K and V
  /// into the next stage once the consumers freed it.
  void produce(int64_t tiles) {
    ValueId seen = counter("seen"), done = counter("done");
    eachTile(tiles, [&](ValueId tile) {
      ValueId keyTiles = tileBounds(tile);
      ValueId zeroIndex = i64(0);
      ValueId one32 = i32(1), qFull = i64(kQFull), qEmpty = i64(kQEmpty);
      ValueId qParity = parityOf(b.load(done, zeroIndex, 1, "d"));
      b.mbarrierWait(bars, qEmpty, op(IndexOp::Xor, qParity, one32, "free"));
      loadTile(qMap, p.q, p.qkWidth(), p.br(), q0, zeroIndex, qFull);
      ValueId one = i64(1);
      b.forLoop(zeroIndex, keyTiles, one, "kt", 0, [&](ValueId kt) {
        auto [slot, parity] = slotOf(b.load(seen, zeroIndex, 1, "n"));
        ValueId free = op(IndexOp::Xor, parity, one32, "free");
        ValueId first = b.mul(slot, i64(stageBytes));
        ValueId stage = b.add(first, i64(qBytes), "stage");
        ValueId vStage = b.add(stage, i64(kBytes));
        ValueId row = b.mul(kt, i64(p.bc));
        ValueId kEmpty = barrierAt(kKEmpty, slot), kFull = barrierAt(kKFull, slot);
        b.mbarrierWait(bars, kEmpty, free);
        loadTile(kMap, p.k, p.qkWidth(), p.bc, row, stage, kFull);
        ValueId vEmpty = barrierAt(kVEmpty, slot), vFull = barrierAt(kVFull, slot);
        b.mbarrierWait(bars, vEmpty, free);
        loadTile(vMap, p.v, p.vWidth(), p.bc, row, vStage, vFull);
        increment(seen);
      });
      increment(done);
    });
  }

  /// A consumer warpgroup: query tiles as queryTile's, the GEMMs in turn with the other group.
  void consume(int64_t tiles) {
    setUp();
    ValueId group = op(IndexOp::Shr, tid, i32(7), "group");
    mine = b.add(group, i32(1), "turn");
    other = b.arith(IndexOp::Sub, i32(2), group);
    b.ifThenElse(b.less(i32(0), group), [&] { b.barrierArrive(i32(1), 256); });
    seen = counter("seen");
    ValueId done = counter("done");
    eachTile(tiles, [&](ValueId tile) {
      ValueId keyTiles = tileBounds(tile);
      ValueId zeroIndex = i64(0), qFull = i64(kQFull);
      b.mbarrierWait(bars, qFull, parityOf(b.load(done, zeroIndex, 1, "d")));
      freshState();
      pf = b.localArray(DType::I32, unsigned(p.bc / 4), "pf");
      if (p.dvk() > 128) { // O alone holds dv / 2 registers: no room for the next tile's S
        keyLoop(keyTiles, [&](ValueId kt, Hiding hiding) {
          ValueId n = b.load(seen, zeroIndex, 1, "n");
          scoresInTurn(n, {});
          softmax(kt, hiding);
          packAll(pf);
          issueValuesOf(n);
          valuesDone(n);
          increment(seen);
        });
      } else {
        overlapped(keyTiles);
      }
      b.mbarrierArrive(bars, i64(kQEmpty));
      store();
      increment(done);
    });
    // Group 1 arrived once more than group 0 waited (its first arrival lets group 0 start).
    b.ifThenElse(b.less(group, i32(1)), [&] { b.barrier(i32(1), 256); });
  }

  /// The key tiles of a query tile, tile j's scores issued with tile j - 1's values, so that j's
  /// softmax runs under them: the first tile's scores alone, the last tile's values after the
  /// loop (FlashAttention-3's intra-warpgroup overlap). O is rescaled once its GEMM is done.
  void overlapped(ValueId keyTiles) {
    alphas = b.localArray(DType::F32, 2, "alphas");
    ValueId zeroIndex = i64(0), one = i64(1);
    b.ifThenElse(b.less(zeroIndex, keyTiles), [&] {
      scoresInTurn(b.load(seen, zeroIndex, 1, "n"), {});
      softmax(zeroIndex, Hiding::WhereNeeded);
      rescaleDeferred();
      packAll(pf);
      increment(seen);
      keyLoop(one, keyTiles, [&](ValueId kt, Hiding hiding) {
        ValueId n = b.load(seen, zeroIndex, 1, "n");
        ValueId before = b.arith(IndexOp::Sub, n, one);
        scoresInTurn(n, [&] { issueValuesOf(before); });
        softmax(kt, hiding);
        valuesDone(before);
        rescaleDeferred();
        packAll(pf);
        increment(seen);
      });
      ValueId n = b.load(seen, zeroIndex, 1, "n");
      ValueId last = b.arith(IndexOp::Sub, n, one);
      issueValuesOf(last);
      valuesDone(last);
    });
    alphas = kir::kNoValue;
  }

  /// Key tile n's stage (i32 byte offset), slot and parity.
  std::tuple<ValueId, ValueId, ValueId> stageOf(ValueId n) {
    auto [slot, parity] = slotOf(n);
    return {stageAt(b.convert(DType::I32, slot)), slot, parity};
  }

  /// Key tile n's scores, issued in this group's turn with `alsoIssue` (the values of the tile
  /// before it) after them; waits for the scores and frees K's stage.
  void scoresInTurn(ValueId n, const std::function<void()> &alsoIssue) {
    auto [stage, slot, parity] = stageOf(n);
    b.mbarrierWait(bars, barrierAt(kKFull, slot), parity);
    b.barrier(mine, 256);
    issueScores(stage);
    if (alsoIssue)
      alsoIssue();
    b.barrierArrive(other, 256);
    b.wgmmaWait(alsoIssue ? 1 : 0, {s});
    b.mbarrierArrive(bars, barrierAt(kKEmpty, slot));
  }

  /// Issues O += P·V of key tile n once its V landed, P's fragments in pf.
  void issueValuesOf(ValueId n) {
    auto [stage, slot, parity] = stageOf(n);
    b.mbarrierWait(bars, barrierAt(kVFull, slot), parity);
    issueValues(b.add(stage, i32(kBytes)), pf);
  }

  /// Waits for O += P·V of key tile n and frees V's stage.
  void valuesDone(ValueId n) {
    b.wgmmaWait(0, {o});
    b.mbarrierArrive(bars, barrierAt(kVEmpty, slotOf(n).first));
  }

  /// The thread's place and the lane offsets of its fragments, the literals of the softmax.
  void setUp() {
    if (!p.specialized)
      smem = b.dynamicShared(DType::I8, "smem", p.wgmma ? 1024 : 128);
    if (p.wgmma) { // rows swizzled over their bytes, 8-row groups 8 rows apart; V's panels
      int qk = rowBytes(p.qkWidth()), v = rowBytes(p.vWidth());
      rowMajor = b.index(kir::Builder::wgmmaLayout(qk, 8 * qk, 16));
      columnMajor = b.index(kir::Builder::wgmmaLayout(v, 8 * v, p.bc * v));
      b.rename(rowMajor, "kMajor");
      b.rename(columnMajor, "mnMajor");
    }
    ValueId tidWide = b.special(kir::Special::TidX);
    tid = b.convert(DType::I32, tidWide, "tid");
    if (p.specialized) // the consumers' threads, from 0
      tid = b.arith(IndexOp::Sub, tid, i32(128), "tid");
    lane = op(IndexOp::And, tid, i32(31), "lane");
    ValueId warp = op(IndexOp::Shr, tid, i32(5), "warp");
    if (p.decode) { // every warp has all the rows, and its own keys of each tile
      warpRow = i32(0);
      warpKey = b.mul(warp, i32(p.keysPerWarp()), "warpKey");
    } else {
      warpRow = b.mul(warp, i32(16 * p.blocks), "warpRow");
    }
    if (p.wgmma && p.warps > 4) { // warpgroup g's A rows start 64 g rows into Q's tile (panels)
      ValueId group = op(IndexOp::Shr, warp, i32(2));
      qGroup = b.mul(group, i32(64 * rowBytes(p.qkWidth())), "qGroup");
    }
    ValueId low7 = op(IndexOp::And, lane, i32(7));
    ValueId high = op(IndexOp::Shr, lane, i32(4));
    ValueId bit3 = op(IndexOp::Shr, lane, i32(3));
    bit3 = op(IndexOp::And, bit3, i32(1));
    // Q (A): rows warpRow + lane % 16, chunk lane / 16; K (B, non-trans): keys lane % 8 + 8 *
    // (lane / 16), chunk bit 3; V (B, trans): keys lane % 8 + 8 * bit 3, chunk lane / 16.
    ValueId qRow = b.add(warpRow, op(IndexOp::And, lane, i32(15)));
    qLane = templates::swizzledChunk(b, qRow, high, int(p.qkWidth() / 8));
    ValueId kRow = b.add(low7, b.mul(high, i32(8)));
    kLane = templates::swizzledChunk(b, kRow, bit3, int(p.qkWidth() / 8));
    ValueId vRow = b.add(low7, b.mul(bit3, i32(8)));
    vLane = templates::swizzledChunk(b, vRow, high, int(p.vWidth() / 8));
    b.rename(qLane, "qLane");
    b.rename(kLane, "kLane");
    b.rename(vLane, "vLane");
    laneRow = op(IndexOp::Shr, lane, i32(2), "laneRow");
    quadLane = op(IndexOp::And, lane, i32(3));
    laneCol = b.mul(quadLane, i32(2), "laneCol");
    double c = p.scale * std::numbers::log2e;
    scaleLog2 = f32(c, "scaleLog2");
    log2e = f32(std::numbers::log2e, "log2e");
    minusInf = f32(-std::numeric_limits<double>::infinity(), "minusInf");
    lowest = f32(-std::numeric_limits<float>::max(), "lowest");
    zero = f32(0, "zero");
  }

  /// 1 / l, or 0 for a row with no visible key (l == 0).
  ValueId reciprocal(ValueId l) {
    ValueId one = f32(1);
    ValueId inverse = math(OpKind::Div, one, l);
    ValueId none = math(OpKind::Eq, l, zero);
    return b.select(none, zero, inverse, "inv");
  }

  /// The i64 element offsets of the current batch index `z` (decode: unit, the grouped dims left
  /// out) in q, k, v, o and the mask.
  void batchOffsets(ValueId z) {
    coords.assign(p.batch.size(), kir::kNoValue);
    ValueId rest = z;
    for (size_t i = p.batch.size(); i-- > 0;) {
      if (p.batch[i] == 1 || (p.decode && p.grouped[i]))
        continue;
      ValueId size = i64(p.batch[i]);
      coords[i] = op(IndexOp::Rem, rest, size);
      rest = op(IndexOp::Div, rest, size);
    }
    auto offset = [&](const Operand &x, const std::string &name) {
      ValueId zero = i64(0);
      ValueId at = zero;
      for (size_t i = 0; i < coords.size(); ++i)
        if (coords[i] != kir::kNoValue && x.batch[i] != 0)
          at = b.add(at, b.mul(coords[i], i64(x.batch[i])));
      if (x.offset != 0) // q, k and v sliced from one tensor
        at = b.add(at, i64(x.offset));
      // Named only when it is a value of its own (not the constant 0 or a coordinate).
      if (at != zero && std::find(coords.begin(), coords.end(), at) == coords.end())
        b.rename(at, name);
      return at;
    };
    qBase = offset(p.q, "qBase");
    kBase = offset(p.k, "kBase");
    vBase = offset(p.v, "vBase");
    oBase = offset(p.o, "oBase");
    if (p.hasMask)
      maskBase = offset(p.mask, "maskBase");
  }

  /// The element offset of row `row` (i64) of a unit in `x`, past the unit's first: a query's for
  /// one head, for decode query row % Sq of the grouped head row / Sq (the grouped dims
  /// row-major).
  ValueId rowOffset(const Operand &x, ValueId row) {
    if (!p.decode)
      return b.mul(row, i64(x.row));
    ValueId query = queryIndex(row);
    ValueId at = b.mul(query, i64(x.row));
    ValueId rest = p.sq == 1 ? row : op(IndexOp::Div, row, i64(p.sq));
    for (size_t i = p.batch.size(); i-- > 0;) {
      if (!p.grouped[i])
        continue;
      ValueId size = i64(p.batch[i]);
      ValueId coord = op(IndexOp::Rem, rest, size);
      rest = op(IndexOp::Div, rest, size);
      if (x.batch[i] != 0)
        at = b.add(at, b.mul(coord, i64(x.batch[i])));
    }
    return at;
  }

  /// The query (i64) of row `row` of a unit.
  ValueId queryIndex(ValueId row) {
    if (!p.decode || p.group == 1)
      return row;
    return p.sq == 1 ? i64(0) : op(IndexOp::Rem, row, i64(p.sq));
  }

  /// Whether the mask's terms change from one row of a unit to the next.
  bool maskAlongRows() const {
    bool along = p.mask.row != 0;
    for (size_t i = 0; p.decode && i < p.batch.size(); ++i)
      along = along || (p.grouped[i] && p.mask.batch[i] != 0);
    return along;
  }

  /// cp.async of `rows` rows of `width` elements from row `first` (i64) of `ptr`, row `at` from
  /// element `rowStart(at)`, into the swizzled tile of rows of `tileWidth` at byte `dst` (i32);
  /// rows at or past `limit`, and a row's columns from `width` up to a multiple of 16, are zeros.
  void copyTile(ValueId ptr, const std::function<ValueId(ValueId)> &rowStart, int64_t width,
                int64_t tileWidth, int rows, ValueId first, int64_t limit, ValueId dst) {
    int chunks = int((width + 15) / 16 * 2), filled = int(width / 8);
    // Chunk `chunk` (i32; its first element `column`, i64) of tile row `row` (i32).
    auto copyChunk = [&](ValueId row, ValueId chunk, ValueId column) {
      ValueId at = b.add(first, to64(row));
      ValueId inside = b.less(at, i64(limit));
      if (filled % 2 != 0) // the head dim ends in the middle of a k16 step
        inside = op(IndexOp::And, inside, b.less(chunk, i32(filled)));
      ValueId src = b.add(rowStart(at), column);
      ValueId to = b.add(dst, tileOffset(row, chunk, tileWidth, rows));
      b.copyAsync(smem, to, ptr, src, inside);
    };
    int threads = p.threads();
    if (threads % chunks == 0 && rows % (threads / chunks) == 0) {
      // Whole rows a pass: the chunk is the thread's throughout.
      int step = threads / chunks;
      ValueId chunk = op(IndexOp::Rem, tid, i32(chunks));
      ValueId row0 = op(IndexOp::Div, tid, i32(chunks));
      ValueId column = to64(b.mul(chunk, i32(8)));
      unrolled(rows / step, "j", [&](ValueId j) {
        ValueId j32 = b.convert(DType::I32, j);
        copyChunk(b.add(row0, b.mul(j32, i32(step))), chunk, column);
      });
      return;
    }
    int64_t total = int64_t(rows) * chunks, passes = (total + threads - 1) / threads;
    unrolled(passes, "j", [&](ValueId j) {
      ValueId j32 = b.convert(DType::I32, j);
      ValueId flat = b.add(tid, b.mul(j32, i32(threads)));
      auto copy = [&] {
        ValueId row = op(IndexOp::Div, flat, i32(chunks));
        ValueId chunk = op(IndexOp::Rem, flat, i32(chunks));
        copyChunk(row, chunk, to64(b.mul(chunk, i32(8))));
      };
      if (total % threads == 0)
        copy();
      else
        b.ifThenElse(b.less(flat, i32(total)), copy);
    });
  }

  /// The byte offset of fragment lane address `lane` moved `slice` k16 (or n16) steps along a
  /// swizzled row of `width` elements: 32 bytes a step, the swizzle XORed within 128-byte
  /// groups (and rows of a power of two chunks XOR the step in whole).
  ValueId alongRow(ValueId lane, ValueId slice, int64_t width) {
    ValueId s32 = b.convert(DType::I32, slice);
    if ((width & (width - 1)) == 0)
      return op(IndexOp::Xor, lane, b.mul(s32, i32(32)));
    ValueId inGroup = op(IndexOp::And, s32, i32(3));
    ValueId swizzled = op(IndexOp::Xor, lane, b.mul(inGroup, i32(32)));
    ValueId group = op(IndexOp::Shr, s32, i32(2));
    return b.add(swizzled, b.mul(group, i32(128)));
  }

  /// `rows`, a byte offset into a tile of rows of `width` elements, moved to this warp's keys
  /// (decode).
  ValueId warpRows(ValueId rows, int64_t width) {
    if (warpKey == kir::kNoValue)
      return rows;
    return b.add(rows, b.mul(warpKey, i32(int(width) * 2)));
  }

  /// The bytes of a shared tile's row of `width` elements: wgmma reads rows of at most 128 bytes,
  /// so a wider one is split into 128-byte panels, one tile of `rows` rows after the other.
  int rowBytes(int64_t width) const {
    return p.wgmma ? std::min(int(width) * 2, 128) : int(width) * 2;
  }

  /// The byte offset of chunk `chunk` of row `row` (i32) in a tile of `rows` rows of `width`
  /// elements: its panel, then its swizzled place in the panel's row.
  ValueId tileOffset(ValueId row, ValueId chunk, int64_t width, int rows) {
    int perRow = rowBytes(width) / 16;
    if (perRow == width / 8)
      return templates::swizzledChunk(b, row, chunk, perRow);
    ValueId inPanel = op(IndexOp::And, chunk, i32(perRow - 1));
    ValueId swizzled = templates::swizzledChunk(b, row, inPanel, perRow);
    ValueId panel = op(IndexOp::Div, chunk, i32(perRow));
    ValueId panelStart = b.mul(panel, i32(rows * rowBytes(width)));
    return b.add(panelStart, swizzled);
  }

  /// The byte offset in a K-major tile of `rows` rows of `width` elements of the 16 columns
  /// from 16 kk (the wgmma's k slice kk): 32 bytes further along a row, or the next panel.
  int kSlice(int kk, int64_t width, int rows) const {
    int along = 32 * kk, row = rowBytes(width);
    return along / row * rows * row + along % row;
  }

  /// Starts copying key tile `t` (i64) into its stage.
  void loadKeys(ValueId t) {
    ValueId slot = b.convert(DType::I32, op(IndexOp::Rem, t, i64(p.stages)));
    ValueId stage = stageAt(slot);
    ValueId first = b.mul(t, i64(p.bc));
    if (keyStart != kir::kNoValue) // a decode's split
      first = b.add(keyStart, first);
    auto keyRow = [&](ValueId base, int64_t stride) {
      return [=, this](ValueId at) { return b.add(base, b.mul(at, i64(stride))); };
    };
    copyTile(key, keyRow(kBase, p.k.row), p.d, p.qkWidth(), p.bc, first, p.sk, stage);
    ValueId vStage = b.add(stage, i32(kBytes));
    copyTile(value, keyRow(vBase, p.v.row), p.dv, p.vWidth(), p.bc, first, p.sk, vStage);
  }

  // Note [Causal tile order]
  // Causal, query tile qt sees qt + 1 key tiles: the blocks' work differs up to the number of
  // query tiles. The GPU starts blocks in the order of their index, each on an SM that a block
  // left, so the order is a list schedule: longest first leaves the last blocks short. Taking
  // each head's query tiles from the longest (as until 2026-11-28) puts the longest tiles of the
  // last heads into the last wave instead: LLaMA's 32 heads of 16 query tiles on 132 SMs end
  // after 43 tiles' time where 34 is the least (a simulation of the list schedule). So the tile
  // index runs over the batch and heads fastest, from the longest query tile to the shortest.
  // Measured on the H200 (bench/RESULTS.md, 2026-11-28): LLaMA's attention (GQA, 2048 tokens).

  /// Sets q0 and the batch offsets of query tile `tile` (i64; decode: a unit's split) and returns
  /// how many key tiles it sees.
  ValueId tileBounds(ValueId tile) {
    ValueId keys = kir::kNoValue;
    if (p.decode) { // unit tile / splits, keys from split·splitKeys
      split = op(IndexOp::Rem, tile, i64(p.splits), "split");
      unit = op(IndexOp::Div, tile, i64(p.splits), "unit");
      keyStart = b.mul(split, i64(p.splitKeys), "keyStart");
      q0 = i64(0);
      batchOffsets(unit);
      ValueId end = b.add(keyStart, i64(p.splitKeys));
      keys = b.math({OpKind::Min, DType::I64, DType::I64}, {end, i64(p.keys())}, "");
      keys = b.arith(IndexOp::Sub, keys, keyStart, "keys");
    } else {
      // A head's query tiles one after the other; causal, every head's longest query tile
      // first, then every head's next (Note [Causal tile order]).
      ValueId qt, z;
      if (p.causal) {
        ValueId rank = op(IndexOp::Div, tile, i64(p.batchCount()), "rank");
        qt = op(IndexOp::Sub, i64(p.queryTiles() - 1), rank);
        z = op(IndexOp::Rem, tile, i64(p.batchCount()), "z");
      } else {
        qt = op(IndexOp::Rem, tile, i64(p.queryTiles()));
        z = op(IndexOp::Div, tile, i64(p.queryTiles()), "z");
      }
      q0 = b.mul(qt, i64(p.br()), "q0");
      batchOffsets(z);
      keys = i64(p.sk);
    }
    if (p.causal && !p.decode) { // keys past the tile's last query are never visible
      ValueId last = b.add(q0, i64(p.br()));
      keys = b.math({OpKind::Min, DType::I64, DType::I64}, {last, keys}, "keys");
    }
    ValueId roundedUp = b.add(keys, i64(p.bc - 1));
    return op(IndexOp::Div, roundedUp, i64(p.bc), "keyTiles");
  }

  /// Runs keyTile(kt, hiding) for each key tile before `keyTiles` (i64): causal on sm_90a in two
  /// loops, the tiles that hide no key first.
  void keyLoop(ValueId keyTiles, const std::function<void(ValueId, Hiding)> &keyTile) {
    keyLoop(i64(0), keyTiles, keyTile);
  }
  /// The same from key tile `from` (i64).
  void keyLoop(ValueId from, ValueId keyTiles,
               const std::function<void(ValueId, Hiding)> &keyTile) {
    ValueId one = i64(1);
    if (p.wgmma && p.causal && p.dvk() <= 128) {
      // The tiles before `plain` hide no key (causal: none after the tile's first query, none
      // past Sk) and run without the code that hides keys, the diagonal ones with it: NVRTC
      // unswitched the one loop, LLVM did not (causal d128: 9% slower, 206 registers to 190).
      kir::MathOp min{OpKind::Min, DType::I64, DType::I64};
      ValueId afterQ0 = b.add(q0, i64(1));
      ValueId firstHidden = b.math(min, {afterQ0, i64(p.sk)}, "firstHidden");
      ValueId wholeTiles = op(IndexOp::Div, firstHidden, i64(p.bc));
      kir::MathOp max{OpKind::Max, DType::I64, DType::I64};
      ValueId plain = b.math(min, {wholeTiles, keyTiles}, "plain");
      if (from != i64(0))
        plain = b.math(max, {plain, from}, "plain");
      b.forLoop(from, plain, one, "kt", 0, [&](ValueId kt) { keyTile(kt, Hiding::Never); });
      b.forLoop(plain, keyTiles, one, "kt", 0, [&](ValueId kt) { keyTile(kt, Hiding::Always); });
    } else {
      b.forLoop(from, keyTiles, one, "kt", 0,
                [&](ValueId kt) { keyTile(kt, Hiding::WhereNeeded); });
    }
  }

  /// The softmax state and O of the block's rows, fresh.
  void freshState() {
    o = registers(p.blocks * p.dvk() / 2, zero, "o");
    rowMax = registers(2 * p.blocks, minusInf, "rowMax");
    rowSum = registers(2 * p.blocks, zero, "rowSum");
  }

  /// Query tile `tile` (i64) on every thread of the block: the copies by cp.async.
  void queryTile(ValueId tile) {
    ValueId keyTiles = tileBounds(tile);
    ValueId qRegion = i32(0);
    auto queryRowStart = [&](ValueId at) { return b.add(qBase, rowOffset(p.q, at)); };
    copyTile(q, queryRowStart, p.d, p.qkWidth(), p.br(), q0, p.rows(), qRegion);
    b.commitAsync();
    for (int t = 0; t + 1 < p.stages; ++t) { // the first stages - 1 key tiles
      ValueId first = i64(t);
      b.ifThenElse(b.less(first, keyTiles), [&] { loadKeys(first); });
      b.commitAsync();
    }
    arrived();
    loadQueryFragments();
    freshState();
    auto keyTile = [&](ValueId kt, Hiding hiding) {
      ValueId next = b.add(kt, i64(p.stages - 1), "next");
      b.ifThenElse(b.less(next, keyTiles), [&] { loadKeys(next); });
      b.commitAsync();
      arrived();
      ValueId slot = b.convert(DType::I32, op(IndexOp::Rem, kt, i64(p.stages)));
      ValueId stage = stageAt(slot);
      scores(stage);
      softmax(kt, hiding);
      accumulate(b.add(stage, i32(kBytes)));
      b.barrier(); // the next tile's copy reuses this stage
    };
    keyLoop(keyTiles, keyTile);
    if (p.decode)
      merge();
    else
      store();
    b.waitAsync(0);
    b.barrier(); // the next query tile reuses the shared memory
  }

  /// Waits until the oldest copies in flight (Q, or this key tile's K and V) have landed, and
  /// publishes them to the block (and to wgmma's asynchronous proxy).
  void arrived() {
    b.waitAsync(unsigned(p.stages - 1));
    if (p.wgmma)
      b.proxyFence();
    b.barrier();
  }

  /// Q's A fragment of row block `mb`, k slice `kk` (i64 counters), from shared memory.
  ValueId queryFragment(ValueId mb, ValueId kk) {
    ValueId swizzled = alongRow(qLane, kk, p.qkWidth());
    ValueId mb32 = b.convert(DType::I32, mb);
    ValueId at = b.add(swizzled, b.mul(mb32, i32(16 * int(p.qkWidth()) * 2)));
    return b.loadMatrix(smem, at, false, "qf");
  }

  /// Q's A fragments into registers (blocks x d/16 x 4 words), when they stay there.
  void loadQueryFragments() {
    if (!p.qInRegisters)
      return;
    qf = b.localArray(DType::I32, unsigned(p.blocks * p.dk() / 4), "qf");
    unrolled(p.blocks, "mb", [&](ValueId mb) {
      unrolled(p.dk() / 16, "kk", [&](ValueId kk) {
        ValueId frag = queryFragment(mb, kk);
        ValueId slot = fragment(mb, p.dk() / 16, kk);
        b.store(qf, slot, frag, 4);
      });
    });
  }

  /// S = Q·Kᵀ for the key tile in the stage at byte `stage`: blocks x 8 n8 tiles of 4 f32. With
  /// wgmma, `issued` runs once the GEMMs are issued, before waiting for them.
  void scores(ValueId stage, const std::function<void()> &issued = {}) {
    if (p.wgmma) {
      issueScores(stage);
      if (issued)
        issued();
      b.wgmmaWait(0, {s});
      return;
    }
    s = registers(p.blocks * p.keysPerWarp() / 2, zero, "s");
    unrolled(p.dk() / 16, "kk", [&](ValueId kk) {
      // This k slice's Q fragments: in registers, or read now (blocks x 4 words).
      ValueId qk = qf;
      std::function<ValueId(ValueId)> qSlot = [&](ValueId mb) {
        return fragment(mb, p.dk() / 16, kk);
      };
      if (!p.qInRegisters) {
        qk = b.localArray(DType::I32, unsigned(4 * p.blocks), "qk");
        unrolled(p.blocks, "mb", [&](ValueId mb) {
          ValueId frag = queryFragment(mb, kk);
          b.store(qk, b.mul(mb, i64(4)), frag, 4);
        });
        qSlot = [&](ValueId mb) { return b.mul(mb, i64(4)); };
      }
      unrolled(p.keysPerWarp() / 16, "nj", [&](ValueId nj) {
        ValueId swizzled = alongRow(kLane, kk, p.qkWidth());
        ValueId nj32 = b.convert(DType::I32, nj);
        ValueId rows = warpRows(b.mul(nj32, i32(16 * int(p.qkWidth()) * 2)), p.qkWidth());
        ValueId at = b.add(b.add(stage, swizzled), rows);
        ValueId frag = b.loadMatrix(smem, at, false, "kf");
        mmaTilePair(frag, "kfs", s, p.keysPerWarp() / 8, nj,
                    [&](ValueId mb) { return b.load(qk, qSlot(mb), 4); });
      });
    });
  }

  /// Issues S = Q·Kᵀ for the key tile at byte `stage` as the warpgroup's wgmmas (one group).
  /// Its first k slice overwrites S: the registers are neither zeroed nor read.
  void issueScores(ValueId stage) {
    s = b.localArray(DType::F32, unsigned(p.keysPerWarp() / 2), "s");
    b.wgmmaFence({});
    for (int kk = 0; kk < p.dk() / 16; ++kk) {
      ValueId qAt = i32(kSlice(kk, p.qkWidth(), p.br()));
      if (qGroup != kir::kNoValue)
        qAt = b.add(qAt, qGroup);
      ValueId kAt = b.add(stage, i32(kSlice(kk, p.qkWidth(), p.bc)));
      b.wgmma(p.dtype, unsigned(p.bc), s, {smem, qAt, rowMajor}, {smem, kAt, rowMajor}, false,
              kk == 0 ? kir::Accumulate::Overwrite : kir::Accumulate::Add);
    }
    b.wgmmaCommit();
  }

  /// P's A fragments (bc / 4 words) into `pf`, from the probabilities in S.
  void packAll(ValueId pf) {
    unrolled(p.bc / 16, "kk", [&](ValueId kk) {
      ValueId first = b.mul(kk, i64(8));
      packProbabilities(first, pf, b.mul(kk, i64(4)));
    });
  }

  /// Issues O += P·V for the value tile at byte `stage`, P's fragments in `pf` (one group).
  void issueValues(ValueId stage, ValueId pf) {
    b.wgmmaFence({o, pf});
    for (int kk = 0; kk < p.bc / 16; ++kk) {
      ValueId a = b.load(pf, i64(4 * kk), 4);
      ValueId vAt = b.add(stage, i32(16 * kk * rowBytes(p.vWidth())));
      b.wgmma(p.dtype, unsigned(p.dvk()), o, a, {smem, vAt, columnMajor}, true);
    }
    b.wgmmaCommit();
  }

  /// The query row (i64) of this thread's row slot `mb`, `h` (i64 loop counters).
  ValueId queryRow(ValueId mb, ValueId h) {
    ValueId blockRow = b.mul(mb, i64(16));
    ValueId inWarp = b.add(blockRow, b.mul(h, i64(8)));
    ValueId row = b.add(to64(b.add(warpRow, laneRow)), inWarp);
    return b.add(q0, row, "row");
  }

  /// The mask's term of score (row, key) in log2 units, saturated: -inf stays -inf, a finite
  /// mask stays finite. Rows and keys past the ends read the last ones (their scores go anyway);
  /// kNoValue for a row or key the mask does not vary along.
  ValueId maskTerm(ValueId row, ValueId key) {
    kir::MathOp min{OpKind::Min, DType::I64, DType::I64};
    ValueId at = maskBase;
    if (row != kir::kNoValue && maskAlongRows()) {
      ValueId end = i64(p.rows() - 1);
      ValueId clamped = b.math(min, {row, end}, "");
      at = b.add(at, rowOffset(p.mask, clamped));
    }
    if (key != kir::kNoValue && p.mask.col != 0) {
      ValueId end = i64(p.sk - 1);
      ValueId clamped = b.math(min, {key, end}, "");
      at = b.add(at, b.mul(clamped, i64(p.mask.col)));
    }
    ValueId raw = b.load(mask, at);
    ValueId m = b.widen(p.maskType, raw, "m");
    ValueId scaled = math(OpKind::Mul, m, log2e);
    ValueId bounded = math(OpKind::Max, scaled, lowest);
    ValueId isMinusInf = math(OpKind::Eq, m, minusInf);
    return b.select(isMinusInf, minusInf, bounded, "mu");
  }

  /// body(slot of s, key, column) for each of this thread's scores of row slot (mb, h) in the key
  /// tile from k0: columns n * 2 + e of its bc / 8 n8 tiles.
  void eachScore(ValueId mb, ValueId h, ValueId k0,
                 const std::function<void(ValueId, ValueId, ValueId)> &body) {
    unrolled(p.keysPerWarp() / 8, "n", [&](ValueId n) {
      unrolled(2, "e", [&](ValueId e) {
        ValueId tileSlot = fragment(mb, p.keysPerWarp() / 8, n);
        ValueId slot = b.add(b.add(tileSlot, b.mul(h, i64(2))), e);
        ValueId inTile = b.add(b.mul(n, i64(8)), e);
        ValueId col = b.add(to64(laneCol), inTile);
        if (warpKey != kir::kNoValue)
          col = b.add(col, to64(warpKey));
        ValueId key = b.add(k0, col, "key");
        ValueId column = b.add(b.mul(n, i64(2)), e);
        body(slot, key, column);
      });
    });
  }

  /// Whether the scores stay unscaled until the exponent, t = s · scale · log2 e - m being one
  /// fma (FlashAttention's form): without a mask, for a positive scale (the largest score is
  /// then the largest scaled). Otherwise t = s · scale · log2 e + mask term goes in place first.
  bool rawScores() const { return !p.hasMask && p.scale > 0; }

  /// The softmax of the key tile kt: scores in log2 units (t = s · scale · log2 e + mask term),
  /// keys hidden (-inf) as `hiding` says; the new running max, the rescaling of O and of the row
  /// sums, and P = 2^(t - max) in place of S.
  void softmax(ValueId kt, Hiding hiding) {
    ValueId k0 = b.mul(kt, i64(p.bc), "k0");
    if (keyStart != kir::kNoValue)
      k0 = b.add(keyStart, k0, "k0");
    ValueId needsMask = kir::kNoValue;
    if (hiding == Hiding::WhereNeeded) {
      ValueId tileEnd = b.add(k0, i64(p.bc));
      // A key past Sk, or (causal) after the tile's first query, is in the tile.
      ValueId firstHidden = i64(p.sk);
      if (p.causal) {
        ValueId afterQ0 = b.add(q0, i64(1));
        firstHidden = b.math({OpKind::Min, DType::I64, DType::I64}, {afterQ0, firstHidden}, "");
      }
      needsMask = b.less(firstHidden, tileEnd);
    }
    // A mask that does not vary along the queries (a padding mask): its terms once a tile.
    ValueId keyTerms = kir::kNoValue;
    if (p.hasMask && !maskAlongRows()) {
      keyTerms = b.localArray(DType::F32, p.keysPerWarp() / 4, "mu");
      ValueId zeroIndex = i64(0);
      eachScore(zeroIndex, zeroIndex, k0, [&](ValueId, ValueId key, ValueId column) {
        ValueId mu = maskTerm(kir::kNoValue, key);
        b.store(keyTerms, column, mu);
      });
    }
    unrolled(p.blocks, "mb", [&](ValueId mb) {
      unrolled(2, "h", [&](ValueId h) {
        ValueId row = queryRow(mb, h);
        ValueId rowTerm = kir::kNoValue; // a mask that does not vary along the keys
        if (p.hasMask && maskAlongRows() && p.mask.col == 0)
          rowTerm = maskTerm(row, kir::kNoValue);
        if (p.hasMask) // scores in log2 units now; without a mask in the exponent (rawScores)
          eachScore(mb, h, k0, [&](ValueId slot, ValueId key, ValueId column) {
            ValueId x = b.load(s, slot);
            ValueId t = math(OpKind::Mul, x, scaleLog2, "t");
            ValueId mu = keyTerms != kir::kNoValue  ? b.load(keyTerms, column)
                         : rowTerm != kir::kNoValue ? rowTerm
                                                    : maskTerm(row, key);
            b.store(s, slot, math(OpKind::Add, t, mu, "t"));
          });
        else if (!rawScores())
          eachScore(mb, h, k0, [&](ValueId slot, ValueId, ValueId) {
            ValueId x = b.load(s, slot);
            b.store(s, slot, math(OpKind::Mul, x, scaleLog2, "t"));
          });
        auto hide = [&] {
          eachScore(mb, h, k0, [&](ValueId slot, ValueId key, ValueId) {
            ValueId visible = b.less(key, i64(p.sk));
            if (p.causal) {
              ValueId query = queryIndex(row);
              ValueId notAfter = b.less(key, b.add(query, i64(1)));
              visible = op(IndexOp::And, visible, notAfter);
            }
            ValueId t = b.load(s, slot);
            ValueId masked = b.select(visible, t, minusInf);
            b.store(s, slot, masked);
          });
        };
        if (hiding == Hiding::WhereNeeded)
          b.ifThenElse(needsMask, hide);
        else if (hiding == Hiding::Always)
          hide();
        ValueId rowSlot = b.add(b.mul(mb, i64(2)), h);
        ValueId base = updateMax(mb, h, k0, rowSlot);
        exponentiate(mb, h, k0, rowSlot, base);
      });
    });
  }

  /// The running max of row slot `rowSlot` after this tile (max.NaN over the quad's scores), O
  /// and the row sum rescaled to it; returns the exponent base: the max, or 0 while it is -inf
  /// (so that -inf - -inf never happens).
  ValueId updateMax(ValueId mb, ValueId h, ValueId k0, ValueId rowSlot) {
    ValueId most = b.localArray(DType::F32, 1, "most");
    ValueId zeroIndex = i64(0);
    b.store(most, zeroIndex, minusInf);
    eachScore(mb, h, k0, [&](ValueId slot, ValueId, ValueId) {
      ValueId t = b.load(s, slot);
      ValueId m = b.load(most, zeroIndex);
      ValueId larger = math(OpKind::Max, m, t);
      b.store(most, zeroIndex, larger);
    });
    ValueId tileMax = b.load(most, zeroIndex);
    if (rawScores()) // the scale is positive: the largest score scaled is the largest scaled
      tileMax = math(OpKind::Mul, tileMax, scaleLog2);
    for (int64_t d : {1, 2}) {
      ValueId other = b.shuffle(kir::ShuffleMode::Xor, tileMax, i64(d));
      tileMax = math(OpKind::Max, tileMax, other);
    }
    ValueId old = b.load(rowMax, rowSlot);
    ValueId now = math(OpKind::Max, old, tileMax, "max");
    b.store(rowMax, rowSlot, now);
    ValueId empty = math(OpKind::Eq, now, minusInf);
    ValueId base = b.select(empty, zero, now, "base");
    ValueId drop = math(OpKind::Sub, old, base);
    ValueId alpha = b.exp2(drop, "alpha");
    ValueId oldSum = b.load(rowSum, rowSlot);
    ValueId scaledSum = math(OpKind::Mul, oldSum, alpha);
    b.store(rowSum, rowSlot, scaledSum);
    if (alphas != kir::kNoValue) // O is in flight: rescaled once its GEMM is done
      b.store(alphas, rowSlot, alpha);
    else
      scaleRow(mb, h, alpha);
    return base;
  }

  /// O's elements of this thread in row slot (mb, h) times `alpha`.
  void scaleRow(ValueId mb, ValueId h, ValueId alpha) {
    unrolled(p.dvk() / 8, "n", [&](ValueId n) {
      unrolled(2, "e", [&](ValueId e) {
        ValueId tileSlot = fragment(mb, p.dvk() / 8, n);
        ValueId slot = b.add(b.add(tileSlot, b.mul(h, i64(2))), e);
        ValueId x = b.load(o, slot);
        ValueId y = math(OpKind::Mul, x, alpha);
        b.store(o, slot, y);
      });
    });
  }

  /// O rescaled by the factors the last softmax left in `alphas`.
  void rescaleDeferred() {
    unrolled(p.blocks, "mb", [&](ValueId mb) {
      unrolled(2, "h", [&](ValueId h) {
        ValueId rowSlot = b.add(b.mul(mb, i64(2)), h);
        scaleRow(mb, h, b.load(alphas, rowSlot, 1, "alpha"));
      });
    });
  }

  /// P = 2^(t - base) in place of the scores of row slot `rowSlot`, added to its row sum (this
  /// thread's part: the quad sums once, in the epilogue).
  void exponentiate(ValueId mb, ValueId h, ValueId k0, ValueId rowSlot, ValueId base) {
    eachScore(mb, h, k0, [&](ValueId slot, ValueId, ValueId) {
      ValueId t = b.load(s, slot);
      if (rawScores()) // s · scale · log2 e - base: one fma
        t = math(OpKind::Mul, t, scaleLog2, "t");
      ValueId x = math(OpKind::Sub, t, base);
      ValueId pr = b.exp2(x, "p");
      b.store(s, slot, pr);
      ValueId sum = b.load(rowSum, rowSlot);
      ValueId more = math(OpKind::Add, sum, pr);
      b.store(rowSum, rowSlot, more);
    });
  }

  /// O += P·V for the value tile at byte `stage`.
  void accumulate(ValueId stage) {
    if (p.wgmma) { // P in registers as A; k slice kk: 16 rows (keys) further down V
      ValueId pf = b.localArray(DType::I32, unsigned(p.bc / 4), "pf");
      packAll(pf);
      issueValues(stage, pf);
      b.wgmmaWait(0, {o});
      return;
    }
    unrolled(p.keysPerWarp() / 16, "kk", [&](ValueId kk) {
      ValueId pf = b.localArray(DType::I32, unsigned(4 * p.blocks), "pf");
      unrolled(p.blocks, "mb", [&](ValueId mb) {
        ValueId pairOfTiles = b.mul(kk, i64(2));
        ValueId first = fragment(mb, p.keysPerWarp() / 8, pairOfTiles);
        packProbabilities(first, pf, b.mul(mb, i64(4)));
      });
      unrolled(p.dvk() / 16, "nj", [&](ValueId nj) {
        ValueId kk32 = b.convert(DType::I32, kk);
        ValueId swizzled = alongRow(vLane, nj, p.vWidth());
        ValueId rows = warpRows(b.mul(kk32, i32(16 * int(p.vWidth()) * 2)), p.vWidth());
        ValueId at = b.add(b.add(stage, swizzled), rows);
        ValueId frag = b.loadMatrix(smem, at, true, "vf");
        mmaTilePair(frag, "vfs", o, p.dvk() / 8, nj, [&](ValueId mb) {
          ValueId first = b.mul(mb, i64(4));
          return b.load(pf, first, 4);
        });
      });
    });
  }

  /// mma.sync into n8 tiles 2 nj and 2 nj + 1 of `acc` (`tiles` n8 tiles a row block) for every
  /// row block: B the x4 fragment `frag` (the two tiles' k16 words, kept in a local array
  /// `name`), A the 4 words `aOf(mb)` of row block mb.
  void mmaTilePair(ValueId frag, const std::string &name, ValueId acc, int64_t tiles, ValueId nj,
                   const std::function<ValueId(ValueId)> &aOf) {
    ValueId words = b.localArray(DType::I32, 4, name);
    b.store(words, i64(0), frag, 4);
    unrolled(p.blocks, "mb", [&](ValueId mb) {
      ValueId a = aOf(mb);
      unrolled(2, "h", [&](ValueId h) {
        ValueId bFrag = b.load(words, b.mul(h, i64(2)), 2);
        ValueId n = b.add(b.mul(nj, i64(2)), h);
        ValueId slot = fragment(mb, tiles, n);
        ValueId c = b.load(acc, slot, 4);
        ValueId d = b.mma(p.dtype, a, bFrag, c);
        b.store(acc, slot, d, 4);
      });
    });
  }

  /// The A fragment of P·V's k slice whose scores start at slot `first` of S: 4 words of
  /// rounded pairs (Note [Attention fragments]), into pf[at..at+3].
  void packProbabilities(ValueId first, ValueId pf, ValueId at) {
    unrolled(4, "w", [&](ValueId w) {
      ValueId lo = b.add(first, b.mul(w, i64(2)));
      ValueId x0 = b.load(s, lo);
      ValueId x1 = b.load(s, b.add(lo, i64(1)));
      ValueId word = b.pack(p.dtype, x0, x1);
      b.store(pf, b.add(at, w), word);
    });
  }

  /// The row sum of row slot `rowSlot`: this thread's part summed over its quad.
  ValueId rowTotal(ValueId rowSlot) {
    ValueId l = b.load(rowSum, rowSlot);
    for (int64_t d : {1, 2}) {
      ValueId other = b.shuffle(kir::ShuffleMode::Xor, l, i64(d));
      l = math(OpKind::Add, l, other, "l");
    }
    return l;
  }

  /// O / l (0 for a row with no visible key), rounded, for the rows before Sq.
  void store() {
    unrolled(p.blocks, "mb", [&](ValueId mb) {
      unrolled(2, "h", [&](ValueId h) {
        ValueId rowSlot = b.add(b.mul(mb, i64(2)), h);
        ValueId l = rowTotal(rowSlot);
        ValueId inv = reciprocal(l);
        ValueId row = queryRow(mb, h);
        b.ifThenElse(b.less(row, i64(p.sq)), [&] {
          ValueId rowStart = b.add(oBase, rowOffset(p.o, row), "oRow");
          unrolled(p.dv / 8, "n", [&](ValueId n) {
            ValueId tileSlot = fragment(mb, p.dvk() / 8, n);
            ValueId slot = b.add(tileSlot, b.mul(h, i64(2)));
            ValueId pair = b.localArray(DType::F32, 2, "pair");
            unrolled(2, "e", [&](ValueId e) {
              ValueId x = b.load(o, b.add(slot, e));
              ValueId y = math(OpKind::Mul, x, inv);
              b.store(pair, e, y);
            });
            ValueId both = b.load(pair, i64(0), 2);
            ValueId narrow = b.narrow(p.dtype, both);
            ValueId tileCol = b.mul(n, i64(8));
            ValueId col = b.add(tileCol, to64(laneCol));
            b.store(out, b.add(rowStart, col), narrow, 2);
          });
        });
      });
    });
  }

  /// Decode's epilogue: the warps' states (each saw its own keys of every tile) merged through
  /// shared memory. M is the largest of the warps' maxima; a warp's row sum and O count 2^(m_w -
  /// M) times (not at all for a warp that saw no key); then O / l goes to the output, or with
  /// splits O / l and the log-sum M + log2 l (-inf for none) to the scratch for the combine.
  void merge() {
    // The states overwrite Q's tile and the stages: the key loop's last barrier, or with no key
    // tile the one that published Q, is behind every read of them.
    ValueId states = b.dynamicShared(DType::F32, "states", 128);
    int64_t rows = p.br();
    ValueId warp = to64(op(IndexOp::Shr, tid, i32(5)));
    int64_t maxima = p.warps * rows * p.dv, sums = maxima + p.warps * rows;
    unrolled(p.blocks, "mb", [&](ValueId mb) {
      unrolled(2, "h", [&](ValueId h) {
        ValueId rowSlot = b.add(b.mul(mb, i64(2)), h);
        ValueId l = rowTotal(rowSlot);
        ValueId warpFirst = b.mul(warp, i64(rows));
        ValueId slot = b.add(warpFirst, queryRow(mb, h), "slot");
        b.ifThenElse(b.less(quadLane, i32(1)), [&] {
          ValueId m = b.load(rowMax, rowSlot);
          b.store(states, b.add(slot, i64(maxima)), m);
          b.store(states, b.add(slot, i64(sums)), l);
        });
        ValueId rowStart = b.mul(slot, i64(p.dv));
        unrolled(p.dv / 8, "n", [&](ValueId n) {
          ValueId tileSlot = fragment(mb, p.dvk() / 8, n);
          ValueId first = b.add(tileSlot, b.mul(h, i64(2)));
          ValueId tileCol = b.mul(n, i64(8));
          ValueId col = b.add(tileCol, to64(laneCol));
          ValueId pair = b.load(o, first, 2);
          b.store(states, b.add(rowStart, col), pair, 2);
        });
      });
    });
    b.barrier();
    eachPair([&](ValueId r, ValueId c) {
      Merged m = mergeStates(
          p.warps, states, "", [&](int w) { return b.add(r, i64(maxima + w * rows)); },
          [&](int w) { return b.add(r, i64(sums + w * rows)); },
          [&](int w) {
            ValueId warpSlot = b.add(r, i64(w * rows));
            return b.add(b.mul(warpSlot, i64(p.dv)), c);
          });
      if (p.splits == 1)
        return storePair(r, c, m.y0, m.y1);
      ValueId at = b.add(partAt(r, split), c, "at");
      b.store(parts, at, m.y0);
      b.store(parts, b.add(at, i64(1)), m.y1);
      b.ifThenElse(b.less(c, i64(1)), [&] {
        ValueId log = b.math({OpKind::Log, DType::F32, DType::F32}, {m.l}, "");
        ValueId lse = math(OpKind::Add, m.most, math(OpKind::Mul, log, log2e));
        ValueId none = math(OpKind::Eq, m.l, zero);
        ValueId logSum = b.select(none, minusInf, lse, "lse");
        b.store(parts, b.add(at, i64(p.dv)), logSum);
      });
    });
    if (p.splits > 1)
      combineIfLast();
  }

  /// A decode split's end: the block counts itself in its unit's counter once every thread's part
  /// is visible to the whole GPU, and the last of the unit's splits to arrive combines their
  /// parts, O = Σ w_s·O_s / Σ w_s with w_s = 2^(lse_s - max lse) (0 for a part that saw no key),
  /// and sets the counter back to 0 for the next run (CUDA's threadFenceReduction pattern).
  void combineIfLast() {
    b.fence();
    b.barrier();
    ValueId last = b.sharedArray(DType::I32, 1, "last");
    ValueId zero32 = i32(0), zeroIndex = i64(0);
    b.ifThenElse(b.less(tid, i32(1)), [&] {
      ValueId before = b.atomicAdd(counters, unit, i32(1), "arrived");
      b.fence(); // what the splits that counted before wrote, for this block
      ValueId isLast = b.less(i32(p.splits - 2), before);
      ValueId one = i32(1);
      b.store(last, zeroIndex, b.select(isLast, one, zero32));
    });
    b.barrier();
    ValueId flag = b.load(last, zeroIndex, 1, "last");
    b.ifThenElse(b.less(zero32, flag), [&] {
      b.fence();
      eachPair([&](ValueId r, ValueId c) {
        ValueId first = partAt(r, zeroIndex, "first");
        Merged m = mergeStates(
            p.splits, parts, "lse", [&](int s) { return b.add(first, i64(s * (p.dv + 1) + p.dv)); },
            nullptr,
            [&](int s) {
              ValueId at = b.add(first, i64(s * (p.dv + 1)));
              return b.add(at, c);
            });
        storePair(r, c, m.y0, m.y1);
      });
      b.ifThenElse(b.less(tid, i32(1)), [&] { b.store(counters, unit, zero32); });
    });
  }

  /// n softmax states of one row merged: their largest log2 max, the row sum and a pair of O's
  /// columns divided by it (0 for a row no state saw a key of).
  struct Merged {
    ValueId most, l, y0, y1;
  };

  /// Merges `n` states of one row held in `from`: state i's log2 max at element maxAt(i) (loads
  /// named `name`), its row sum at sumAt(i) (no sumAt: parts already divided by theirs) and its
  /// pair of O's columns from pairAt(i), each weighted by 2^(max_i - largest max).
  Merged mergeStates(int n, ValueId from, const std::string &name,
                     const std::function<ValueId(int)> &maxAt,
                     const std::function<ValueId(int)> &sumAt,
                     const std::function<ValueId(int)> &pairAt) {
    std::vector<ValueId> m;
    ValueId most = minusInf;
    for (int i = 0; i < n; ++i) {
      m.push_back(b.load(from, maxAt(i), 1, name));
      most = math(OpKind::Max, most, m.back());
    }
    ValueId l = zero, o0 = zero, o1 = zero;
    for (int i = 0; i < n; ++i) {
      ValueId w = weight(m[i], most);
      ValueId count = w;
      if (sumAt) {
        ValueId sum = b.load(from, sumAt(i));
        count = math(OpKind::Mul, w, sum);
      }
      l = math(OpKind::Add, l, count, "l");
      ValueId at = pairAt(i);
      ValueId x0 = b.load(from, at), x1 = b.load(from, b.add(at, i64(1)));
      o0 = math(OpKind::Add, o0, math(OpKind::Mul, w, x0));
      o1 = math(OpKind::Add, o1, math(OpKind::Mul, w, x1));
    }
    ValueId inv = reciprocal(l);
    return {most, l, math(OpKind::Mul, o0, inv), math(OpKind::Mul, o1, inv)};
  }

  /// 2^(x - most) in f32, 0 where x is -inf (a warp or split that saw no key; most may be -inf).
  ValueId weight(ValueId x, ValueId most) {
    ValueId none = math(OpKind::Eq, x, minusInf);
    ValueId scale = b.exp2(math(OpKind::Sub, x, most));
    return b.select(none, zero, scale, "w");
  }

  /// body(r, c) for each pair of columns c, c + 1 (i64) of each row r of a decode's unit, spread
  /// over the block's threads.
  void eachPair(const std::function<void(ValueId, ValueId)> &body) {
    int64_t perRow = p.dv / 2, pairs = p.rows() * perRow;
    int64_t passes = (pairs + p.threads() - 1) / p.threads();
    unrolled(passes, "j", [&](ValueId j) {
      ValueId pass = b.mul(j, i64(p.threads()));
      ValueId flat = b.add(to64(tid), pass, "flat");
      b.ifThenElse(b.less(flat, i64(pairs)), [&] {
        ValueId r = op(IndexOp::Div, flat, i64(perRow), "r");
        ValueId pairIndex = op(IndexOp::Rem, flat, i64(perRow));
        body(r, b.mul(pairIndex, i64(2), "c"));
      });
    });
  }

  /// Element (r, 0) of split `s`'s part (i64s) in the scratch.
  ValueId partAt(ValueId r, ValueId s, const std::string &name = "") {
    ValueId unitRow = b.add(b.mul(unit, i64(p.rows())), r);
    ValueId part = b.add(b.mul(unitRow, i64(p.splits)), s);
    return b.mul(part, i64(p.dv + 1), name);
  }

  /// Columns c, c + 1 of row r of a decode's unit, rounded, to the output.
  void storePair(ValueId r, ValueId c, ValueId y0, ValueId y1) {
    ValueId pair = b.localArray(DType::F32, 2, "pair");
    b.store(pair, i64(0), y0);
    b.store(pair, i64(1), y1);
    ValueId narrow = b.narrow(p.dtype, b.load(pair, i64(0), 2));
    ValueId rowStart = b.add(oBase, rowOffset(p.o, r), "oRow");
    b.store(out, b.add(rowStart, c), narrow, 2);
  }

  const Plan &p;
  kir::Kernel k;
  kir::Builder b;
  int qBytes = 0, kBytes = 0, stageBytes = 0;
  ValueId q, key, value, mask, out, smem;
  ValueId qMap, kMap, vMap, bars; // warp-specialized: the tensor maps and the mbarriers
  ValueId alphas = kir::kNoValue; // warp-specialized: the softmax's rescaling of O, deferred
  ValueId mine, other, seen, pf;  // warp-specialized consumers: turn barriers, tiles seen, P
  std::vector<ValueId> coords;    // the batch index's coordinates (kNoValue: not one of its own)
  ValueId parts = kir::kNoValue, counters = kir::kNoValue; // decode with splits: the scratch
  ValueId tid, lane, warpRow, laneRow, quadLane, laneCol, qLane, kLane, vLane;
  ValueId warpKey = kir::kNoValue;  // decode: the warp's first key of a tile (i32)
  ValueId unit = kir::kNoValue;     // decode: the block's unit
  ValueId split = kir::kNoValue;    // decode: the block's split of its unit's keys
  ValueId keyStart = kir::kNoValue; // decode: the split's first key
  ValueId scaleLog2, log2e, minusInf, lowest, zero;
  ValueId rowMajor, columnMajor;  // wgmma: the layouts of the K-major and MN-major tiles
  ValueId qGroup = kir::kNoValue; // wgmma, two warpgroups: the byte offset of this one's Q rows
  ValueId q0, qBase, kBase, vBase, oBase, maskBase = kir::kNoValue;
  ValueId qf, s, o, rowMax, rowSum;
};

} // namespace

std::optional<templates::KirKernel> buildAttention(const Op &kernel, const std::string &entry,
                                                   std::string_view target, Diagnostics &diags) {
  Plan plan;
  if (!analyze(kernel, entry, target, plan, diags))
    return std::nullopt;
  return AttentionBuilder(plan).run();
}

} // namespace fusec::attention
