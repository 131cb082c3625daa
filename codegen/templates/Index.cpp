// Index math shared by the kir builders (see Index.h).
#include "codegen/templates/Index.h"

namespace fusec::templates {

using kir::ValueId;

std::map<unsigned, ValueId> coordinates(kir::Builder &b, ValueId flat, unsigned rank,
                                        const std::set<unsigned> &needed,
                                        const std::function<ValueId(unsigned)> &extent) {
  std::map<unsigned, ValueId> c;
  if (needed.empty())
    return c;
  ValueId rem = flat;
  unsigned first = *needed.begin();
  for (unsigned a = rank; a-- > first;) {
    if (a == 0) {
      c[0] = rem;
      break;
    }
    ValueId size = extent(a);
    c[a] = b.arith(kir::IndexOp::Rem, rem, size, "c" + std::to_string(a));
    if (a > first)
      rem = b.arith(kir::IndexOp::Div, rem, size, "rem");
  }
  return c;
}

ValueId stridedOffset(kir::Builder &b, const std::map<unsigned, ValueId> &coords,
                      const std::vector<std::pair<unsigned, ValueId>> &terms, ValueId base) {
  ValueId sum = base;
  for (const auto &[axis, stride] : terms) {
    ValueId term = b.constantOf(stride) == 1 ? coords.at(axis) : b.mul(coords.at(axis), stride);
    sum = sum == kir::kNoValue ? term : b.add(sum, term);
  }
  return sum == kir::kNoValue ? b.index(0) : sum;
}

std::pair<ValueId, ValueId> gridStride(kir::Builder &b) {
  ValueId blocks = b.special(kir::Special::NctaidX), threads = b.special(kir::Special::NtidX);
  ValueId step = b.mul(blocks, threads, "step");
  ValueId block = b.special(kir::Special::CtaidX), thread = b.special(kir::Special::TidX);
  ValueId first = b.add(b.mul(block, threads), thread, "first");
  return {step, first};
}

void gridStrideLoop(kir::Builder &b, ValueId count, const std::function<void(ValueId i)> &body) {
  auto [step, first] = gridStride(b);
  b.forLoop(first, count, step, "i", 0, body);
}

} // namespace fusec::templates
