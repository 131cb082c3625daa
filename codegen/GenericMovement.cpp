// Generic kernels of the movement ops: one thread per output element copies
// the element's bits (storage type to storage type, so every dtype and every
// NaN payload moves exactly). Each op is a gather out[i] = in[base + Σ c_k ·
// stride_k] over the output coordinates c_k, as in the CPU reference:
// reshape reads the same flat index; transpose permutes the input's strides;
// slice scales one stride by the step and starts at start · stride; broadcast
// zeroes the strides of broadcast axes; concat picks its operand by the
// coordinate along the axis and shifts it back by the operand's offset.
#include "codegen/GenericSupport.h"
#include "ir/Assert.h"

#include <algorithm>
#include <sstream>

namespace fusec::codegen::generic {

std::pair<Sizes, int64_t> gatherOf(const Op &op, const Sizes &in, const Sizes &out) {
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
  default:
    FUSEC_ASSERT(false, "not a gather");
  }
}

namespace {

std::string copy(KernelBuilder &k, unsigned operand, const std::string &index) {
  return k.out() + "[i] = " + k.in(operand) + "[" + index + "];\n";
}

/// if (c_axis < end_0) out = in_0[...]; else if ... — operands of extent 0
/// are skipped, and the last one needs no test.
std::string concatBody(KernelBuilder &k, IndexSpace &space, size_t axis) {
  const Op &op = k.op();
  std::vector<unsigned> present;
  for (unsigned j = 0; j < op.numOperands(); ++j)
    if (sizesOf(*op.operand(j))[axis] > 0)
      present.push_back(j);
  std::ostringstream os;
  int64_t begin = 0;
  for (size_t n = 0; n < present.size(); ++n) {
    Sizes in = sizesOf(*op.operand(present[n]));
    Sizes strides = contiguousStrides(in);
    std::string statement = copy(k, present[n], space.offset(strides, -begin * strides[axis]));
    begin += in[axis];
    bool last = n + 1 == present.size();
    if (present.size() == 1) {
      os << "    " << statement;
      break;
    }
    os << "    " << (n == 0 ? "if" : last ? "else" : "else if");
    if (!last)
      os << " (" << space.coord(axis) << " < " << lit(begin) << ")";
    os << "\n      " << statement;
  }
  return os.str();
}

} // namespace

GeneratedKernel emitMovement(KernelBuilder &k) {
  const Op &op = k.op();
  Sizes out = sizesOf(*op.result()), in = sizesOf(*op.operand(0));
  IndexSpace space(out, "c");
  std::string loop, note;
  if (op.kind() == OpKind::Reshape) {
    loop = "    " + copy(k, 0, "i");
    note = "a flat copy";
  } else if (op.kind() == OpKind::Concat) {
    size_t axis = *normalizeAxis(op.getInt("axis"), out.size());
    loop = concatBody(k, space, axis);
    note = "operand chosen along axis " + std::to_string(axis);
  } else {
    auto [strides, base] = gatherOf(op, in, out);
    loop = "    " + copy(k, 0, space.offsetOr("i", strides, base));
    note = "a strided gather";
  }
  int64_t numel = product(out);
  std::string body = gridStrideLoop(numel, space.split("i", "    ") + loop);
  return k.finish({"one thread per element: " + note}, body, blocksFor(numel));
}

} // namespace fusec::codegen::generic
