// Host tensors: a dtype, a static shape and little-endian element bytes.
// The currency of the CPU reference executor, .npy files and the tools.
#pragma once

#include "ir/Types.h"

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace fusec {

/// The most bytes one host tensor may take: the reference executor and the
/// tools refuse (with a diagnostic) to allocate more, so that a huge shape in
/// a model or on the command line is an error, never an abort or a crash.
inline constexpr uint64_t kMaxTensorBytes = uint64_t(4) << 30;

/// numel(shape) * dtypeSize(dtype), or nullopt when a dim is negative or the
/// product overflows 64 bits. An empty shape dim makes the count 0 whatever
/// the other dims are.
std::optional<uint64_t> tensorBytes(DType dtype, const std::vector<int64_t> &shape);

/// "" when a tensor of this dtype and shape may be allocated, else why not
/// ("f32[4294967296,4294967296] needs more than 4 GiB").
std::string allocationProblem(DType dtype, const std::vector<int64_t> &shape);

/// "f32[2,3]".
std::string tensorTypeStr(DType dtype, const std::vector<int64_t> &shape);

struct Tensor {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;

  Tensor() = default;
  /// Zero-filled tensor of the given dtype and shape.
  Tensor(DType dtype, std::vector<int64_t> shape);

  size_t numElements() const;
  /// Element i widened to double (exact for every dtype but i64 > 2^53).
  double getDouble(size_t i) const;
  int64_t getInt(size_t i) const;
  /// Stores v in the dtype: round-to-nearest-even for floats, truncation
  /// toward zero (saturating) for integers, v != 0 for bool.
  void setDouble(size_t i, double v);
  void setInt(size_t i, int64_t v);

  /// All elements widened to double; and the reverse, rounding each.
  std::vector<double> toDoubles() const;
  static Tensor fromDoubles(DType dtype, std::vector<int64_t> shape, const std::vector<double> &v);

  /// "f32[2,3]".
  std::string typeStr() const;
};

/// Fills with reproducible pseudo-random values: floats uniform in [lo, hi),
/// integers uniform in [lo, hi] truncated, bool half true.
/// The stream is splitmix64 seeded with `seed`, one draw per element in
/// row-major order; a float is lo + (hi - lo) * u with u the draw's top 53
/// bits over 2^53, then rounded to the dtype (so f16/bf16 may round up to hi).
void fillRandom(Tensor &t, uint64_t seed, double lo = -1.0, double hi = 1.0);

/// Prints the elements as nested row-major lists on one line, then a newline:
/// `[[1.0, 2.5], [-0.0, nan]]`, a scalar as `3.0`. Floats are the shortest
/// decimal that reads back to the same value of the dtype, always with a `.`
/// or an exponent (`1e-05`, `inf`, `nan`); integers in decimal; bool as
/// true/false. After `maxElements` elements the rest is written as `...`
/// and the open lists are closed: `[[1.0, 2.0], [3.0, ...]]`.
void printTensor(const Tensor &t, std::ostream &os, size_t maxElements);

} // namespace fusec
