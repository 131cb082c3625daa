// Host tensors: element access with the IR's conversion rules, random fill
// and printing.
//
// Elements are little-endian in `bytes` (the host is little-endian; checked
// below). Conversions follow docs/ir.md's `cast`: floats round to nearest
// even (straight from double, or from int64 via round-to-odd so that no value
// is rounded twice), float → integer truncates toward zero and saturates with
// NaN → 0, integer → integer wraps, anything → bool is `x != 0`.
#include "runtime/reference/Tensor.h"

#include "ir/Assert.h"
#include "ir/Numerics.h"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace fusec {

static_assert(std::endian::native == std::endian::little, "tensor bytes are little-endian");

namespace {

/// v as a double, rounded to odd when inexact: a second rounding of the
/// result to a format of at most 51 significant bits is then correctly
/// rounded, as if done once from v.
double int64ToDoubleRoundOdd(int64_t v) {
  uint64_t mag = v < 0 ? 0 - uint64_t(v) : uint64_t(v);
  if (mag < (uint64_t(1) << 53))
    return double(v);
  unsigned shift = 11 - unsigned(std::countl_zero(mag)); // bits below the top 53
  uint64_t kept = mag >> shift;
  if (mag & ((uint64_t(1) << shift) - 1))
    kept |= 1;
  double d = std::ldexp(double(kept), int(shift));
  return v < 0 ? -d : d;
}

} // namespace

std::optional<uint64_t> tensorBytes(DType dtype, const std::vector<int64_t> &shape) {
  uint64_t n = dtypeSize(dtype);
  bool overflow = false, empty = false;
  for (int64_t d : shape) {
    if (d < 0)
      return std::nullopt;
    empty |= d == 0;
    overflow |= __builtin_mul_overflow(n, uint64_t(d), &n);
  }
  if (empty)
    return 0;
  return overflow ? std::nullopt : std::optional<uint64_t>(n);
}

std::string allocationProblem(DType dtype, const std::vector<int64_t> &shape) {
  std::optional<uint64_t> bytes = tensorBytes(dtype, shape);
  if (bytes && *bytes <= kMaxTensorBytes)
    return "";
  return tensorTypeStr(dtype, shape) + " needs more than " + std::to_string(kMaxTensorBytes >> 30) +
         " GiB, the limit of one host tensor";
}

std::string tensorTypeStr(DType dtype, const std::vector<int64_t> &shape) {
  std::string s(dtypeName(dtype));
  s += '[';
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "," : "") + std::to_string(shape[i]);
  return s + ']';
}

Tensor::Tensor(DType dtype, std::vector<int64_t> shape) : dtype(dtype), shape(std::move(shape)) {
  std::optional<uint64_t> size = tensorBytes(dtype, this->shape);
  FUSEC_ASSERT(size && *size <= kMaxTensorBytes, "tensor allocation not checked by the caller");
  bytes.assign(*size, 0);
}

size_t Tensor::numElements() const {
  std::optional<uint64_t> size = tensorBytes(dtype, shape);
  FUSEC_ASSERT(size, "tensor element count overflows");
  return size_t(*size / dtypeSize(dtype));
}

double Tensor::getDouble(size_t i) const {
  return loadElement(dtype, bytes.data() + i * dtypeSize(dtype));
}

int64_t Tensor::getInt(size_t i) const {
  const uint8_t *p = bytes.data() + i * dtypeSize(dtype);
  switch (dtype) {
  case DType::I32:
    return loadRaw<int32_t>(p);
  case DType::I64:
    return loadRaw<int64_t>(p);
  case DType::I8:
    return loadRaw<int8_t>(p);
  case DType::Bool:
    return loadRaw<uint8_t>(p) != 0;
  case DType::F32:
  case DType::F16:
  case DType::BF16:
  case DType::F64: {
    uint8_t truncated[sizeof(int64_t)]; // the saturating float → i64 rule of cast
    storeElement(DType::I64, getDouble(i), truncated);
    return loadRaw<int64_t>(truncated);
  }
  }
  FUSEC_ASSERT(false, "unknown dtype");
}

void Tensor::setDouble(size_t i, double v) {
  storeElement(dtype, v, bytes.data() + i * dtypeSize(dtype));
}

void Tensor::setInt(size_t i, int64_t v) {
  uint8_t *p = bytes.data() + i * dtypeSize(dtype);
  switch (dtype) {
  case DType::F32:
    return storeRaw(p, static_cast<float>(v)); // one rounding, to nearest even
  case DType::F16:
    return storeRaw(p, doubleToHalf(int64ToDoubleRoundOdd(v)));
  case DType::BF16:
    return storeRaw(p, doubleToBFloat16(int64ToDoubleRoundOdd(v)));
  case DType::F64:
    return storeRaw(p, static_cast<double>(v));
  case DType::I32: // two's complement wrap: keep the low bits
    return storeRaw(p, uint32_t(uint64_t(v)));
  case DType::I64:
    return storeRaw(p, v);
  case DType::I8:
    return storeRaw(p, uint8_t(uint64_t(v)));
  case DType::Bool:
    return storeRaw(p, uint8_t(v != 0));
  }
}

std::vector<double> Tensor::toDoubles() const {
  size_t n = numElements();
  std::vector<double> out(n);
  const uint8_t *p = bytes.data();
  switch (dtype) {
  case DType::F32:
    for (size_t i = 0; i < n; ++i)
      out[i] = loadRaw<float>(p + 4 * i);
    return out;
  case DType::F64:
    if (n) // an empty vector's data() may be null, which memcpy must not see
      std::memcpy(out.data(), p, n * sizeof(double));
    return out;
  default:
    for (size_t i = 0; i < n; ++i)
      out[i] = getDouble(i);
    return out;
  }
}

Tensor Tensor::fromDoubles(DType dtype, std::vector<int64_t> shape, const std::vector<double> &v) {
  Tensor t(dtype, std::move(shape));
  FUSEC_ASSERT(v.size() == t.numElements(), "fromDoubles: element count does not match shape");
  uint8_t *p = t.bytes.data();
  switch (dtype) {
  case DType::F32:
    for (size_t i = 0; i < v.size(); ++i)
      storeRaw(p + 4 * i, doubleToFloat(v[i]));
    return t;
  case DType::F64:
    if (!v.empty()) // as in toDoubles: no memcpy from a null data()
      std::memcpy(p, v.data(), v.size() * sizeof(double));
    return t;
  default:
    for (size_t i = 0; i < v.size(); ++i)
      t.setDouble(i, v[i]);
    return t;
  }
}

std::string Tensor::typeStr() const { return tensorTypeStr(dtype, shape); }

namespace {

uint64_t splitmix64(uint64_t &state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

} // namespace

void fillRandom(Tensor &t, uint64_t seed, double lo, double hi) {
  uint64_t state = seed;
  size_t n = t.numElements();
  if (isFloat(t.dtype)) {
    for (size_t i = 0; i < n; ++i)
      t.setDouble(i, lo + (hi - lo) * std::ldexp(double(splitmix64(state) >> 11), -53));
    return;
  }
  if (t.dtype == DType::Bool) {
    for (size_t i = 0; i < n; ++i)
      t.setInt(i, int64_t(splitmix64(state) >> 63));
    return;
  }
  // Integers: uniform over [trunc(lo), trunc(hi)] by scaling a 64-bit draw.
  int64_t ilo = int64_t(std::trunc(lo)), ihi = int64_t(std::trunc(hi));
  FUSEC_ASSERT(ilo <= ihi, "fillRandom: empty integer range");
  unsigned __int128 span = (unsigned __int128)(uint64_t(ihi) - uint64_t(ilo)) + 1;
  for (size_t i = 0; i < n; ++i) {
    uint64_t offset = uint64_t((span * splitmix64(state)) >> 64);
    t.setInt(i, int64_t(uint64_t(ilo) + offset));
  }
}

namespace {

/// Whether `text` rounds to element i's bits in its dtype.
bool readsBack(const Tensor &t, size_t i, const std::string &text) {
  Tensor probe(t.dtype, {1});
  probe.setDouble(0, std::strtod(text.c_str(), nullptr));
  size_t size = dtypeSize(t.dtype);
  return std::memcmp(probe.bytes.data(), t.bytes.data() + i * size, size) == 0;
}

/// std::to_chars' shortest round-trip form, marked as a float with ".0" when
/// it looks like an integer — the spelling of floats in the text IR.
template <typename T> std::string shortest(T v) {
  char buf[64];
  std::string s(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
  return s.find_first_of(".e") == std::string::npos ? s + ".0" : s;
}

std::string formatFloat(const Tensor &t, size_t i) {
  double v = t.getDouble(i);
  if (std::isnan(v))
    return "nan";
  if (std::isinf(v))
    return v < 0 ? "-inf" : "inf";
  if (t.dtype == DType::F32)
    return shortest(float(v));
  if (t.dtype == DType::F64)
    return shortest(v);
  // f16 and bf16 have no to_chars: find the fewest significant digits that
  // read back, then let the double of that decimal pick fixed or scientific
  // (its own shortest form has exactly those digits).
  char buf[64];
  for (int digits = 1; digits <= 17; ++digits) {
    auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific, digits - 1);
    std::string s(buf, r.ptr);
    if (readsBack(t, i, s))
      return shortest(std::strtod(s.c_str(), nullptr));
  }
  return shortest(v); // exact, so it always reads back
}

/// One element as printTensor writes it.
std::string formatElement(const Tensor &t, size_t i) {
  if (isFloat(t.dtype))
    return formatFloat(t, i);
  if (t.dtype == DType::Bool)
    return t.getInt(i) ? "true" : "false";
  return std::to_string(t.getInt(i));
}

/// Prints dims [dim, rank) of the block starting at element `first`.
void printBlock(const Tensor &t, std::ostream &os, size_t dim, size_t first, size_t &budget) {
  if (dim == t.shape.size()) {
    os << formatElement(t, first);
    --budget;
    return;
  }
  size_t stride = 1;
  for (size_t d = dim + 1; d < t.shape.size(); ++d)
    stride *= size_t(t.shape[d]);
  os << '[';
  for (int64_t j = 0; j < t.shape[dim]; ++j) {
    if (j > 0)
      os << ", ";
    if (budget == 0) {
      os << "...";
      break;
    }
    printBlock(t, os, dim + 1, first + size_t(j) * stride, budget);
  }
  os << ']';
}

} // namespace

void printTensor(const Tensor &t, std::ostream &os, size_t maxElements) {
  size_t budget = t.shape.empty() ? 1 : maxElements; // a scalar is always shown
  printBlock(t, os, 0, 0, budget);
  os << '\n';
}

} // namespace fusec
