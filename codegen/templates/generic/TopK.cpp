// The generic kernel of top_k: one block of kBlock threads per line along the axis (a block-uniform
// loop over the lines), k passes over the line, each a block-wide arg-reduction that finds the
// best element of the line in the total order of docs/ir.md (Note [Top-k order]) strictly after
// the previous pass's (value, index); thread 0 stores its index. Pass 0 has no previous element,
// so k = 1 (argmax or argmin) is one pass over the line.
//
// A pass: each thread keeps its best candidate among the elements tid, tid + kBlock, ... of the
// line (consecutive threads read consecutive elements when the axis is the last: coalesced), in
// the accumulator dtype (f32 for f16, bf16 and f32, exactly; f64; i64 for integers, so integer
// comparisons are exact); the warp's candidates meet by xor shuffles (value and index each), the
// warps' through kBlock / 32 shared slots that every thread then combines itself in one order, as
// the row_reduction template's blockReduce does; every thread ends with the line's best, which
// becomes the next pass's bound. A barrier after the slots are read lets the next pass write them.
//
// Note [Top-k order]
// `a` precedes `b` when a's value ranks higher (largest) or lower (smallest), NaN ranking above
// every number, or the values are equal (two NaNs included) and a's index is lower. It is a strict
// total order on a line's elements, so each pass's winner is the same whichever way the shuffles
// pair the candidates. A candidate may be absent (a thread with no eligible element): its index is
// the line's length d, and an absent candidate precedes nothing.
//
// Cost: k passes over the line (k · d loads, from L1/L2 after the first); meant for small k (argmax
// over a vocabulary is one pass). An axis other than the last reads a line's elements `inner`
// apart, one a thread.
#include "codegen/templates/generic/Kernel.h"

namespace fusec::generic {

namespace {

class TopKBuilder : Frame {
public:
  TopKBuilder(const Op &op, const std::string &entry) : Frame(op, entry) {}

  KirKernel run() {
    Sizes in = sizesOf(*op.operand(0));
    size_t axis = *normalizeAxis(op.getInt("axis"), in.size());
    d = in[axis];
    inner = product(in, axis + 1);
    k = op.getInt("k");
    largest = op.getBool("largest");
    int64_t lines = d == 0 ? 0 : product(in) / d;
    int64_t warps = kBlock / 32;
    slotValue = b.sharedArray(acc, unsigned(warps), "slot_value");
    slotIndex = b.sharedArray(DType::I64, unsigned(warps), "slot_index");
    tid = b.special(kir::Special::TidX);
    tileLoop(lines, [&](ValueId line) {
      ValueId j = arith(IndexOp::Rem, line, inner, "j");
      ValueId o = arith(IndexOp::Div, line, inner, "o");
      ValueId lineStart = arith(IndexOp::Mul, o, d * inner);
      base = b.add(lineStart, j, "base");
      ValueId outStart = arith(IndexOp::Mul, o, k * inner);
      outBase = b.add(outStart, j, "out_base");
      Candidate first = pass(index(0), std::nullopt);
      if (k == 1)
        return;
      ValueId prevValue = b.localArray(acc, 1, "prev_value");
      ValueId prevIndex = b.localArray(DType::I64, 1, "prev_index");
      b.store(prevValue, index(0), first.value);
      b.store(prevIndex, index(0), first.index);
      loop(index(1), k, 1, "p", 0, [&](ValueId p) {
        Candidate prev{b.load(prevValue, index(0), 1, "prev"),
                       b.load(prevIndex, index(0), 1, "at")};
        Candidate best = pass(p, prev);
        b.store(prevValue, index(0), best.value);
        b.store(prevIndex, index(0), best.index);
      });
    });
    std::string note = "one block per line along axis " + std::to_string(axis) + ", " +
                       std::to_string(k) + (k == 1 ? " pass" : " passes") + " of a block-wide " +
                       (largest ? "arg-max" : "arg-min");
    return finish(note, lines);
  }

private:
  struct Candidate {
    ValueId value, index;
  };

  /// Pass `p`: the line's best element after `prev` (any when absent), stored as output p by
  /// thread 0 and returned to every thread.
  Candidate pass(ValueId p, std::optional<Candidate> prev) {
    ValueId bestValue = b.localArray(acc, 1, "best_value");
    ValueId bestIndex = b.localArray(DType::I64, 1, "best_index");
    ValueId zero = index(0), none = index(d), init = lowest();
    b.store(bestValue, zero, init);
    b.store(bestIndex, zero, none);
    loop(tid, d, kBlock, "t", 0, [&](ValueId t) {
      ValueId step = arith(IndexOp::Mul, t, inner);
      ValueId at = b.add(base, step, "at");
      Candidate x{loadAcc(0, at, "x"), t};
      Candidate best{b.load(bestValue, index(0), 1, ""), b.load(bestIndex, index(0), 1, "")};
      ValueId better = precedes(x, best, /*later=*/true);
      if (prev)
        better = both(precedes(*prev, x), better);
      b.ifThenElse(better, [&] {
        b.store(bestValue, index(0), x.value);
        b.store(bestIndex, index(0), x.index);
      });
    });
    Candidate best{b.load(bestValue, index(0), 1, "mine"),
                   b.load(bestIndex, index(0), 1, "mine_at")};
    best = blockBest(best);
    b.ifThenElse(b.less(tid, index(1)), [&] {
      ValueId step = b.mul(p, index(inner));
      ValueId at = b.add(outBase, step, "out_at");
      b.store(out(), at, best.index);
    });
    return best;
  }

  /// Whether `a` precedes `c` (Note [Top-k order]). `later`: a's index is known to be above
  /// c's (a thread's own scan of the line), so a tie never lets a precede c, and `a` is present.
  ValueId precedes(Candidate a, Candidate c, bool later = false) {
    ValueId ranksHigher = compare(largest ? OpKind::Gt : OpKind::Lt, a.value, c.value);
    ValueId tie = kir::kNoValue;
    if (!later)
      tie = compare(OpKind::Eq, a.value, c.value);
    ValueId ordered;
    if (isFloat(acc)) {
      ValueId aNaN = compare(OpKind::Ne, a.value, a.value);
      ValueId cNaN = compare(OpKind::Ne, c.value, c.value);
      ValueId byValue = ranksHigher;
      if (!later) {
        tie = either(tie, both(aNaN, cNaN));
        byValue = either(ranksHigher, both(tie, b.less(a.index, c.index)));
      }
      // One NaN: it ranks above every number.
      ValueId nanDiffers = b.math({OpKind::Ne, DType::Bool, DType::Bool}, {aNaN, cNaN}, "");
      ordered = b.select(nanDiffers, largest ? aNaN : cNaN, byValue);
    } else {
      ordered = later ? ranksHigher : either(ranksHigher, both(tie, b.less(a.index, c.index)));
    }
    // An absent c: a precedes it when present; an absent a precedes nothing.
    if (later)
      return either(ordered, b.less(index(d - 1), c.index));
    ValueId aValid = b.less(a.index, index(d)), cValid = b.less(c.index, index(d));
    return b.select(both(aValid, cValid), ordered, aValid);
  }

  /// p || q, for predicates.
  ValueId either(ValueId p, ValueId q) { return b.select(p, p, q); }

  /// The better of two candidates.
  Candidate better(Candidate a, Candidate c) {
    ValueId first = precedes(a, c);
    return {b.select(first, a.value, c.value, "value"), b.select(first, a.index, c.index, "index")};
  }

  /// The block's best candidate, which every thread gets: xor shuffles within each warp, then the
  /// warps' bests through the shared slots, combined by every thread in one order.
  Candidate blockBest(Candidate v) {
    v = warpBest(v);
    ValueId laneInWarp = arith(IndexOp::Rem, tid, 32, "lane_in_warp");
    ValueId warp = arith(IndexOp::Div, tid, 32, "warp");
    b.ifThenElse(b.less(laneInWarp, index(1)), [&] {
      b.store(slotValue, warp, v.value);
      b.store(slotIndex, warp, v.index);
    });
    b.barrier();
    v = {b.load(slotValue, index(0), 1, "line_best"), b.load(slotIndex, index(0), 1, "line_at")};
    for (int64_t w = 1; w < kBlock / 32; ++w)
      v = better(v, {b.load(slotValue, index(w)), b.load(slotIndex, index(w))});
    b.barrier(); // the slots are written again by the next pass
    return v;
  }

  Candidate warpBest(Candidate v) {
    for (int64_t offset = 16; offset > 0; offset /= 2) {
      ValueId lane = index(offset);
      Candidate other{b.shuffle(kir::ShuffleMode::Xor, v.value, lane, 32),
                      b.shuffle(kir::ShuffleMode::Xor, v.index, lane, 32)};
      v = better(v, other);
    }
    return v;
  }

  int64_t d = 0, inner = 1, k = 1;
  bool largest = true;
  ValueId slotValue = kir::kNoValue, slotIndex = kir::kNoValue, tid = kir::kNoValue;
  ValueId base = kir::kNoValue, outBase = kir::kNoValue;
};

} // namespace

KirKernel buildTopK(const Op &op, const std::string &entry) { return TopKBuilder(op, entry).run(); }

} // namespace fusec::generic
