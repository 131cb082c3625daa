// Named, typed op attributes, and the dense element data that constants hold.
#pragma once

#include "ir/Types.h"

#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace fusec {

/// A constant's elements: a dtype, a static shape and little-endian element
/// bytes (bool is one byte, 0/1), in one of two forms. The full form holds
/// every element, numElements() * dtypeSize(dtype) bytes in row-major order;
/// a splat holds one element that every element equals, whatever the shape
/// (so `dense<1.5> : f32[16000,16000]` takes four bytes, not a gigabyte).
/// Note [Splat constants]: every reader goes through element() or
/// elementAsDouble(), which serve both forms, and stays per element where it
/// can (a splat folds to a splat, prints as `dense<x>`, is written to a model
/// file as one element, is an immediate in generated code); only a consumer
/// that truly needs the whole tensor in memory (the reference executor's
/// `const`, a device upload) calls expandedBytes().
/// Shared and immutable so that copying a graph does not copy weights.
class DenseData {
public:
  DType dtype = DType::F32;
  std::vector<int64_t> shape;

  DenseData() = default;
  /// The full form: every element's bytes.
  DenseData(DType dtype, std::vector<int64_t> shape, std::vector<uint8_t> bytes)
      : dtype(dtype), shape(std::move(shape)), bytes(std::move(bytes)) {}
  /// A splat of `element` (dtypeSize(dtype) bytes) over `shape`; the full
  /// form when the shape has no elements, so that a splat always has one.
  static DenseData makeSplat(DType dtype, std::vector<int64_t> shape, std::vector<uint8_t> element);

  /// Whether this holds one element for all (not whether the full form
  /// happens to repeat one: that is isSplat()).
  bool isSplatForm() const { return splatForm; }
  /// The bytes as held: every element's (full form) or the one element's.
  const std::vector<uint8_t> &storedBytes() const { return bytes; }
  /// The product of the shape (0 when the shape is invalid); the full form
  /// answers from its bytes, so that element(i) never reads past them.
  size_t numElements() const;
  /// The elements held: 1 for a splat, numElements() for the full form. A
  /// check that every element has some property need look at these only.
  size_t numStoredElements() const { return splatForm ? 1 : numElements(); }
  /// The bytes of element i (dtypeSize(dtype) of them), in either form.
  const uint8_t *element(size_t i) const;
  /// Element i converted to double (bool: 0/1, f16/bf16 widened exactly).
  double elementAsDouble(size_t i) const;
  /// Whether every element has the first one's bytes: true at once for the
  /// splat form, a scan of the full form.
  bool isSplat() const;
  /// Every element's bytes, numElements() * dtypeSize(dtype), expanding a
  /// splat: the one way to materialize a constant (Note [Splat constants]).
  std::vector<uint8_t> expandedBytes() const;
  /// Same dtype, shape and element bytes, whichever form either side is in.
  bool operator==(const DenseData &o) const;

private:
  std::vector<uint8_t> bytes;
  bool splatForm = false;
};
using DenseRef = std::shared_ptr<const DenseData>;

/// The most bytes a splat may stand for once expanded. A splat costs one
/// element, but a run expands it (the reference executor, a device upload),
/// so the parser, the model loader and the constant folder refuse larger
/// ones where they are made rather than where they are run.
inline constexpr uint64_t kMaxSplatBytes = uint64_t(1) << 30;

enum class AttrKind : uint8_t { Int, Float, String, Bool, Ints, DType, Shape, Dense };
std::string_view attrKindName(AttrKind k); // as written in op signatures: "int", "ints", ...

class Attribute {
public:
  using Storage = std::variant<int64_t, double, std::string, bool, std::vector<int64_t>, DType,
                               Shape, DenseRef>;

  Attribute() = default;
  Attribute(int64_t v) : value(v) {}
  Attribute(int v) : value(int64_t(v)) {}
  Attribute(double v) : value(v) {}
  Attribute(std::string v) : value(std::move(v)) {}
  Attribute(const char *v) : value(std::string(v)) {}
  Attribute(bool v) : value(v) {}
  Attribute(std::vector<int64_t> v) : value(std::move(v)) {}
  Attribute(DType v) : value(v) {}
  Attribute(Shape v) : value(std::move(v)) {}
  Attribute(DenseRef v) : value(std::move(v)) {}

  AttrKind kind() const { return AttrKind(value.index()); }
  template <typename T> bool is() const { return std::holds_alternative<T>(value); }
  template <typename T> const T &get() const { return std::get<T>(value); }

  /// Converts to `want` where the text form is ambiguous: an int literal for a
  /// float attribute, an int list for a shape. Returns false if it cannot.
  bool coerceTo(AttrKind want);

  /// Dense values compare by content, everything else by value.
  bool operator==(const Attribute &o) const;

private:
  Storage value;
};

struct NamedAttr {
  std::string name;
  Attribute value;
};
using AttrList = std::vector<NamedAttr>;

} // namespace fusec
