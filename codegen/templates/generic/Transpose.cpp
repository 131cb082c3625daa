// The generic kernel of a transpose that moves the last axis (NCHW <-> NHWC at a
// convolution chain's boundaries): tiles through shared memory, so that both the
// reads and the writes are coalesced.
//
// Note [Tiled transpose]
// One thread per output element writes coalesced but reads a column of the input:
// each warp's 32 loads touch 32 sectors, and NCHW -> NHWC of 32 x 64 x 56 x 56 f16
// took 40.9 us on the H200 (628 GB/s). Here the axes are first merged where a run
// of output axes reads consecutive input axes (NCHW -> NHWC becomes a batched
// [C, HW] -> [HW, C]) and size-1 axes dropped; then the output's last axis A
// (input stride > 1) and the output axis B the input runs along (input stride 1)
// span square tiles, every other axis a batch of tiles. A block reads a tile along
// B, stores it into shared memory, synchronizes, and writes it along A. The
// element's bits are copied, so every dtype moves exactly.
//
// Where A and B are both whole 16-byte vectors (elements of 1, 2 or 4 bytes, v to
// a vector), a tile is 8 vectors a side (64 x 64 for 2-byte elements). A thread
// reads a 16-byte vector along B and stores its v elements down a column
// of the shared tile (its rows are B's, 128 bytes each); after the barrier it
// reads a 16-byte vector along a row and writes it along A, so each warp's access
// is four whole 128-byte lines either way. A tile row keeps its vector j at j ^ (b
// / v) ^ (b % v) (mod 8) of row b: the stores of a warp's eight vectors of one
// element land on 8 distinct vectors of the tile (their lanes on distinct banks, or
// on distinct bytes of one word: 2-byte elements fill 16 banks, 1-byte 8), and the
// vector reads of a row still cover each bank once. (The elements are scattered into shared memory,
// not gathered from it into a vector: NVRTC split the store of a gathered 16-byte vector into four
// 4-byte ones, 60% of the sectors excess.) The boundary transposes of the ResNet block (N32 C64 56
// x 56 f16, 25.7 MB each way) on the H200: 10.3 and 10.2 us with one 2-byte element a thread (32 x
// 32 tiles, rows of 33 elements so that the column reads meet no bank conflict; `ncu`: SM 62% busy,
// issue-bound), 8.1 and 8.4 us on vector tiles two a block (bench/RESULTS.md,
// 2026-11-29). One tile a block measured as fast or faster than two (four loads in
// flight a thread): NCHW -> NHWC 10.2 us either way streaming from DRAM, 6.1
// against 6.4 from L2; NHWC -> NCHW 9.4 against 10.1, 5.8 against 6.5. Other
// extents take the scalar tiles.
#include "codegen/templates/generic/Kernel.h"

#include <bit>
#include <optional>

namespace fusec::generic {

namespace {

constexpr int64_t kTile = 32, kRows = kBlock / kTile; // scalar tiles: a side, thread rows
constexpr int64_t kLine = 8;                          // vector tiles: 16-byte vectors a side

/// A transpose's output dims after merging and dropping size-1 axes, each with its
/// stride in the input.
struct Merged {
  Sizes dims, inStrides;
};

Merged merge(const Op &op) {
  Sizes in = sizesOf(*op.operand(0)), own = contiguousStrides(in);
  const std::vector<int64_t> &perm = op.getInts("perm");
  Merged m;
  int64_t lastAxis = -2; // the input axis the previous kept output axis reads
  for (size_t k = 0; k < perm.size(); ++k) {
    int64_t p = perm[k];
    if (in[size_t(p)] == 1)
      continue;
    if (p == lastAxis + 1 && !m.dims.empty()) { // the run goes on: one axis
      m.dims.back() *= in[size_t(p)];
      m.inStrides.back() = own[size_t(p)];
    } else {
      m.dims.push_back(in[size_t(p)]);
      m.inStrides.push_back(own[size_t(p)]);
    }
    lastAxis = p;
  }
  return m;
}

/// The output axis the input runs along (input stride 1), if it is not the last.
std::optional<size_t> inputAxis(const Merged &m) {
  for (size_t k = 0; k + 1 < m.dims.size(); ++k)
    if (m.inStrides[k] == 1)
      return k;
  return std::nullopt;
}

/// The elements of a 16-byte vector where A and B are both whole vectors of
/// `stored` elements of 1, 2 or 4 bytes, else 1 (Note [Tiled transpose]). Every
/// other axis's stride is then a whole number of vectors too: in the input a
/// multiple of B's extent (B ends at the input's last axis), in the output of A's.
int64_t vectorWidth(const Merged &m, size_t axisA, size_t axisB, DType stored) {
  int64_t size = int64_t(dtypeSize(stored));
  if (size > 4)
    return 1;
  int64_t v = 16 / size;
  return m.dims[axisA] % v == 0 && m.dims[axisB] % v == 0 ? v : 1;
}

} // namespace

bool isTiledTranspose(const Op &op) {
  return op.kind() == OpKind::Transpose && op.hasStaticShapes() && inputAxis(merge(op)).has_value();
}

KirKernel buildTiledTranspose(const Op &op, const std::string &entry) {
  Frame f(op, entry);
  kir::Builder &b = f.b;
  Merged m = merge(op);
  size_t r = m.dims.size(), axisA = r - 1, axisB = *inputAxis(m);
  DType stored = kir::storageType(op.result()->type().dtype);
  int64_t v = vectorWidth(m, axisA, axisB, stored);
  int64_t side = v > 1 ? kLine * v : kTile; // a tile's side, in elements
  Sizes outStrides = contiguousStrides(m.dims);
  int64_t tilesA = (m.dims[axisA] + side - 1) / side;
  int64_t tilesB = (m.dims[axisB] + side - 1) / side;
  Sizes batchDims, batchIn, batchOut; // the other axes
  for (size_t k = 0; k < r; ++k)
    if (k != axisA && k != axisB) {
      batchDims.push_back(m.dims[k]);
      batchIn.push_back(m.inStrides[k]);
      batchOut.push_back(outStrides[k]);
    }
  int64_t tiles = tilesA * tilesB * product(batchDims);
  int64_t tileElements = v > 1 ? side * side : kTile * (kTile + 1);
  ValueId tileSmem = b.sharedArray(stored, unsigned(tileElements), "tile");
  ValueId tid = b.special(kir::Special::TidX);
  ValueId limitA = f.index(m.dims[axisA]), limitB = f.index(m.dims[axisB]);
  int64_t strideA = m.inStrides[axisA], strideB = outStrides[axisB];
  // The tile's origin: its batch's offsets in the input and output, and its first A and B.
  struct Origin {
    ValueId inBase, outBase, a0, b0;
  };
  auto origin = [&](ValueId tile) {
    ValueId ta = f.arith(IndexOp::Rem, tile, tilesA);
    ValueId rest = f.arith(IndexOp::Div, tile, tilesA);
    ValueId tb = f.arith(IndexOp::Rem, rest, tilesB);
    ValueId batch = f.arith(IndexOp::Div, rest, tilesB, "batch");
    Origin o;
    o.inBase = f.offsetOf(batch, batchDims, batchIn);
    o.outBase = f.offsetOf(batch, batchDims, batchOut);
    o.a0 = f.arith(IndexOp::Mul, ta, side, "a0");
    o.b0 = f.arith(IndexOp::Mul, tb, side, "b0");
    return o;
  };
  // Vector tiles: a pass gives each thread tasks tid, tid + kBlock, ... of the tile's side x 8
  // vectors, task t row t / 8 (of A reading, of B writing) and vector t % 8 along it. Offsets
  // within the tile are i32, and v a power of two: shifts and masks.
  auto i32 = [&](int64_t x) { return b.constant(DType::I32, x); };
  auto op32 = [&](IndexOp o, ValueId x, int64_t c, const std::string &name = "") {
    return b.arith(o, x, i32(c), name);
  };
  int64_t logV = std::countr_zero(uint64_t(v));
  auto vectorPass = [&](const std::function<void(ValueId row, ValueId vec)> &move) {
    ValueId tid32 = b.convert(DType::I32, tid);
    f.count(side * kLine / kBlock, "i", -1, [&](ValueId i) {
      ValueId step = op32(IndexOp::Mul, b.convert(DType::I32, i), kBlock);
      ValueId task = b.add(tid32, step, "task");
      move(op32(IndexOp::Shr, task, 3, "row"), op32(IndexOp::And, task, kLine - 1, "vec"));
    });
  };
  auto toIndex = [&](ValueId x) { return b.convert(DType::I64, x); };
  auto vectorTile = [&](const Origin &o) {
    // Read along B: task row `row` is A's a0 + row, its vector `vec` B's b0 + v vec, whose element
    // l goes to element `row` of the shared tile's row v vec + l (Note [Tiled transpose]).
    vectorPass([&](ValueId row, ValueId vec) {
      ValueId a = b.add(o.a0, toIndex(row), "a");
      ValueId bIn = b.add(o.b0, toIndex(op32(IndexOp::Shl, vec, logV)), "bIn");
      ValueId inA = b.less(a, limitA), inB = b.less(bIn, limitB);
      b.ifThenElse(f.both(inA, inB), [&] {
        ValueId along = b.add(o.inBase, f.arith(IndexOp::Mul, a, strideA));
        ValueId read = b.localArray(stored, unsigned(v), "read");
        ValueId x = b.load(f.in(0), b.add(along, bIn), unsigned(v), "x");
        b.store(read, f.index(0), x, unsigned(v));
        ValueId key = b.arith(IndexOp::Xor, op32(IndexOp::Shr, row, logV), vec, "key");
        ValueId first = op32(IndexOp::Mul, op32(IndexOp::Shl, vec, logV), side);
        ValueId within = op32(IndexOp::And, row, v - 1);
        ValueId base = b.add(first, within, "base");
        for (int64_t l = 0; l < v; ++l) {
          ValueId kept = op32(IndexOp::And, op32(IndexOp::Xor, key, l), kLine - 1);
          ValueId rowAt = b.add(base, i32(l * side));
          ValueId slot = b.add(rowAt, op32(IndexOp::Shl, kept, logV));
          b.store(tileSmem, slot, b.load(read, f.index(l), 1, "x"));
        }
      });
    });
    b.barrier();
    // Write along A: task row `row` is B's b0 + row, its vector `vec` A's a0 + v vec: the shared
    // tile's row `row`, vector vec ^ (row / v) ^ (row % v).
    vectorPass([&](ValueId row, ValueId vec) {
      ValueId bb = b.add(o.b0, toIndex(row), "b");
      ValueId aOut = b.add(o.a0, toIndex(op32(IndexOp::Shl, vec, logV)), "aOut");
      ValueId inB = b.less(bb, limitB), inA = b.less(aOut, limitA);
      b.ifThenElse(f.both(inB, inA), [&] {
        ValueId mix =
            b.arith(IndexOp::Xor, op32(IndexOp::Shr, row, logV), op32(IndexOp::And, row, v - 1));
        ValueId kept = op32(IndexOp::And, b.arith(IndexOp::Xor, vec, mix), kLine - 1, "kept");
        ValueId rowAt = op32(IndexOp::Mul, row, side);
        ValueId slot = b.add(rowAt, op32(IndexOp::Shl, kept, logV), "slot");
        ValueId y = b.load(tileSmem, slot, unsigned(v), "y");
        ValueId down = b.add(o.outBase, f.arith(IndexOp::Mul, bb, strideB));
        b.store(f.out(), b.add(down, aOut), y, unsigned(v));
      });
    });
  };
  // Scalar tiles: a pass gives thread (tx, ty) rows ty, ty + 8, ... and column tx; the rows'
  // coordinates start at `first` and end at `limit`, the column is inside where `column` says.
  ValueId tx = kir::kNoValue, ty = kir::kNoValue;
  if (v == 1) {
    tx = f.arith(IndexOp::Rem, tid, kTile, "tx");
    ty = f.arith(IndexOp::Div, tid, kTile, "ty");
  }
  auto pass = [&](ValueId first, ValueId limit, ValueId column,
                  const std::function<void(ValueId row, ValueId at)> &move) {
    f.count(kTile / kRows, "i", -1, [&](ValueId i) {
      ValueId row = b.add(ty, f.arith(IndexOp::Mul, i, kRows), "row");
      ValueId at = b.add(first, row);
      ValueId inside = f.both(b.less(at, limit), column);
      b.ifThenElse(inside, [&] { move(row, at); });
    });
  };
  auto scalarTile = [&](const Origin &o) {
    // Read along B: row `row` of the tile is A's a0 + row.
    ValueId bIn = b.add(o.b0, tx, "bIn");
    pass(o.a0, limitA, b.less(bIn, limitB), [&](ValueId row, ValueId a) {
      ValueId along = f.arith(IndexOp::Mul, a, strideA);
      ValueId at = b.add(b.add(o.inBase, along), bIn);
      ValueId x = b.load(f.in(0), at, 1, "x");
      ValueId slot = b.add(f.arith(IndexOp::Mul, row, kTile + 1), tx);
      b.store(tileSmem, slot, x);
    });
    b.barrier();
    // Write along A: row `row` of this pass is B's b0 + row.
    ValueId aOut = b.add(o.a0, tx, "aOut");
    pass(o.b0, limitB, b.less(aOut, limitA), [&](ValueId row, ValueId bb) {
      ValueId slot = b.add(f.arith(IndexOp::Mul, tx, kTile + 1), row);
      ValueId x = b.load(tileSmem, slot, 1, "x");
      ValueId down = f.arith(IndexOp::Mul, bb, strideB);
      ValueId at = b.add(b.add(o.outBase, down), aOut);
      b.store(f.out(), at, x);
    });
  };
  f.tileLoop(tiles, [&](ValueId tile) {
    Origin o = origin(tile);
    if (v > 1)
      vectorTile(o);
    else
      scalarTile(o);
    b.barrier(); // the tile is read before the next one overwrites it
  });
  std::string shape = std::to_string(side) + " x " + std::to_string(side) + " tiles";
  return f.finish(shape + (v > 1 ? " of 16-byte vectors" : "") +
                      " through shared memory: reads along the input's last axis, writes along "
                      "the output's",
                  tiles);
}

} // namespace fusec::generic
