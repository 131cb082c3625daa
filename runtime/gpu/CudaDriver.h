// The CUDA driver API, opened with dlopen on first use: every binary starts
// on a machine without a driver, and a run that needs the GPU says so
// plainly. Only runtime/ includes this header; it exposes no CUDA types
// (handles are opaque pointers, device addresses uint64_t). Every call is
// checked once here and a failure becomes a diagnostic naming the call and
// the driver's error name (CUDA_ERROR_OUT_OF_MEMORY, ...).
#pragma once

#include "codegen/GeneratedKernel.h"
#include "ir/Diagnostics.h"

#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace fusec::gpu {

using DevicePtr = uint64_t;
using Stream = struct StreamImpl *;
using Function = struct FunctionImpl *;
using Module = struct ModuleImpl *;
using Event = struct EventImpl *;
using GraphExec = struct GraphExecImpl *;

/// What the runtime needs to know about the device.
struct DeviceInfo {
  std::string name;
  int major = 0, minor = 0; ///< compute capability
  int multiprocessors = 0;
  int driverVersion = 0;     ///< e.g. 13000
  size_t totalMemory = 0;    ///< bytes
  int maxSharedPerBlock = 0; ///< opt-in limit, bytes
  /// "sm_90a" for compute capability 9.0, else "sm_<major><minor>".
  std::string target() const;
};

/// Whether a cubin compiled for `target` (sm_80, sm_90a, ...) runs on a
/// device of compute capability major.minor: the same major version and a
/// minor version no newer than the device's; an "a" target only on exactly
/// its own architecture.
bool cubinRunsOn(const std::string &target, int major, int minor);

/// Whether code for `target` runs on such a device at all: its cubin, or
/// its PTX, which the driver compiles for any newer architecture (an "a"
/// target's PTX only for its own).
bool targetRunsOn(const std::string &target, int major, int minor);

/// Loads libcuda and initializes it (once per process), and makes device
/// 0's primary context current on the calling thread when the thread has
/// no current context (an application's own current context is kept: fusec
/// works in it). Returns nullopt with the reason in `whyNot` ("no CUDA
/// driver found (libcuda.so.1)", "no CUDA device", or the failing call).
std::optional<DeviceInfo> openDevice(std::string *whyNot = nullptr);
/// openDevice, reporting why not as an error.
bool ensureDevice(Diagnostics &diags);

/// Each returns false (or nullopt) after reporting "<call> failed: <NAME>
/// (<description>)" plus `what` (e.g. the kernel's name) where given.
/// openDevice must have succeeded first.
std::optional<DevicePtr> allocate(size_t bytes, Diagnostics &diags, const std::string &what);
void release(DevicePtr p);
bool copyToDevice(DevicePtr dst, const void *src, size_t bytes, Diagnostics &diags);
bool copyToHost(void *dst, DevicePtr src, size_t bytes, Diagnostics &diags);
/// Copies between device buffers, in order on `stream`.
bool copyOnDevice(DevicePtr dst, DevicePtr src, size_t bytes, Stream stream, Diagnostics &diags);
/// Fills with the byte `value` (used to poison outputs in tests).
bool fill(DevicePtr dst, uint8_t value, size_t bytes, Diagnostics &diags);
/// The same, in order on `stream`.
bool fill(DevicePtr dst, uint8_t value, size_t bytes, Stream stream, Diagnostics &diags);

/// Loads a module from a cubin (preferred) or PTX image.
std::optional<Module> loadModule(const std::string &image, const std::string &name,
                                 Diagnostics &diags);
void unloadModule(Module m);
std::optional<Function> getFunction(Module m, const std::string &name, Diagnostics &diags);

/// Lets `f` use `bytes` of dynamic shared memory (needed once, at load,
/// beyond 48 KiB).
bool allowSharedBytes(Function f, unsigned bytes, Diagnostics &diags,
                      const std::string &kernelName);

/// A CUtensorMap: the 128 opaque bytes cuTensorMapEncodeTiled writes, which a kernel takes by
/// value (a `const __grid_constant__` parameter); 64-byte aligned, as the driver requires.
struct alignas(64) TensorMapBytes {
  uint64_t words[16] = {};
  bool operator==(const TensorMapBytes &) const = default;
};
static_assert(sizeof(TensorMapBytes) == 128);

/// Encodes the tiled view `view` (KernelArg::TensorView) of `dtype` elements whose first element
/// is at `first`: cuTensorMapEncodeTiled with rank dims.size(), the view's dims, its strides in
/// bytes, its box, element strides 1, no interleave, its swizzle, 256-byte L2 promotion and zeros
/// outside the tensor. The caller checks the view first (tensorViewProblem in TensorMap.h) and
/// that `first` is 16-byte aligned; anything else the driver refuses is reported with `what`
/// (e.g. "tensor map 'a_map' of kernel 'fusec_g_y'"), as is a driver without the call (before
/// CUDA 12). An im2col view (view.im2col) is encoded by cuTensorMapEncodeIm2col, with its corners
/// and traversal strides. nullopt after reporting an error.
std::optional<TensorMapBytes> encodeTensorMap(DevicePtr first, DType dtype,
                                              const KernelArg::TensorView &view, Diagnostics &diags,
                                              const std::string &what);

/// The values of one launch's parameters, in signature order, each kept at its own alignment
/// until the launch: 8-byte words (device addresses, long longs) and tensor maps (128 bytes).
class KernelParams {
public:
  void addWord(uint64_t word) { slots.push_back(int32_t(words.size())), words.push_back(word); }
  void addTensorMap(const TensorMapBytes &map) {
    slots.push_back(-1 - int32_t(maps.size())), maps.push_back(map);
  }
  /// Where each value is, in order: what launch takes. Valid until the next add.
  std::span<const void *const> pointers();

private:
  llvm::SmallVector<uint64_t, 32> words;
  std::vector<TensorMapBytes> maps;     // std::allocator keeps them 64-byte aligned
  llvm::SmallVector<int32_t, 32> slots; // per parameter: a word's index, or -1 - a map's
  llvm::SmallVector<const void *, 32> where;
};

/// Launches `f` with `config` on `stream` (null: the default stream). `params` points at each
/// kernel parameter's value in signature order, as many bytes as the parameter takes (8 for
/// pointers and long longs, 128 for a tensor map; KernelParams packs them); the driver copies
/// the values before it returns, also into a graph being captured.
bool launch(Function f, const LaunchConfig &config, std::span<const void *const> params,
            Stream stream, Diagnostics &diags, const std::string &kernelName);

std::optional<Stream> createStream(Diagnostics &diags);
void destroyStream(Stream s);
bool synchronize(Stream s, Diagnostics &diags);

std::optional<Event> createEvent(Diagnostics &diags);
/// Makes later work on `s` wait for the last recorded state of `e`.
bool waitForEvent(Stream s, Event e, Diagnostics &diags);
/// Blocks the host until `e` has completed.
bool synchronizeEvent(Event e, Diagnostics &diags);
/// Whether `s` is being captured into a CUDA graph (by anyone).
std::optional<bool> isCapturing(Stream s, Diagnostics &diags);
void destroyEvent(Event e);
bool recordEvent(Event e, Stream s, Diagnostics &diags);
/// Milliseconds between two recorded events (waits for `end`).
std::optional<float> elapsedMs(Event start, Event end, Diagnostics &diags);

/// Stream capture into an executable CUDA graph: begin, launch as usual,
/// end. The result replays every captured launch with one call.
bool beginCapture(Stream s, Diagnostics &diags);
std::optional<GraphExec> endCapture(Stream s, Diagnostics &diags);
bool launchGraph(GraphExec g, Stream s, Diagnostics &diags);
void destroyGraph(GraphExec g);

} // namespace fusec::gpu
