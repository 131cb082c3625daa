// Attributes: kind names, literal coercion, equality, dense element access.
#include "ir/Attribute.h"

#include "ir/Assert.h"
#include "ir/Numerics.h"

#include <algorithm>
#include <cstring>

namespace fusec {

DenseData DenseData::makeSplat(DType dtype, std::vector<int64_t> shape,
                               std::vector<uint8_t> element) {
  FUSEC_ASSERT(element.size() == dtypeSize(dtype), "splat element of the wrong size");
  DenseData d(dtype, std::move(shape), std::move(element));
  d.splatForm = true;
  if (d.numElements() != 0)
    return d;
  d.bytes.clear();
  d.splatForm = false;
  return d;
}

size_t DenseData::numElements() const {
  if (!splatForm)
    return bytes.size() / dtypeSize(dtype);
  uint64_t n = 1;
  for (int64_t dim : shape)
    if (dim < 0 || __builtin_mul_overflow(n, uint64_t(dim), &n))
      return 0;
  return size_t(n);
}

const uint8_t *DenseData::element(size_t i) const {
  FUSEC_ASSERT(i < numElements(), "dense element index out of range");
  return bytes.data() + (splatForm ? 0 : i * dtypeSize(dtype));
}

double DenseData::elementAsDouble(size_t i) const { return loadElement(dtype, element(i)); }

bool DenseData::isSplat() const {
  if (splatForm)
    return true;
  size_t size = dtypeSize(dtype);
  for (size_t i = 1; i < numElements(); ++i)
    if (!std::equal(bytes.begin(), bytes.begin() + long(size), bytes.begin() + long(i * size)))
      return false;
  return true;
}

std::vector<uint8_t> DenseData::expandedBytes() const {
  if (!splatForm)
    return bytes;
  size_t n = numElements(), size = bytes.size();
  std::vector<uint8_t> out(n * size);
  for (size_t i = 0; i < n; ++i)
    std::memcpy(out.data() + i * size, bytes.data(), size);
  return out;
}

bool DenseData::operator==(const DenseData &o) const {
  if (dtype != o.dtype || shape != o.shape)
    return false;
  if (splatForm == o.splatForm)
    return bytes == o.bytes;
  const DenseData &splat = splatForm ? *this : o, &full = splatForm ? o : *this;
  size_t n = full.numElements();
  if (n != splat.numElements())
    return false;
  for (size_t i = 0; i < n; ++i)
    if (!std::equal(splat.bytes.begin(), splat.bytes.end(), full.element(i)))
      return false;
  return true;
}

std::string_view attrKindName(AttrKind k) {
  static constexpr std::string_view kNames[] = {"int",   "float", "string", "bool",
                                                "ints",  "dtype", "shape",  "dense"};
  return kNames[unsigned(k)];
}

bool Attribute::coerceTo(AttrKind want) {
  if (kind() == want)
    return true;
  if (want == AttrKind::Float && kind() == AttrKind::Int) {
    value = double(get<int64_t>());
    return true;
  }
  if (want == AttrKind::Shape && kind() == AttrKind::Ints) {
    Shape s;
    for (int64_t n : get<std::vector<int64_t>>())
      s.push_back(Dim::fixed(n));
    value = std::move(s);
    return true;
  }
  // An empty list parses as ints; a shape of all-static dims may be wanted as ints.
  if (want == AttrKind::Ints && kind() == AttrKind::Shape && isStatic(get<Shape>())) {
    std::vector<int64_t> v;
    for (const Dim &d : get<Shape>())
      v.push_back(d.size);
    value = std::move(v);
    return true;
  }
  return false;
}

bool Attribute::operator==(const Attribute &o) const {
  if (kind() != o.kind())
    return false;
  if (kind() == AttrKind::Dense)
    return *get<DenseRef>() == *o.get<DenseRef>();
  if (kind() == AttrKind::Float) // bitwise, so that nan == nan and -0 != 0
    return std::memcmp(&get<double>(), &o.get<double>(), sizeof(double)) == 0;
  return value == o.value;
}

} // namespace fusec
