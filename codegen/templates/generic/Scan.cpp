// The generic kernel of cumsum: one thread per line along the axis (the
// lines are the output's elements with the axis taken out), each running
// over its d elements serially from the front or the back and storing every
// running sum, the element left out of its own sum when `exclusive`. Sums run
// in the accumulator dtype (f32 for f16, bf16 and f32; f64; wrapping i64 for
// integers) and round once on each store. Consecutive threads take
// consecutive positions after the axis, so their reads and writes coalesce
// when the axis is not the last; a scan along the last axis reads one
// element a thread a line apart. Correct first: a long line is one thread's
// serial loop (no block-wide scan yet).
#include "codegen/templates/generic/Kernel.h"
#include "ir/Assert.h"

namespace fusec::generic {

namespace {

class ScanBuilder : Frame {
public:
  ScanBuilder(const Op &op, const std::string &entry) : Frame(op, entry) {}

  KirKernel run() {
    Sizes shape = sizesOf(*op.result());
    size_t axis = *normalizeAxis(op.getInt("axis"), shape.size());
    int64_t d = shape[axis], inner = product(shape, axis + 1);
    int64_t lines = d == 0 ? 0 : product(shape) / d;
    bool exclusive = op.getBool("exclusive"), reverse = op.getBool("reverse");
    forEachElement(lines, [&](ValueId line) {
      ValueId j = arith(IndexOp::Rem, line, inner, "j");
      ValueId o = arith(IndexOp::Div, line, inner, "o");
      ValueId lineStart = arith(IndexOp::Mul, o, d * inner);
      ValueId base = b.add(lineStart, j, "base");
      Var sum = var(constant(0), "sum");
      count(d, "t", 0, [&](ValueId t) {
        ValueId last = index(d - 1);
        ValueId s = reverse ? b.arith(IndexOp::Sub, last, t, "s") : t;
        ValueId step = arith(IndexOp::Mul, s, inner);
        ValueId at = b.add(base, step, "at");
        ValueId x = loadAcc(0, at, "x");
        if (exclusive)
          storeAcc(at, sum.get("before"));
        sum.combine(OpKind::Add, x);
        if (!exclusive)
          storeAcc(at, sum.get("running"));
      });
    });
    std::string note = "one thread per line along axis " + std::to_string(axis) + ", " +
                       (reverse ? "from the back" : "from the front") +
                       (exclusive ? ", exclusive" : "");
    return finish(note, blocksFor(lines));
  }
};

} // namespace

KirKernel buildScan(const Op &op, const std::string &entry) { return ScanBuilder(op, entry).run(); }

} // namespace fusec::generic
