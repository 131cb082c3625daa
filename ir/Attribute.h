// Named, typed op attributes, and the dense element data that constants hold.
#pragma once

#include "ir/Types.h"

#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace fusec {

/// A constant's elements: static shape and raw little-endian bytes in its
/// dtype, bytes.size() == numel * dtypeSize(dtype) (bool is one byte, 0/1).
/// Shared and immutable so that copying a graph does not copy weights.
struct DenseData {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;

  size_t numElements() const { return bytes.size() / dtypeSize(dtype); }
  /// Element i converted to double (bool: 0/1, f16/bf16 widened exactly).
  double elementAsDouble(size_t i) const;
  /// Whether every element has the first one's bytes.
  bool isSplat() const;
  bool operator==(const DenseData &o) const = default;
};
using DenseRef = std::shared_ptr<const DenseData>;

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
