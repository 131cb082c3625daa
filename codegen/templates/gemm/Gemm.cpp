// The gemm template's kir builder: the tensor-core kernel (f16/bf16 operands, mma.sync, f32
// accumulators) and the SIMT kernel (f32/f64) of a plan (Plan.h); docs/codegen-gemm.md describes
// both, their tiles and what was measured.
//
// Tiles are numbered chain fastest (a grouped gemm's anchors compute one output tile after
// another, so their common A tile is read from L2), then by batch, then in groups of `groupM`
// tile rows walked column by column. A block takes tiles blockIdx.x, + gridDim.x, ..., so any
// grid is correct. Tile coordinates and shared-memory offsets are i32 (fewer registers); global
// element indices are i64. Tensor cores: K goes through a ring of `stages` byte-addressed
// shared-memory stages, one barrier a step; an operand tile is `rows` rows of `chunks` 16-byte
// chunks, laid out as in memory and XOR-swizzled against bank conflicts; thread tid stages chunk
// tid % chunks of rows tid / chunks + j * step. SIMT: a thread owns tm x tn outputs strided by the
// thread grid. Epilogue (both): the accumulators go through shared memory, then four adjacent
// columns a thread run the chain's pointwise ops in registers.
#include "codegen/templates/gemm/Gemm.h"

#include "codegen/templates/TensorCore.h"
#include "codegen/templates/gemm/Plan.h"
#include "ir/Assert.h"
#include "ir/Kernel.h"

#include <algorithm>
#include <map>
#include <sstream>

namespace fusec::gemm {

namespace {

constexpr int64_t kSMs = 132; // the H100 SXM's: the persistent grid of the sm_90a schedule

using kir::IndexOp;
using kir::ValueId;
constexpr ValueId kNone = kir::kNoValue;

DenseData zeros(DType t) {
  return DenseData::makeSplat(t, {}, std::vector<uint8_t>(dtypeSize(t), 0));
}

/// Where the current tile is: its chain, batch and first row and column.
struct TileAt {
  ValueId chain = kNone; // i32, when there are several chains
  ValueId z, m0, n0;     // i64
  ValueId a, b;          // the operands' pointers (B by chain; paired: chain 0's)
  ValueId b1 = kNone;    // paired: chain 1's B
  ValueId aBase, bBase;  // i64 element offsets of the batch's matrices
  ValueId index = kNone; // split K: the tile's i64 number, and the unit's split of it
  ValueId split = kNone;
  ValueId piece = kNone; // halo tiles (Note [Halo tiles]): the tile's first piece (i64)
};

/// A piece of halo tiles (Note [Halo tiles]): its image (i64), top row and left column (i32).
struct Piece {
  ValueId image, top, left;
};

/// Row `rowIn` of a tile: its row of the result (i64), and whether it is one (kNone: always).
struct RowAt {
  ValueId m, inside = kNone;
};

/// Epilogue inputs of one element read ahead of its chain: kernel inputs in their compute types,
/// and linear's bias as stored.
struct Given {
  std::map<const Value *, ValueId> inputs;
  ValueId bias = kNone;
  ValueId anchor = kNone; ///< the product already rounded to its dtype (compute type)
  std::map<const Op *, ValueId> factors; ///< batch_norm's factor of the element's channel
};

/// What depends on a quad's columns alone, computed once for a loop over its rows (Note
/// [Epilogue columns]): local arrays of the inputs that run along the row, of linear's bias, and
/// of each batch_norm's factor whose parameters run along the row.
struct Columns {
  std::map<const Value *, ValueId> rows;
  ValueId bias = kNone;
  std::map<const Op *, ValueId> factors;
};

/// Where the epilogue reads a tile's values in shared memory: `tile`'s elements from `base` (kNone:
/// 0), rows `ld` apart, of type `type`: the f32 accumulators, or with `rounded` the products
/// rounded to their dtype. Paired, chain 1's value of a column sits `pair` columns right of chain
/// 0's.
struct TileValues {
  ValueId tile = kNone, base = kNone;
  int ld = 0;
  DType type = DType::F32;
  bool rounded = false;
  int pair = 0;
};

/// One operand's tile of the tensor-core kernel and this thread's place in it.
struct Loader {
  const Matrix *x = nullptr;
  int rows = 0, chunks = 0, step = 0, perThread = 0;
  int offset = 0;       // the tile's bytes in a stage
  bool edge = true;     // some tile reaches past the operand's M (or N) extent
  ValueId row0, chunk;  // i32: this thread's first row and its chunk
  ValueId regs = kNone; // registers of the fetched chunks (register path)
  // per tile
  ValueId ptr, src, bound;            // pointer, i64 index of this thread's first element, bound
  ValueId column;                     // M/N-major: the i64 column of this thread's chunk
  ValueId ptr1 = kNone, left = kNone; // paired K-major B: chain 1's pointer, i32 columns left
  // gathered A (Note [Implicit gemm]): local arrays, per row j of this thread's, of the pixel's
  // image (i64, its first element) and the top-left corner of its window (i32)
  ValueId image = kNone, top = kNone, leftmost = kNone;
};

/// A pixel of a gathered A's rows: its image's first element (i64) and the top-left corner of
/// its window in the input (i32; far outside for a row past M).
struct Pixel {
  ValueId image, top, left;
};

/// A column of a gathered A: its filter tap's offsets from the corner (i32) and its channel; and
/// whether it is inside K (kNone: always).
struct Tap {
  ValueId dy, dx, channel, inK = kNone;
};

class GemmBuilder {
public:
  explicit GemmBuilder(const Plan &plan) : plan(plan), t(plan.tile), b(k) {}

  templates::KirKernel run() {
    k.name = plan.entry;
    std::string how = schedule();
    k.comment = comment(how);
    k.maxThreads = unsigned(threads());
    // One block an SM: ptxas may use every register (the 64x64 warp tiles need ~240) rather
    // than cap them for occupancy and spill.
    k.minBlocks = plan.wgmma ? t.blocksPerSM() : plan.tensorCores ? 1 : 0;
    declareParams();
    int sharedBytes = plan.wgmma         ? specializedKernel()
                      : plan.tensorCores ? tensorCoreKernel()
                                         : simtKernel();
    std::optional<LaunchConfig> launch;
    if (std::optional<int64_t> tiles = tileCount(plan, t)) {
      int64_t units = *tiles * t.splitK;
      int64_t persistent = kSMs * t.blocksPerSM();
      int64_t c = t.cluster; // a cluster's blocks take one unit each
      int64_t grid = plan.wgmma ? c * std::min<int64_t>(units / c, persistent / c) : units;
      launch = LaunchConfig{{unsigned(std::min<int64_t>(grid, 0x7fffffff)), 1, 1},
                            {unsigned(threads()), 1, 1},
                            unsigned(sharedBytes),
                            unsigned(c)};
    }
    return templates::KirKernel{std::move(k), plan.args, launch, how, plan.scratchBytes()};
  }

private:
  ValueId i32(int64_t v) { return b.constant(DType::I32, v); }
  ValueId i64(int64_t v) { return b.index(v); }
  ValueId to32(ValueId v, const std::string &name = "") { return b.convert(DType::I32, v, name); }
  ValueId to64(ValueId v) { return b.convert(DType::I64, v); }
  ValueId op(IndexOp o, ValueId x, ValueId y, const std::string &name = "") {
    return b.arith(o, x, y, name);
  }
  /// x `o` y, or y when x is kNone (nothing yet).
  ValueId fold(IndexOp o, ValueId x, ValueId y) { return x == kNone ? y : op(o, x, y); }
  /// for (i = 0; i < n; ++i) body(i) with an i64 i; `unroll` as kir::Builder::forLoop's.
  void loop(int64_t n, const std::string &name, int unroll,
            const std::function<void(ValueId)> &body) {
    // Made in this order, as they always were: the kernels' text stays the same.
    ValueId step = i64(1);
    ValueId end = i64(n);
    ValueId start = i64(0);
    b.forLoop(start, end, step, name, unroll, body);
  }

  /// The block's threads: the specialized schedule's producer warpgroup and its consumers.
  int threads() const { return plan.wgmma ? 128 + 32 * t.warpsM * t.warpsN : t.threads(); }

  /// Halo tiles (Note [Halo tiles]): their shape and what a K step loads, for schedule().
  std::string haloText() const {
    if (!t.halo)
      return plan.a.window ? " (A by im2col)" : "";
    const Window &w = *plan.a.window;
    HaloTiles tiles = plan.haloTiles(t);
    auto count = [](int64_t n, const std::string &one, const std::string &many) {
      return std::to_string(n) + " " + (n == 1 ? one : many);
    };
    return " (halo tiles, " + std::to_string(tiles.perTile) +
           " x 8 x 8 output pixels: a K step a 64-channel panel and filter column, " +
           count(tiles.perTile, "box", "boxes") + " of " + std::to_string(tiles.boxRows) +
           " x 8 input pixels and " + count(w.kh, "tile", "tiles") + " of B)";
  }

  /// How the kernel maps the work onto threads (KernelFacts::schedule).
  std::string schedule() const {
    std::ostringstream how;
    if (plan.wgmma)
      how << "tensor cores (wgmma m64n" << t.bn << "k16 " << dtypeName(plan.operand)
          << ", f32 accumulate); tile " << t.bm << "x" << t.bn << "x" << t.bk
          << ", warp-specialized: a producer warpgroup TMA-loads A and B"
          << (plan.b.kMajor ? "" : " (N-major)") << haloText() << " in " << t.stages
          << " stages for " << t.bm / 64 << " consumer warpgroups of 64 rows; persistent"
          << (t.splitK > 1 ? "; K split " + std::to_string(t.splitK) + " ways" : "")
          << (t.epilogueWarps ? "; the producer warpgroup's other 3 warps run the epilogue" : "")
          << (t.cluster > 1 ? "; clusters of 2 tiles one above the other, B's tile multicast" : "")
          << (t.overlap == 1
                  ? "; each tile's epilogue from registers in " + std::to_string(t.slices()) +
                        " slices under the next tile's first K steps"
                  : "")
          << (t.overlap == 2 ? "; each tile's epilogue staged in shared memory, " +
                                   std::to_string(vectorsPerStep()) +
                                   (vectorsPerStep() == 1 ? " vector" : " vectors") +
                                   " of 8 columns a thread under each of the next tile's K steps"
                             : "")
          << (plan.paired
                  ? "; paired: both products of " + std::to_string(t.outN()) + " columns a tile"
                  : "");
    else if (plan.tensorCores)
      how << "tensor cores (mma.sync m16n8k16 " << dtypeName(plan.operand)
          << ", f32 accumulate); tile " << t.bm << "x" << t.bn << "x" << t.bk << ", "
          << t.warpsM * t.warpsN << " warps of " << t.bm / t.warpsM << "x" << t.bn / t.warpsN
          << ", " << t.stages << " stages; A " << (plan.a.async ? "cp.async" : "registers")
          << ", B " << (plan.b.async ? "cp.async" : "registers")
          << (plan.paired
                  ? "; paired: both products of " + std::to_string(t.outN()) + " columns a tile"
                  : "");
    else
      how << "SIMT (" << (plan.acc == DType::F64 ? "double" : "float") << " FMA); tile " << t.bm
          << "x" << t.bn << "x" << t.bk << ", " << t.threads() << " threads of " << t.tm << "x"
          << t.tn
          << (plan.paired
                  ? "; paired: both products of " + std::to_string(t.outN()) + " columns a tile"
                  : "");
    return how.str();
  }

  /// The lines above the kernel: what it computes, its schedule `how`, the ops it fuses.
  std::vector<std::string> comment(const std::string &how) const {
    const Op &anchor = *plan.chains.front().anchor;
    std::string fused;
    for (const auto &o : plan.body->ops())
      if (o->kind() != OpKind::Const)
        fused += (fused.empty() ? "" : ", ") + std::string(o->name());
    return {plan.entry + ": gemm kernel, " + std::to_string(plan.chains.size()) + " x " +
                std::string(anchor.name()) + "(" + operandTypes(anchor) + ") -> " +
                anchor.result()->type().str(),
            how, "fuses: " + fused};
  }

  /// The parameters (plan.args) and the epilogue's constant tables.
  void declareParams() {
    params = templates::declareParams(b, *plan.kernel, plan.args);
    Namer names;
    for (unsigned g = 0; g <= plan.chains.size(); ++g) {
      const Chain &chain = g < plan.chains.size() ? plan.chains[g] : plan.joint;
      for (const Op *o : chain.ops) {
        if (o->kind() != OpKind::Const || o->getDense("value").isSplat() || tables.count(o))
          continue;
        std::string prefix = plan.entry + "_g" + std::to_string(g) + "_v_";
        tables[o] = b.table(names.fresh(prefix, o->result()->name()), o->getDense("value"));
      }
    }
  }

  ValueId extent(const Extent &e) {
    ValueId v = kNone;
    for (unsigned d : e.dims)
      v = fold(IndexOp::Mul, v, params[d]);
    if (v == kNone)
      return i64(e.factor);
    return e.factor == 1 ? v : b.mul(v, i64(e.factor));
  }

  void tileSpace() {
    rowsM = extent(plan.m);
    if (t.halo) {
      tilesM = i64(plan.haloTiles(t).count());
    } else {
      ValueId padded = b.add(rowsM, i64(t.bm - 1));
      tilesM = op(IndexOp::Div, padded, i64(t.bm), "tilesM");
    }
    if (t.cluster > 1) // Note [Clustered tiles]: a row of the tile space is a cluster's tile rows
      tilesM = op(IndexOp::Div, tilesM, i64(t.cluster), "clusterRows");
    int64_t tilesN = (plan.n + t.outN() - 1) / t.outN();
    numTiles = b.mul(tilesM, i64(plan.tileChains() * plan.batches * tilesN), "numTiles");
  }

  void forEachTile(const std::function<void(const TileAt &)> &body) {
    ValueId first = b.special(kir::Special::CtaidX);
    ValueId grid = b.special(kir::Special::NctaidX);
    if (t.cluster > 1) { // the cluster's blocks visit the same tiles of the space
      first = op(IndexOp::Div, first, i64(t.cluster), "cluster");
      grid = op(IndexOp::Div, grid, i64(t.cluster), "clusters");
    }
    bool keepInvariants = plan.wgmma; // Note [Tile loop invariants]
    b.forLoop(
        first, numTiles, grid, "tile", 0, [&](ValueId tile) { body(decodeTile(tile)); },
        keepInvariants);
  }

  // Note [Tile loop invariants]
  // The warp-specialized consumers hold a tile's accumulators (up to 128 registers) and, with an
  // overlapped epilogue, the pending tile's products beside them: nothing else fits. Where the K
  // steps are a multiple of the stages, the stages of the peeled first K steps are the same for
  // every tile, and LLVM's LICM hoisted their wgmma descriptors out of the tile loop, into
  // registers live across it: ptxas spilled 96 bytes (eight slices of 8192 x 4096 x 1024 ran
  // 96-98 -> 98.5-101.4 us on the H200, 2026-11-28; found with opt -opt-bisect-limit). So the
  // tile loop keeps its invariants (llvm.licm.disable; NVRTC recomputes them as written).

  TileAt decodeTile(ValueId tile) {
    TileAt at;
    int64_t chains = plan.tileChains();
    ValueId rest = tile;
    if (chains > 1) {
      ValueId c = op(IndexOp::Rem, tile, i64(chains));
      at.chain = to32(c, "chain");
      rest = op(IndexOp::Div, tile, i64(chains));
    }
    int64_t tilesN = (plan.n + t.outN() - 1) / t.outN();
    ValueId u = rest;
    at.z = i64(0);
    if (plan.batches > 1) {
      ValueId perBatch = b.mul(tilesM, i64(tilesN));
      at.z = op(IndexOp::Div, rest, perBatch, "z");
      u = op(IndexOp::Rem, rest, perBatch);
    }
    ValueId u32 = to32(u, "u");
    ValueId tilesM32 = to32(tilesM);
    ValueId span = i32(t.groupM * tilesN);
    ValueId group = op(IndexOp::Div, u32, span);
    ValueId firstM = b.mul(group, i32(t.groupM), "firstM");
    ValueId left = op(IndexOp::Sub, tilesM32, firstM);
    kir::MathOp min{OpKind::Min, DType::I32, DType::I32};
    ValueId groupRows = b.math(min, {left, i32(t.groupM)}, "groupRows");
    ValueId inGroup = op(IndexOp::Rem, u32, groupRows);
    ValueId row = b.add(firstM, inGroup);
    if (t.cluster > 1) // the block's own tile row of its cluster's
      row = b.add(b.mul(row, i32(t.cluster)), rank);
    ValueId m0 = b.mul(row, i32(t.bm), "m0");
    ValueId within = op(IndexOp::Rem, u32, span);
    ValueId column = op(IndexOp::Div, within, groupRows);
    ValueId n0 = b.mul(column, i32(t.outN()), "n0");
    at.m0 = to64(m0);
    at.n0 = to64(n0);
    // A is one input for every chain; B is chain g's (chain < g + 1 picks it).
    at.a = params[plan.a.sources.front().input];
    const std::vector<Source> &bs = plan.b.sources;
    if (plan.paired) { // both B's in every tile (Note [Paired gemm])
      at.b = params[bs[0].input];
      at.b1 = params[bs[1].input];
    } else {
      at.b = params[bs.back().input];
      for (size_t g = bs.size() - 1; g-- > 0;) {
        if (bs[g].input == bs.back().input)
          continue;
        ValueId pick = b.less(at.chain, i32(int64_t(g) + 1));
        at.b = b.select(pick, params[bs[g].input], at.b, "b");
      }
    }
    at.aBase = batchOffset(plan.a, at.z);
    at.bBase = batchOffset(plan.b, at.z);
    placeHalo(at);
    return at;
  }

  // Note [Halo tiles]
  // A stride-1 conv2d's im2col rows overlap: a 3x3 filter reads each input pixel for nine output
  // pixels, and TMA's im2col mode (Note [Implicit gemm on the tensor memory accelerator]) loads
  // it nine times, from L2, into each tile's stages. With `halo=1` the output is cut into pieces
  // of 8 x 8 pixels, numbered row-major over the images, rows of pieces and pieces; a tile is
  // bm / 64 consecutive pieces, one a consumer warpgroup (HaloTiles; row r of consumer g's 64 is
  // pixel (top + r / 8, left + r % 8) of its piece). A K step is one filter column s of one
  // 64-channel panel: for each piece one tiled box of the NHWC input, its 8 columns from left +
  // s dw - pl and its 8 + (kh - 1) dh rows from top - pt (zeros outside the image, and for a
  // piece past the last image), then B's tile for each filter row i. Row r of A for tap (i, s)
  // is the box's row r + 8 i dh: filter row i's A is the box from row 8 i dh on, a run of whole
  // 8-row core matrices 1024 bytes apart, as a tiled load's A is, so a consumer's wgmma
  // descriptors just start i dh 1024-byte groups into its piece's box. The stages move (8 + (kh
  // - 1) dh) / 8 kw times the input rather than kh kw times (3x3: 3.75 against 9). The results'
  // rows are the pieces' pixels (tileRow); an overlapped epilogue's TMA stores view the result
  // as {n, ow, oh, images} and clip a piece past the image's right or bottom edge (pixels past
  // those edges are computed for nothing). Measured on the H200 (bench/RESULTS.md, 2026-11-29)
  // they are no faster than the im2col loads: ResNet's 3x3 of 64 at 56 x 56 24.6 us against
  // 24.7, of 128 at 28 x 28 22.1 against 21.3, of 256 at 14 x 14 26.5 against 19.1 (the stages
  // were not what bounded those kernels). So they are the default only where the im2col map
  // cannot reach the window, and otherwise asked for (`halo=1`) or found by --tune.

  /// Halo tiles: the bytes of 8 rows of a 128-byte panel (a wgmma core matrix's rows: a piece's
  /// row), and of B's tile of one filter row.
  static constexpr int64_t coreMatrixBytes() { return HaloTiles::kSide * 128; }
  int64_t bTileBytes() const { return int64_t(t.bn) * t.bk * 2; }

  /// Halo tiles: the first piece of the tile at `at.m0` (bm x its number).
  void placeHalo(TileAt &at) {
    if (t.halo)
      at.piece = op(IndexOp::Div, at.m0, i64(64), "piece");
  }

  /// Halo tiles: the image, top row and left column of piece `q` (i64).
  Piece pieceAt(ValueId q) {
    HaloTiles tiles = plan.haloTiles(t);
    ValueId column = op(IndexOp::Rem, q, i64(tiles.across));
    ValueId rest = op(IndexOp::Div, q, i64(tiles.across));
    ValueId row = op(IndexOp::Rem, rest, i64(tiles.down));
    ValueId image = op(IndexOp::Div, rest, i64(tiles.down), "image");
    ValueId top = to32(b.mul(row, i64(HaloTiles::kSide)), "top");
    ValueId left = to32(b.mul(column, i64(HaloTiles::kSide)), "left");
    return {image, top, left};
  }

  /// Whether every tile lies wholly inside the result, statically: no row or column is checked.
  bool wholeTiles() const {
    if (plan.n % t.outN() || !plan.m.isStatic())
      return false;
    if (t.halo)
      return plan.haloTiles(t).whole;
    return plan.m.factor % t.bm == 0;
  }

  /// Row `rowIn` (i32) of tile `at`; unless `whole`, whether it is a row of the result.
  RowAt tileRow(const TileAt &at, ValueId rowIn, bool whole) {
    if (!t.halo) {
      ValueId m = b.add(at.m0, to64(rowIn), "m");
      return {m, whole ? kNone : b.less(m, rowsM)};
    }
    const Window &w = *plan.a.window;
    ValueId group = to64(op(IndexOp::Shr, rowIn, i32(6)));
    Piece p = pieceAt(b.add(at.piece, group));
    ValueId rowOfPiece = op(IndexOp::Shr, rowIn, i32(3));
    ValueId down = op(IndexOp::And, rowOfPiece, i32(7));
    ValueId y = b.add(p.top, down, "y");
    ValueId x = b.add(p.left, op(IndexOp::And, rowIn, i32(7)), "x");
    ValueId pixel = to64(b.add(b.mul(y, i32(w.ow)), x));
    ValueId m = b.add(b.mul(p.image, i64(w.oh * w.ow)), pixel, "m");
    if (whole)
      return {m, kNone};
    ValueId below = b.less(y, i32(w.oh)), before = b.less(x, i32(w.ow));
    ValueId inside = op(IndexOp::And, below, before);
    HaloTiles tiles = plan.haloTiles(t);
    if (tiles.pieces % tiles.perTile) // the last tile's pieces past the last image's
      inside = op(IndexOp::And, inside, b.less(m, rowsM));
    return {m, inside};
  }

  ValueId batchOffset(const Matrix &x, ValueId z) {
    ValueId sum = kNone;
    for (const BatchTerm &term : x.batchOffset) {
      ValueId coord = term.outer == 1 ? z : op(IndexOp::Div, z, i64(term.outer));
      if (term.size)
        coord = op(IndexOp::Rem, coord, i64(term.size));
      sum = fold(IndexOp::Add, sum, b.mul(coord, i64(term.stride)));
    }
    return sum == kNone ? i64(0) : sum;
  }

  /// `raw`, an element of src.stored, widened and converted through the prologue casts into the
  /// accumulator type; with `packed`, into the operand dtype but for the last cast, left out when
  /// that changes nothing (pack rounds to the operand dtype anyway).
  ValueId castThrough(const Source &src, ValueId raw, bool packed, const std::string &name = "") {
    ValueId x = b.widen(src.stored, raw, name);
    size_t n = src.casts.size();
    if (packed && n > 0 && (n >= 2 ? src.casts[n - 2] : src.stored) != DType::F64)
      --n;
    DType from = src.stored;
    for (size_t i = 0; i < n; ++i) {
      x = b.math({OpKind::Cast, from, src.casts[i]}, {x}, "");
      from = src.casts[i];
    }
    return packed ? x : b.math({OpKind::Cast, src.type(), plan.acc}, {x}, "");
  }

  // ---- the epilogue ----

  /// The element of a value of the trailing dims `sizes` of the result (0: symbolic, where only
  /// `== 1` is asked), broadcast to the result, at (row, col) of the result seen as rows x N.
  ValueId operandIndex(const std::vector<int64_t> &sizes, ValueId row, ValueId col) {
    const std::vector<Extent> &dims = plan.dims;
    size_t r = dims.size(), lead = r - sizes.size();
    auto moves = [&](size_t a) { return a >= lead && sizes[a - lead] != 1; };
    std::vector<Extent> stride(r); // the value's elements a step along axis a
    Extent after;
    for (size_t a = r; a-- > 0;) {
      stride[a] = after;
      if (moves(a))
        after = after * dims[a];
    }
    auto scaled = [&](ValueId x, const Extent &s) {
      return s.isStatic() && s.factor == 1 ? x : b.mul(x, extent(s));
    };
    std::vector<ValueId> terms;
    if (moves(r - 1))
      terms.push_back(col);
    bool all = r >= 2;
    for (size_t a = 0; a + 1 < r; ++a)
      all = all && moves(a);
    if (all)
      terms.push_back(scaled(row, stride[r - 2]));
    for (size_t a = 0; !all && a + 1 < r; ++a) {
      if (!moves(a))
        continue;
      Extent inner;
      for (size_t d = a + 1; d + 1 < r; ++d)
        inner = inner * dims[d];
      ValueId coord = a + 2 == r ? row : op(IndexOp::Div, row, extent(inner));
      if (a > 0)
        coord = op(IndexOp::Rem, coord, extent(dims[a]));
      terms.push_back(scaled(coord, stride[a]));
    }
    ValueId sum = kNone;
    for (ValueId term : terms)
      sum = fold(IndexOp::Add, sum, term);
    return sum == kNone ? i64(0) : sum;
  }

  /// `chain`'s epilogue of one element (plan.joint: of both chains of a paired gemm): the values
  /// of the kernel results it stores (compute types), from the accumulators `accs` of (row, col),
  /// one a product it reads (or `given` already rounded); inputs not `given` are loaded here.
  std::vector<ValueId> chainValues(const Chain &chain, const std::vector<ValueId> &accs,
                                   ValueId row, ValueId col, const Given &given = {}) {
    std::map<const Value *, ValueId> value = given.inputs;
    if (given.anchor != kNone) {
      value[chain.anchor->result()] = given.anchor;
      return chainOps(chain, value, row, col, given.factors);
    }
    std::vector<const Chain *> products = {&chain};
    if (!chain.anchor)
      products = {&plan.chains[0], &plan.chains[1]};
    for (size_t i = 0; i < products.size(); ++i) {
      const Chain &c = *products[i];
      const Value *anchor = c.anchor->result();
      if (value.count(anchor)) // given rounded (a staged paired tile)
        continue;
      ValueId sum = accs[i];
      if (c.bias) {
        const Source &bias = *c.bias;
        ValueId raw = given.bias != kNone && chain.anchor ? given.bias
                                                          : b.load(params[bias.input], col, 1, "");
        ValueId inAcc = castThrough(bias, raw, false, "v_bias");
        sum = b.math({OpKind::Add, plan.acc, plan.acc}, {sum, inAcc}, "");
      }
      // The contraction's value, rounded to its dtype: what the reference stores.
      kir::MathOp round{OpKind::Cast, plan.acc, anchor->type().dtype};
      value[anchor] = b.math(round, {sum}, "v_" + anchor->name());
    }
    return chainOps(chain, value, row, col, given.factors);
  }

  /// The chain's ops from the products' rounded values in `value`, inputs not in it loaded; a
  /// batch_norm in `factors` takes its channel's factor from there.
  std::vector<ValueId> chainOps(const Chain &chain, std::map<const Value *, ValueId> &value,
                                ValueId row, ValueId col,
                                const std::map<const Op *, ValueId> &factors = {}) {
    for (const Op *o : chain.ops) {
      std::string name = "v_" + o->result()->name();
      if (isPlanarStore(*o)) { // the result's layout, not a value (Note [Planar results])
        value[o->result()] = value.at(o->operand(0));
      } else if (o->kind() == OpKind::Const && o->getDense("value").isSplat()) {
        value[o->result()] = b.literal(o->getDense("value"), name);
      } else if (o->kind() == OpKind::Const) {
        const DenseData &d = o->getDense("value");
        ValueId index = operandIndex({d.shape.begin(), d.shape.end()}, row, col);
        ValueId table = b.tableAddress(tables.at(o));
        value[o->result()] = b.load(table, index, 1, name);
      } else {
        auto factor = factors.find(o);
        std::vector<ValueId> args;
        for (unsigned j = 0; j < o->numOperands(); ++j) {
          const Value *v = o->operand(j);
          bool unused = factor != factors.end() && (j == 1 || j == 4); // scale, var: in it
          if (!value.count(v) && !unused)
            value[v] = loadInput(v, row, col);
          args.push_back(unused ? kNone : value[v]);
        }
        if (o->kind() == OpKind::BatchNorm) { // its channels are the columns (Analysis.cpp)
          std::array<ValueId, 5> v = {args[0], args[1], args[2], args[3], args[4]};
          DType dt = o->result()->type().dtype;
          value[o->result()] =
              factor != factors.end()
                  ? templates::batchNormApply(b, dt, v[0], factor->second, v[3], v[2])
                  : templates::batchNormValue(b, dt, v, o->getFloat("epsilon"));
          b.rename(value[o->result()], name);
        } else {
          value[o->result()] = b.math(kir::mathOf(*o), args, name);
        }
      }
    }
    std::vector<ValueId> results;
    for (unsigned j : chain.results)
      results.push_back(value.at(plan.body->outputs()[j]));
    return results;
  }

  /// Kernel input `v` of the epilogue at (row, col), in its compute type.
  ValueId loadInput(const Value *v, ValueId row, ValueId col) {
    FUSEC_ASSERT(v->isGraphInput(), "epilogue value used before it is computed");
    std::vector<int64_t> sizes; // 0: symbolic
    for (const Dim &d : v->type().shape)
      sizes.push_back(d.isStatic() ? d.size : 0);
    DType dt = v->type().dtype;
    ValueId index = operandIndex(sizes, row, col);
    std::string name = "v_" + v->name();
    bool same = kir::storageType(dt) == kir::computeType(dt);
    ValueId raw = b.load(params[v->index()], index, 1, same ? name : "");
    return b.widen(dt, raw, name);
  }

  /// A local array of the `width` elements of type `t` at src[from].
  ValueId loadRow(ValueId src, ValueId from, DType t, int width, const std::string &name) {
    ValueId row = b.localArray(t, unsigned(width), name);
    copyVector(row, i64(0), src, from, t, width);
    return row;
  }

  /// `width` elements of type `t` from src[from] to dst[to]: one vector when they fit 16 bytes.
  void copyVector(ValueId dst, ValueId to, ValueId src, ValueId from, DType t, int width) {
    if (dtypeSize(t) * width <= 16) {
      ValueId vector = b.load(src, from, unsigned(width));
      return b.store(dst, to, vector, unsigned(width));
    }
    for (int q = 0; q < width; ++q) {
      ValueId x = b.load(src, b.add(from, b.constant(k.typeOf(from).elem, q)), 1);
      ValueId at = b.add(to, b.constant(k.typeOf(to).elem, q));
      b.store(dst, at, x);
    }
  }

  // Note [Paired gemm]
  // Two products of one A whose epilogue combines them elementwise (SwiGLU: silu(x Wg) * (x Wu);
  // fusion pairs a grouped gemm of two anchors when an epilogue op reads both) would otherwise be
  // a grouped gemm writing both products and a pointwise kernel reading them back. Paired, each
  // tile of bn columns holds both products of bn / 2 result columns: chain 0's B fills the first
  // half of the tile's B columns, chain 1's the same columns in the second half (the TMA copies
  // fill half a K-major tile's rows, or half an N-major tile's 64-column panels, from each map;
  // the mma.sync and SIMT loaders pick the pointer by the half), so the main loop is the grouped
  // gemm's, one product of twice the width. The epilogue reads an element's two accumulators
  // bn / 2 columns apart in the f32 tile (a 256-wide wgmma tile: 16 columns of each at a time)
  // and evaluates every epilogue op of the element from both (plan.joint). On the H100 (bench/
  // RESULTS.md, 2026-11-28) LLaMA's gate/up kernel with silu and the product takes 693.5 us where
  // the grouped gemm with silu took 766.8 and the product's kernel 64.1.

  // Note [Epilogue loads]
  // The epilogue's time is mostly the latency of the inputs it reads (a bias, a residual), not its
  // math: with a loop of one quad at a time behind a bounds check, each quad waited for its own
  // loads. So an input whose last dim runs along the row with the result is read as one vector of
  // the quad's four columns before the chain's math (one 8-byte load for f16, where there were
  // four 2-byte ones), and a statically whole tile (M and N multiples of the tile) runs its quads
  // unguarded in a loop unrolled up to 4, whose loads ptxas then issues together. On the H100
  // (bench/RESULTS.md, ebd76a3): GEMM + bias + GeLU 8192 x 4096 x 1024 163.4 -> 134.0 us, BERT
  // B8 S512's layer 172.4 us, plain 4096 x 3072 x 768 41.2 -> 36.7 us. The vector load needs the
  // input 8-byte (f16) or 16-byte (f32) aligned, as the operands' loads already do.

  /// Whether kernel input `v` runs along the row with the result: its last dim is N's.
  bool alongRow(const Value *v) const {
    const Shape &shape = v->type().shape;
    return v->isGraphInput() && !shape.empty() && shape.back().isStatic() &&
           shape.back().size == plan.n;
  }

  /// Whether operand `v` of epilogue op `o` is a kernel input read along the row with the result
  /// (not a constant's own value).
  bool rowInput(const Op &o, const Value *v) const {
    return o.kind() != OpKind::Const && alongRow(v);
  }

  /// The element of kernel input `v` at the result's (row, col) (i64).
  ValueId inputIndex(const Value *v, ValueId row, ValueId col) {
    std::vector<int64_t> sizes;
    for (const Dim &d : v->type().shape)
      sizes.push_back(d.isStatic() ? d.size : 0);
    return operandIndex(sizes, row, col);
  }

  /// Whether kernel input `v` runs along the row and is the same for every row (a bias).
  bool columnOnly(const Value *v) const {
    const Shape &shape = v->type().shape;
    bool leadingOnes = alongRow(v);
    for (size_t d = 0; leadingOnes && d + 1 < shape.size(); ++d)
      leadingOnes = shape[d].isStaticValue(1);
    return leadingOnes;
  }

  // Note [Epilogue columns]
  // A loop over one column's quads computes what depends on the columns alone once, before it:
  // linear's bias, the inputs that are the same for every row (a bias, batch_norm's parameters),
  // and batch_norm's factor of each channel (its rsqrt and multiply once a column, where there
  // were a correctly rounded square root and division an element: the math of a convolution's
  // batch_norm epilogue dominated it). LLVM's LICM found these invariants by itself, NVRTC did
  // not, so kir states them.

  /// The `width` columns from `col` of chain `chain`'s epilogue, computed once for a loop over
  /// rows (Note [Epilogue columns]).
  Columns columnValues(const Chain &chain, ValueId col, int width) {
    Columns columns;
    if (chain.bias)
      columns.bias = loadRow(params[chain.bias->input], col, chain.bias->stored, width, "row_bias");
    for (const Op *o : chain.ops)
      for (const Value *v : o->operands()) {
        if (o->kind() == OpKind::Const || !columnOnly(v) || columns.rows.count(v))
          continue;
        DType stored = kir::storageType(v->type().dtype);
        columns.rows[v] = loadRow(params[v->index()], col, stored, width, "row_" + v->name());
      }
    for (const Op *o : chain.ops) {
      if (o->kind() != OpKind::BatchNorm || !columnOnly(o->operand(1)) ||
          !columnOnly(o->operand(4)))
        continue;
      DType dt = o->result()->type().dtype;
      ValueId factors = b.localArray(kir::computeType(dt), unsigned(width), "factors");
      loop(width, "q", -1, [&](ValueId q) {
        auto param = [&](unsigned j) {
          const Value *v = o->operand(j);
          return b.widen(v->type().dtype, b.load(columns.rows.at(v), q, 1, ""), "");
        };
        ValueId scale = param(1), var = param(4);
        ValueId factor = templates::batchNormFactor(b, dt, scale, var, o->getFloat("epsilon"));
        b.store(factors, q, factor);
      });
      columns.factors[o] = factors;
    }
    return columns;
  }

  /// Where an epilogue's values go instead of the result in global memory: sink(result, values),
  /// `values` a local array of the elements of kernel result `result` (its storage type).
  using Sink = std::function<void(unsigned, ValueId)>;

  /// `chain`'s epilogue on the `width` elements (row, col + q), q < width, whose accumulators
  /// are sums[i][q] (one array a product it reads): stored at once when N % width == 0 (or handed
  /// to `sink`), else each checked against N.
  void epilogueVector(const Chain &chain, int width, const std::vector<ValueId> &sums, bool rounded,
                      ValueId row, ValueId col, const Sink &sink = {},
                      const Columns *columns = nullptr) {
    // The products of (row, col + q) as the chain takes them: accumulators, or rounded already.
    auto product = [&](ValueId q, Given &given) {
      std::vector<ValueId> c;
      for (ValueId array : sums)
        c.push_back(b.load(array, q, 1, "c"));
      if (!rounded)
        return c;
      // A paired tile's (chain.anchor null: plan.joint) products are both given, as inputs.
      for (size_t i = 0; i < c.size(); ++i) {
        const Value *anchor = (chain.anchor ? chain : plan.chains[i]).anchor->result();
        bool wide = k.typeOf(c[i]).elem == DType::F32; // unpacked already (an f32 array)
        ValueId v = wide ? c[i] : b.widen(anchor->type().dtype, c[i], "v_" + anchor->name());
        if (chain.anchor)
          given.anchor = v;
        else
          given.inputs[anchor] = v;
      }
      return std::vector<ValueId>{};
    };
    ValueId at = b.add(b.mul(row, i64(plan.n)), col, "at");
    auto resultType = [&](size_t r) { return plan.kernel->result(chain.results[r])->type().dtype; };
    auto output = [&](size_t r) { return params[plan.kernel->numOperands() + chain.results[r]]; };
    auto planar = [&](size_t r) { return plan.planar.count(chain.results[r]) > 0; };
    ValueId zero = i64(0), count = i64(width), one = i64(1);
    if (plan.n % width != 0) {
      FUSEC_ASSERT(!sink, "a sink takes whole vectors");
      b.forLoop(zero, count, one, "q", -1, [&](ValueId q) {
        ValueId colQ = b.add(col, q);
        b.ifThenElse(b.less(colQ, i64(plan.n)), [&] {
          Given given;
          std::vector<ValueId> c = product(q, given);
          std::vector<ValueId> v = chainValues(chain, c, row, colQ, given);
          for (size_t r = 0; r < v.size(); ++r) {
            ValueId narrow = b.narrow(resultType(r), v[r]);
            b.store(output(r), planar(r) ? planarIndex(row, colQ) : b.add(at, q), narrow);
          }
        });
      });
      return;
    }
    // Inputs that run along the row with the result (a bias, a residual) are read as one vector
    // of the `width` columns ahead of the math (Note [Epilogue loads]).
    std::map<const Value *, ValueId> rows;
    if (columns)
      rows = columns->rows;
    ValueId biasRow = columns ? columns->bias : kNone;
    if (chain.bias && !columns)
      biasRow = loadRow(params[chain.bias->input], col, chain.bias->stored, width, "row_bias");
    for (const Op *o : chain.ops) {
      for (const Value *v : o->operands()) {
        if (!rowInput(*o, v) || rows.count(v))
          continue;
        ValueId index = inputIndex(v, row, col);
        DType stored = kir::storageType(v->type().dtype);
        rows[v] = loadRow(params[v->index()], index, stored, width, "row_" + v->name());
      }
    }
    std::vector<ValueId> vectors;
    for (size_t r = 0; r < chain.results.size(); ++r) {
      std::string name = "e" + std::to_string(chain.results[r]);
      vectors.push_back(b.localArray(kir::storageType(resultType(r)), unsigned(width), name));
    }
    b.forLoop(zero, count, one, "q", -1, [&](ValueId q) {
      Given given;
      std::vector<ValueId> c = product(q, given);
      ValueId colQ = b.add(col, q);
      for (const auto &[v, array] : rows) {
        DType dt = v->type().dtype;
        std::string name = "v_" + v->name();
        bool same = kir::storageType(dt) == kir::computeType(dt);
        given.inputs[v] = b.widen(dt, b.load(array, q, 1, same ? name : ""), name);
      }
      if (biasRow != kNone)
        given.bias = b.load(biasRow, q, 1, "");
      if (columns)
        for (const auto &[bn, array] : columns->factors)
          given.factors[bn] = b.load(array, q, 1, "factor");
      std::vector<ValueId> v = chainValues(chain, c, row, colQ, given);
      for (size_t r = 0; r < v.size(); ++r) {
        ValueId narrow = b.narrow(resultType(r), v[r]);
        b.store(vectors[r], q, narrow);
      }
    });
    for (size_t r = 0; r < vectors.size(); ++r) {
      FUSEC_ASSERT(!sink || !planar(r), "a planar result goes out from the registers");
      if (sink) {
        sink(chain.results[r], vectors[r]);
      } else if (planar(r)) { // an element a plane
        ValueId first = planarIndex(row, col);
        b.forLoop(zero, count, one, "q", -1, [&](ValueId q) {
          ValueId to = b.add(first, b.mul(q, i64(planePixels())));
          b.store(output(r), to, b.load(vectors[r], q, 1));
        });
      } else {
        copyVector(output(r), at, vectors[r], zero, kir::storageType(resultType(r)), width);
      }
    }
  }

  // Note [Planar results]
  // A model given in NCHW runs its convolutions in NHWC (the layout pass) and transposes the last
  // one's result back: a kernel that reads the whole result again and writes it (8.4 us of the
  // ResNet block's 63.7 on the H200). Fusion instead puts that transpose (perm [0, 3, 1, 2]),
  // where nothing else reads the NHWC value, into the conv's epilogue (isPlanarStore,
  // ir/Kernel.h), and the kernel stores the result NCHW: row m's image m / P and pixel m % P (P
  // the pixels of an output image), column c's plane. Where the epilogue threads are whole rows of
  // quads (Note [Epilogue columns]), the threads of one column quad take its rows side by side
  // (fixedQuad): epilogue threads / (columns / 4) of them, so each of a quad's four stores is that
  // many consecutive pixels of one plane (16 for a 64-wide tile's 256 threads, the 64-channel
  // convs: a whole 32-byte sector of f16 where the planes are a multiple of 16 pixels; 8 for a
  // 128-wide tile; on halo tiles two runs of 8 from two image rows). Every other epilogue stores
  // element by element at the same places, and none by TMA (storesByTensorMap). Fusion takes the
  // transpose whoever reads its result: where a later pointwise kernel transposes it back (a
  // transpose, reshape and transpose that canonicalize does not cancel) the planar stores cost
  // the conv more than that kernel's gathered read saved.
  // H200 (bench/RESULTS.md, 2026-11-29): the block's conv2 23.3 -> 28.4 us and no transpose
  // kernel, end to end 63.7 -> 62.6 us. The stores cost 3.3 us (conv + batch_norm + ReLU 22.3 us
  // NHWC, 25.6 planar: four 2-byte stores a quad where there was one 8-byte), and the residual's
  // reads, a quad of 16 different rows in a half warp, twice the sectors of L1 (+1.1 us).

  /// The pixels of a planar result's plane: of one output image.
  int64_t planePixels() const { return plan.a.window->oh * plan.a.window->ow; }

  /// The element of a planar result (Note [Planar results]) at row `row` and column `col` (i64):
  /// the row's image and pixel, the column's plane.
  ValueId planarIndex(ValueId row, ValueId col) {
    int64_t pixels = planePixels();
    ValueId image = op(IndexOp::Div, row, i64(pixels), "image");
    ValueId pixel = op(IndexOp::Rem, row, i64(pixels), "pixel");
    ValueId planes = b.add(b.mul(image, i64(plan.n)), col);
    return b.add(b.mul(planes, i64(pixels)), pixel, "planar");
  }

  /// The tile's values (columns [col0, col0 + width) of the tile: all by default), once every
  /// thread has stored its own, four columns a thread, through each element's chain epilogue into
  /// the results.
  void epilogueLoop(const TileValues &tile, const TileAt &at, int col0 = 0, int width = 0) {
    width = width ? width : t.outN();
    if (!t.epilogueWarps) // else the consumers hand the tile over through mbarriers
      syncEpilogue();
    int quadsPerRow = width / 4;
    int threads = epilogueThreads();
    int64_t quads = int64_t(t.bm) * width / 4;
    // Statically whole tiles need no bounds check; then every element of the loop's body is
    // straight-line code and, the loop unrolled, the epilogue inputs' loads of several quads
    // are in flight together (Note [Epilogue loads]).
    bool whole = wholeTiles();
    // The quad of row r and column c (i32) of the tile through chain g's epilogue (Note [Chains
    // of a grouped tile]).
    auto quadAt = [&](unsigned g, ValueId r, ValueId c, const Columns *columns = nullptr) {
      RowAt place = tileRow(at, r, whole);
      ValueId m = place.m, inRows = place.inside;
      ValueId n0 = col0 ? b.add(at.n0, i64(col0)) : at.n0;
      ValueId col = b.add(n0, to64(c), "col");
      auto element = [&] {
        ValueId row = plan.batches > 1 ? b.add(b.mul(at.z, rowsM), m, "row") : m;
        ValueId first = fold(IndexOp::Add, tile.base, b.add(b.mul(r, i32(tile.ld)), c));
        b.rename(first, "first");
        ValueId sums = b.localArray(tile.type, 4, "c");
        copyVector(sums, i64(0), tile.tile, first, tile.type, 4); // first is a multiple of 4
        if (plan.paired) {                                        // Note [Paired gemm]
          ValueId partner = b.localArray(tile.type, 4, "c");
          ValueId from = b.add(first, i32(tile.pair));
          copyVector(partner, i64(0), tile.tile, from, tile.type, 4);
          return epilogueVector(plan.joint, 4, {sums, partner}, false, row, col, {}, columns);
        }
        epilogueVector(plan.chains[g], 4, {sums}, tile.rounded, row, col, {}, columns);
      };
      if (whole)
        return element();
      ValueId inCols = b.less(col, i64(plan.n));
      b.ifThenElse(fold(IndexOp::And, inRows, inCols), element);
    };
    // Quad i of the tile, row-major.
    auto quad = [&](unsigned g, ValueId i) {
      ValueId i32v = to32(i);
      ValueId r = op(IndexOp::Div, i32v, i32(quadsPerRow), "r");
      ValueId four = i32(4);
      ValueId c = b.mul(op(IndexOp::Rem, i32v, i32(quadsPerRow)), four, "c");
      quadAt(g, r, c);
    };
    int64_t trips = quads / threads; // for every thread
    // Note [Epilogue columns]: when the threads are whole rows of quads, each thread's quads are
    // one column's, so the column and what depends on it alone (a bias, batch_norm's factor) are
    // computed once, before the loop over its rows (columnValues).
    bool fixedColumn = whole && threads % quadsPerRow == 0 && quads % threads == 0;
    byChain(at, [&](unsigned g) {
      if (fixedColumn && ahead.applies) { // Note [Epilogue ahead]
        FUSEC_ASSERT(col0 == 0 && width == t.outN(), "the epilogue ahead takes whole tiles");
        Columns columns = ahead.columns
                              ? *ahead.columns
                              : columnValues(plan.chains[g], b.add(at.n0, ahead.col, "col"), 4);
        for (int64_t k = 0; k < trips; ++k) {
          for (const auto &[v, arrays] : ahead.rows)
            columns.rows[v] = arrays[size_t(k)];
          ValueId r = b.add(ahead.r0, i32(k * (threads / quadsPerRow)), "r");
          quadAt(g, r, ahead.c, &columns);
        }
      } else if (fixedColumn) {
        auto [c, r0] = fixedQuad(quadsPerRow);
        ValueId n0 = col0 ? b.add(at.n0, i64(col0)) : at.n0;
        ValueId col = b.add(n0, to64(c), "col");
        Columns columns = columnValues(plan.paired ? plan.joint : plan.chains[g], col, 4);
        ValueId zero = i64(0), end = i64(trips), one = i64(1);
        b.forLoop(zero, end, one, "k", trips <= 4 ? -1 : 4, [&](ValueId k) {
          ValueId k32 = to32(k);
          ValueId r = b.add(r0, b.mul(k32, i32(threads / quadsPerRow)), "r");
          quadAt(g, r, c, &columns);
        });
      } else if (whole && trips > 0) {
        ValueId zero = i64(0), end = i64(trips), one = i64(1);
        b.forLoop(zero, end, one, "k", trips <= 4 ? -1 : 4, [&](ValueId k) {
          ValueId step = i64(threads);
          quad(g, b.add(epilogueTid, b.mul(k, step)));
        });
        if (quads % threads != 0) {
          ValueId i = b.add(epilogueTid, i64(trips * threads), "i");
          b.ifThenElse(b.less(i, i64(quads)), [&] { quad(g, i); });
        }
      } else {
        ValueId end = i64(quads), stride = i64(threads);
        b.forLoop(epilogueTid, end, stride, "i", 1, [&](ValueId i) { quad(g, i); });
      }
    });
    if (!t.epilogueWarps)
      syncEpilogue(); // the next tile reuses the shared memory
  }

  /// The column (i32, a multiple of 4) and first row (i32) of this thread's quads where the
  /// epilogue threads are whole rows of quads, `quadsPerRow` a row, each thread one column's quads
  /// of every threads / quadsPerRow-th row (Note [Epilogue columns]): the threads of a row side by
  /// side, or, for a planar result, those of a column (Note [Planar results]).
  std::pair<ValueId, ValueId> fixedQuad(int quadsPerRow) {
    ValueId tid32 = to32(epilogueTid);
    ValueId four = i32(4);
    if (plan.planar.empty()) {
      ValueId c = b.mul(op(IndexOp::Rem, tid32, i32(quadsPerRow)), four, "c");
      return {c, op(IndexOp::Div, tid32, i32(quadsPerRow), "r0")};
    }
    int rows = epilogueThreads() / quadsPerRow; // of one pass over the tile's quads
    ValueId c = b.mul(op(IndexOp::Div, tid32, i32(rows)), four, "c");
    return {c, op(IndexOp::Rem, tid32, i32(rows), "r0")};
  }

  // Note [Epilogue ahead]
  // A conv2d of 64 output channels has a short K loop (9 steps for a 3x3 of 64) and its consumers
  // run the epilogue between tiles, so the epilogue's load latencies add up: batch_norm's
  // parameters at every tile's start, and a residual's rows, two round trips of four quads'
  // loads a tile (the residual block's conv2 took 35.8 us on the H200 where the same conv with
  // batch_norm and ReLU took 27.0). Where one loop over one column's quads runs a tile's whole
  // epilogue (the warp-specialized schedule without overlapped epilogue, epilogue warps or split
  // K; one chain, not paired; the tile's columns in one pass; whole tiles; threads in whole rows
  // of quads, at most 8 quads a thread), the
  // consumers compute a thread's column once, and its column values (a bias, batch_norm's
  // factors) once for the kernel when the result is one tile wide; and they read each row-varying
  // input of the tile's quads (a residual) into registers before the tile's K loop, so that the
  // loads complete under its wgmmas. The epilogue then runs its quads as straight-line code on
  // those registers.

  /// What the consumers read for the epilogue ahead of it (Note [Epilogue ahead]).
  struct Ahead {
    bool applies = false;
    ValueId c = kNone, r0 = kNone, col = kNone; // the thread's column (i32, i64), first row (i32)
    std::optional<Columns> columns;             // the column values, once a kernel
    std::map<const Value *, std::vector<ValueId>> rows; // a tile's row-varying inputs, by quad
  };

  /// Whether the epilogue's loads go ahead of it (Note [Epilogue ahead]): the tile's one loop over
  /// a column's quads, at most 8 quads a thread.
  bool epilogueAhead() const {
    int threads = epilogueThreads(), quadsPerRow = t.outN() / 4;
    int64_t quads = int64_t(t.bm) * t.outN() / 4;
    return plan.wgmma && !t.overlap && !t.epilogueWarps && t.splitK == 1 &&
           plan.tileChains() == 1 && !plan.paired && t.outputColumns() == t.outN() &&
           wholeTiles() && threads % quadsPerRow == 0 && quads % threads == 0 &&
           quads / threads <= 8;
  }

  /// The consumer's column of the epilogue and, for a result one tile wide, its column values
  /// (Note [Epilogue ahead]); before the tile loop.
  void startAhead() {
    ahead.applies = epilogueAhead();
    if (!ahead.applies)
      return;
    std::tie(ahead.c, ahead.r0) = fixedQuad(t.outN() / 4);
    ahead.col = to64(ahead.c);
    if (plan.n == t.outN()) // every tile's n0 is 0
      ahead.columns = columnValues(plan.chains[0], ahead.col, 4);
  }

  /// Tile `at`'s row-varying epilogue inputs of this thread's quads, into registers (Note
  /// [Epilogue ahead]); before the tile's K loop.
  void readAhead(const TileAt &at) {
    ahead.rows.clear();
    if (!ahead.applies)
      return;
    int threads = epilogueThreads(), quadsPerRow = t.outN() / 4;
    int64_t trips = int64_t(t.bm) * t.outN() / 4 / threads;
    ValueId col = b.add(at.n0, ahead.col, "col");
    for (const Op *o : plan.chains[0].ops)
      for (const Value *v : o->operands()) {
        if (!rowInput(*o, v) || columnOnly(v) || ahead.rows.count(v))
          continue;
        DType stored = kir::storageType(v->type().dtype);
        for (int64_t k = 0; k < trips; ++k) {
          ValueId r = b.add(ahead.r0, i32(k * (threads / quadsPerRow)), "r");
          ValueId index = inputIndex(v, tileRow(at, r, true).m, col);
          ahead.rows[v].push_back(
              loadRow(params[v->index()], index, stored, 4, "ahead_" + v->name()));
        }
      }
  }

  // Note [Chains of a grouped tile]
  // A grouped gemm's tile belongs to one chain (QKV: the query, key or value product), known
  // only at run time. The epilogues branch on it once, around their loop over the tile's
  // elements, not inside it for each element: within a branch every element's code is straight
  // line, so the loads of a bias or residual of several elements are in flight together. With a
  // branch for each element (two columns, in the overlapped epilogue's slices) each element's
  // bias load waited alone: on the H200 (bench/RESULTS.md, 2026-11-28) BERT's QKV with its three
  // biases took 39.5 us where the same products without them took 32.1 and one product of 2304
  // columns with its bias 31.1.

  /// body(g) for the tile's chain g: chain < g + 1 in the else of chain < g (one chain or a
  /// paired gemm's two, which every tile holds: body(0)).
  void byChain(const TileAt &at, const std::function<void(unsigned)> &body) {
    if (plan.tileChains() == 1)
      return body(0);
    std::function<void(unsigned)> from = [&](unsigned g) {
      if (g + 1 == plan.chains.size())
        return body(g);
      b.ifThenElse(
          b.less(at.chain, i32(g + 1)), [&] { body(g); }, [&] { from(g + 1); });
    };
    from(0);
  }

  /// The threads of the epilogue: the block, or the specialized schedule's consumers (named
  /// barrier 1; the producer runs ahead into the next tile's stages meanwhile).
  int epilogueThreads() const {
    return t.epilogueWarps ? 96 : plan.wgmma ? consumerThreads() : t.threads();
  }
  /// The specialized schedule's consumer warpgroups.
  int consumerThreads() const { return 32 * t.warpsM * t.warpsN; }
  void syncEpilogue() {
    if (plan.wgmma)
      b.barrier(i32(1), unsigned(epilogueThreads()));
    else
      b.barrier();
  }

  ValueId zeroedAccumulators(int count) {
    ValueId acc = b.localArray(plan.acc, unsigned(count), "acc");
    ValueId zero = b.literal(zeros(plan.acc), "");
    loop(count, "e", -1, [&](ValueId e) { b.store(acc, e, zero); });
    return acc;
  }

  // ---- the tensor-core kernel ----

  // Note [Fragment addresses]
  // A lane's ldmatrix address for k16 slice kk and m16 block mi (or n16 pair nj) is its address
  // for kk = mi = 0 with the chunk index XORed by 2 * mi (or 2 * kk, when the slices run along
  // the chunks) and the rows moved by a constant: the swizzle XORs only the low three chunk bits
  // with the row's low three bits, which the slice and block steps (multiples of 8 rows, 2
  // chunks) leave alone, and the steps never carry into the swizzled bits. So each lane computes
  // one offset per operand (aLane, bLane) and every fragment address is `stage + (lane offset ^
  // constant) + constant`: few registers live across the main loop (+3%, and no spills).

  /// One lane's byte offset of A's (or B's) first fragment in a stage.
  ValueId laneOffset(bool isA) {
    const Matrix &x = isA ? plan.a : plan.b;
    int chunks = x.kMajor ? t.bk / 8 : (isA ? t.bm : t.bn) / 8;
    ValueId low7 = op(IndexOp::And, lane, i32(7));
    ValueId high = op(IndexOp::Shr, lane, i32(4));
    ValueId one = i32(1);
    ValueId bit3 = op(IndexOp::And, op(IndexOp::Shr, lane, i32(3)), one);
    ValueId row, chunk;
    if (isA && x.kMajor) {
      row = b.add(warpRow, op(IndexOp::And, lane, i32(15)));
      chunk = high;
    } else if (isA) {
      row = b.add(low7, b.mul(high, i32(8)));
      chunk = b.add(op(IndexOp::Div, warpRow, i32(8)), bit3);
    } else if (x.kMajor) {
      row = b.add(warpCol, b.add(low7, b.mul(high, i32(8))));
      chunk = bit3;
    } else {
      row = b.add(low7, b.mul(bit3, i32(8)));
      chunk = b.add(op(IndexOp::Div, warpCol, i32(8)), high);
    }
    ValueId offset = templates::swizzledChunk(b, row, chunk, chunks);
    b.rename(offset, isA ? "aLane" : "bLane");
    return offset;
  }

  Loader loader(bool isA) {
    Loader l;
    l.x = isA ? &plan.a : &plan.b;
    int mn = isA ? t.bm : t.bn;
    l.rows = l.x->kMajor ? mn : t.bk;
    l.chunks = (l.x->kMajor ? t.bk : mn) / 8;
    l.step = t.threads() / l.chunks;
    l.perThread = l.rows * l.chunks / t.threads();
    l.offset = isA ? 0 : aBytes;
    Extent e = l.x->kMajor ? l.x->outer : Extent{l.x->inner, {}};
    l.edge = !e.isStatic() || e.factor % mn != 0;
    std::string p = isA ? "a" : "b";
    l.row0 = op(IndexOp::Div, tid, i32(l.chunks), p + "Row");
    l.chunk = op(IndexOp::Rem, tid, i32(l.chunks), p + "Chunk");
    if (!l.x->async) {
      DType stored = kir::storageType(l.x->sources.front().stored);
      l.regs = b.localArray(stored, l.perThread * 8, "r" + p);
    }
    if (l.x->window) {
      l.image = b.localArray(DType::I64, unsigned(l.perThread), "image");
      l.top = b.localArray(DType::I32, unsigned(l.perThread), "top");
      l.leftmost = b.localArray(DType::I32, unsigned(l.perThread), "left");
    }
    return l;
  }

  /// This thread's first source element and its bound in the tile at `at`; a gathered A's pixels
  /// of this thread's rows.
  void startTile(Loader &l, const TileAt &at) {
    bool isA = &l == &la;
    if (l.x->window) {
      l.ptr = at.a;
      return loop(l.perThread, "j", -1, [&](ValueId j) {
        ValueId j32 = to32(j);
        ValueId row = b.add(l.row0, b.mul(j32, i32(l.step)));
        ValueId rowWide = to64(row);
        Pixel px = pixelOf(b.add(at.m0, rowWide), l.edge);
        b.store(l.image, j, px.image);
        b.store(l.top, j, px.top);
        b.store(l.leftmost, j, px.left);
      });
    }
    std::string p = isA ? "a" : "b";
    l.ptr = isA ? at.a : at.b;
    ValueId mn0 = isA ? at.m0 : at.n0;
    ValueId base = isA ? at.aBase : at.bBase;
    ValueId inner = i64(l.x->inner);
    ValueId first = to64(b.mul(l.chunk, i32(8)));
    ValueId row = to64(l.row0);
    if (pairedB(l) && !l.x->kMajor) { // the chunk's column is chain 0's or chain 1's
      ValueId column = b.mul(l.chunk, i32(8));
      ValueId second = b.less(i32(t.outN() - 1), column);
      l.ptr = b.select(second, at.b1, at.b, "bPtr");
      ValueId half = i64(t.outN()), none = i64(0);
      first = b.arith(IndexOp::Sub, first, b.select(second, half, none));
    }
    if (pairedB(l) && l.x->kMajor) { // each row's chain: pointerOf, sourceIndex, inside
      l.ptr1 = at.b1;
      l.left = to32(op(IndexOp::Sub, i64(plan.n), mn0), "bLeft");
    }
    if (l.x->kMajor) { // rows along M (or N), chunks along K
      ValueId at0 = b.add(b.mul(b.add(mn0, row), inner), first);
      l.src = b.add(base, at0, p + "Src");
      if (l.edge && l.ptr1 == kNone) { // paired, inside() bounds each half's rows itself
        ValueId left = op(IndexOp::Sub, extent(l.x->outer), mn0);
        kir::MathOp min{OpKind::Min, DType::I64, DType::I64};
        ValueId rows = b.math(min, {left, i64(l.rows)}, "");
        l.bound = op(IndexOp::Sub, to32(rows), l.row0, p + "Rows");
      }
      return;
    }
    l.column = b.add(mn0, first);
    ValueId at0 = b.add(b.mul(row, inner), l.column);
    l.src = b.add(base, at0, p + "Src");
    if (l.edge) {
      l.bound = b.less(l.column, inner);
      b.rename(l.bound, p + "Cols");
    }
  }

  /// Whether `l` loads B of a paired gemm (Note [Paired gemm]).
  bool pairedB(const Loader &l) const { return plan.paired && l.x == &plan.b; }

  /// Paired K-major B: whether chunk j's row (i32) is in chain 1's half of the tile (i1).
  ValueId secondHalf(const Loader &l, ValueId j) {
    ValueId row = b.add(l.row0, b.mul(j, i32(l.step)));
    return b.less(i32(t.outN() - 1), row);
  }

  /// The pointer chunk j (i32) comes from: chain 1's B for the second half of a paired K-major
  /// tile's rows.
  ValueId pointerOf(const Loader &l, ValueId j) {
    if (l.ptr1 == kNone)
      return l.ptr;
    ValueId second = secondHalf(l, j);
    return b.select(second, l.ptr1, l.ptr);
  }

  /// Whether chunk j at K step kt (i32) is inside the operand; kNone: always.
  ValueId inside(const Loader &l, ValueId j, ValueId kt) {
    ValueId ok = kNone;
    if (l.ptr1 != kNone) { // paired K-major B: the row within its half, against N
      ValueId row = b.add(l.row0, b.mul(j, i32(l.step)));
      ValueId second = secondHalf(l, j);
      ValueId half = i32(t.outN()), none = i32(0);
      ValueId shift = b.select(second, half, none);
      ok = b.less(op(IndexOp::Sub, row, shift), l.left);
    } else if (l.edge) {
      ok = l.x->kMajor ? b.less(b.mul(j, i32(l.step)), l.bound) : l.bound;
    }
    if (plan.k % t.bk != 0) { // the K tail: along the chunks, or down the rows
      ValueId k0 = b.mul(kt, i32(t.bk));
      ValueId at;
      if (l.x->kMajor) {
        at = b.add(k0, b.mul(l.chunk, i32(8)));
      } else {
        ValueId down = b.mul(j, i32(l.step));
        at = b.add(b.add(k0, l.row0), down);
      }
      ok = fold(IndexOp::And, ok, b.less(at, i32(plan.k)));
    }
    return ok;
  }

  /// The source element of chunk j (i32) at K step kt (i64).
  ValueId sourceIndex(const Loader &l, ValueId j, ValueId kt) {
    ValueId rowStride = i64(int64_t(l.step) * l.x->inner);
    ValueId rows = b.mul(to64(j), rowStride);
    int64_t kStep = l.x->kMajor ? t.bk : int64_t(t.bk) * l.x->inner;
    ValueId step = b.mul(kt, i64(kStep));
    ValueId at = b.add(b.add(l.src, rows), step);
    if (l.ptr1 == kNone)
      return at;
    ValueId half = i64(t.outN() * l.x->inner); // chain 1's rows start the tile again
    ValueId second = secondHalf(l, j);
    ValueId none = i64(0);
    ValueId shift = b.select(second, half, none);
    return op(IndexOp::Sub, at, shift);
  }

  /// The stage byte chunk j (i32) goes to.
  ValueId destination(const Loader &l, ValueId stage, ValueId j) {
    ValueId row = b.add(l.row0, b.mul(j, i32(l.step)));
    ValueId at = templates::swizzledChunk(b, row, l.chunk, l.chunks);
    return b.add(b.add(stage, i32(l.offset)), at);
  }

  // Note [Implicit gemm]
  // conv2d over an NHWC input with an OHWI filter and one group is a gemm (Analysis.cpp): row m of
  // A is output pixel (image, y, x) = (m / (oh ow), m / ow % oh, m % ow), column k filter tap
  // (i, j) = (k / c / kw, k / c % kw) and channel k % c, and A[m][k] the input at (image,
  // y sh - pt + i dh, x sw - pl + j dw, channel), zero in the padding; B is the filter, o rows of
  // kh kw c, K-major like linear's weight; the result's rows are the output pixels. A is never
  // formed: its loaders gather it. A thread decodes the pixel of each of its rows once a tile
  // (pixelOf: the image's first element and the window's top-left corner, a row past M given a
  // corner no tap reaches) and its chunk's tap once a K step (tapOf); with c a multiple of 8, 8
  // channels of one tap are one 16-byte chunk of the input, copied by cp.async (zeros in the
  // padding) or loaded into registers; else element by element. So the tiles, main loops and
  // epilogues are the gemm's, on mma.sync and SIMT alike.
  //
  // Note [Implicit gemm on the tensor memory accelerator]
  // On sm_90a's warp-specialized schedule the producer thread loads A by TMA's im2col mode instead
  // (Tiles.cpp im2colWindow says when: c a multiple of 64, the window's corners within a 4-d map's
  // reach). The map (windowPanels) views the input as {c, w, h, images} with a bounding box of
  // window corners from (-pl, -pt) to the last one, (ow - 1) sw - pl and (oh - 1) sh - pt, walked
  // by the strides; a load of {64 channels, bm pixels} starts at the corner of the tile's first row
  // (windowCorner, once a tile) and reads each of bm consecutive corners, row after row and image
  // after image, at the filter tap its offsets name, {j dw, i dh} (loadWindow, once a K step:
  // k0 / c is the tap, k0 % c the panel's first channel). A pixel outside the input, in the
  // padding or past the last image, reads as zeros. The stage's A tile is then exactly the tiled
  // load's (bm rows of one 128-byte swizzled panel), so the consumers, split K and the epilogues
  // are the gemm's.

  /// Row m's (i64) pixel; with `edge`, a row past M gets a corner no tap reaches.
  Pixel pixelOf(ValueId m, bool edge) {
    const Window &w = *plan.a.window;
    ValueId pixels = i64(w.oh * w.ow);
    ValueId image = op(IndexOp::Div, m, pixels);
    ValueId p = to32(op(IndexOp::Rem, m, pixels));
    ValueId y = op(IndexOp::Div, p, i32(w.ow)), x = op(IndexOp::Rem, p, i32(w.ow));
    Pixel px;
    px.image = b.mul(image, i64(w.h * w.w * w.c), "image");
    ValueId down = b.mul(y, i32(w.strideH)), across = b.mul(x, i32(w.strideW));
    px.top = op(IndexOp::Sub, down, i32(w.padTop), "top");
    px.left = op(IndexOp::Sub, across, i32(w.padLeft), "left");
    if (edge) {
      ValueId far = i32(-(int64_t(1) << 30));
      ValueId inside = b.less(m, rowsM);
      px.top = b.select(inside, px.top, far, "top");
    }
    return px;
  }

  /// The tap and channel of column k (i32) of a gathered A.
  Tap tapOf(ValueId k) {
    const Window &w = *plan.a.window;
    Tap tap;
    tap.inK = plan.k % t.bk ? b.less(k, i32(plan.k)) : kNone;
    if (w.kh * w.kw == 1) {
      tap.dy = tap.dx = i32(0);
      tap.channel = k;
      return tap;
    }
    ValueId r = op(IndexOp::Div, k, i32(w.c));
    tap.channel = op(IndexOp::Rem, k, i32(w.c), "channel");
    ValueId i = w.kw == 1 ? r : op(IndexOp::Div, r, i32(w.kw));
    ValueId j = w.kw == 1 ? i32(0) : op(IndexOp::Rem, r, i32(w.kw));
    tap.dy = b.mul(i, i32(w.dilationH), "dy");
    tap.dx = b.mul(j, i32(w.dilationW), "dx");
    return tap;
  }

  /// Whether element (px, tap) of a gathered A lies inside the input, and its index there (0
  /// when it does not).
  std::pair<ValueId, ValueId> gather(const Pixel &px, const Tap &tap) {
    const Window &w = *plan.a.window;
    ValueId y = b.add(px.top, tap.dy), x = b.add(px.left, tap.dx);
    ValueId before = i32(-1);
    ValueId top = b.less(before, y), bottom = b.less(y, i32(w.h));
    ValueId left = b.less(before, x), right = b.less(x, i32(w.w));
    ValueId rows = op(IndexOp::And, top, bottom), cols = op(IndexOp::And, left, right);
    ValueId ok = fold(IndexOp::And, tap.inK, op(IndexOp::And, rows, cols));
    ValueId at = to64(b.add(b.mul(y, i32(w.w)), x));
    ValueId channel = to64(tap.channel);
    ValueId index = b.add(px.image, b.add(b.mul(at, i64(w.c)), channel));
    ValueId none = i64(0);
    return {ok, b.select(ok, index, none, "src")};
  }

  /// Row j's (i32) pixel of this thread's in gathered A `l`.
  Pixel pixelOfRow(const Loader &l, ValueId j) {
    ValueId jWide = to64(j);
    return {b.load(l.image, jWide, 1), b.load(l.top, jWide, 1), b.load(l.leftmost, jWide, 1)};
  }

  /// The tap of this thread's chunk at K step kt (i32) of a gathered A, or none.
  std::optional<Tap> chunkTap(const Loader &l, ValueId kt) {
    if (!l.x->window || !l.x->wholeChunks())
      return std::nullopt;
    ValueId k0 = b.mul(kt, i32(t.bk)), chunk = b.mul(l.chunk, i32(8));
    return tapOf(b.add(k0, chunk));
  }

  /// Starts loading the tiles of K step kt (i64) into the stage at byte `stage` (i32): cp.async
  /// copies, or fetches into registers.
  void issueLoads(ValueId stage, ValueId kt) {
    ValueId kt32 = to32(kt);
    for (Loader *l : {&la, &lb}) {
      std::optional<Tap> tap = chunkTap(*l, kt32);
      loop(l->perThread, "j", -1, [&](ValueId jWide) {
        ValueId j = to32(jWide);
        if (!l->x->async)
          return fetchChunk(*l, j, kt, tap);
        auto [ok, src] = tap ? gather(pixelOfRow(*l, j), *tap)
                             : std::pair{inside(*l, j, kt32), sourceIndex(*l, j, kt)};
        ValueId dst = destination(*l, stage, j);
        if (ok == kNone)
          ok = b.literal(DenseData::makeSplat(DType::Bool, {}, {1}), "");
        ValueId ptr = pointerOf(*l, j);
        b.copyAsync(smem, dst, ptr, src, ok);
      });
    }
  }

  /// Chunk j of K step kt into the registers: 16-byte loads when the rows are whole chunks
  /// (gathered, of `tap`), else element by element; zeros outside the operand.
  void fetchChunk(const Loader &l, ValueId j, ValueId kt, const std::optional<Tap> &tap) {
    DType stored = l.x->sources.front().stored;
    ValueId zero = b.narrow(stored, b.literal(zeros(stored), ""));
    if (l.x->window && !tap)
      return fetchGathered(l, j, kt, zero);
    auto [ok, src] = tap ? gather(pixelOfRow(l, j), *tap)
                         : std::pair{inside(l, j, to32(kt)), sourceIndex(l, j, kt)};
    ValueId ptr = pointerOf(l, j);
    ValueId eight = i64(8);
    ValueId slot = b.mul(to64(j), eight);
    auto zeroFill = [&](ValueId at) { b.store(l.regs, at, zero); };
    if (l.x->wholeChunks()) {
      unsigned lanes = 16 / dtypeSize(stored);
      auto load = [&] {
        for (unsigned v = 0; v < 8 / lanes; ++v) {
          ValueId x = b.load(ptr, b.add(src, i64(v * lanes)), lanes);
          b.store(l.regs, b.add(slot, i64(v * lanes)), x, lanes);
        }
      };
      if (ok == kNone)
        return load();
      return b.ifThenElse(ok, load, [&] {
        for (int e = 0; e < 8; ++e)
          zeroFill(b.add(slot, i64(e)));
      });
    }
    // The chunk's first column: along K, or along M (or N).
    ValueId col = l.column;
    if (l.x->kMajor) {
      ValueId k0 = b.mul(kt, i64(t.bk));
      col = b.add(k0, to64(b.mul(l.chunk, i32(8))));
    }
    loop(8, "e", -1, [&](ValueId e) {
      ValueId inner = i64(l.x->inner);
      ValueId inRow = b.less(b.add(col, e), inner);
      ValueId okE = fold(IndexOp::And, ok, inRow);
      ValueId at = b.add(slot, e);
      b.ifThenElse(
          okE,
          [&] {
            ValueId x = b.load(ptr, b.add(src, e), 1);
            b.store(l.regs, at, x);
          },
          [&] { zeroFill(at); });
    });
  }

  /// Chunk j of K step kt of a gathered A whose channels are not whole chunks, element by element
  /// into its registers (`zero` outside the input).
  void fetchGathered(const Loader &l, ValueId j, ValueId kt, ValueId zero) {
    Pixel px = pixelOfRow(l, j);
    ValueId jWide = to64(j);
    ValueId slot = b.mul(jWide, i64(8));
    ValueId kt32 = to32(kt);
    ValueId step = b.mul(kt32, i32(t.bk)), chunk = b.mul(l.chunk, i32(8));
    ValueId k0 = b.add(step, chunk);
    loop(8, "e", -1, [&](ValueId e) {
      Tap tap = tapOf(b.add(k0, to32(e)));
      auto [ok, src] = gather(px, tap);
      ValueId at = b.add(slot, e);
      b.ifThenElse(
          ok,
          [&] {
            ValueId x = b.load(l.ptr, src, 1);
            b.store(l.regs, at, x);
          },
          [&] { b.store(l.regs, at, zero); });
    });
  }

  /// The fetched registers, converted (the prologue casts), packed into operand-dtype pairs and
  /// stored into the stage at `stage`.
  void stageRegisters(ValueId stage) {
    for (Loader *l : {&la, &lb}) {
      if (l->x->async)
        continue;
      const Source &src = l->x->sources.front();
      loop(l->perThread, "j", -1, [&](ValueId jWide) {
        ValueId j = to32(jWide);
        ValueId slot = b.mul(jWide, i64(8));
        ValueId w = b.localArray(DType::I32, 4, "w");
        for (int h = 0; h < 4; ++h) {
          ValueId pair[2];
          for (int e = 0; e < 2; ++e) {
            ValueId raw = b.load(l->regs, b.add(slot, i64(2 * h + e)), 1);
            pair[e] = castThrough(src, raw, true);
          }
          ValueId packed = b.pack(plan.operand, pair[0], pair[1]);
          b.store(w, i64(h), packed);
        }
        ValueId chunk = b.load(w, i64(0), 4);
        ValueId dst = destination(*l, stage, j);
        b.store(words, op(IndexOp::Shr, dst, i32(2)), chunk, 4);
      });
    }
  }

  ValueId stageOf(ValueId kt) {
    ValueId slot = op(IndexOp::Rem, kt, i32(t.stages));
    return b.mul(slot, i32(stageBytes), "stage");
  }

  // Registers fetched at step kt are stored into their stage at the top of step kt + 1, after a
  // whole step of math has hidden the loads' latency: the tile fetched last is K step kt +
  // stages - 2, whose stage was last read at step kt - 2 (stages >= 3).
  void mainLoop() {
    int stages = t.stages;
    bool registers = !plan.a.async || !plan.b.async;
    ValueId steps = i64(kTiles);
    loop(stages - 1, "kt", 1, [&](ValueId kt) {
      b.ifThenElse(b.less(kt, steps), [&] {
        ValueId bytes = i32(stageBytes);
        ValueId stage = b.mul(to32(kt), bytes, "stage");
        issueLoads(stage, kt);
        if (registers)
          b.ifThenElse(b.less(kt, i64(stages - 2)), [&] { stageRegisters(stage); });
      });
      b.commitAsync();
    });
    ValueId one = i64(1);
    ValueId zero = i64(0);
    b.forLoop(zero, steps, one, "kt", 1, [&](ValueId kt) {
      b.waitAsync(unsigned(stages - 2));
      b.barrier();
      ValueId kt32 = to32(kt);
      if (registers) {
        ValueId fetched = b.add(kt32, i32(stages - 2));
        b.ifThenElse(b.less(fetched, i32(kTiles)), [&] { stageRegisters(stageOf(fetched)); });
      }
      ValueId next = b.add(kt, i64(stages - 1), "next");
      b.ifThenElse(b.less(next, steps), [&] { issueLoads(stageOf(to32(next)), next); });
      b.commitAsync();
      stageMath(stageOf(kt32));
    });
    b.waitAsync(0);
    b.barrier(); // the accumulator tile reuses the stages
  }

  /// The math of one stage: bk/16 slices of ldmatrix + mma (Note [Fragment addresses]).
  void stageMath(ValueId stage) {
    ValueId stageB = b.add(stage, i32(aBytes));
    loop(t.bk / 16, "kk", -1, [&](ValueId kkWide) {
      ValueId kk = to32(kkWide);
      ValueId fa = b.localArray(DType::I32, unsigned(mi * 4), "fa");
      ValueId fb = b.localArray(DType::I32, unsigned(ni * 2), "fb");
      // The x4 fragments of A's m16 blocks (B's n16 pairs): base + (lane ^ 32 xored) + step.
      auto load = [&](const Matrix &x, ValueId base, ValueId laneOff, int count, int mn,
                      ValueId frags, const char *name) {
        loop(count, name, -1, [&](ValueId i) {
          ValueId i32v = to32(i);
          ValueId xored = x.kMajor ? kk : i32v, stepped = x.kMajor ? i32v : kk;
          int stepBytes = 16 * (x.kMajor ? t.bk : mn) * 2;
          ValueId swizzled = op(IndexOp::Xor, laneOff, b.mul(xored, i32(32)));
          ValueId moved = b.mul(stepped, i32(stepBytes));
          ValueId at = b.add(b.add(base, swizzled), moved);
          ValueId r = b.loadMatrix(smem, at, !x.kMajor);
          b.store(frags, b.mul(i, i64(4)), r, 4);
        });
      };
      load(plan.a, stage, aLane, mi, t.bm, fa, "mi");
      load(plan.b, stageB, bLane, ni / 2, t.bn, fb, "nj");
      loop(mi, "mi", -1, [&](ValueId m) {
        loop(ni, "ni", -1, [&](ValueId n) {
          ValueId fragA = b.load(fa, b.mul(m, i64(4)), 4);
          ValueId fragB = b.load(fb, b.mul(n, i64(2)), 2);
          ValueId four = i64(4);
          ValueId row = b.mul(m, i64(ni));
          ValueId slot = b.mul(b.add(row, n), four);
          ValueId c = b.load(acc, slot, 4);
          ValueId d = b.mma(plan.operand, fragA, fragB, c);
          b.store(acc, slot, d, 4);
        });
      });
    });
  }

  /// Each lane's accumulators into the f32 tile (reusing the stages), two adjacent columns at a
  /// time.
  /// This thread's accumulators of n8 tiles [first, first + count) of its warp tile (all of
  /// them by default) into the f32 output tile in shared memory, rows `ldc` apart (by default
  /// their columns and 8 words of padding, which keep the stores conflict-free), columns from
  /// `to` on.
  ValueId accumulatorsToShared(int first = 0, int count = 0, int ldc = 0, int to = 0) {
    ldc = ldc ? ldc : (count ? count * 8 : t.bn) + 8;
    count = count ? count : ni;
    ValueId tileC = b.dynamicShared(DType::F32, "tileC");
    ValueId laneRow = op(IndexOp::Shr, lane, i32(2));
    ValueId two = i32(2);
    ValueId laneCol = b.mul(op(IndexOp::And, lane, i32(3)), two);
    loop(mi, "mi", -1, [&](ValueId m) {
      loop(count, "ni", -1, [&](ValueId n) {
        loop(2, "h", -1, [&](ValueId h) {
          ValueId m32 = to32(m);
          ValueId n32 = to32(n);
          ValueId h32 = to32(h);
          ValueId h8 = b.mul(h32, i32(8));
          ValueId rowIn = b.add(b.mul(m32, i32(16)), h8);
          ValueId row = b.add(b.add(warpRow, rowIn), laneRow);
          ValueId within = b.add(b.mul(n32, i32(8)), laneCol);
          ValueId col = b.add(warpCol, to ? b.add(within, i32(to)) : within);
          ValueId h2 = b.mul(h, i64(2));
          ValueId four = i64(4);
          ValueId mRow = b.mul(m, i64(ni));
          ValueId tile = first ? b.add(n, i64(first)) : n;
          ValueId slot = b.add(b.mul(b.add(mRow, tile), four), h2);
          ValueId pair = b.load(acc, slot, 2);
          b.store(tileC, fold(IndexOp::Add, cBase, b.add(b.mul(row, i32(ldc)), col)), pair, 2);
        });
      });
    });
    return tileC;
  }

  /// Builds the tensor-core kernel; returns its shared-memory bytes.
  int tensorCoreKernel() {
    int wm = t.bm / t.warpsM, wn = t.bn / t.warpsN;
    mi = wm / 16;
    ni = wn / 8;
    aBytes = t.bm * t.bk * 2;
    stageBytes = aBytes + t.bn * t.bk * 2;
    kTiles = int((plan.k + t.bk - 1) / t.bk);
    // The stages are addressed in bytes: ldmatrix and cp.async take byte addresses, and the
    // fragment steps stay constants (Note [Fragment addresses]).
    smem = b.dynamicShared(DType::I8, "smem");
    if (!plan.a.async || !plan.b.async)
      words = b.dynamicShared(DType::I32, "smemWords");
    tidWide = b.special(kir::Special::TidX);
    epilogueTid = tidWide;
    tid = to32(tidWide, "tid");
    lane = op(IndexOp::And, tid, i32(31), "lane");
    ValueId warp = op(IndexOp::Shr, tid, i32(5), "warp");
    ValueId rows = i32(wm);
    warpRow = b.mul(op(IndexOp::Div, warp, i32(t.warpsN)), rows, "warpRow");
    ValueId cols = i32(wn);
    warpCol = b.mul(op(IndexOp::Rem, warp, i32(t.warpsN)), cols, "warpCol");
    aLane = laneOffset(true);
    bLane = laneOffset(false);
    tileSpace();
    la = loader(true);
    lb = loader(false);
    forEachTile([&](const TileAt &at) {
      startTile(la, at);
      startTile(lb, at);
      acc = zeroedAccumulators(mi * ni * 4);
      mainLoop();
      epilogueLoop({accumulatorsToShared(), cBase, t.bn + 8, plan.acc, false, t.bn / 2}, at);
    });
    return std::max(t.stages * stageBytes, t.bm * (t.bn + 8) * 4);
  }

  // ---- the warp-specialized kernel (sm_90a) ----

  // Note [Clustered tiles]
  // With `cluster=2` two blocks run as a cluster (launched so: LaunchConfig::cluster) and take
  // tiles one above the other: the tile space's rows are pairs of tile rows, both blocks walk the
  // same pairs, and each takes the row of its rank. Their B tile is the same, so each block's
  // producer TMA-loads half of it (K-major: one box of half the rows; N-major: every other
  // 64-column panel; paired: one product's) with a multicast to both blocks, each completing on
  // the stage's full barrier of both; every full barrier expects the whole stage's bytes as
  // before. A producer then writes a stage in both blocks, so it may only refill it once the
  // consumers of both have freed it: the empty barrier of each block counts one arrival from each
  // consumer warpgroup of each block (its threads 0 and 1 arrive, on rank 0's and rank 1's: the
  // warpgroup's wgmmas are done reading for all its threads once they are for one). A cluster
  // barrier after the barriers' inits keeps either block from writing into the other's stages
  // before they exist, and one before the exit keeps a block alive while the other may still
  // arrive on its barriers. Each block reads (bn / 2) / (bm + bn) fewer bytes from L2 (a third
  // for 128 x 256 tiles, a quarter for 128 x 128). On the
  // H100 the pair is slower all the same (bench/RESULTS.md, 2026-11-28: the LLaMA layer's gate/up
  // gemm 733 us against 670, BERT B8's QKV 43.0 against 38.8): the blocks wait for each other at
  // every stage and L2 was not what bounded them. So clusters are asked for (a kernel's config)
  // or found by --tune (Note [Tuning candidates] in Tiles.cpp), never the default.

  /// Mbarriers of stage s: full (the producer's arrival and the TMA bytes) and empty (every
  /// consumer thread's arrival once its wgmmas have read the stage; in a cluster one arrival a
  /// consumer warpgroup of each block, release()).
  ValueId fullAt(ValueId slot) { return slot; }
  ValueId emptyAt(ValueId slot) { return b.add(slot, i64(t.stages)); }

  /// The stage slot and its barriers' parity of K step number `n` (i64) of the block: both sides
  /// count the steps they went through, across the block's tiles.
  std::pair<ValueId, ValueId> slotOf(ValueId n) { return templates::ringSlot(b, n, t.stages); }

  /// A stage's bytes: A's bm x 64 panel (halo tiles: a box a piece), then B's (bn x 64, or
  /// bn / 64 panels of 64 x 64; halo tiles: a bn x 64 tile a filter row).
  ValueId stageStart(ValueId slot) { return b.mul(slot, i64(stageBytes), "stage"); }

  /// body(at, first, count) for each unit of the block: a tile and its split's K steps [first,
  /// first + count) (i64). Split K, unit u is split u % splits of tile u / splits, the splits of
  /// a tile on neighbouring blocks; split s takes the steps from s kTiles / splits on.
  void forEachUnit(const std::function<void(const TileAt &, ValueId, ValueId)> &body) {
    if (t.splitK == 1)
      return forEachTile([&](const TileAt &at) {
        ValueId first = i64(0);
        body(at, first, i64(kTiles));
      });
    ValueId first = b.special(kir::Special::CtaidX);
    ValueId grid = b.special(kir::Special::NctaidX);
    ValueId units = b.mul(numTiles, i64(t.splitK), "units");
    b.forLoop(first, units, grid, "unit", 0, [&](ValueId unit) {
      ValueId splits = i64(t.splitK), steps = i64(kTiles);
      ValueId index = op(IndexOp::Div, unit, splits, "tileIndex");
      TileAt at = decodeTile(index);
      at.index = index;
      at.split = op(IndexOp::Rem, unit, splits, "split");
      ValueId from = op(IndexOp::Div, b.mul(at.split, steps), splits, "kFirst");
      ValueId next = b.add(at.split, i64(1));
      ValueId to = op(IndexOp::Div, b.mul(next, steps), splits, "kEnd");
      body(at, from, op(IndexOp::Sub, to, from, "kSteps"));
    });
  }

  /// A conv2d's A by TMA (Note [Implicit gemm on the tensor memory accelerator]): the window
  /// corner of the tile's first row, {its column, its row, its image} as i32 coordinates of the
  /// im2col map.
  std::vector<ValueId> windowCorner(ValueId m0) {
    const Window &w = *plan.a.window;
    ValueId ow = op(IndexOp::Rem, m0, i64(w.ow), "ow0");
    ValueId rest = op(IndexOp::Div, m0, i64(w.ow));
    ValueId oh = op(IndexOp::Rem, rest, i64(w.oh), "oh0");
    ValueId image = op(IndexOp::Div, rest, i64(w.oh), "image0");
    ValueId across = b.mul(ow, i64(w.strideW)), down = b.mul(oh, i64(w.strideH));
    ValueId left = op(IndexOp::Sub, across, i64(w.padLeft));
    ValueId top = op(IndexOp::Sub, down, i64(w.padTop));
    return {to32(left, "left0"), to32(top, "top0"), to32(image)};
  }

  /// The K step at i32 `k0` of the tile at `corner` (windowCorner): channels k0 % C on of every
  /// row's pixel at the filter tap k0 / C.
  void loadWindow(ValueId stage, ValueId aMap, ValueId full, ValueId k0,
                  const std::vector<ValueId> &corner) {
    const Window &w = *plan.a.window;
    ValueId channel = op(IndexOp::Rem, k0, i32(w.c), "c0");
    ValueId tap = op(IndexOp::Div, k0, i32(w.c), "tap");
    ValueId r = op(IndexOp::Div, tap, i32(w.kw)), s = op(IndexOp::Rem, tap, i32(w.kw));
    ValueId across = b.mul(s, i32(w.dilationW), "across");
    ValueId down = b.mul(r, i32(w.dilationH), "down");
    b.tensorLoadIm2col(smem, stage, aMap, bars, full, {channel, corner[0], corner[1], corner[2]},
                       {across, down});
  }

  /// Halo tiles' K step `step` (i32) of tile `at` (Note [Halo tiles]): filter column s of the
  /// 64-channel panel p, step = p kw + s. A's box of the tile's input rows into `stage`; then,
  /// from the tile's chain's B, filter row i's tile: K from (i kw + s) c + 64 p, bn rows.
  void loadHalo(ValueId stage, ValueId aMap, const std::vector<ValueId> &bMaps, ValueId full,
                ValueId step, const TileAt &at) {
    const Window &w = *plan.a.window;
    ValueId panel = op(IndexOp::Div, step, i32(w.kw));
    ValueId s = op(IndexOp::Rem, step, i32(w.kw), "s");
    ValueId channel = b.mul(panel, i32(64), "c0");
    ValueId across = b.mul(s, i32(w.dilationW));
    HaloTiles tiles = plan.haloTiles(t);
    for (int64_t g = 0; g < tiles.perTile; ++g) {
      Piece p = pieceAt(b.add(at.piece, i64(g)));
      ValueId x = b.add(op(IndexOp::Sub, p.left, i32(w.padLeft)), across, "x0");
      ValueId y = op(IndexOp::Sub, p.top, i32(w.padTop), "y0");
      ValueId box = b.add(stage, i64(g * tiles.boxBytes()));
      b.tensorLoad(smem, box, aMap, bars, full, {channel, x, y, to32(p.image)});
    }
    ValueId n0 = to32(at.n0);
    byChain(at, [&](unsigned g) {
      for (int64_t i = 0; i < w.kh; ++i) {
        ValueId tap = b.add(i32(i * w.kw), s);
        ValueId k = b.add(b.mul(tap, i32(w.c)), channel, "bK");
        ValueId to = b.add(stage, i64(aBytes + i * bTileBytes()));
        b.tensorLoad(smem, to, bMaps[g], bars, full, {k, n0});
      }
    });
  }

  /// The producer (one thread): each K step of each unit into the next stage once it is free.
  void produce(ValueId aMap, const std::vector<ValueId> &bMaps) {
    ValueId seen = b.localArray(DType::I64, 1, "seen");
    ValueId zero = i64(0), one = i64(1);
    b.store(seen, zero, zero);
    forEachUnit([&](const TileAt &at, ValueId from, ValueId count) {
      ValueId m0 = to32(at.m0), n0 = to32(at.n0);
      std::vector<ValueId> corner =
          plan.a.window && !t.halo ? windowCorner(at.m0) : std::vector<ValueId>{};
      b.forLoop(zero, count, one, "kt", 0, [&](ValueId kt) {
        ValueId n = b.load(seen, zero, 1, "n");
        auto [slot, parity] = slotOf(n);
        ValueId empty = emptyAt(slot);
        b.mbarrierWait(bars, empty, op(IndexOp::Xor, parity, i32(1), "free"));
        ValueId full = fullAt(slot);
        b.mbarrierExpectTx(bars, full, unsigned(stageBytes));
        ValueId stage = stageStart(slot);
        ValueId step = to32(t.splitK == 1 ? kt : b.add(from, kt));
        if (t.halo) {
          loadHalo(stage, aMap, bMaps, full, step, at);
          b.store(seen, zero, b.add(n, one));
          return;
        }
        ValueId k0 = b.mul(step, i32(t.bk), "k0");
        if (plan.a.window)
          loadWindow(stage, aMap, full, k0, corner);
        else
          b.tensorLoad(smem, stage, aMap, bars, full, {k0, m0});
        ValueId bStage = b.add(stage, i64(aBytes));
        // B's box number `box` of the stage: alone, or (Note [Clustered tiles]) the even boxes
        // from the cluster's rank 0 and the odd ones from rank 1, each to both blocks.
        auto put = [&](int box, ValueId to, ValueId map, const std::vector<ValueId> &at) {
          if (t.cluster == 1)
            return b.tensorLoad(smem, to, map, bars, full, at);
          ValueId mine = box % 2 ? b.less(i32(0), rank) : b.less(rank, i32(1));
          b.ifThenElse(mine, [&] { b.tensorLoad(smem, to, map, bars, full, at, 3); });
        };
        auto loadB = [&](ValueId bMap) {
          if (plan.b.kMajor && t.cluster == 1)
            return b.tensorLoad(smem, bStage, bMap, bars, full, {k0, n0});
          if (plan.b.kMajor) { // two boxes of half the rows
            put(0, bStage, bMap, {k0, n0});
            ValueId second = b.add(bStage, i64(int64_t(t.bn / 2) * 128));
            return put(1, second, bMap, {k0, b.add(n0, i32(t.bn / 2))});
          }
          for (int panel = 0; panel < t.bn / 64; ++panel) {
            ValueId to = b.add(bStage, i64(int64_t(panel) * 64 * 128));
            put(panel, to, bMap, {b.add(n0, i32(64 * panel)), k0});
          }
        };
        if (!plan.paired) {
          byChain(at, [&](unsigned g) { loadB(bMaps[g]); });
        } else if (plan.b.kMajor) { // Note [Paired gemm]: chain 1's rows after chain 0's
          put(0, bStage, bMaps[0], {k0, n0});
          ValueId second = b.add(bStage, i64(int64_t(t.outN()) * 128));
          put(1, second, bMaps[1], {k0, n0});
        } else { // chain 1's panels after chain 0's
          int panels = t.outN() / 64;
          for (int panel = 0; panel < 2 * panels; ++panel) {
            ValueId to = b.add(bStage, i64(int64_t(panel) * 64 * 128));
            ValueId column = b.add(n0, i32(64 * (panel % panels)));
            put(panel, to, bMaps[panel / panels], {column, k0});
          }
        }
        b.store(seen, zero, b.add(n, one));
      });
    });
  }

  /// This consumer thread is done reading stage `slot`: it arrives on the stage's empty barrier.
  /// In a cluster, where every block's producer writes the stage in both, the warpgroup's wgmmas
  /// that read it are done for all its threads once they are for one: its threads 0 and 1 arrive,
  /// on rank 0's barrier and rank 1's (Note [Clustered tiles]).
  void release(ValueId slot) {
    if (t.cluster == 1)
      return b.mbarrierArrive(bars, emptyAt(slot));
    ValueId to = op(IndexOp::And, tid, i32(127), "signals"); // the rank it signals, if below 2
    b.ifThenElse(b.less(to, i32(t.cluster)),
                 [&] { b.mbarrierArriveRemote(bars, emptyAt(slot), to); });
  }

  /// A consumer warpgroup: 64 rows of each unit's tile, a K step's four wgmmas once its stage is
  /// full; the stage before it is freed once those are done (one group stays in flight). Then the
  /// epilogue from the accumulators, split K by the tile's last split only.
  void consume() {
    ValueId thread = to32(tidWide);
    ValueId consumer = b.arith(IndexOp::Sub, thread, i32(128), "consumer");
    epilogueTid = to64(consumer);
    tid = consumer;
    lane = op(IndexOp::And, tid, i32(31), "lane");
    ValueId warp = op(IndexOp::Shr, tid, i32(5), "warp");
    warpRow = b.mul(warp, i32(16), "warpRow"); // group g's rows: 64 g + 16 (warp % 4)
    warpCol = i32(0);
    ValueId group = op(IndexOp::Shr, tid, i32(7), "group");
    // The group's rows of A's panel (128 B a row), or its piece's box (Note [Halo tiles]).
    int64_t groupBytes = t.halo ? plan.haloTiles(t).boxBytes() : 64 * 128;
    ValueId aRows = b.mul(group, i32(groupBytes));
    ValueId kMajor = b.index(kir::Builder::wgmmaLayout(128, 8 * 128, 16));
    ValueId nMajor = b.index(kir::Builder::wgmmaLayout(128, 8 * 128, t.bk * 128));
    b.rename(kMajor, "kMajor");
    b.rename(nMajor, "nMajor");
    ValueId seen = b.localArray(DType::I64, 1, "seen");
    ValueId zero = i64(0), one = i64(1);
    b.store(seen, zero, zero);
    ValueId handed = kNone; // the epilogue warps: tiles handed over so far
    if (t.epilogueWarps) {
      handed = b.localArray(DType::I64, 1, "handed");
      b.store(handed, zero, zero);
    }
    if (t.overlap)
      startPending();
    startAhead();
    forEachUnit([&](const TileAt &at, ValueId, ValueId count) {
      readAhead(at);
      acc = zeroedAccumulators(t.bn / 2);
      // A K step: its stage's wgmmas once full, `between` while they run, then the stage before
      // it freed once they are done (one group stays in flight).
      auto step = [&](ValueId kt, const std::function<void()> &between) {
        ValueId n = b.load(seen, zero, 1, "n");
        auto [slot, parity] = slotOf(n);
        b.mbarrierWait(bars, fullAt(slot), parity);
        ValueId stage = b.convert(DType::I32, stageStart(slot));
        ValueId aStage = b.add(stage, aRows);
        ValueId bStage = b.add(stage, i32(aBytes));
        b.wgmmaFence({acc});
        // Halo tiles (Note [Halo tiles]): filter row i's A from 8 i dh rows on, its B tile i.
        int64_t rowsOfFilter = t.halo ? plan.a.window->kh : 1;
        for (int64_t i = 0; i < rowsOfFilter; ++i) {
          int64_t aRow = t.halo ? i * plan.a.window->dilationH * coreMatrixBytes() : 0;
          int64_t bTile = i * bTileBytes();
          for (int kk = 0; kk < t.bk / 16; ++kk) {
            ValueId aAt = b.add(aStage, i32(aRow + 32 * kk));
            ValueId bAt = b.add(bStage, i32(bTile + (plan.b.kMajor ? 32 * kk : 16 * 128 * kk)));
            b.wgmma(plan.operand, unsigned(t.bn), acc, {smem, aAt, kMajor},
                    {smem, bAt, plan.b.kMajor ? kMajor : nMajor}, !plan.b.kMajor);
          }
        }
        b.wgmmaCommit();
        if (between)
          between();
        b.wgmmaWait(1, {acc});
        b.ifThenElse(b.less(zero, kt), [&] {
          ValueId before = b.arith(IndexOp::Sub, n, one);
          release(slotOf(before).first);
        });

        b.store(seen, zero, b.add(n, one));
      };
      int peeled = 0;       // the first steps, each with a slice of the pending tile's epilogue
      if (t.overlap == 1) { // Note [Overlapped epilogue]
        peeled = std::min(t.slices(), kTiles);
        for (int i = 0; i < peeled; ++i)
          step(i64(i), [&] { pendingSlice(i, 1); });
      }
      if (t.overlap == 2) { // Note [Staged epilogue]: the first stages the pending tile
        peeled = 1;
        step(zero, [&] {
          stagePending();
          stagedPart(i32(0));
        });
      }
      b.forLoop(i64(peeled), count, one, "kt", 0, [&](ValueId kt) {
        if (t.overlap != 2)
          return step(kt, {});
        step(kt, [&] { stagedPart(to32(kt, "part")); });
      });
      if (peeled < t.slices() && t.overlap == 1)
        pendingSlice(peeled, t.slices() - peeled);
      if (t.overlap == 2 && kTiles < stagedParts()) // parts no K step was left for
        loop(stagedParts() - kTiles, "rest", 0, [&](ValueId p) {
          ValueId p32 = to32(p);
          stagedPart(b.add(p32, i32(kTiles), "part"));
        });
      b.wgmmaWait(0, {acc});
      ValueId last = b.arith(IndexOp::Sub, b.load(seen, zero, 1, "n"), one);
      release(slotOf(last).first);
      if (t.overlap)
        return keepPending(at);
      if (t.epilogueWarps)
        return handOver(handed);
      if (t.splitK == 1)
        return epilogue(at);
      b.ifThenElse(lastSplit(at), [&] {
        sumPartials(at);
        epilogue(at);
        b.ifThenElse(b.less(tid, i32(1)), [&] { b.store(counters, at.index, i32(0)); });
      });
    });
    if (t.overlap == 1) // the block's last tile
      pendingSlice(0, t.slices());
    if (t.overlap == 2) {
      stagePending();
      loop(stagedParts(), "part", 0, [&](ValueId p) { stagedPart(to32(p)); });
    }
    if (t.sliceBytes) // no block leaves while a TMA store still reads its shared memory
      b.ifThenElse(b.less(tid, i32(1)), [&] { b.bulkWait(0); });
  }

  // Note [Overlapped epilogue]
  // With `overlap=1` a consumer keeps a finished tile's products, rounded to their 2-byte dtype
  // (what the reference stores, and what each chain starts from), packed in pairs in registers:
  // bn / 4 words beside the next tile's bn / 2 accumulators. The next tile's first K steps each
  // run a slice of that tile's epilogue (TileConfig::slices(), sliceColumns wide) between issuing
  // their wgmmas and waiting for them, so that the stores, and a light epilogue's math, run under
  // the tensor cores' work instead of between tiles; the block's last tile runs its epilogue
  // whole after the loop. Each thread evaluates its own fragment (rows warpRow + 8 h + lane / 4,
  // columns 8 j + 2 (lane % 4) and the next) and writes the results into the slice's buffer in
  // shared memory, swizzled as the TMA store reads it (storeToSlice); every thread's writes made
  // visible to the TMA (fence.proxy.async), a barrier of the consumers, and consumer 0 stores the
  // slice of each result by TMA, which clips it at the result's edges. Two buffers alternate:
  // consumer 0 waits, before the barrier of a slice, for the store of the slice before (issued a
  // K step earlier), so the buffer it read is free for the slice after. Results whose rows are not
  // a multiple of 16 bytes go from the registers to global memory a pair at a time instead.
  //
  // Measured on the H200 (bench/RESULTS.md, 2026-11-28): the plain 8192 x 4096 x 1024 product
  // 111.3 -> 101.8 us (its main loop alone, nothing stored: 94.3), 4096 x 2304 x 768 33.9 -> 32.5;
  // but GeLU's math (135.2 against 136.0; 136.1-140.8 in 4, 8 or 16 slices: two consumer warps a
  // scheduler stall on its dependences, ncu) and a residual's reads (4096 x 768 x 3072 46.3
  // against 42.2) cost more between the wgmmas than they save, and stores straight from the
  // fragments (a warp's four-byte stores across eight rows) made even the plain product slower
  // (121.9). So the cost model takes it for light epilogues (lightEpilogue in Tiles.cpp) over more
  // than one wave of tiles, and stages heavier math (Note [Staged epilogue]); `overlap=1` and
  // --tune take it anywhere it runs.

  // Note [Staged epilogue]
  // With `overlap=2` the pending tile's products (kept in registers as with overlap=1, bn / 4
  // packed words) go, under the next tile's first K step, into a tile of shared memory beside the
  // stages (bm x bn of their 2-byte dtype, 64-column panels of 128-byte rows, 16-byte chunks
  // XOR-swizzled by the row's low three bits); then each K step runs a part of its epilogue:
  // vectorsPerStep() vectors of 8 adjacent columns a thread, read as one 16-byte load, through
  // the chain and out to global memory as 16-byte stores. A warp reads back only its own 16 rows
  // (the rows its wgmma fragments hold), so a warp barrier orders the writes and reads, no
  // barrier of the consumers and no TMA store. The registers the products took are free again
  // after the first K step, and the epilogue's math is spread over every K step, a few vectors at
  // a time, instead of the first few: a heavy epilogue (GeLU's math) has registers and time to
  // hide in. The shared tile takes a stage of a 256-wide tile's four. A paired tile (Note [Paired
  // gemm]) stages both products, each vector of 8 result columns reading its chunk of each.
  //
  // Measured on the H200 (bench/RESULTS.md, 2026-11-28): bias + GeLU 8192 x 4096 x 1024 136.1 us
  // between tiles, 134.4-135.6 in register slices, 123.8-125.6 staged (116.4-118.6 with GeLU's
  // degree-5 polynomial, Note [Math of f16 and bf16 values]); 4096 x 3072 x 768 48.8 -> 46.4
  // (43.7); a bias alone 104.1 staged against 103.6 in slices (three stages against four). So
  // the cost model stages an epilogue the slices do not hide (Tiles.cpp); a residual's reads,
  // no faster staged (2048 x 4096 x 4096: 105.3 against 98.4-99.9), stay between tiles.

  /// A warp's vectors of 8 result columns of a tile's 16 rows, for each of its lanes (paired:
  /// of t.outN() columns, each read from both products).
  int stagedVectors() const { return t.outN() / 16; }
  /// Those a lane takes under one K step: all of them under the tile's K steps, the first's
  /// after staging the products (what is left, after the loop).
  int vectorsPerStep() const {
    int steps = int(plan.kSteps(t)); // schedule() runs before kTiles is set
    return (stagedVectors() + steps - 1) / steps;
  }
  int stagedParts() const { return (stagedVectors() + vectorsPerStep() - 1) / vectorsPerStep(); }

  /// The pending tile's packed products, if there is one, into the staged tile: each warp its
  /// 16 rows (Note [Staged epilogue]).
  void stagePending() {
    ValueId has = b.load(pendingFlag, i64(0), 1, "hasPending");
    b.ifThenElse(b.less(i32(0), has), [&] {
      ValueId words = b.dynamicShared(DType::I32, "stagedWords");
      ValueId laneRow = op(IndexOp::Shr, lane, i32(2));
      ValueId laneWord = op(IndexOp::And, lane, i32(3)); // a pair's word in its 16-byte chunk
      ValueId start = i32(outputStart() / 4);
      ValueId row = b.add(warpRow, laneRow);
      ValueId rowAt = b.add(start, b.mul(row, i32(32))); // 32 words a row
      ValueId base = b.add(rowAt, laneWord, "stagedAt");
      b.warpBarrier(); // the warp's lanes have read the tile before
      loop(t.bn / 8, "j", -1, [&](ValueId j) {
        ValueId j32 = to32(j);
        ValueId panelIndex = op(IndexOp::Shr, j32, i32(3));
        ValueId panel = b.mul(panelIndex, i32(t.bm * 32)); // bm rows of 32 words
        ValueId column = op(IndexOp::And, j32, i32(7));    // the 16-byte chunk in the panel's row
        ValueId chunk = op(IndexOp::Xor, column, laneRow);
        ValueId panelAt = b.add(base, panel);
        ValueId at = b.add(panelAt, b.mul(chunk, i32(4)));
        loop(2, "h", -1, [&](ValueId h) {
          ValueId two = i64(2);
          ValueId slot = b.add(b.mul(j, two), h);
          ValueId word = b.load(pending, slot, 1, "word");
          ValueId h32 = to32(h);
          ValueId eightRows = b.mul(h32, i32(8 * 32));
          b.store(words, b.add(at, eightRows), word);
        });
      });
      b.warpBarrier(); // every lane's products written before any lane reads them
    });
  }

  /// Part `part` (i32) of the pending tile's epilogue, if there is one: vectorsPerStep() vectors
  /// of 8 columns of this thread (Note [Staged epilogue]).
  void stagedPart(ValueId part) {
    ValueId has = b.load(pendingFlag, i64(0), 1, "hasPending");
    ValueId live = b.less(i32(0), has);
    if (kTiles > stagedParts()) // K steps past the last part
      live = op(IndexOp::And, live, b.less(part, i32(stagedParts())));
    b.ifThenElse(live, [&] {
      TileAt at = pendingTile();
      DType type = kir::storageType(handedType());
      ValueId values = b.dynamicShared(type, "stagedValues");
      ValueId start = i32(outputStart() / 2);
      bool whole = wholeTiles();
      int perRow = t.outN() / 8; // result vectors in a row of the tile
      // Vector v of this part through chain g's epilogue (Note [Chains of a grouped tile]).
      auto staged = [&](unsigned g, ValueId v) {
        ValueId partAt = b.mul(part, i32(vectorsPerStep()));
        ValueId vector = b.add(partAt, to32(v), "vector");
        ValueId piece = b.add(b.mul(vector, i32(32)), lane); // of the warp's 16 rows
        ValueId rowIn = b.add(warpRow, op(IndexOp::Div, piece, i32(perRow)), "rowIn");
        ValueId col8 = op(IndexOp::Rem, piece, i32(perRow));
        ValueId rowSwizzle = op(IndexOp::And, rowIn, i32(7));
        ValueId rowAt = b.add(start, b.mul(rowIn, i32(64))); // 64 values a panel's row
        // This row's 8 staged values from column 8 col8 (i32) on: one 16-byte chunk, as an array.
        auto stagedValues = [&](ValueId col8) {
          ValueId panelIndex = op(IndexOp::Shr, col8, i32(3));
          ValueId panel = b.mul(panelIndex, i32(t.bm * 64)); // bm rows of 64 values
          ValueId column = op(IndexOp::And, col8, i32(7));   // the 16-byte chunk in the panel's row
          ValueId chunk = op(IndexOp::Xor, column, rowSwizzle);
          ValueId panelRow = b.add(rowAt, panel);
          ValueId first = b.add(panelRow, b.mul(chunk, i32(8)), "first");
          return loadRow(values, first, type, 8, "c");
        };
        RowAt place = tileRow(at, rowIn, whole);
        ValueId row = place.m, inRows = place.inside;
        ValueId col8Wide = to64(b.mul(col8, i32(8)));
        ValueId col = b.add(at.n0, col8Wide, "col");
        auto element = [&] {
          ValueId sums = stagedValues(col8);
          if (plan.paired) { // Note [Paired gemm]: chain 1's columns t.outN() to the right
            ValueId partner = stagedValues(b.add(col8, i32(perRow)));
            return epilogueVector(plan.joint, 8, {sums, partner}, true, row, col);
          }
          epilogueVector(plan.chains[g], 8, {sums}, true, row, col);
        };
        ValueId wanted = kNone; // a part's last vectors past the warp's, and the result's edges
        if (stagedVectors() % vectorsPerStep())
          wanted = b.less(vector, i32(stagedVectors()));
        if (!whole) {
          ValueId inCols = b.less(col, i64(plan.n));
          wanted = fold(IndexOp::And, wanted, fold(IndexOp::And, inRows, inCols));
        }
        if (wanted == kNone)
          return element();
        b.ifThenElse(wanted, element);
      };
      byChain(at, [&](unsigned g) {
        loop(vectorsPerStep(), "v", -1, [&](ValueId v) { staged(g, v); });
      });
    });
  }

  /// The registers of the tile whose epilogue is pending: its products, its origin and chain, and
  /// whether there is one (none before the block's first tile).
  void startPending() {
    pending = b.localArray(DType::I32, unsigned(t.bn / 4), "pending"); // packed pairs
    pendingAt = b.localArray(DType::I64, 3, "pendingAt");
    pendingFlag = b.localArray(DType::I32, 1, "hasPending");
    ValueId zero = i64(0), none = i32(0);
    b.store(pendingFlag, zero, none);
    if (t.sliceBytes) {
      slicesDone = b.localArray(DType::I32, 1, "slicesDone");
      b.store(slicesDone, zero, none);
    }
  }

  /// The finished tile `at` becomes the pending one: its accumulators rounded and packed in pairs
  /// (words, not 2-byte elements: the LLVM back end kept those in 16-bit registers and spilled).
  void keepPending(const TileAt &at) {
    DType type = handedType();
    loop(t.bn / 4, "p", -1, [&](ValueId p) {
      ValueId slot = b.mul(p, i64(2));
      ValueId lo = b.load(acc, slot, 1);
      ValueId hi = b.load(acc, b.add(slot, i64(1)), 1);
      ValueId word = b.pack(type, lo, hi);
      b.store(pending, p, word);
    });
    ValueId chain = at.chain == kNone ? i64(0) : to64(at.chain);
    ValueId fields[] = {at.m0, at.n0, chain};
    for (int i = 0; i < 3; ++i) {
      ValueId slot = i64(i);
      b.store(pendingAt, slot, fields[i]);
    }
    ValueId zero = i64(0), one = i32(1);
    b.store(pendingFlag, zero, one);
  }

  /// sm_90a: the byte where the output tile, the slice buffers or the staged tile start in
  /// shared memory, after the stages.
  int64_t outputStart() const { return int64_t(t.stages) * stageBytes; }

  /// The pending tile's origin and chain, as keepPending kept them.
  TileAt pendingTile() {
    TileAt at;
    at.z = i64(0);
    at.m0 = b.load(pendingAt, i64(0), 1, "pm0");
    at.n0 = b.load(pendingAt, i64(1), 1, "pn0");
    if (plan.tileChains() > 1)
      at.chain = to32(b.load(pendingAt, i64(2), 1), "pchain");
    placeHalo(at);
    return at;
  }

  /// Slices [first, first + count) of the pending tile's epilogue, if there is one.
  void pendingSlice(int first, int count) {
    ValueId has = b.load(pendingFlag, i64(0), 1, "hasPending");
    b.ifThenElse(b.less(i32(0), has), [&] {
      TileAt at = pendingTile();
      for (int s = first; s < first + count; ++s)
        epilogueSlice(at, s);
    });
  }

  /// Slice `s` of the pending tile `at`: its n8 tiles of columns through the epilogue, stored
  /// from the registers, or into the slice's buffer in shared memory, which consumer 0 then
  /// TMA-stores once every consumer wrote its part (Note [Overlapped epilogue]).
  void epilogueSlice(const TileAt &at, int s) {
    int per = t.sliceColumns / 8;
    ValueId laneRow = op(IndexOp::Shr, lane, i32(2));
    ValueId laneQuad = op(IndexOp::And, lane, i32(3));
    ValueId laneCol = b.mul(laneQuad, i32(2));
    DType type = handedType(); // of the packed pairs
    bool whole = wholeTiles();
    ValueId buffer = kNone; // the byte offset of the slice's buffer
    if (t.sliceBytes) {
      ValueId done = b.load(slicesDone, i64(0), 1, "slicesDone");
      ValueId which = op(IndexOp::Rem, done, i32(TileConfig::kSliceBuffers), "buffer");
      ValueId start = i32(outputStart());
      buffer = b.add(start, b.mul(which, i32(t.sliceBytes)), "sliceAt");
    }
    // The slice's n8 tile j through chain g's epilogue (Note [Chains of a grouped tile]).
    auto columns = [&](unsigned g, ValueId j) {
      ValueId n8 = b.add(j, i64(int64_t(s) * per));
      loop(2, "h", -1, [&](ValueId h) {
        ValueId h32 = to32(h), eight = i32(8);
        ValueId rowIn = b.add(b.add(warpRow, b.mul(h32, eight)), laneRow);
        RowAt place = tileRow(at, rowIn, whole);
        ValueId row = place.m, inRows = place.inside;
        ValueId n32 = to32(n8);
        ValueId colIn = b.add(b.mul(n32, eight), laneCol);
        ValueId col = b.add(at.n0, to64(colIn), "col");
        Sink sink;
        if (t.sliceBytes)
          sink = [&](unsigned result, ValueId values) {
            ValueId j32 = to32(j);
            ValueId within = b.add(b.mul(j32, eight), laneCol); // the column within the slice
            storeToSlice(buffer, result, rowIn, within, values);
          };
        auto element = [&] {
          ValueId two = i64(2);
          ValueId slot = b.add(b.mul(n8, two), h); // the word of rows h of n8 tile n8
          ValueId word = b.load(pending, slot, 1, "word");
          ValueId pair = b.localArray(DType::F32, 2, "c");
          for (unsigned half = 0; half < 2; ++half) {
            ValueId v = b.unpack(type, word, half);
            b.store(pair, i64(half), v);
          }
          epilogueVector(plan.chains[g], 2, {pair}, true, row, col, sink);
        };
        if (whole) // else an element outside the result is neither computed nor stored
          return element();
        ValueId inCols = b.less(col, i64(plan.n));
        b.ifThenElse(fold(IndexOp::And, inRows, inCols), element);
      });
    };
    byChain(at, [&](unsigned g) { loop(per, "j", -1, [&](ValueId j) { columns(g, j); }); });
    if (!t.sliceBytes)
      return;
    // Every consumer's writes, visible to the TMA, before consumer 0 stores the slice. Its wait
    // before the barrier, for the store of the slice before (issued a K step ago), frees that
    // slice's buffer for the slice after this one.
    b.proxyFence();
    b.ifThenElse(b.less(tid, i32(1)), [&] { b.bulkWait(TileConfig::kSliceBuffers - 2); });
    syncEpilogue();
    b.ifThenElse(b.less(tid, i32(1)), [&] {
      ValueId n0 = to32(b.add(at.n0, i64(int64_t(s) * t.sliceColumns)));
      byChain(at, [&](unsigned g) { // the results of the tile's chain
        for (unsigned r : plan.chains[g].results) {
          ValueId from = b.add(buffer, i32(plan.sliceOffset(t, r)));
          if (!t.halo) {
            b.tensorStore(smem, from, outMaps[r], {n0, to32(at.m0)});
            continue;
          }
          // Note [Halo tiles]: a store a piece; the map clips what lies past the image
          int64_t pieceBytes =
              64 * t.sliceColumns * dtypeSize(plan.kernel->result(r)->type().dtype);
          for (int64_t q = 0; q < t.bm / 64; ++q) {
            Piece p = pieceAt(b.add(at.piece, i64(q)));
            ValueId rows = b.add(from, i32(q * pieceBytes));
            b.tensorStore(smem, rows, outMaps[r], {n0, p.left, p.top, to32(p.image)});
          }
        }
      });
      b.bulkCommit();
    });
    ValueId zero = i64(0);
    ValueId done = b.load(slicesDone, zero, 1);
    ValueId next = b.add(done, i32(1));
    b.store(slicesDone, zero, next);
  }

  /// The pair of `values` (result `result`'s storage type) at row `rowIn` and column `within` of
  /// the slice buffer at byte `buffer`, its 16-byte chunks swizzled as the TMA store reads them:
  /// over the row's bytes where they are 32, 64 or 128 (chunk ^= line % (row / 16), lines of 128
  /// bytes), which keeps a warp's eight rows on distinct banks. The swizzle applies to the
  /// address itself (the buffers start at multiples of 1024 bytes), so that no part of it is the
  /// same for every tile: hoisted out of the tile loop, the slices' offsets took 64 registers.
  void storeToSlice(ValueId buffer, unsigned result, ValueId rowIn, ValueId within,
                    ValueId values) {
    DType stored = kir::storageType(plan.kernel->result(result)->type().dtype);
    int size = int(dtypeSize(stored));
    int rowBytes = t.sliceColumns * size;
    ValueId base = b.add(buffer, i32(plan.sliceOffset(t, result)));
    ValueId rowAt = b.add(base, b.mul(rowIn, i32(rowBytes)));
    ValueId at = b.add(rowAt, b.mul(within, i32(size)), "offset");
    if (rowBytes >= 32) {
      ValueId line = op(IndexOp::Shr, at, i32(7));
      ValueId chunk = op(IndexOp::And, line, i32(rowBytes / 16 - 1));
      at = op(IndexOp::Xor, at, op(IndexOp::Shl, chunk, i32(4)), "swizzled");
    }
    ValueId tile = b.dynamicShared(stored, "slice");
    ValueId index = op(IndexOp::Div, at, i32(size));
    b.store(tile, index, b.load(values, i64(0), 2), 2);
  }

  /// The i64 element of the scratch where consumer `tid` keeps n8 tile j of split `split`'s
  /// partial tile `index`: four words a thread, a warp's 512 bytes contiguous.
  ValueId partAt(ValueId index, ValueId split, int j) {
    ValueId unit = b.add(b.mul(index, i64(t.splitK)), split);
    ValueId tileStep = b.mul(unit, i64(t.bn / 8));
    ValueId slot = b.add(tileStep, i64(j));
    ValueId slotStart = b.mul(slot, i64(consumerThreads()));
    ValueId thread = b.add(slotStart, to64(tid));
    return b.mul(thread, i64(4));
  }

  /// Split K: the unit's partial tile into the scratch, then the block counts itself in the
  /// tile's counter once every consumer's part is visible to the whole GPU; true (i1) for the
  /// tile's last split to arrive (CUDA's threadFenceReduction pattern).
  ValueId lastSplit(const TileAt &at) {
    for (int j = 0; j < t.bn / 8; ++j) {
      ValueId at4 = partAt(at.index, at.split, j);
      b.store(parts, at4, b.load(acc, i64(4 * j), 4), 4);
    }
    b.fence();
    syncEpilogue();
    ValueId zero32 = i32(0), zero = i64(0);
    b.ifThenElse(b.less(tid, i32(1)), [&] {
      ValueId before = b.atomicAdd(counters, at.index, i32(1), "arrived");
      b.fence(); // what the splits that counted before wrote, for this block
      ValueId isLast = b.less(i32(t.splitK - 2), before);
      b.store(lastFlag, zero, b.select(isLast, i32(1), zero32));
    });
    syncEpilogue();
    ValueId flag = b.load(lastFlag, zero, 1, "last");
    return b.less(zero32, flag);
  }

  /// The tile's last split: its accumulators become the sum of every split's partial tile, in
  /// split order (the same sums whichever split arrives last).
  void sumPartials(const TileAt &at) {
    b.fence();
    ValueId zero = b.literal(zeros(plan.acc), "");
    loop(t.bn / 2, "e", -1, [&](ValueId e) { b.store(acc, e, zero); });
    ValueId part = b.localArray(plan.acc, 4, "part");
    // Unrolled, the splits' loads overlap; bn 256's accumulators leave no registers for that.
    loop(t.splitK, "s", t.bn <= 128 ? -1 : 1, [&](ValueId split) {
      for (int j = 0; j < t.bn / 8; ++j) {
        ValueId from = partAt(at.index, split, j);
        ValueId first = i64(0);
        b.store(part, first, b.load(parts, from, 4), 4);
        for (int q = 0; q < 4; ++q) {
          ValueId slot = i64(4 * j + q);
          ValueId x = b.load(part, i64(q), 1);
          b.store(acc, slot,
                  b.math({OpKind::Add, plan.acc, plan.acc}, {b.load(acc, slot, 1), x}, ""));
        }
      }
    });
  }

  // Note [Epilogue warps]
  // With `epiwarps=1` the consumers do not run the epilogue: they round their accumulators to the
  // products' 2-byte dtype (what the reference stores, and what the chain starts from), write them
  // into the output tile in shared memory, arrive on its *tile full* mbarrier and go on with the
  // next tile's wgmmas; the producer warpgroup's warps 1-3, idle otherwise, wait for tile full,
  // run the chain over the whole tile (epilogueLoop, 96 threads) and arrive on *tile empty*, which
  // the consumers wait for before they write the next tile. So the epilogue of one tile runs
  // beside the main loop of the next. Both sides count the tiles they passed, the parity of the
  // count being the phase they wait for; the consumers' first wait passes at once (a fresh
  // mbarrier's phase before the first is complete). The block's registers stay those of its
  // launch: 88 a thread for the producer warpgroup, 208 for the consumers (168 x 384 in all; the
  // LLVM back end's consumers spill below 208).

  /// Index of the tile-full mbarrier in `bars` (tile empty follows it).
  int tileFull() const { return 2 * t.stages; }
  /// The dtype the consumers round the products to for the epilogue warps.
  DType handedType() const { return plan.chains.front().anchor->result()->type().dtype; }

  /// One side's turn at the hand-over of a tile (Note [Epilogue warps]): wait on mbarrier `wait`
  /// for the phase of this side's count in `counter` (`free`: the phase before it, which a fresh
  /// mbarrier has passed), `body`, arrive on mbarrier `arrive`, count the turn.
  void handOverTurn(ValueId counter, const std::string &name, int wait, bool free, int arrive,
                    const std::function<void()> &body) {
    ValueId zero = i64(0), one = i64(1);
    ValueId n = b.load(counter, zero, 1, name);
    ValueId phase = to32(op(IndexOp::And, n, one), free ? "" : "phase");
    ValueId bar = i64(wait);
    b.mbarrierWait(bars, bar, free ? op(IndexOp::Xor, phase, i32(1), "free") : phase);
    body();
    b.mbarrierArrive(bars, i64(arrive));
    b.store(counter, zero, b.add(n, one));
  }

  /// A consumer: its accumulators rounded to the products' dtype into the output tile, once the
  /// epilogue warps are done with the one before (Note [Epilogue warps]).
  void handOver(ValueId handed) {
    handOverTurn(handed, "handed", tileFull() + 1, true, tileFull(), [&] { storeRounded(); });
  }

  /// This consumer's accumulators, rounded to handedType() in pairs, into the output tile.
  void storeRounded() {
    ValueId one = i64(1);
    DType type = handedType();
    ValueId words = b.dynamicShared(DType::I32, "tileWords");
    int ldWords = (t.bn + 8) / 2;
    ValueId laneRow = op(IndexOp::Shr, lane, i32(2));
    ValueId laneCol = op(IndexOp::And, lane, i32(3)); // a pair's word in the n8 tile's row
    loop(ni, "ni", -1, [&](ValueId n8) {
      loop(2, "h", -1, [&](ValueId h) {
        ValueId h32 = to32(h), eight = i32(8);
        ValueId row = b.add(b.add(warpRow, b.mul(h32, eight)), laneRow);
        ValueId n32 = to32(n8), four32 = i32(4);
        ValueId col = b.add(b.mul(n32, four32), laneCol);
        ValueId two = i64(2), four = i64(4);
        ValueId hTwo = b.mul(h, two);
        ValueId slot = b.add(b.mul(n8, four), hTwo);
        ValueId lo = b.load(acc, slot, 1);
        ValueId hi = b.load(acc, b.add(slot, one), 1);
        ValueId word = b.pack(type, lo, hi);
        ValueId ld = i32(ldWords);
        ValueId at = b.add(b.add(cBase, b.mul(row, ld)), col);
        b.store(words, at, word);
      });
    });
  }

  /// The epilogue warps (threads 32-127 of the producer warpgroup): each tile of the block's
  /// walk, once the consumers have handed it over, through the epilogue (Note [Epilogue warps]).
  void runEpilogueWarps(ValueId thread) {
    epilogueTid = to64(b.arith(IndexOp::Sub, thread, i32(32), "epilogueThread"));
    DType type = kir::storageType(handedType());
    ValueId values = b.dynamicShared(type, "tileValues");
    ValueId base = b.mul(cBase, i32(2));
    ValueId taken = b.localArray(DType::I64, 1, "taken");
    ValueId zero = i64(0);
    b.store(taken, zero, zero);
    forEachUnit([&](const TileAt &at, ValueId, ValueId) {
      handOverTurn(taken, "taken", tileFull(), false, tileFull() + 1, [&] {
        epilogueLoop({values, base, t.bn + 8, type, true}, at);
      });
    });
  }

  /// The tile's epilogue through the f32 output tile in shared memory, shared by both consumer
  /// groups, a 16-byte store a thread a row quad: all of it at once, or a 256-wide tile 32
  /// columns at a time (no room beside its stages for more).
  void epilogue(const TileAt &at) {
    int width = t.outputColumns();
    if (plan.paired && width < t.bn) { // chain 0's columns [col0, + half) and chain 1's beside
      int half = width / 2, ld = width + 8;
      for (int col0 = 0; col0 < t.outN(); col0 += half) {
        accumulatorsToShared(col0 / 8, half / 8, ld, 0);
        ValueId tile = accumulatorsToShared((col0 + t.outN()) / 8, half / 8, ld, half);
        epilogueLoop({tile, cBase, ld, plan.acc, false, half}, at, col0, half);
      }
      return;
    }
    if (plan.paired)
      return epilogueLoop({accumulatorsToShared(), cBase, t.bn + 8, plan.acc, false, t.bn / 2}, at);
    for (int col0 = 0; col0 < t.bn; col0 += width)
      epilogueLoop({accumulatorsToShared(col0 / 8, width / 8), cBase, width + 8, plan.acc}, at,
                   col0, width);
  }

  /// Builds the warp-specialized kernel (docs/codegen-gemm.md): warpgroup 0 the producer (one
  /// thread issues the TMA copies), warpgroups 1 and 2 the consumers; returns its shared bytes:
  /// the stages, then the f32 output tile where the epilogue reads one.
  int specializedKernel() {
    mi = 1; // a warp's wgmma accumulators: 16 rows, bn / 8 n8 tiles (the mma layout)
    ni = t.bn / 8;
    aBytes = plan.aStageBytes(t);
    stageBytes = plan.stageBytes(t);
    kTiles = int(plan.kSteps(t));
    cBase = i32(outputStart() / 4);
    b.rename(cBase, "tileStart");
    // The stages' full and empty mbarriers; the epilogue warps' tile full and tile empty after.
    bars = b.sharedArray(DType::I64, unsigned(2 * t.stages + (t.epilogueWarps ? 2 : 0)), "bars", 8);
    if (t.splitK > 1) {
      lastFlag = b.sharedArray(DType::I32, 1, "last");
      parts = params.end()[-2];
      counters = params.back();
    }
    smem = b.dynamicShared(DType::I8, "smem", 1024);
    tidWide = b.special(kir::Special::TidX);
    ValueId thread = to32(tidWide, "thread");
    if (t.cluster > 1) { // the block's rank in its cluster: clusters run along x
      ValueId block = to32(b.special(kir::Special::CtaidX));
      rank = op(IndexOp::Rem, block, i32(t.cluster), "rank");
    }
    tileSpace();
    ValueId first = i32(1);
    b.ifThenElse(b.less(thread, first), [&] {
      for (int st = 0; st < t.stages; ++st) {
        b.mbarrierInit(bars, i64(st), 1);
        // A cluster's stage is freed by one thread of each warpgroup of each block (release()).
        int frees = t.cluster > 1 ? t.cluster * t.bm / 64 : consumerThreads();
        b.mbarrierInit(bars, i64(t.stages + st), unsigned(frees));
      }
      if (t.epilogueWarps) {
        b.mbarrierInit(bars, i64(tileFull()), unsigned(consumerThreads()));
        b.mbarrierInit(bars, i64(tileFull() + 1), unsigned(epilogueThreads()));
      }
      b.mbarrierInitFence();
    });
    if (t.cluster == 1) {
      b.barrier();
    } else { // the barriers of both blocks ready before either writes or arrives on them
      b.clusterBarrier();
    }
    std::vector<ValueId> maps; // aMap, then each chain's bMap (chooseTiles)
    for (size_t i = 0; i < plan.args.size(); ++i) {
      const KernelArg &arg = plan.args[i];
      if (arg.kind != KernelArg::Kind::TensorMap)
        continue;
      (arg.tensorMap->output ? outMaps : maps).push_back(params[i]); // outMaps: by result
    }
    ValueId aMap = maps.front();
    std::vector<ValueId> bMaps(maps.begin() + 1, maps.end());
    b.ifThenElse(
        b.less(thread, i32(128)),
        [&] {
          // The registers of the launch (168 a thread for 384 threads; 128 for two blocks of
          // 256) move to the consumers; the epilogue warps keep 88 (the block's sum may not grow).
          b.setMaxRegisters(t.epilogueWarps ? 88 : 40, false);
          b.ifThenElse(
              b.less(thread, first), [&] { produce(aMap, bMaps); },
              [&] {
                if (t.epilogueWarps)
                  b.ifThenElse(b.less(i32(31), thread), [&] { runEpilogueWarps(thread); });
              });
        },
        [&] {
          int most = t.blocksPerSM() == 2 ? 216 : t.epilogueWarps ? 208 : 232;
          b.setMaxRegisters(unsigned(most), true);
          consume();
        });
    if (t.cluster > 1) // no block leaves while the other may still arrive on its barriers
      b.clusterBarrier();
    return int(outputStart()) + t.outputBytes();
  }

  // ---- the SIMT kernel ----

  /// One operand's bk-wide K step from k0 (i64), converted to the accumulator type, into its
  /// staging array (zeros outside the operand).
  void stageOperand(bool isA, ValueId k0, const TileAt &at) {
    const Matrix &x = isA ? plan.a : plan.b;
    const Source &src = x.sources.front();
    int mn = isA ? t.bm : t.bn;
    int rowLen = x.kMajor ? t.bk : mn; // the tile's extent along the contiguous dim
    int ld = isA ? lda : ldb, offset = isA ? 0 : t.bk * lda;
    ValueId ptr = isA ? at.a : at.b, base = isA ? at.aBase : at.bBase;
    ValueId mn0 = isA ? at.m0 : at.n0;
    ValueId extentMn = isA ? rowsM : i64(plan.n);
    ValueId zero = b.literal(zeros(plan.acc), "");
    ValueId stride = i64(t.threads());
    ValueId elements = i64(int64_t(mn) * t.bk);
    b.forLoop(tidWide, elements, stride, "i", 0, [&](ValueId i) {
      ValueId i32v = to32(i);
      ValueId along = op(IndexOp::Rem, i32v, i32(rowLen));
      ValueId across = op(IndexOp::Div, i32v, i32(rowLen));
      ValueId kk = x.kMajor ? along : across, mnI = x.kMajor ? across : along;
      ValueId gk = b.add(k0, to64(kk), "gk");
      ValueId from = ptr, mnIn = mnI; // paired B: chain 1's columns fill the second half
      if (!isA && plan.paired) {
        ValueId second = b.less(i32(t.outN() - 1), mnI);
        from = b.select(second, at.b1, at.b);
        ValueId half = i32(t.outN()), none = i32(0);
        mnIn = op(IndexOp::Sub, mnI, b.select(second, half, none));
      }
      ValueId gmn = b.add(mn0, to64(mnIn), "gmn");
      ValueId inMn = b.less(gmn, extentMn);
      ValueId ok = op(IndexOp::And, b.less(gk, i64(plan.k)), inMn);
      ValueId gathered = kNone; // a gathered A's element (Note [Implicit gemm])
      if (x.window) {
        auto [inside, src] = gather(pixelOf(gmn, false), tapOf(to32(gk)));
        ok = op(IndexOp::And, ok, inside);
        gathered = src;
      }
      ValueId past = i32(offset);
      ValueId dst = b.add(b.add(b.mul(kk, i32(ld)), mnI), past);
      b.ifThenElse(
          ok,
          [&] {
            ValueId index = gathered;
            if (index == kNone) {
              ValueId outer = x.kMajor ? gmn : gk, innerI = x.kMajor ? gk : gmn;
              ValueId at0 = b.add(b.mul(outer, i64(x.inner)), innerI);
              index = b.add(base, at0);
            }
            ValueId raw = b.load(from, index, 1);
            ValueId v = castThrough(src, raw, false);
            b.store(smem, dst, v);
          },
          [&] { b.store(smem, dst, zero); });
    });
  }

  void innerProduct(ValueId accum, ValueId tx, ValueId ty) {
    kir::MathOp mul{OpKind::Mul, plan.acc, plan.acc}, add{OpKind::Add, plan.acc, plan.acc};
    loop(t.bk, "kk", 2, [&](ValueId kkWide) {
      ValueId kk = to32(kkWide);
      ValueId av = b.localArray(plan.acc, unsigned(t.tm), "av");
      ValueId bv = b.localArray(plan.acc, unsigned(t.tn), "bv");
      ValueId aRow = b.add(b.mul(kk, i32(lda)), ty);
      ValueId past = i32(t.bk * lda);
      ValueId bRow = b.add(b.add(b.mul(kk, i32(ldb)), tx), past);
      loop(t.tm, "i", -1, [&](ValueId i) {
        ValueId step = i32(t.bm / t.tm);
        ValueId at = b.add(aRow, b.mul(to32(i), step));
        b.store(av, i, b.load(smem, at, 1));
      });
      loop(t.tn, "j", -1, [&](ValueId j) {
        ValueId step = i32(t.bn / t.tn);
        ValueId at = b.add(bRow, b.mul(to32(j), step));
        b.store(bv, j, b.load(smem, at, 1));
      });
      loop(t.tm, "i", -1, [&](ValueId i) {
        loop(t.tn, "j", -1, [&](ValueId j) {
          ValueId slot = b.add(b.mul(i, i64(t.tn)), j);
          ValueId x = b.load(av, i, 1);
          ValueId y = b.load(bv, j, 1);
          ValueId p = b.math(mul, {x, y}, "");
          ValueId s = b.load(accum, slot, 1);
          b.store(accum, slot, b.math(add, {s, p}, ""));
        });
      });
    });
  }

  /// Builds the SIMT kernel; returns its shared-memory bytes.
  int simtKernel() {
    lda = t.bm + 1; // one element of padding against bank conflicts
    ldb = t.bn + 1;
    int ldc = t.bn + 16; // 16 words of padding keep a warp's stores conflict-free
    smem = b.dynamicShared(plan.acc, "smem");
    tidWide = b.special(kir::Special::TidX);
    epilogueTid = tidWide;
    tid = to32(tidWide, "tid");
    ValueId tx = op(IndexOp::Rem, tid, i32(t.bn / t.tn), "tx");
    ValueId ty = op(IndexOp::Div, tid, i32(t.bn / t.tn), "ty");
    tileSpace();
    forEachTile([&](const TileAt &at) {
      ValueId accum = zeroedAccumulators(t.tm * t.tn);
      ValueId step = i64(t.bk);
      ValueId end = i64(plan.k);
      ValueId zero = i64(0);
      b.forLoop(zero, end, step, "k0", 1, [&](ValueId k0) {
        stageOperand(true, k0, at);
        stageOperand(false, k0, at);
        b.barrier();
        innerProduct(accum, tx, ty);
        b.barrier();
      });
      // The accumulators through shared memory (reusing the staging arrays).
      loop(t.tm, "i", -1, [&](ValueId i) {
        loop(t.tn, "j", -1, [&](ValueId j) {
          ValueId rowStep = i32(t.bm / t.tm);
          ValueId row = b.add(ty, b.mul(to32(i), rowStep));
          ValueId colStep = i32(t.bn / t.tn);
          ValueId col = b.add(tx, b.mul(to32(j), colStep));
          ValueId v = b.load(accum, b.add(b.mul(i, i64(t.tn)), j), 1);
          b.store(smem, b.add(b.mul(row, i32(ldc)), col), v);
        });
      });
      epilogueLoop({smem, cBase, ldc, plan.acc, false, t.bn / 2}, at);
    });
    int elements = std::max(t.bk * (lda + ldb), t.bm * (t.bn + 16));
    return elements * int(dtypeSize(plan.acc));
  }

  const Plan &plan;
  const TileConfig &t;
  kir::Kernel k;
  kir::Builder b;
  std::vector<ValueId> params; // by KernelArg index
  std::map<const Op *, unsigned> tables;
  ValueId tid, tidWide, rowsM, numTiles, tilesM;
  ValueId rank = kNone; ///< the block's rank in its cluster (i32)
  ValueId epilogueTid;  // i64: this thread's place among epilogueThreads()
  // tensor cores: warp tile in m16 and n8 blocks; sizes in bytes
  int mi = 0, ni = 0, aBytes = 0, stageBytes = 0, kTiles = 0;
  ValueId smem, words, lane, warpRow, warpCol, aLane, bLane, acc;
  ValueId bars; // wgmma: the stages' mbarriers
  // wgmma, overlap: the pending tile's products, origin (m0, n0, chain) and presence
  ValueId pending = kNone, pendingAt = kNone, pendingFlag = kNone;
  // wgmma, overlap by TMA stores: each result's tensor map, the slices stored so far (i32)
  std::vector<ValueId> outMaps;
  ValueId slicesDone = kNone;
  ValueId cBase = kNone; // wgmma, bn <= 128: the f32 output tile's first element in shared memory
  Ahead ahead;           // wgmma: the epilogue's loads ahead of it (Note [Epilogue ahead])
  // wgmma, split K: the scratch's partial tiles and counters, the last-split flag (shared)
  ValueId parts = kNone, counters = kNone, lastFlag = kNone;
  Loader la, lb;
  // SIMT: the staging arrays' row lengths
  int lda = 0, ldb = 0;
};

} // namespace

std::optional<templates::KirKernel> buildGemm(const Op &kernel, const std::string &entry,
                                              std::string_view target, Diagnostics &diags) {
  Plan plan;
  if (!analyzeGemm(kernel, entry, plan, diags) || !chooseTiles(plan, target, diags))
    return std::nullopt;
  return GemmBuilder(plan).run();
}

} // namespace fusec::gemm
