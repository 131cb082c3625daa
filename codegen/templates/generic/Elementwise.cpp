// Generic kernels of the pointwise and movement ops and batch_norm: one
// thread per output element over a grid-stride loop, so that consecutive
// threads write consecutive elements.
//
//  - pointwise ops: an operand of the result's shape is read at the flat
//    index, a broadcast one at the strided sum of the output coordinates it
//    spans (0 along broadcast axes); one math instruction.
//  - batch_norm: (x - mean) / sqrt(var + eps) * scale + bias as the
//    reference computes it, the parameters read at the channel coordinate.
//  - movement ops copy the element's bits (so every dtype and NaN payload
//    moves exactly), a gather out[i] = in[base + Σ c_k · stride_k]: reshape
//    reads the same flat index; transpose permutes the input's strides;
//    slice scales one stride by the step and starts at start · stride;
//    broadcast zeroes the strides of broadcast axes; concat copies from the
//    operand whose range along the axis holds the coordinate.
//  - gather reads its index (Note [Gather indices]) and copies the element
//    of the row it names; gather_elements reads the index at its own
//    element and copies the data element at the same coordinates but the
//    axis's, which the index names.
//
// Note [Gather indices]
// An index of `gather` that the reference would refuse (outside [-d, d) for
// the axis's extent d) must not make a kernel read outside its operand: the
// kernel wraps a negative index once (i + d) and clamps the result into
// [0, d - 1], so a bad index reads the first or the last row. d is never 0
// here: inference refuses static indices into an empty axis, and a gather
// of no indices has no elements to run. gather_elements does the same.
#include "codegen/templates/generic/Kernel.h"
#include "ir/Assert.h"

#include <algorithm>

namespace fusec::generic {

namespace {

/// A gather's strides over the output axes and its base offset.
struct Gather {
  Sizes strides;
  int64_t base = 0;
};

Gather gatherOf(const Op &op, const Sizes &in, const Sizes &out) {
  Sizes own = contiguousStrides(in);
  switch (op.kind()) {
  case OpKind::Transpose: {
    Sizes strides;
    for (int64_t p : op.getInts("perm"))
      strides.push_back(own[size_t(p)]);
    return {strides, 0};
  }

  case OpKind::Slice: {
    size_t axis = *normalizeAxis(op.getInt("axis"), in.size());
    int64_t dim = in[axis];
    int64_t start = op.getInt("start");
    start = std::clamp<int64_t>(start < 0 ? start + dim : start, 0, dim);
    int64_t base = start * own[axis];
    own[axis] *= op.getInt("step");
    return {own, base};
  }

  case OpKind::Broadcast:
    return {broadcastStrides(in, out), 0};
  case OpKind::Reshape:
    return {contiguousStrides(out), 0};
  case OpKind::Concat:         // one gather per operand, built by the caller
  case OpKind::Gather:         // an indexed read, built by the caller
  case OpKind::GatherElements: // likewise
#define FUSEC_CASES_Movement(Id)
#include "ir/OpCases.def"
    break;
  }
  FUSEC_ASSERT(false, "not a gather");
}

class ElementwiseBuilder : Frame {
public:
  ElementwiseBuilder(const Op &op, const std::string &entry)
      : Frame(op, entry), shape(sizesOf(*op.result())) {}

  KirKernel run() {
    std::string note;
    void (ElementwiseBuilder::*element)(ValueId) = &ElementwiseBuilder::gather;
    if (op.info().cls == OpClass::Pointwise) {
      element = &ElementwiseBuilder::pointwise;
      for (unsigned j = 0; j < op.numOperands(); ++j)
        need(broadcastStrides(sizesOf(*op.operand(j)), shape), 0);
    } else if (op.kind() == OpKind::BatchNorm) {
      element = &ElementwiseBuilder::batchNorm;
      axis = op.operand(0)->type().layout == Layout::NHWC ? 3 : 1;
      needed.insert(axis);
      note = "; channel axis " + std::to_string(axis);
    } else if (op.kind() == OpKind::Concat) {
      element = &ElementwiseBuilder::concat;
      axis = unsigned(*normalizeAxis(op.getInt("axis"), shape.size()));
      needed.insert(axis);
      for (const Value *v : op.operands())
        for (unsigned a : movingAxes(shape, contiguousStrides(sizesOf(*v))))
          needed.insert(a);
      note = ": operand chosen along axis " + std::to_string(axis);
    } else if (op.kind() == OpKind::Gather) {
      element = &ElementwiseBuilder::gatherRow;
      axis = unsigned(*normalizeAxis(op.getInt("axis"), sizesOf(*op.operand(0)).size()));
      note = ": the row its index names along axis " + std::to_string(axis) + ", clamped";
    } else if (op.kind() == OpKind::GatherElements) {
      element = &ElementwiseBuilder::gatherElement;
      axis = unsigned(*normalizeAxis(op.getInt("axis"), shape.size()));
      Sizes strides = contiguousStrides(sizesOf(*op.operand(0)));
      strides[axis] = 0;
      for (unsigned a : movingAxes(shape, strides))
        needed.insert(a);
      note = ": the element its index names along axis " + std::to_string(axis) + ", clamped";
    } else {
      g = gatherOf(op, sizesOf(*op.operand(0)), shape);
      need(g.strides, g.base);
      note = op.kind() == OpKind::Reshape ? ": a flat copy" : ": a strided gather";
    }
    int64_t numel = product(shape);
    forEachElement(numel, [&](ValueId i) {
      coords = coordinates(b, i, unsigned(shape.size()), needed,
                           [&](unsigned a) { return b.index(shape[a]); });
      (this->*element)(i);
    });
    return finish("one thread per element" + note, blocksFor(numel));
  }

private:
  /// Whether `strides` and `base` read the element at the flat index itself.
  bool isFlat(const Sizes &strides, int64_t base) const {
    return base == 0 && isRowMajor(shape, strides);
  }

  /// The offset `strides` and `base` read at output element i.
  ValueId offset(const Sizes &strides, int64_t base, ValueId i) {
    if (isFlat(strides, base))
      return i;
    auto strided = terms(shape, strides);
    ValueId start = base ? b.index(base) : kir::kNoValue;
    return stridedOffset(b, coords, strided, start);
  }

  /// Asks the coordinates `offset` needs for `strides` and `base`.
  void need(const Sizes &strides, int64_t base) {
    if (!isFlat(strides, base))
      for (unsigned a : movingAxes(shape, strides))
        needed.insert(a);
  }

  void pointwise(ValueId i) {
    std::vector<ValueId> args;
    for (unsigned j = 0; j < op.numOperands(); ++j) {
      Sizes strides = broadcastStrides(sizesOf(*op.operand(j)), shape);
      DType t = op.operand(j)->type().dtype;
      ValueId x = b.load(in(j), offset(strides, 0, i));
      args.push_back(b.widen(t, x, "x" + std::to_string(j)));
    }
    DType rt = op.result()->type().dtype;
    ValueId y = b.math(kir::mathOf(op), args, "y");
    b.store(out(), i, b.narrow(rt, y));
  }

  void batchNorm(ValueId i) {
    DType t = op.result()->type().dtype;
    static const char *names[] = {"x", "scale", "bias", "mean", "var"};
    std::array<ValueId, 5> v;
    for (unsigned j = 0; j < 5; ++j) {
      ValueId at = j == 0 ? i : coords.at(axis);
      v[j] = b.widen(op.operand(j)->type().dtype, b.load(in(j), at), names[j]);
    }
    b.store(out(), i, b.narrow(t, templates::batchNormValue(b, t, v, op.getFloat("epsilon"))));
  }

  void gather(ValueId i) { b.store(out(), i, b.load(in(0), offset(g.strides, g.base, i), 1, "x")); }

  // out[(o·n + k)·inner + j] = data[(o·d + row)·inner + j], row = indices[k] wrapped and clamped
  // into [0, d) (Note [Gather indices]).
  void gatherRow(ValueId i) {
    Sizes data = sizesOf(*op.operand(0));
    int64_t d = data[axis], inner = product(data, axis + 1);
    int64_t n = product(sizesOf(*op.operand(1)));
    ValueId j = arith(IndexOp::Rem, i, inner, "j");
    ValueId ok = arith(IndexOp::Div, i, inner);
    ValueId k = arith(IndexOp::Rem, ok, n, "k");
    ValueId o = arith(IndexOp::Div, ok, n, "o");
    ValueId row = indexAt(k, d);
    ValueId rowStart = b.add(arith(IndexOp::Mul, o, d), row);
    ValueId at = b.add(arith(IndexOp::Mul, rowStart, inner), j);
    b.store(out(), i, b.load(in(0), at, 1, "x"));
  }

  // out[i] = data[Σ_{a ≠ axis} c_a · stride_a + row · stride_axis] over the coordinates c of i
  // in the indices' (the result's) shape, row = indices[i] wrapped and clamped into [0, d).
  void gatherElement(ValueId i) {
    Sizes data = sizesOf(*op.operand(0)), strides = contiguousStrides(data);
    int64_t along = strides[axis];
    strides[axis] = 0;
    ValueId row = indexAt(i, data[axis]);
    ValueId start = b.mul(row, index(along), "start");
    ValueId at = stridedOffset(b, coords, terms(shape, strides), start);
    b.store(out(), i, b.load(in(0), at, 1, "x"));
  }

  // Operand 1's index at flat position k, sign-extended, a negative one wrapped once (+ d) and
  // the result clamped into [0, d - 1] (Note [Gather indices]).
  ValueId indexAt(ValueId k, int64_t d) {
    ValueId loaded = b.load(in(1), k, 1, "index");
    ValueId raw = b.convert(DType::I64, loaded, "index");
    ValueId zero = index(0);
    ValueId negative = b.less(raw, zero);
    ValueId fromEnd = arith(IndexOp::Add, raw, d);
    ValueId wrapped = b.select(negative, fromEnd, raw, "wrapped");
    ValueId last = index(d - 1);
    ValueId above = b.math({OpKind::Max, DType::I64, DType::I64}, {wrapped, zero}, "");
    return b.math({OpKind::Min, DType::I64, DType::I64}, {above, last}, "row");
  }

  void concat(ValueId i) {
    ValueId c = coords.empty() ? kir::kNoValue : coords.at(axis);
    // One if a non-empty operand, flat (no else chain: a concat of thousands
    // of operands must not nest thousands deep): copy from it when
    // begin <= c < end, the first operand testing only the end and the last
    // only the beginning.
    int64_t begin = 0;
    unsigned last = 0;
    for (unsigned j = 0; j < op.numOperands(); ++j)
      if (sizesOf(*op.operand(j))[axis] > 0)
        last = j;
    for (unsigned j = 0; j < op.numOperands(); ++j) {
      Sizes sizes = sizesOf(*op.operand(j));
      if (sizes[axis] == 0)
        continue;
      Sizes strides = contiguousStrides(sizes);
      int64_t end = begin + sizes[axis];
      auto copy = [&] {
        b.store(out(), i, b.load(in(j), offset(strides, -begin * strides[axis], i), 1, "x"));
      };
      auto belowEnd = [&] {
        if (j == last)
          return copy();
        b.ifThenElse(b.less(c, b.index(end)), copy);
      };
      if (begin == 0)
        belowEnd();
      else
        b.ifThenElse(b.less(b.index(begin - 1), c), belowEnd);
      begin = end;
    }
  }

  Sizes shape;
  unsigned axis = 0; // batch_norm's channel axis, concat's, gather's and gather_elements' axis
  Gather g;          // a gather's
  std::set<unsigned> needed;
  std::map<unsigned, ValueId> coords;
};

} // namespace

KirKernel buildElementwise(const Op &op, const std::string &entry) {
  return ElementwiseBuilder(op, entry).run();
}

} // namespace fusec::generic
