// CSE keys for canonicalize: a hash and an equivalence over ops such that
// equivalent ops compute the same value. An attribute left at its default
// equals the default written out, so `{keepdims = false}` matches an op
// without it; constants compare by content; floats bitwise (as Attribute's
// operator== does), so the hash may use the bits.
#include "passes/Canonicalize.h"

#include "llvm/ADT/Hashing.h"

#include <bit>

namespace fusec::canonicalize {

namespace {

/// The attribute as the op means it: present, else the table's default;
/// null when neither.
const Attribute *effectiveAttr(const Op &op, const AttrSpec &spec) {
  if (const Attribute *a = op.attrIfPresent(spec.name))
    return a;
  return spec.deflt ? &*spec.deflt : nullptr;
}

llvm::hash_code hashShape(const Shape &shape) {
  llvm::hash_code h = llvm::hash_value(shape.size());
  for (const Dim &d : shape)
    h = llvm::hash_combine(h, d.size, d.symbol);
  return h;
}

llvm::hash_code hashType(const TensorType &t) {
  return llvm::hash_combine(t.dtype, t.layout, hashShape(t.shape));
}

// By content, not form (DenseData::operator==): data whose elements repeat
// one hashes as that element, whether it is held as a splat or in full.
llvm::hash_code hashDense(const DenseData &d) {
  llvm::hash_code h =
      llvm::hash_combine(d.dtype, llvm::hash_combine_range(d.shape.begin(), d.shape.end()));
  if (d.numElements() != 0 && d.isSplat())
    return llvm::hash_combine(
        h, llvm::hash_combine_range(d.element(0), d.element(0) + dtypeSize(d.dtype)));
  const std::vector<uint8_t> &bytes = d.storedBytes();
  return llvm::hash_combine(h, llvm::hash_combine_range(bytes.begin(), bytes.end()));
}

llvm::hash_code hashAttribute(const Attribute &a) {
  switch (a.kind()) {
  case AttrKind::Int:
    return llvm::hash_combine(a.kind(), a.get<int64_t>());
  case AttrKind::Float:
    return llvm::hash_combine(a.kind(), std::bit_cast<uint64_t>(a.get<double>()));
  case AttrKind::String:
    return llvm::hash_combine(a.kind(), a.get<std::string>());
  case AttrKind::Bool:
    return llvm::hash_combine(a.kind(), a.get<bool>());
  case AttrKind::Ints: {
    const std::vector<int64_t> &v = a.get<std::vector<int64_t>>();
    return llvm::hash_combine(a.kind(), llvm::hash_combine_range(v.begin(), v.end()));
  }
  case AttrKind::DType:
    return llvm::hash_combine(a.kind(), a.get<DType>());
  case AttrKind::Shape:
    return llvm::hash_combine(a.kind(), hashShape(a.get<Shape>()));
  case AttrKind::Dense:
    return llvm::hash_combine(a.kind(), hashDense(*a.get<DenseRef>()));
  }
  return llvm::hash_value(a.kind());
}

} // namespace

size_t hashOp(const Op &op) {
  llvm::hash_code h = llvm::hash_combine(
      op.kind(), llvm::hash_combine_range(op.operands().begin(), op.operands().end()));
  for (const AttrSpec &spec : op.info().attrs)
    if (const Attribute *a = effectiveAttr(op, spec))
      h = llvm::hash_combine(h, hashAttribute(*a));
  for (unsigned i = 0; i < op.numResults(); ++i)
    h = llvm::hash_combine(h, hashType(op.result(i)->type()));
  return h;
}

bool opsEquivalent(const Op &a, const Op &b) {
  if (a.kind() != b.kind() || a.operands() != b.operands() || a.numResults() != b.numResults())
    return false;
  for (unsigned i = 0; i < a.numResults(); ++i)
    if (a.result(i)->type() != b.result(i)->type())
      return false;
  for (const AttrSpec &spec : a.info().attrs) {
    const Attribute *x = effectiveAttr(a, spec), *y = effectiveAttr(b, spec);
    bool equal = (x && y) ? *x == *y : x == y;
    if (!equal)
      return false;
  }
  return true;
}

} // namespace fusec::canonicalize
