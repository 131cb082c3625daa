// TMA tensor maps of kernel arguments (KernelArg::Kind::TensorMap): what the tensor memory
// accelerator takes of a view, checked once when a program is loaded, and the map of each
// argument, encoded for the address of the buffer it is launched with and kept while that address
// stays the same (Note [Tensor map encoding] in TensorMap.cpp).
#pragma once

#include "codegen/GeneratedKernel.h"
#include "ir/Diagnostics.h"
#include "ir/Graph.h"
#include "runtime/gpu/CudaDriver.h"

#include <optional>
#include <string>

namespace fusec {

/// What TMA cannot take of `view` over `dtype` elements, by cuTensorMapEncodeTiled's documented
/// limits (cuda.h), as a phrase ("box[1] is 300 elements; TMA moves 1 to 256 along a dim"); ""
/// when it takes it. Besides the driver's limits, its offset must be a multiple of 16 bytes: its
/// start is then 16-byte aligned, as TMA needs, in any buffer a program takes.
std::string tensorViewProblem(const KernelArg::TensorView &view, DType dtype);

/// Whether `view` holds no element: no dim is negative and one is 0. Its kernel gets a map of
/// zeros (one cannot be encoded), which it must never read through: there is nothing to read.
bool isEmptyView(const KernelArg::TensorView &view);

/// Whether TensorMap argument `a` fits `buffer`, the type of the operand or result it names:
/// elements of the same size, then, unless it is empty, tensorViewProblem and no element the
/// view reaches past the buffer's last. "" when it does.
std::string tensorMapArgProblem(const KernelArg &a, const TensorType &buffer);

/// Checks TensorMap argument `a` of kernel `kernelName` (run by `kernelOp`) when its program is
/// loaded: false after reporting tensorMapArgProblem at the op, "kernel 'K': tensor map 'M' over
/// operand 0 (f16[64,128]): <problem>".
bool checkTensorMapArg(const KernelArg &a, const Op &kernelOp, const std::string &kernelName,
                       Diagnostics &diags);

/// One TensorMap argument of a loaded step: its view and the map last encoded for it.
class TensorMapArg {
public:
  /// `a` passed checkTensorMapArg.
  TensorMapArg(const KernelArg &a, const std::string &kernelName);

  /// The map over the buffer at `buffer`: the last one while `buffer` stays the same, else a
  /// fresh encoding of the view at `buffer` + offset (zeros for an empty view). Null after
  /// reporting an error, the map unchanged: the view's start not 16-byte aligned (a caller's
  /// misaligned buffer), or the driver's refusal.
  const gpu::TensorMapBytes *mapFor(gpu::DevicePtr buffer, Diagnostics &diags);

private:
  KernelArg::TensorView view;
  DType dtype;
  std::string what; // "tensor map 'M' of kernel 'K'", for messages
  bool empty;
  std::optional<gpu::DevicePtr> encodedFor;
  gpu::TensorMapBytes map; // zeros until encoded; always for an empty view
};

} // namespace fusec
