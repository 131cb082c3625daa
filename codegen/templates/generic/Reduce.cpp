// Generic kernels that reduce lines, each by a group of lanes (Groups) that
// stride over it and combine their partial values in shared memory
// (Groups::reduce), in the accumulator dtype (Frame).
//
//  - reduce_sum/max/min/mean/prod over any axes: a line is an output
//    element's reduced elements (the last axis reduced: contiguous, Groups).
//    An empty extent gives 0 (sum), 1 (prod), NaN (mean, 0/0) or the
//    identity (max/min; the reference errs). Limit: at most one block per output, so a huge extent
//    reduced to few outputs runs on few SMs.
//  - layer_norm, rms_norm and softmax: a line is a row, read again for each
//    pass as the reference computes it: layer_norm the mean, then the
//    biased variance of x - mean, then (x - mean) / sqrt(var + eps) * gamma
//    + beta; rms_norm x / sqrt(mean(x²) + eps) * gamma; softmax the max, then
//    Σ exp(x - max), then exp(x - max) / Σ. A softmax over another axis than
//    the last has strided rows, which neighbouring groups read.
#include "codegen/templates/generic/Kernel.h"

#include <bit>

namespace fusec::generic {

namespace {

/// How a block of kBlock threads reduces `perBlock` lines at a time, each
/// with `lanes` threads (powers of two): this thread's group and lane, and
/// the shared scratch array (kBlock slots) their values meet in, declared
/// in the kernel's body. With `lanesInner` a line's lanes are adjacent
/// threads, which read neighbouring elements when a line's elements are
/// contiguous; otherwise the groups are adjacent threads, which read
/// neighbouring lines (a column reduction).
struct Groups {
  Frame &f;
  int64_t perBlock, lanes;
  bool lanesInner;
  ValueId scratch, group, lane;

  /// Lanes for `lines` lines of `length` elements: enough to cover a line,
  /// at most a block; when a line's elements are not contiguous, at least
  /// min(32, lines) groups, so that a warp still reads neighbouring lines.
  Groups(Frame &f, int64_t lines, int64_t length, bool elementsContiguous)
      : f(f), lanesInner(elementsContiguous) {
    // The smallest power of two >= n, at most hi (a power of two).
    auto pow2 = [](int64_t n, int64_t hi) {
      return std::min(int64_t(std::bit_ceil(uint64_t(n))), hi);
    };
    lanes = pow2(length, kBlock);
    if (!elementsContiguous)
      lanes = std::min(lanes, kBlock / pow2(lines, 32));
    perBlock = kBlock / lanes;
    kir::Builder &b = f.b;
    scratch = b.sharedArray(f.acc, unsigned(kBlock), "red");
    ValueId tid = b.special(kir::Special::TidX);
    ValueId inner = f.index(lanesInner ? lanes : perBlock);
    ValueId first = b.arith(IndexOp::Div, tid, inner, lanesInner ? "group" : "lane");
    ValueId second = b.arith(IndexOp::Rem, tid, inner, lanesInner ? "lane" : "group");
    group = lanesInner ? first : second;
    lane = lanesInner ? second : first;
  }

  /// Blocks for `lines` lines: one tile of `perBlock` lines per block.
  int64_t tiles(int64_t lines) const { return (lines + perBlock - 1) / perBlock; }

  /// body(line) for the group's lines, a tile of lines a block: `line` may
  /// be past `lines`, and the loop is block-uniform (its body may reduce).
  void loop(int64_t lines, const std::string &name, const std::function<void(ValueId)> &body) {
    f.tileLoop(tiles(lines), [&](ValueId tile) {
      ValueId scaled = f.b.mul(tile, f.index(perBlock));
      body(f.b.add(scaled, group, name));
    });
  }

  /// The group's combined `v` (`kind`: add, mul, max or min), which every thread
  /// of the group gets: a tree of halving steps through the scratch array
  /// keeps the lower lane's value on the left of `kind`, so a
  /// NaN-propagating max stays so. Every thread of the block must reach it.
  ValueId reduce(ValueId v, OpKind kind) {
    kir::Builder &b = f.b;
    int64_t step = lanesInner ? 1 : perBlock; // from a lane to the next
    ValueId laneStride = f.index(step);
    ValueId mine = lanesInner ? f.arith(IndexOp::Mul, group, lanes, "mine") : group;
    ValueId spread = b.mul(lane, laneStride);
    ValueId at = b.add(mine, spread, "at");
    b.store(scratch, at, v);
    b.barrier();
    for (int64_t half = lanes / 2; half > 0; half /= 2) {
      ValueId below = f.arith(IndexOp::Lt, lane, half);
      b.ifThenElse(below, [&] {
        ValueId partner = f.arith(IndexOp::Add, at, half * step);
        ValueId left = b.load(scratch, at, 1, "left");
        ValueId right = b.load(scratch, partner, 1, "right");
        ValueId both = f.math(kind, {left, right});
        b.store(scratch, at, both);
      });
      b.barrier();
    }
    ValueId total = b.load(scratch, mine, 1, "total");
    b.barrier();
    return total;
  }
};

} // namespace

KirKernel buildReduction(const Op &op, const std::string &entry) {
  Frame f(op, entry);
  kir::Builder &b = f.b;
  // The input's axes split into kept and reduced ones.
  Sizes in = sizesOf(*op.operand(0)), own = contiguousStrides(in);
  std::vector<bool> reduced(in.size(), op.getInts("axes").empty());
  for (int64_t axis : op.getInts("axes"))
    reduced[*normalizeAxis(axis, in.size())] = true;
  Sizes keptDims, keptStrides, redDims, redStrides;
  for (size_t k = 0; k < in.size(); ++k) {
    (reduced[k] ? redDims : keptDims).push_back(in[k]);
    (reduced[k] ? redStrides : keptStrides).push_back(own[k]);
  }

  int64_t outputs = product(keptDims), extent = product(redDims);
  Groups groups(f, outputs, extent, !in.empty() && reduced.back());
  OpKind kind = op.kind();
  OpKind combine = kind == OpKind::ReduceMax    ? OpKind::Max
                   : kind == OpKind::ReduceMin  ? OpKind::Min
                   : kind == OpKind::ReduceProd ? OpKind::Mul
                                                : OpKind::Add;
  double init = combine == OpKind::Max   ? -HUGE_VAL
                : combine == OpKind::Min ? HUGE_VAL
                : combine == OpKind::Mul ? 1.0
                                         : 0.0;
  groups.loop(outputs, "o", [&](ValueId o) {
    Frame::Var acc = f.var(f.constant(init, "init"), "acc");
    ValueId active = b.less(o, f.index(outputs));
    b.ifThenElse(active, [&] {
      ValueId base = f.offsetOf(o, keptDims, keptStrides);
      f.loop(groups.lane, extent, groups.lanes, "r", 0, [&](ValueId r) {
        ValueId at = f.offsetOf(r, redDims, redStrides, base);
        acc.combine(combine, f.loadAcc(0, at, "x"));
      });
    });
    ValueId partial = acc.get();
    ValueId total = groups.reduce(partial, combine);
    b.ifThenElse(active, [&] {
      b.ifThenElse(b.less(groups.lane, f.index(1)), [&] {
        ValueId y = total;
        if (kind == OpKind::ReduceMean)
          y = f.math(OpKind::Div, {total, f.constant(double(extent), "extent")});
        f.storeAcc(o, y);
      });
    });
  });
  return f.finish(std::to_string(groups.lanes) + " lanes per output, " +
                      std::to_string(groups.perBlock) + " outputs per block",
                  groups.tiles(outputs));
}

namespace {

/// The rows a layer_norm, rms_norm or softmax normalizes: count, length,
/// and the element stride within a row (1, or the product of the dims after
/// a softmax's axis).
struct Rows {
  int64_t count, length, inner;
};

Rows rowsOf(const Op &op) {
  Sizes in = sizesOf(*op.operand(0));
  size_t axis = *normalizeAxis(op.getInt("axis"), in.size());
  if (op.kind() != OpKind::Softmax)
    return {product(in, 0, axis), product(in, axis), 1};
  int64_t inner = product(in, axis + 1);
  return {product(in, 0, axis) * inner, in[axis], inner};
}

class RowBuilder : Frame {
public:
  explicit RowBuilder(const Op &op, const std::string &entry)
      : Frame(op, entry), rows(rowsOf(op)),
        groups(*this, rows.count, rows.length, rows.inner == 1) {}

  KirKernel run() {
    groups.loop(rows.count, "row", [&](ValueId row) {
      active = b.less(row, index(rows.count));
      if (rows.inner == 1) {
        base = b.mul(row, index(rows.length), "base");
      } else {
        ValueId outer = arith(IndexOp::Div, row, rows.inner);
        ValueId inner = arith(IndexOp::Rem, row, rows.inner);
        base = b.add(b.mul(outer, index(rows.length * rows.inner)), inner, "base");
      }
      if (op.kind() == OpKind::Softmax)
        softmax();
      else
        layerNorm();
    });
    return finish(std::to_string(groups.lanes) + " lanes per row of " +
                      std::to_string(rows.length) + ", " + std::to_string(groups.perBlock) +
                      " rows per block",
                  rows.length ? groups.tiles(rows.count) : 0);
  }

private:
  /// One pass over the row: each(x, at, j) for each of this lane's
  /// elements j, `x` the element in the accumulator dtype, `at` its offset.
  void pass(const std::function<void(ValueId, ValueId, ValueId)> &each) {
    b.ifThenElse(active, [&] {
      loop(groups.lane, rows.length, groups.lanes, "j", 0, [&](ValueId j) {
        ValueId step = rows.inner == 1 ? j : b.mul(j, index(rows.inner));
        ValueId at = b.add(base, step, "at");
        ValueId x = loadAcc(0, at, "x");
        each(x, at, j);
      });
    });
  }

  /// The group's total of what `each` adds up over the row (or its maximum).
  ValueId combineRow(OpKind kind, double init, const std::string &name,
                     const std::function<ValueId(ValueId)> &each) {
    Var part = var(constant(init), name);
    pass([&](ValueId x, ValueId, ValueId) { part.combine(kind, each(x)); });
    ValueId mine = part.get();
    return groups.reduce(mine, kind);
  }

  void layerNorm() {
    bool isRms = op.kind() == OpKind::RmsNorm;
    ValueId n = constant(double(rows.length), "n");
    ValueId mean = kir::kNoValue;
    if (!isRms) {
      ValueId sum = combineRow(OpKind::Add, 0.0, "sum", [](ValueId x) { return x; });
      mean = math(OpKind::Div, {sum, n}, "mean");
    }
    auto centered = [&](ValueId x) { return isRms ? x : math(OpKind::Sub, {x, mean}, "d"); };
    ValueId squares = combineRow(OpKind::Add, 0.0, "squares", [&](ValueId x) {
      ValueId d = centered(x);
      return math(OpKind::Mul, {d, d});
    });
    ValueId variance = math(OpKind::Div, {squares, n}, "variance");
    ValueId eps = constant(op.getFloat("epsilon"), "eps");
    ValueId denom = math(OpKind::Sqrt, {math(OpKind::Add, {variance, eps})}, "denom");
    pass([&](ValueId x, ValueId at, ValueId j) {
      ValueId y = math(OpKind::Div, {centered(x), denom}, "y");
      if (op.numOperands() > 1)
        y = math(OpKind::Mul, {y, loadAcc(1, j, "gamma")}, "y");
      if (op.numOperands() > 2)
        y = math(OpKind::Add, {y, loadAcc(2, j, "beta")}, "y");
      storeAcc(at, y);
    });
  }

  void softmax() {
    ValueId maximum = combineRow(OpKind::Max, -HUGE_VAL, "maxPart", [](ValueId x) { return x; });
    auto shifted = [&](ValueId x) {
      ValueId d = math(OpKind::Sub, {x, maximum});
      return math(OpKind::Exp, {d}, "e");
    };
    ValueId sum = combineRow(OpKind::Add, 0.0, "sumPart", shifted);
    pass([&](ValueId x, ValueId at, ValueId) {
      ValueId e = shifted(x);
      storeAcc(at, math(OpKind::Div, {e, sum}, "y"));
    });
  }

  Rows rows;
  Groups groups;
  ValueId active = kir::kNoValue, base = kir::kNoValue;
};

} // namespace

KirKernel buildNormalization(const Op &op, const std::string &entry) {
  return RowBuilder(op, entry).run();
}

} // namespace fusec::generic
