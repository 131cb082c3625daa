// TMA tensor maps of kernel arguments (see TensorMap.h). The checks are cuTensorMapEncodeTiled's
// documented requirements (cuda.h) for a tiled map without interleave: a program whose kernel
// asks for a view TMA cannot take is refused when it is loaded, with the kernel's name and the
// limit, instead of failing its first launch with CUDA_ERROR_INVALID_VALUE. The one check left to
// the launch is the buffer's address (TensorMapArg::mapFor).
//
// Note [Tensor map encoding]
// A tensor map holds its buffer's address, and the kernel takes it by value, so it is encoded
// for the address each launch passes: once per address, not once per launch. Each step argument
// keeps the map it encoded last and the address it encoded it for, and encodes again only when
// the address changes (a serving loop that reuses its buffers encodes each map once; the arena's
// and the constants' addresses never change). cuLaunchKernel copies the parameters before it
// returns, into the graph when the stream is being captured, so a captured graph holds the maps
// of its own addresses: replaying it needs none encoded, and re-encoding a step's map for other
// addresses later leaves it valid. A program's own captures encode every map before the capture
// begins (GpuProgram::capture), so that a misaligned buffer is refused before anything is
// captured; encoding is host work alone, no stream operation, so a caller's capture may see it.
#include "runtime/gpu/TensorMap.h"

#include "ir/Assert.h"

#include <algorithm>
#include <cstdio>

namespace fusec {

namespace {

constexpr int64_t kMaxDim = int64_t(1) << 32;    // globalDim: 1 to 2^32
constexpr int64_t kMaxStride = int64_t(1) << 40; // globalStrides: below 2^40 bytes
constexpr unsigned kMaxBox = 256;                // boxDim: 1 to 256
constexpr size_t kMaxRank = 5;

std::string at(const char *what, size_t i) {
  return std::string(what) + "[" + std::to_string(i) + "]";
}

/// "N elements (B bytes)".
std::string elements(int64_t n, unsigned size) {
  return std::to_string(n) + " elements (" + std::to_string(n * int64_t(size)) + " bytes)";
}

/// An im2col view's own limits (cuTensorMapEncodeIm2col's): 3 to 5 dims, a box of channels and
/// pixels, a corner a spatial dim within the range of its rank, a traversal stride a dim.
std::string im2colProblem(const KernelArg::TensorView &v) {
  const KernelArg::TensorView::Im2col &m = *v.im2col;
  size_t rank = v.dims.size();
  if (rank < 3 || rank > kMaxRank)
    return "rank " + std::to_string(rank) + "; an im2col map takes 3 to 5 dims";
  if (v.box.size() != 2 || v.strides.size() + 1 != rank || m.lower.size() + 2 != rank ||
      m.upper.size() + 2 != rank || m.traversal.size() != rank)
    return "an im2col view needs a box of channels and pixels, a stride per dim after the "
           "first, a lower and an upper corner per spatial dim and a traversal stride per dim";
  if (v.box[0] < 1 || v.box[0] > kMaxBox || v.box[1] < 1 || v.box[1] > 1024)
    return "its box is " + std::to_string(v.box[0]) + " channels by " + std::to_string(v.box[1]) +
           " pixels; TMA moves 1 to 256 channels of 1 to 1024 pixels";
  int64_t reach = rank == 3 ? 1 << 15 : rank == 4 ? 1 << 7 : 1 << 4; // corners: [-reach, reach)
  for (size_t i = 0; i + 2 < rank; ++i)
    for (int64_t corner : {m.lower[i], m.upper[i]})
      if (corner < -reach || corner >= reach)
        return "a corner of spatial dim " + std::to_string(i) + " is " + std::to_string(corner) +
               "; a " + std::to_string(rank) + "-d im2col map takes -" + std::to_string(reach) +
               " to " + std::to_string(reach - 1);
  for (size_t i = 0; i < rank; ++i)
    if (m.traversal[i] < 1 || m.traversal[i] > 8)
      return at("traversal", i) + " is " + std::to_string(m.traversal[i]) + "; TMA takes 1 to 8";
  for (size_t i = 0; i + 2 < rank; ++i) // the bounding box: lower to dims[i + 1] - 1 + upper
    if (m.lower[i] > v.dims[i + 1] - 1 + m.upper[i])
      return "spatial dim " + std::to_string(i) + "'s bounding box is empty (" +
             std::to_string(m.lower[i]) + " to " + std::to_string(v.dims[i + 1] - 1 + m.upper[i]) +
             ")";
  return "";
}

std::string shapeProblem(const KernelArg::TensorView &v) {
  size_t rank = v.dims.size();
  if (rank < 1 || rank > kMaxRank)
    return "rank " + std::to_string(rank) + "; TMA takes 1 to 5 dims";
  if (v.im2col) {
    if (std::string problem = im2colProblem(v); !problem.empty())
      return problem;
    for (size_t i = 0; i < rank; ++i)
      if (v.dims[i] < 1 || v.dims[i] > kMaxDim)
        return at("dims", i) + " is " + std::to_string(v.dims[i]) + "; TMA takes 1 to 2^32";
    return "";
  }
  if (v.box.size() != rank || v.strides.size() + 1 != rank)
    return std::to_string(rank) + " dims, " + std::to_string(v.box.size()) + " box extents and " +
           std::to_string(v.strides.size()) +
           " strides: it needs a box extent per dim and a stride per dim after the first";
  for (size_t i = 0; i < rank; ++i)
    if (v.dims[i] < 1 || v.dims[i] > kMaxDim)
      return at("dims", i) + " is " + std::to_string(v.dims[i]) + "; TMA takes 1 to 2^32";
  for (size_t i = 0; i < rank; ++i)
    if (v.box[i] < 1 || v.box[i] > kMaxBox)
      return at("box", i) + " is " + std::to_string(v.box[i]) +
             " elements; TMA moves 1 to 256 along a dim";
  return "";
}

std::string bytesProblem(const KernelArg::TensorView &v, unsigned size) {
  for (size_t i = 0; i < v.strides.size(); ++i) {
    int64_t s = v.strides[i];
    if (s < 1 || s >= kMaxStride / size || s * size % 16)
      return at("strides", i) + " is " + elements(s, size) +
             "; TMA takes a positive multiple of 16 bytes below 2^40";
  }
  int64_t row = int64_t(v.box[0]) * size;
  if (row % 16)
    return "box[0] is " + elements(v.box[0], size) +
           "; TMA moves a multiple of 16 bytes along dim 0";
  if (v.swizzle != 0 && v.swizzle != 32 && v.swizzle != 64 && v.swizzle != 128)
    return "swizzle is " + std::to_string(v.swizzle) + " bytes; TMA swizzles over 0, 32, 64 or 128";
  if (v.swizzle && row > int64_t(v.swizzle))
    return "box[0] is " + elements(v.box[0], size) + ", more than its " +
           std::to_string(v.swizzle) + "-byte swizzle";
  if (v.offset < 0 || v.offset * size % 16)
    return "offset is " + elements(v.offset, size) + "; TMA needs the view's start 16-byte aligned";
  return "";
}

/// The index of the last element the view reaches; nullopt beyond int64.
std::optional<int64_t> lastElement(const KernelArg::TensorView &v) {
  int64_t last = 0;
  if (__builtin_add_overflow(v.offset, v.dims[0] - 1, &last))
    return std::nullopt;
  for (size_t i = 1; i < v.dims.size(); ++i) {
    int64_t span = 0;
    if (__builtin_mul_overflow(v.dims[i] - 1, v.strides[i - 1], &span) ||
        __builtin_add_overflow(last, span, &last))
      return std::nullopt;
  }
  return last;
}

std::string hex(uint64_t address) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(address));
  return text;
}

} // namespace

bool isEmptyView(const KernelArg::TensorView &view) {
  return std::none_of(view.dims.begin(), view.dims.end(), [](int64_t d) { return d < 0; }) &&
         std::find(view.dims.begin(), view.dims.end(), 0) != view.dims.end();
}

std::string tensorViewProblem(const KernelArg::TensorView &view, DType dtype) {
  std::string problem = shapeProblem(view);
  return problem.empty() ? bytesProblem(view, dtypeSize(dtype)) : problem;
}

std::string tensorMapArgProblem(const KernelArg &a, const TensorType &buffer) {
  FUSEC_ASSERT(a.kind == KernelArg::Kind::TensorMap && a.tensorMap, "not a tensor map argument");
  if (dtypeSize(a.dtype) != dtypeSize(buffer.dtype))
    return "its elements are " + std::string(dtypeName(a.dtype)) + ", the buffer's " +
           std::string(dtypeName(buffer.dtype));
  if (isEmptyView(*a.tensorMap))
    return ""; // never encoded (TensorMapArg::mapFor)
  if (std::string problem = tensorViewProblem(*a.tensorMap, a.dtype); !problem.empty())
    return problem;
  int64_t count = staticNumElements(buffer.shape).value_or(0);
  std::optional<int64_t> last = lastElement(*a.tensorMap);
  if (!last || *last >= count)
    return "the view reaches " + (last ? "element " + std::to_string(*last) : "beyond int64") +
           ", past the buffer's " + std::to_string(count) + " elements";
  return "";
}

bool checkTensorMapArg(const KernelArg &a, const Op &kernelOp, const std::string &kernelName,
                       Diagnostics &diags) {
  bool output = a.tensorMap && a.tensorMap->output;
  const Value *buffer = output ? kernelOp.result(a.index) : kernelOp.operand(a.index);
  std::string problem = tensorMapArgProblem(a, buffer->type());
  if (problem.empty())
    return true;
  diags.error(kernelOp.loc(), "kernel '" + kernelName + "': tensor map '" + a.name + "' over " +
                                  (output ? "result " : "operand ") + std::to_string(a.index) +
                                  " (" + buffer->type().str() + "): " + problem);
  return false;
}

TensorMapArg::TensorMapArg(const KernelArg &a, const std::string &kernelName)
    : view(*a.tensorMap), dtype(a.dtype),
      what("tensor map '" + a.name + "' of kernel '" + kernelName + "'"), empty(isEmptyView(view)) {
}

const gpu::TensorMapBytes *TensorMapArg::mapFor(gpu::DevicePtr buffer, Diagnostics &diags) {
  if (encodedFor == buffer || empty)
    return &map;
  gpu::DevicePtr first = buffer + uint64_t(view.offset) * dtypeSize(dtype);
  if (first % 16) {
    diags.error(Loc{}, what + " would start at " + hex(first) +
                           ", not 16-byte aligned as TMA needs: its buffer is at " + hex(buffer));
    return nullptr;
  }
  std::optional<gpu::TensorMapBytes> encoded =
      gpu::encodeTensorMap(first, dtype, view, diags, what);
  if (!encoded)
    return nullptr;
  map = *encoded;
  encodedFor = buffer;
  return &map;
}

} // namespace fusec
