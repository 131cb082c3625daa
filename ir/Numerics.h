// Bit-exact conversions between double and the storage formats of the IR:
// IEEE binary16 (f16), bfloat16 (bf16) and binary32, with round-to-nearest-
// even, gradual underflow (subnormals), overflow to infinity, and NaN kept
// quiet. Rounding goes straight from double to the target format (never via
// float) so that no value is rounded twice.
#pragma once

#include "ir/Types.h"

#include <cstdint>
#include <cstring>

namespace fusec {

/// A T read from (written to) possibly unaligned little-endian bytes.
template <typename T> T loadRaw(const uint8_t *p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
template <typename T> void storeRaw(uint8_t *p, T v) { std::memcpy(p, &v, sizeof(T)); }

uint16_t doubleToHalf(double v);
double halfToDouble(uint16_t bits);
uint16_t doubleToBFloat16(double v);
double bfloat16ToDouble(uint16_t bits);
/// Same as static_cast<float>(v) (the hardware rounds to nearest even).
float doubleToFloat(double v);

/// One element of `dtype` at `p` (little-endian bytes) widened to double:
/// exact for every dtype but i64 beyond 2^53; bool is 0 or 1.
double loadElement(DType dtype, const uint8_t *p);
/// Stores `v` as one element of `dtype` at `p`: floats rounded to nearest
/// even, integers truncated toward zero and saturated (NaN → 0), bool v != 0.
/// The one encoder behind constants, the builder and host tensors.
void storeElement(DType dtype, double v, uint8_t *p);

} // namespace fusec
