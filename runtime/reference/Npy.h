// NumPy .npy files: the input and output format of `fusec run`.
//
// Reads format versions 1.0, 2.0 and 3.0 and writes 1.0, C order only, with
// the dtypes <f4 <f2 <f8 <i4 <i8 |i1 |b1 (f32 f16 f64 i32 i64 i8 bool).
// NumPy has no bfloat16, so bf16 tensors are written as '<u2' holding the raw
// bits (`np.load(f).view(ml_dtypes.bfloat16)` gets them back in Python) and
// read back as bf16 only when NpyReadOptions::u2AsBFloat16 is set.
//
// Files are untrusted: a bad file is a diagnostic naming the file and the
// problem (bad magic, unsupported version, dtype or Fortran order, a header
// over 64 KiB or malformed, data that does not match the shape), and the data
// size the header implies is checked against the file before the tensor is
// allocated, so a lying header cannot ask for a huge allocation.
#pragma once

#include "ir/Diagnostics.h"
#include "runtime/reference/Tensor.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace fusec {

struct NpyReadOptions {
  /// Reads '<u2' data as bf16 bits (the form writeNpy gives bf16).
  bool u2AsBFloat16 = false;
  /// The most bytes the file may have: a tensor's limit and the header.
  uint64_t maxFileBytes = kMaxTensorBytes + (uint64_t(1) << 20);
};

/// Reads a .npy file into `out`. Returns false after reporting an error
/// (the file's bytes are read whole; see ir/FileIO.h).
bool readNpy(const std::string &path, Tensor &out, Diagnostics &diags,
             const NpyReadOptions &opts = {});

/// Parses the bytes of a .npy file; `file` names it in diagnostics.
bool parseNpy(std::span<const uint8_t> bytes, const std::string &file, Tensor &out,
              Diagnostics &diags, const NpyReadOptions &opts = {});

/// The bytes of a format-1.0 .npy file holding `t`.
std::vector<uint8_t> serializeNpy(const Tensor &t);

/// Writes `t` to `path` (atomically: a temporary file renamed into place).
/// Returns false after reporting an error.
bool writeNpy(const std::string &path, const Tensor &t, Diagnostics &diags);

} // namespace fusec
