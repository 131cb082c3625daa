// Tensor types: spellings, shape helpers and axis normalization.
#include "ir/Types.h"

#include "ir/Assert.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace fusec {

[[noreturn]] void assertionFailed(const char *cond, const char *msg, const char *file, int line) {
  std::fprintf(stderr, "fusec internal error: %s:%d: assertion '%s' failed: %s\n", file, line, cond,
               msg);
  std::abort();
}

namespace {
struct DTypeFacts {
  std::string_view name;
  unsigned size;
};
constexpr DTypeFacts kDTypeFacts[] = {{"f32", 4}, {"f16", 2}, {"bf16", 2}, {"f64", 8},
                                      {"i32", 4}, {"i64", 8}, {"i8", 1},   {"bool", 1}};
} // namespace

std::string_view dtypeName(DType t) { return kDTypeFacts[unsigned(t)].name; }
unsigned dtypeSize(DType t) { return kDTypeFacts[unsigned(t)].size; }

std::optional<DType> parseDType(std::string_view s) {
  for (DType t : kAllDTypes)
    if (dtypeName(t) == s)
      return t;
  return std::nullopt;
}

bool isFloat(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16 || t == DType::F64;
}
bool isInteger(DType t) { return t == DType::I32 || t == DType::I64 || t == DType::I8; }

bool castIsExact(DType from, DType to) {
  if (from == to || from == DType::Bool)
    return true; // bool is 0 or 1, which every dtype holds
  switch (from) {
  case DType::I8: // |x| <= 128 fits f16's 11 and bf16's 8 significant bits
    return to != DType::Bool;
  case DType::I32:
    return to == DType::I64 || to == DType::F64;
  case DType::F16:
  case DType::BF16:
    return to == DType::F32 || to == DType::F64;
  case DType::F32:
    return to == DType::F64;
  default: // i64 and f64 fit nothing wider
    return false;
  }
}

bool castPairFolds(DType from, DType mid, DType to) {
  if (!castIsExact(from, mid))
    return false;
  // int → float → narrower int saturates; int → narrower int wraps.
  bool narrowing = isInteger(to) && dtypeSize(to) < dtypeSize(from);
  return !(isInteger(from) && isFloat(mid) && narrowing);
}

std::string Dim::str() const { return isStatic() ? std::to_string(size) : symbol; }

Shape staticShape(const std::vector<int64_t> &sizes) {
  Shape s;
  s.reserve(sizes.size());
  for (int64_t n : sizes)
    s.push_back(Dim::fixed(n));
  return s;
}

std::string shapeStr(const Shape &s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i)
      out += ',';
    out += s[i].str();
  }
  return out + "]";
}

bool isStatic(const Shape &s) {
  for (const Dim &d : s)
    if (!d.isStatic())
      return false;
  return true;
}

std::vector<int64_t> staticSizes(const Shape &s) {
  std::vector<int64_t> sizes;
  for (const Dim &d : s) {
    FUSEC_ASSERT(d.isStatic(), "staticSizes of a symbolic shape");
    sizes.push_back(d.size);
  }
  return sizes;
}

std::optional<int64_t> staticNumElements(const Shape &s) {
  int64_t n = 1;
  for (const Dim &d : s) {
    if (!d.isStatic() || d.size < 0)
      return std::nullopt;
    if (__builtin_mul_overflow(n, d.size, &n))
      return std::nullopt;
  }
  return n;
}

std::string_view layoutName(Layout l) {
  switch (l) {
  case Layout::None:
    return "";
  case Layout::NCHW:
    return "nchw";
  case Layout::NHWC:
    return "nhwc";
  }
  return "";
}

std::optional<Layout> parseLayout(std::string_view s) {
  if (s == "nchw")
    return Layout::NCHW;
  if (s == "nhwc")
    return Layout::NHWC;
  return std::nullopt;
}

std::string TensorType::str() const {
  std::string out = std::string(dtypeName(dtype)) + shapeStr(shape);
  if (layout != Layout::None)
    out += "{" + std::string(layoutName(layout)) + "}";
  return out;
}

std::optional<unsigned> normalizeAxis(int64_t axis, size_t rank) {
  int64_t r = int64_t(rank);
  if (axis < -r || axis >= r)
    return std::nullopt;
  return unsigned(axis < 0 ? axis + r : axis);
}

int64_t sliceBound(int64_t bound, int64_t n) {
  return std::clamp(bound < 0 ? bound + n : bound, int64_t(0), n);
}

} // namespace fusec
