// Attributes: kind names, literal coercion, equality, dense element access.
#include "ir/Attribute.h"

#include "ir/Assert.h"
#include "ir/Numerics.h"

#include <algorithm>
#include <cstring>

namespace fusec {

bool DenseData::isSplat() const {
  size_t size = dtypeSize(dtype);
  for (size_t i = 1; i < numElements(); ++i)
    if (!std::equal(bytes.begin(), bytes.begin() + long(size), bytes.begin() + long(i * size)))
      return false;
  return true;
}

double DenseData::elementAsDouble(size_t i) const {
  FUSEC_ASSERT(i < numElements(), "dense element index out of range");
  return loadElement(dtype, bytes.data() + i * dtypeSize(dtype));
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
