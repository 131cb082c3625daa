// Generic kernels of the contractions.
//
// matmul and linear: the classic shared-memory tiling. A block computes one
// 16x16 tile of one output matrix, one thread per element; for each step of
// 16 along K it stages a tile of A and of B in shared memory (in the
// accumulator type, zero past the edges, rows padded to 17 against bank
// conflicts), each load coalesced whatever the transposes (stageTile).
// Batch dims broadcast by each operand's own strides. linear is x · wᵀ (+ b):
// x's leading dims are rows, w is read transposed.
//
// attention: softmax(q · kᵀ · scale + mask) · v by an online softmax over
// the keys, each query row owned by a group of lanes of one warp: `pieces`
// lanes split the depths (lane `piece` holds elements piece, piece +
// pieces, ... of the query row and of the accumulators, in registers) and
// `splits` sets of them split the keys (set `split` takes keys split, split
// + splits, ...) when there are too few rows to fill the GPU. Per key, the
// partial dot products (four interleaved sums) meet by shuffles, the mask
// is added, and exp(score - running max) · v_j folds into the accumulators,
// rescaled when the max grows; the splits' states merge by shuffles at the
// end. With Dv > 256 a group owns one output element (pieces = 1). As the
// reference: scale defaults to 1/sqrt(D); `causal` drops key j > i; batch
// dims and the mask broadcast; a score of -inf contributes nothing, a row
// whose every score is -inf (Sk = 0 included) gives 0 (its sum stays 0), and
// one with a NaN or +inf score gives NaN.
#include "codegen/templates/generic/Kernel.h"

#include <algorithm>
#include <cmath>

namespace fusec::generic {

namespace {

Sizes leading(const Sizes &s) { return Sizes(s.begin(), s.end() - 2); }

/// Per batch dim, the element stride of an operand's matrices.
Sizes matrixStrides(const Sizes &operand, const Sizes &batch, int64_t matrixSize) {
  Sizes strides = broadcastStrides(leading(operand), batch);
  for (int64_t &s : strides)
    s *= matrixSize;
  return strides;
}

constexpr int64_t kTile = 16, kPitch = kTile + 1;

/// One (batched) product C = A · B of M×K by K×N matrices: a matmul, or
/// linear's x (leading dims as rows) times wᵀ.
struct MatMulShape {
  int64_t m, n, k;
  bool ta, tb;    // A stored K×M, B stored N×K
  Sizes batch;    // the output's leading dims
  Sizes aStrides; // per batch dim, in elements (0 where A broadcasts)
  Sizes bStrides;
  bool bias = false; // linear's third operand
};

MatMulShape matMulShapeOf(const Op &op) {
  Sizes a = sizesOf(*op.operand(0)), b = sizesOf(*op.operand(1)), out = sizesOf(*op.result());
  if (op.kind() == OpKind::Linear) // rows of x times wᵀ; no batch
    return {product(a, 0, a.size() - 1), b[0], b[1], false, true, {}, {}, {}, op.numOperands() > 2};
  bool ta = op.getBool("transpose_a"), tb = op.getBool("transpose_b");
  int64_t m = out.end()[-2], n = out.end()[-1], k = ta ? a.end()[-2] : a.end()[-1];
  Sizes batch = leading(out);
  return {m, n, k, ta, tb, batch, matrixStrides(a, batch, m * k), matrixStrides(b, batch, k * n)};
}

/// Operand `operand`'s rows × cols matrix (stored cols × rows when
/// transposed), staged a 16x16 tile at a time into `tile` (pitch 17).
struct TileLoad {
  unsigned operand;
  ValueId tile;
  int64_t rows, cols;
  bool transposed;
};

/// Stages the tile at (row0 + r, col0 + c) of the matrix at `base`, zero
/// outside rows × cols: (r, c) is the thread's (ty, tx), or (tx, ty) when
/// transposed, so that threadIdx.x walks the stored rows and loads coalesce.
void stageTile(Frame &f, const TileLoad &t, ValueId base, ValueId row0, ValueId col0, ValueId tx,
               ValueId ty) {
  kir::Builder &b = f.b;
  ValueId r = t.transposed ? tx : ty, c = t.transposed ? ty : tx;
  ValueId row = b.add(row0, r, "row");
  ValueId col = b.add(col0, c, "col");
  ValueId at = b.add(f.arith(IndexOp::Mul, r, kPitch), c, "slot");
  ValueId rowInside = f.arith(IndexOp::Lt, row, t.rows);
  ValueId colInside = f.arith(IndexOp::Lt, col, t.cols);
  auto load = [&] {
    ValueId down = f.arith(IndexOp::Mul, row, t.transposed ? 1 : t.cols);
    ValueId across = f.arith(IndexOp::Mul, col, t.transposed ? t.rows : 1);
    ValueId x = f.loadAcc(t.operand, b.add(base, b.add(down, across)));
    b.store(t.tile, at, x);
  };
  b.ifThenElse(f.both(rowInside, colInside), load, [&] { b.store(t.tile, at, f.constant(0.0)); });
}

} // namespace

KirKernel buildMatMul(const Op &op, const std::string &entry) {
  Frame f(op, entry);
  kir::Builder &b = f.b;
  MatMulShape p = matMulShapeOf(op);
  int64_t tilesM = (p.m + kTile - 1) / kTile, tilesN = (p.n + kTile - 1) / kTile;
  int64_t tiles = product(p.batch) * tilesM * tilesN;
  ValueId tileA = b.sharedArray(f.acc, kTile * kPitch, "tileA");
  ValueId tileB = b.sharedArray(f.acc, kTile * kPitch, "tileB");
  ValueId tid = b.special(kir::Special::TidX);
  ValueId tx = f.arith(IndexOp::Rem, tid, kTile, "tx");
  ValueId ty = f.arith(IndexOp::Div, tid, kTile, "ty");
  f.tileLoop(tiles, [&](ValueId tile) {
    ValueId n0 = f.arith(IndexOp::Mul, f.arith(IndexOp::Rem, tile, tilesN), kTile, "n0");
    ValueId mTile = f.arith(IndexOp::Div, tile, tilesN);
    ValueId m0 = f.arith(IndexOp::Mul, f.arith(IndexOp::Rem, mTile, tilesM), kTile, "m0");
    ValueId batch = f.arith(IndexOp::Div, tile, tilesM * tilesN, "batch");
    ValueId aBase = f.offsetOf(batch, p.batch, p.aStrides);
    ValueId bBase = f.offsetOf(batch, p.batch, p.bStrides);
    Frame::Var acc = f.var(f.constant(0.0), "acc");
    f.loop(f.index(0), p.k, kTile, "k0", 0, [&](ValueId k0) {
      stageTile(f, {0, tileA, p.m, p.k, p.ta}, aBase, m0, k0, tx, ty);
      stageTile(f, {1, tileB, p.k, p.n, p.tb}, bBase, k0, n0, tx, ty);
      b.barrier();
      f.count(kTile, "kk", -1, [&](ValueId kk) {
        ValueId x = b.load(tileA, b.add(f.arith(IndexOp::Mul, ty, kPitch), kk), 1, "a");
        ValueId y = b.load(tileB, b.add(f.arith(IndexOp::Mul, kk, kPitch), tx), 1, "b");
        acc.addProduct(x, y);
      });
      b.barrier();
    });
    ValueId m = b.add(m0, ty, "m");
    ValueId n = b.add(n0, tx, "n");
    ValueId rowInside = f.arith(IndexOp::Lt, m, p.m);
    ValueId colInside = f.arith(IndexOp::Lt, n, p.n);
    b.ifThenElse(f.both(rowInside, colInside), [&] {
      ValueId y = acc.get("y");
      if (p.bias)
        y = f.math(OpKind::Add, {y, f.loadAcc(2, n, "bias")});
      ValueId matrix = f.arith(IndexOp::Mul, batch, p.m * p.n);
      ValueId row = b.add(matrix, f.arith(IndexOp::Mul, m, p.n));
      f.storeAcc(b.add(row, n), y);
    });
  });
  std::string note = "16x16 output tiles, one thread per element; A" +
                     std::string(p.ta ? "^T" : "") + " * B" + (p.tb ? "^T" : "") +
                     ", M = " + std::to_string(p.m) + ", N = " + std::to_string(p.n) +
                     ", K = " + std::to_string(p.k);
  return f.finish(note, tiles);
}

namespace {

/// Register arrays of the attention kernel are used up to this many
/// elements per lane.
constexpr int64_t kMaxRegisterRow = 256;

/// Key splits are added until this many threads run (or a group fills a warp).
constexpr int64_t kWantThreads = 1 << 18;

/// The extents of attention (q [..., Sq, D], k [..., Sk, D], v [..., Sk,
/// Dv]) and its lanes per query row, `pieces` × `splits` (file header); with
/// Dv > kMaxRegisterRow (not perRow) a group owns one output element.
struct AttentionShape {
  int64_t sq = 0, sk = 0, d = 0, dv = 0;
  bool perRow = true;
  int64_t pieces = 1, splits = 1;
};

AttentionShape attentionShapeOf(const Op &op) {
  AttentionShape a;
  Sizes out = sizesOf(*op.result()), key = sizesOf(*op.operand(1));
  a.sq = out.end()[-2];
  a.dv = out.end()[-1];
  a.sk = key.end()[-2];
  a.d = sizesOf(*op.operand(0)).back();
  a.perRow = a.dv <= kMaxRegisterRow;
  if (a.perRow)
    while (a.pieces < 8 && a.d % (2 * a.pieces) == 0 && a.dv % (2 * a.pieces) == 0 &&
           std::min(a.d, a.dv) / (2 * a.pieces) >= 8)
      a.pieces *= 2;
  int64_t groups = product(leading(out)) * a.sq * (a.perRow ? 1 : a.dv);
  while (a.pieces * a.splits < 32 && a.splits < a.sk && groups * a.pieces * a.splits < kWantThreads)
    a.splits *= 2;
  return a;
}

class AttentionBuilder : Frame {
public:
  AttentionBuilder(const Op &op, const std::string &entry)
      : Frame(op, entry), shape(attentionShapeOf(op)), batchDims(leading(sizesOf(*op.result()))) {
    if (op.numOperands() < 4)
      return;
    Sizes scores = batchDims;
    scores.push_back(shape.sq);
    scores.push_back(shape.sk);
    maskStrides = broadcastStrides(sizesOf(*op.operand(3)), scores);
  }

  KirKernel run() {
    width = shape.perRow ? shape.dv / shape.pieces : 1;
    int64_t rows = product(batchDims) * shape.sq;
    int64_t items =
        shape.dv == 0 ? 0 : rows * (shape.perRow ? 1 : shape.dv) * shape.pieces * shape.splits;
    gridStrideLoop(b, index(items), [&](ValueId item) {
      b.rename(item, "item"); // `i` is the query row's index
      place(item);
      ValueId qBase = base(0, shape.sq * shape.d);
      qRow = b.add(qBase, arith(IndexOp::Mul, i, shape.d), "qRow");
      kBase = base(1, shape.sk * shape.d);
      vBase = base(2, shape.sk * shape.dv);
      mask = maskRow();
      // Dv = 0 runs no item, but kir arrays hold at least one element.
      accum = b.localArray(acc, unsigned(std::max<int64_t>(width, 1)), "acc");
      each(width, [&](ValueId c) { b.store(accum, c, constant(0.0)); });
      int64_t share = shape.d / shape.pieces;
      if (shape.d > 0 && share <= kMaxRegisterRow) {
        q = b.localArray(acc, unsigned(share), "q");
        each(share, [&](ValueId c) { b.store(q, c, loadAcc(0, b.add(qRow, mine(c)), "x")); });
      }
      rowMax.emplace(var(lowest(), "rowMax"));
      rowSum.emplace(var(constant(0.0), "rowSum"));
      ValueId keys = index(shape.sk);
      if (op.getBool("causal"))
        keys = b.math({OpKind::Min, DType::I64, DType::I64}, {b.add(i, index(1)), keys}, "keys");
      ValueId least = lowest();
      ValueId zero = index(0), stride = index(shape.splits);
      b.forLoop(zero, keys, stride, shape.splits == 1 ? "j" : "j0", 0, [&](ValueId j0) {
        ValueId j = j0, live = kir::kNoValue;
        if (shape.splits > 1) {
          j = b.add(j0, split, "j");
          live = b.arith(IndexOp::Lt, j, keys, "live");
        }
        ValueId s = score(j, live);
        b.ifThenElse(compare(OpKind::Ne, s, least), [&] { fold(j, s); });
      });
      if (shape.splits > 1)
        merge();
      store();
    });
    return finish(note(), blocksFor(items));
  }

private:
  /// The thread's query row (and output column), piece, split and lane mask.
  void place(ValueId item) {
    int64_t lanes = shape.pieces * shape.splits;
    ValueId group = lanes == 1 ? item : arith(IndexOp::Div, item, lanes, "group");
    if (shape.perRow) {
      row = group;
    } else {
      row = arith(IndexOp::Div, group, shape.dv, "row");
      col = arith(IndexOp::Rem, group, shape.dv, "col");
    }
    if (shape.pieces > 1)
      piece = arith(IndexOp::Rem, item, shape.pieces, "piece");
    if (shape.splits > 1) {
      ValueId set = shape.pieces == 1 ? item : arith(IndexOp::Div, item, shape.pieces);
      split = arith(IndexOp::Rem, set, shape.splits, "split");
    }
    if (lanes > 1) { // the group's lanes of the warp: groups never straddle warps
      ValueId warpLane = arith(IndexOp::Rem, b.special(kir::Special::TidX), 32);
      ValueId first = arith(IndexOp::Mul, arith(IndexOp::Div, warpLane, lanes), lanes);
      ValueId bits = index((int64_t(1) << lanes) - 1);
      laneMask = b.arith(IndexOp::Shl, bits, first, "lanes");
    }
    i = arith(IndexOp::Rem, row, shape.sq, "i");
    batch = arith(IndexOp::Div, row, shape.sq, "batch");
  }

  /// The batch offset of operand `i`'s matrix of `matrixSize` elements.
  ValueId base(unsigned operand, int64_t matrixSize) {
    Sizes strides = matrixStrides(sizesOf(*op.operand(operand)), batchDims, matrixSize);
    return offsetOf(batch, batchDims, strides);
  }

  /// The mask's offset for query row i (kNoValue without a mask).
  ValueId maskRow() {
    if (maskStrides.empty())
      return kir::kNoValue;
    Sizes strides(maskStrides.begin(), maskStrides.end() - 2);
    int64_t rowStride = maskStrides.end()[-2];
    ValueId at = offsetOf(batch, batchDims, strides);
    if (rowStride != 0 && shape.sq > 1)
      at = b.add(at, b.mul(i, index(rowStride)), "maskRow");
    return at;
  }

  /// Element c of this lane's share of a row of D (or Dv) elements.
  ValueId mine(ValueId c) {
    if (shape.pieces == 1)
      return c;
    return b.add(arith(IndexOp::Mul, c, shape.pieces), piece);
  }

  /// The score of key j: q · k_j · scale + mask, summed over the pieces.
  ValueId score(ValueId j, ValueId live) {
    ValueId partial = b.localArray(acc, 4, "partial");
    for (int64_t p = 0; p < 4; ++p) {
      ValueId zero = constant(0.0);
      b.store(partial, index(p), zero);
    }
    ValueId kRow = b.add(kBase, b.mul(j, index(shape.d)), "kRow");
    auto dot = [&] {
      each(shape.d / shape.pieces, [&](ValueId c) {
        ValueId at = mine(c);
        ValueId x = q != kir::kNoValue ? b.load(q, c, 1, "q") : loadAcc(0, b.add(qRow, at), "q");
        ValueId y = loadAcc(1, b.add(kRow, at), "k");
        ValueId slot = arith(IndexOp::Rem, c, 4);
        element(partial, slot).addProduct(x, y);
      });
    };
    if (live == kir::kNoValue)
      dot();
    else
      b.ifThenElse(live, dot);
    ValueId p[4];
    for (int64_t k = 0; k < 4; ++k)
      p[k] = b.load(partial, index(k));
    ValueId low = math(OpKind::Add, {p[0], p[1]});
    ValueId high = math(OpKind::Add, {p[2], p[3]});
    ValueId sum = math(OpKind::Add, {low, high}, "dot");
    for (int64_t offset = shape.pieces / 2; offset > 0; offset /= 2)
      sum = math(OpKind::Add, {sum, shuffle(sum, offset, unsigned(shape.pieces))}, "dot");
    const Attribute *scaleAttr = op.attrIfPresent("scale");
    double scale = scaleAttr ? scaleAttr->get<double>() : 1.0 / std::sqrt(double(shape.d));
    ValueId s = math(OpKind::Mul, {sum, constant(scale, "scale")}, "s");
    if (mask != kir::kNoValue) {
      int64_t colStride = maskStrides.back();
      // A lane past the last key (live false) still reads the mask, at the
      // last key's column: its score is replaced by -inf below, and the read
      // must stay inside the mask.
      ValueId column = j;
      if (live != kir::kNoValue) {
        ValueId last = index(shape.sk - 1);
        column = b.math({OpKind::Min, DType::I64, DType::I64}, {j, last}, "column");
      }
      ValueId at = mask;
      if (colStride != 0 && shape.sk > 1)
        at = b.add(mask, arith(IndexOp::Mul, column, colStride));
      s = math(OpKind::Add, {s, loadAcc(3, at, "m")}, "s");
    }
    if (live != kir::kNoValue)
      s = b.math({OpKind::Where, DType::Bool, acc}, {live, s, lowest()}, "s");
    return s;
  }

  /// Folds key j's score `s` into the running max, sum and accumulators.
  void fold(ValueId j, ValueId s) {
    // Row j of V is read first, so that its loads are in flight while the
    // running max and the exponentials are computed.
    ValueId vRow = b.add(vBase, b.mul(j, index(shape.dv)), "vRow");
    ValueId vj = b.localArray(acc, unsigned(std::max<int64_t>(width, 1)), "vj");
    each(width, [&](ValueId c) {
      ValueId v = loadAcc(2, b.add(vRow, shape.perRow ? mine(c) : col), "v");
      b.store(vj, c, v);
    });
    ValueId max = rowMax->get();
    b.ifThenElse(compare(OpKind::Gt, s, max), [&] {
      ValueId correction = math(OpKind::Exp, {math(OpKind::Sub, {max, s})}, "correction");
      rowSum->combine(OpKind::Mul, correction);
      each(width, [&](ValueId c) { element(accum, c).combine(OpKind::Mul, correction); });
      rowMax->set(s);
    });
    ValueId newMax = rowMax->get();
    ValueId p = math(OpKind::Exp, {math(OpKind::Sub, {s, newMax})}, "p");
    rowSum->combine(OpKind::Add, p);
    each(width, [&](ValueId c) {
      ValueId v = b.load(vj, c);
      element(accum, c).addProduct(p, v);
    });
  }

  /// Merges the key splits' states, lanes `offset` apart, into every lane.
  void merge() {
    ValueId least = lowest(), zero = constant(0.0);
    // The weight of a state of maximum `max` under the merged `newMax`: 0 for
    // a state that saw no key.
    auto weight = [&](ValueId max, ValueId newMax, const std::string &name) {
      ValueId e = math(OpKind::Exp, {math(OpKind::Sub, {max, newMax})});
      ValueId empty = compare(OpKind::Eq, max, least);
      return b.math({OpKind::Where, DType::Bool, acc}, {empty, zero, e}, name);
    };
    // ours · weight(ours) + theirs · weight(theirs), for the weights of one step.
    auto blend = [&](ValueId mine, ValueId ours, ValueId other, ValueId theirs) {
      ValueId x = math(OpKind::Mul, {mine, ours});
      ValueId y = math(OpKind::Mul, {other, theirs});
      return math(OpKind::Add, {x, y});
    };
    for (int64_t offset = shape.pieces; offset < shape.pieces * shape.splits; offset *= 2) {
      ValueId max = rowMax->get(), sum = rowSum->get();
      ValueId otherMax = shuffle(max, offset);
      b.rename(otherMax, "otherMax");
      ValueId otherSum = shuffle(sum, offset);
      b.rename(otherSum, "otherSum");
      ValueId newMax = math(OpKind::Max, {max, otherMax}, "newMax");
      ValueId ours = weight(max, newMax, "ours");
      ValueId theirs = weight(otherMax, newMax, "theirs");
      rowSum->set(blend(sum, ours, otherSum, theirs));
      each(width, [&](ValueId c) {
        ValueId a = b.load(accum, c);
        ValueId other = shuffle(a, offset);
        b.store(accum, c, blend(a, ours, other, theirs));
      });
      rowMax->set(newMax);
    }
  }

  /// Writes acc / sum; a row that folded no key (every score -inf) has sum
  /// 0 and acc 0, and is written as 0 rather than 0/0. Only such a row has
  /// sum 0: the key at the running max adds exp(0) = 1.
  void store() {
    auto write = [&] {
      ValueId sum = rowSum->get("sum");
      ValueId zero = kir::kNoValue, empty = kir::kNoValue;
      if (shape.sk > 0) { // with no key at all, acc is already the 0 to write
        zero = constant(0.0, "zero");
        empty = b.math({OpKind::Eq, acc, DType::Bool}, {sum, zero}, "empty");
      }
      ValueId rowAt = b.mul(row, index(shape.dv));
      each(width, [&](ValueId c) {
        ValueId y = b.load(accum, c);
        if (empty != kir::kNoValue) {
          ValueId ratio = math(OpKind::Div, {y, sum}, "ratio");
          y = b.math({OpKind::Where, DType::Bool, acc}, {empty, zero, ratio}, "y");
        }
        storeAcc(b.add(rowAt, shape.perRow ? mine(c) : col), y);
      });
    };
    if (shape.splits == 1)
      write();
    else
      b.ifThenElse(b.less(split, index(1)), write);
  }

  /// for (c = 0; c < width; ++c) body(c), fully unrolled.
  void each(int64_t width, const std::function<void(ValueId)> &body) {
    count(width, "c", -1, body);
  }

  ValueId shuffle(ValueId v, int64_t offset, unsigned width = 32) {
    return b.shuffle(kir::ShuffleMode::Xor, v, index(offset), width, laneMask);
  }

  std::string note() const {
    std::string who = shape.perRow ? "query row" : "output element";
    return std::to_string(shape.pieces * shape.splits) + " lane(s) per " + who + " (" +
           std::to_string(shape.pieces) + " over the depth, " + std::to_string(shape.splits) +
           " over the keys), online softmax over " + std::to_string(shape.sk) + " keys" +
           (op.getBool("causal") ? " (causal)" : "") + (op.numOperands() > 3 ? ", mask" : "");
  }

  AttentionShape shape;
  Sizes batchDims;
  Sizes maskStrides; // over batchDims, Sq and Sk; empty without a mask
  int64_t width = 1; // accumulators a lane
  ValueId row = kir::kNoValue, col = kir::kNoValue, i = kir::kNoValue, batch = kir::kNoValue;
  ValueId piece = kir::kNoValue, split = kir::kNoValue, laneMask = kir::kNoValue;
  ValueId qRow = kir::kNoValue, kBase = kir::kNoValue, vBase = kir::kNoValue;
  ValueId mask = kir::kNoValue, q = kir::kNoValue, accum = kir::kNoValue;
  std::optional<Var> rowMax, rowSum;
};

} // namespace

KirKernel buildAttention(const Op &op, const std::string &entry) {
  return AttentionBuilder(op, entry).run();
}

} // namespace fusec::generic
