// Index and conversion helpers shared by the reference kernels: run-time
// broadcasting, strides, strided gathers and int64 views of tensors.
#include "runtime/reference/Ops.h"

#include "ir/Assert.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace fusec::ref {

bool OpContext::error(std::string message) const {
  diags.error(op.loc(), std::move(message));
  return false;
}

int64_t product(const Sizes &sizes) {
  int64_t n = 1;
  for (int64_t d : sizes) {
    bool overflow = __builtin_mul_overflow(n, d, &n);
    FUSEC_ASSERT(!overflow && d >= 0, "run-time shape product overflows");
  }
  return n;
}

Sizes contiguousStrides(const Sizes &shape) {
  Sizes strides(shape.size());
  int64_t s = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = s;
    s *= shape[d];
  }
  return strides;
}

std::optional<Sizes> broadcastSizes(const std::vector<Sizes> &shapes) {
  size_t rank = 0;
  for (const Sizes &s : shapes)
    rank = std::max(rank, s.size());
  Sizes out(rank, 1);
  for (const Sizes &s : shapes) {
    size_t lead = rank - s.size();
    for (size_t d = 0; d < s.size(); ++d) {
      int64_t &o = out[lead + d];
      if (s[d] != 1 && o != 1 && s[d] != o)
        return std::nullopt;
      if (s[d] != 1)
        o = s[d];
    }
  }
  return out;
}

Sizes broadcastStrides(const Sizes &shape, const Sizes &target) {
  FUSEC_ASSERT(shape.size() <= target.size(), "broadcast to a lower rank");
  Sizes own = contiguousStrides(shape);
  Sizes strides(target.size(), 0);
  size_t lead = target.size() - shape.size();
  for (size_t d = 0; d < shape.size(); ++d) {
    FUSEC_ASSERT(shape[d] == target[lead + d] || shape[d] == 1, "shapes do not broadcast");
    strides[lead + d] = shape[d] == 1 ? 0 : own[d];
  }
  return strides;
}

Sizes stridedOffsets(const Sizes &shape, const Sizes &strides) {
  Sizes offsets(size_t(product(shape)));
  forEachStrided<1>(shape, {&strides},
                    [&](int64_t i, const std::array<int64_t, 1> &at) { offsets[i] = at[0]; });
  return offsets;
}

std::string sizesStr(const Sizes &sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i)
    s += (i ? "," : "") + std::to_string(sizes[i]);
  return s + "]";
}

std::string operandTypes(const OpContext &ctx) {
  std::string s;
  unsigned n = ctx.numOperands();
  for (unsigned i = 0; i < n; ++i)
    s += (i == 0 ? "" : i + 1 == n ? " and " : ", ") + ctx.in(i).typeStr();
  return s;
}

std::vector<int64_t> toInt64s(const Tensor &t) {
  size_t n = t.numElements();
  std::vector<int64_t> out(n);
  for (size_t i = 0; i < n; ++i)
    out[i] = t.getInt(i);
  return out;
}

Tensor fromInt64s(DType dtype, Sizes shape, const std::vector<int64_t> &v) {
  Tensor t(dtype, std::move(shape));
  FUSEC_ASSERT(v.size() == t.numElements(), "fromInt64s: element count does not match shape");
  for (size_t i = 0; i < v.size(); ++i)
    t.setInt(i, v[i]);
  return t;
}

std::vector<double> permuteDoubles(const std::vector<double> &v, const Sizes &shape,
                                   const Sizes &perm) {
  Sizes own = contiguousStrides(shape), outShape, strides;
  for (int64_t p : perm) {
    outShape.push_back(shape[size_t(p)]);
    strides.push_back(own[size_t(p)]);
  }
  std::vector<double> out(v.size());
  forEachStrided<1>(outShape, {&strides},
                    [&](int64_t i, const std::array<int64_t, 1> &at) { out[i] = v[at[0]]; });
  return out;
}

void softmaxLine(double *x, int64_t n, int64_t stride) {
  double max = -std::numeric_limits<double>::infinity(), sum = 0;
  for (int64_t j = 0; j < n; ++j)
    if (std::isnan(x[j * stride]) || x[j * stride] > max)
      max = x[j * stride];
  for (int64_t j = 0; j < n; ++j) {
    x[j * stride] = std::exp(x[j * stride] - max);
    sum += x[j * stride];
  }
  for (int64_t j = 0; j < n; ++j)
    x[j * stride] /= sum;
}

namespace {

template <typename T>
void gatherAs(const uint8_t *in, uint8_t *out, const Sizes &shape, const Sizes &strides,
              int64_t base) {
  forEachStrided<1>(shape, {&strides}, [&](int64_t i, const std::array<int64_t, 1> &at) {
    std::memcpy(out + i * sizeof(T), in + (base + at[0]) * sizeof(T), sizeof(T));
  });
}

} // namespace

Tensor gatherElements(const Tensor &in, Sizes shape, const Sizes &strides, int64_t base) {
  Tensor out(in.dtype, std::move(shape));
  const uint8_t *src = in.bytes.data();
  uint8_t *dst = out.bytes.data();
  switch (dtypeSize(in.dtype)) {
  case 1:
    gatherAs<uint8_t>(src, dst, out.shape, strides, base);
    break;
  case 2:
    gatherAs<uint16_t>(src, dst, out.shape, strides, base);
    break;
  case 4:
    gatherAs<uint32_t>(src, dst, out.shape, strides, base);
    break;
  case 8:
    gatherAs<uint64_t>(src, dst, out.shape, strides, base);
    break;
  default:
    FUSEC_ASSERT(false, "unexpected element size");
  }
  return out;
}

} // namespace fusec::ref
