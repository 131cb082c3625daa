// Index math shared by the kir builders (see Index.h).
#include "codegen/templates/Index.h"

#include <algorithm>

namespace fusec::templates {

std::vector<int64_t> contiguousStrides(const std::vector<int64_t> &shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t s = 1;
  for (size_t k = shape.size(); k-- > 0; s *= shape[k])
    strides[k] = s;
  return strides;
}

std::optional<std::vector<int64_t>> reshapedStrides(const std::vector<int64_t> &shape,
                                                    const std::vector<int64_t> &strides,
                                                    const std::vector<int64_t> &to) {
  if (std::find(shape.begin(), shape.end(), 0) != shape.end())
    return contiguousStrides(to); // no element to address
  std::vector<int64_t> out(to.size(), 0);
  size_t i = 0, j = 0;
  while (i < shape.size() || j < to.size()) {
    if (i < shape.size() && shape[i] == 1) {
      ++i;
      continue;
    }
    if (j < to.size() && to[j] == 1) {
      ++j;
      continue;
    }
    if (i == shape.size() || j == to.size())
      return std::nullopt;
    // The shortest runs shape[i, ie) and to[j, je) of equal products (each ends in a dim > 1).
    size_t ie = i + 1, je = j + 1;
    int64_t a = shape[i], b = to[j];
    while (a != b) {
      if (a < b && ie < shape.size())
        a *= shape[ie++];
      else if (b < a && je < to.size())
        b *= to[je++];
      else
        return std::nullopt;
    }
    // From the innermost, each dim > 1 of the run the size of the next one's span apart.
    int64_t span = -1;
    for (size_t x = ie; x-- > i;) {
      if (shape[x] == 1)
        continue;
      if (span >= 0 && strides[x] != span)
        return std::nullopt;
      span = strides[x] * shape[x];
    }
    int64_t stride = strides[ie - 1];
    for (size_t y = je; y-- > j;) {
      out[y] = stride;
      stride *= to[y];
    }
    i = ie;
    j = je;
  }
  return out;
}

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
