// The CUDA driver API wrapper (see CudaDriver.h). The entry points are
// declared here from the driver's documented C API (cuda.h, CUDA 12/13) and
// resolved with dlsym from libcuda.so.1, so building fusec needs no toolkit
// and a machine without a driver runs everything but GPU work.
#include "runtime/gpu/CudaDriver.h"

#include "ir/Assert.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <dlfcn.h>
#include <mutex>
#include <optional>
#include <tuple>

namespace fusec::gpu {

namespace {

using CUresult = int; // 0 = CUDA_SUCCESS
using CUdevice = int;
using CUcontext = struct CtxImpl *;
using CUgraph = struct GraphImpl *;

// Attribute and flag values from cuda.h.
constexpr int kAttrMultiprocessors = 16, kAttrMajor = 75, kAttrMinor = 76, kAttrSharedOptin = 97;
constexpr int kFuncMaxDynamicShared = 8;
constexpr int kCaptureThreadLocal = 1;
// A blocking stream orders itself after work on the legacy default stream
// (the synchronous copies and memsets of this file).
constexpr unsigned kStreamBlocking = 0;
// cuTensorMapEncodeTiled's enums (CUtensorMapDataType, CUtensorMapInterleave,
// CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill in cuda.h).
enum TensorMapDataType : int {
  kTmaUint8 = 0,
  kTmaInt32 = 3,
  kTmaInt64 = 5,
  kTmaFloat16 = 6,
  kTmaFloat32 = 7,
  kTmaFloat64 = 8,
  kTmaBfloat16 = 9,
};
constexpr int kTmaInterleaveNone = 0;
constexpr int kTmaSwizzleNone = 0, kTmaSwizzle32B = 1, kTmaSwizzle64B = 2, kTmaSwizzle128B = 3;
constexpr int kTmaL2Promotion256B = 3;
constexpr int kTmaOobFillNone = 0; // zeros outside the tensor
// cuLaunchKernelEx's configuration (CUlaunchConfig, CUlaunchAttribute in cuda.h): a launch
// attribute is an id padded to 8 bytes, then a 64-byte union, of which the cluster's shape
// (CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) takes three unsigned, a programmatic dependent launch
// (CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION) an int.
constexpr int kLaunchAttrClusterDimension = 4, kLaunchAttrProgrammaticSerialization = 6;
struct LaunchAttribute {
  int id;
  char pad[4];
  union alignas(8) {
    char bytes[64];
    unsigned clusterDim[3];
    int programmaticStreamSerializationAllowed;
  } value;
};
struct LaunchConfigEx {
  unsigned grid[3], block[3], sharedBytes;
  Stream stream;
  LaunchAttribute *attrs;
  unsigned numAttrs;
};
static_assert(sizeof(LaunchAttribute) == 72 && offsetof(LaunchAttribute, value) == 8);
static_assert(sizeof(LaunchConfigEx) == 56 && offsetof(LaunchConfigEx, stream) == 32 &&
              offsetof(LaunchConfigEx, attrs) == 40 && offsetof(LaunchConfigEx, numAttrs) == 48);

struct DriverApi {
  CUresult (*init)(unsigned);
  CUresult (*driverGetVersion)(int *);
  CUresult (*deviceGetCount)(int *);
  CUresult (*deviceGet)(CUdevice *, int);
  CUresult (*deviceGetName)(char *, int, CUdevice);
  CUresult (*deviceGetAttribute)(int *, int, CUdevice);
  CUresult (*deviceTotalMem)(size_t *, CUdevice);
  CUresult (*primaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*ctxSetCurrent)(CUcontext);
  CUresult (*ctxGetCurrent)(CUcontext *);
  CUresult (*streamWaitEvent)(Stream, Event, unsigned);
  CUresult (*streamIsCapturing)(Stream, int *);
  CUresult (*memAlloc)(DevicePtr *, size_t);
  CUresult (*memFree)(DevicePtr);
  CUresult (*memcpyHtoD)(DevicePtr, const void *, size_t);
  CUresult (*memcpyDtoH)(void *, DevicePtr, size_t);
  CUresult (*memsetD8)(DevicePtr, unsigned char, size_t);
  CUresult (*memsetD8Async)(DevicePtr, unsigned char, size_t, Stream);
  CUresult (*memcpyDtoDAsync)(DevicePtr, DevicePtr, size_t, Stream);
  CUresult (*moduleLoadData)(Module *, const void *);
  CUresult (*moduleUnload)(Module);
  CUresult (*moduleGetFunction)(Function *, Module, const char *);
  CUresult (*funcSetAttribute)(Function, int, int);
  CUresult (*launchKernel)(Function, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                           unsigned, Stream, void **, void **);
  CUresult (*launchKernelEx)(const LaunchConfigEx *, Function, void **, void **);
  CUresult (*streamCreate)(Stream *, unsigned);
  CUresult (*streamDestroy)(Stream);
  CUresult (*streamSynchronize)(Stream);
  CUresult (*eventCreate)(Event *, unsigned);
  CUresult (*eventDestroy)(Event);
  CUresult (*eventRecord)(Event, Stream);
  CUresult (*eventSynchronize)(Event);
  CUresult (*eventElapsedTime)(float *, Event, Event);
  CUresult (*streamBeginCapture)(Stream, int);
  CUresult (*streamEndCapture)(Stream, CUgraph *);
  CUresult (*graphInstantiate)(GraphExec *, CUgraph, unsigned long long);
  CUresult (*graphLaunch)(GraphExec, Stream);
  CUresult (*graphExecDestroy)(GraphExec);
  CUresult (*graphDestroy)(CUgraph);
  // Null on a driver before CUDA 12 (encodeTensorMap says so): everything else still runs.
  CUresult (*tensorMapEncodeTiled)(TensorMapBytes *, int, uint32_t, void *, const uint64_t *,
                                   const uint64_t *, const uint32_t *, const uint32_t *, int, int,
                                   int, int);
  CUresult (*tensorMapEncodeIm2col)(TensorMapBytes *, int, uint32_t, void *, const uint64_t *,
                                    const uint64_t *, const int *, const int *, uint32_t, uint32_t,
                                    const uint32_t *, int, int, int, int);
  CUresult (*getErrorName)(CUresult, const char **);
  CUresult (*getErrorString)(CUresult, const char **);
};

struct Driver {
  DriverApi api{};
  CUcontext context = nullptr;
  DeviceInfo info;
  std::string error; // why the device cannot be used; empty when it can
};

/// Resolves the first of `names` that the library exports.
template <typename Fn>
bool resolve(void *lib, std::initializer_list<const char *> names, Fn &fn, std::string &error) {
  for (const char *name : names)
    if ((fn = reinterpret_cast<Fn>(dlsym(lib, name))))
      return true;
  error = std::string("the CUDA driver lacks ") + *names.begin();
  return false;
}

bool resolveAll(void *lib, DriverApi &a, std::string &e) {
  return resolve(lib, {"cuInit"}, a.init, e) &&
         resolve(lib, {"cuDriverGetVersion"}, a.driverGetVersion, e) &&
         resolve(lib, {"cuDeviceGetCount"}, a.deviceGetCount, e) &&
         resolve(lib, {"cuDeviceGet"}, a.deviceGet, e) &&
         resolve(lib, {"cuDeviceGetName"}, a.deviceGetName, e) &&
         resolve(lib, {"cuDeviceGetAttribute"}, a.deviceGetAttribute, e) &&
         resolve(lib, {"cuDeviceTotalMem_v2"}, a.deviceTotalMem, e) &&
         resolve(lib, {"cuDevicePrimaryCtxRetain"}, a.primaryCtxRetain, e) &&
         resolve(lib, {"cuCtxSetCurrent"}, a.ctxSetCurrent, e) &&
         resolve(lib, {"cuCtxGetCurrent"}, a.ctxGetCurrent, e) &&
         resolve(lib, {"cuStreamWaitEvent"}, a.streamWaitEvent, e) &&
         resolve(lib, {"cuStreamIsCapturing"}, a.streamIsCapturing, e) &&
         resolve(lib, {"cuMemAlloc_v2"}, a.memAlloc, e) &&
         resolve(lib, {"cuMemFree_v2"}, a.memFree, e) &&
         resolve(lib, {"cuMemcpyHtoD_v2"}, a.memcpyHtoD, e) &&
         resolve(lib, {"cuMemcpyDtoH_v2"}, a.memcpyDtoH, e) &&
         resolve(lib, {"cuMemsetD8_v2"}, a.memsetD8, e) &&
         resolve(lib, {"cuMemsetD8Async"}, a.memsetD8Async, e) &&
         resolve(lib, {"cuMemcpyDtoDAsync_v2"}, a.memcpyDtoDAsync, e) &&
         resolve(lib, {"cuModuleLoadData"}, a.moduleLoadData, e) &&
         resolve(lib, {"cuModuleUnload"}, a.moduleUnload, e) &&
         resolve(lib, {"cuModuleGetFunction"}, a.moduleGetFunction, e) &&
         resolve(lib, {"cuFuncSetAttribute"}, a.funcSetAttribute, e) &&
         resolve(lib, {"cuLaunchKernel"}, a.launchKernel, e) &&
         resolve(lib, {"cuStreamCreate"}, a.streamCreate, e) &&
         resolve(lib, {"cuStreamDestroy_v2"}, a.streamDestroy, e) &&
         resolve(lib, {"cuStreamSynchronize"}, a.streamSynchronize, e) &&
         resolve(lib, {"cuEventCreate"}, a.eventCreate, e) &&
         resolve(lib, {"cuEventDestroy_v2"}, a.eventDestroy, e) &&
         resolve(lib, {"cuEventRecord"}, a.eventRecord, e) &&
         resolve(lib, {"cuEventSynchronize"}, a.eventSynchronize, e) &&
         resolve(lib, {"cuEventElapsedTime_v2", "cuEventElapsedTime"}, a.eventElapsedTime, e) &&
         resolve(lib, {"cuStreamBeginCapture_v2"}, a.streamBeginCapture, e) &&
         resolve(lib, {"cuStreamEndCapture"}, a.streamEndCapture, e) &&
         resolve(lib, {"cuGraphInstantiateWithFlags"}, a.graphInstantiate, e) &&
         resolve(lib, {"cuGraphLaunch"}, a.graphLaunch, e) &&
         resolve(lib, {"cuGraphExecDestroy"}, a.graphExecDestroy, e) &&
         resolve(lib, {"cuGraphDestroy"}, a.graphDestroy, e) &&
         resolve(lib, {"cuGetErrorName"}, a.getErrorName, e) &&
         resolve(lib, {"cuGetErrorString"}, a.getErrorString, e);
}

std::string describe(const DriverApi &api, CUresult r) {
  const char *name = nullptr, *text = nullptr;
  if (api.getErrorName(r, &name) != 0 || !name)
    return "CUDA error " + std::to_string(r);
  api.getErrorString(r, &text);
  return std::string(name) + (text ? std::string(" (") + text + ")" : "");
}

/// Fills `info` for device 0; "" on success, else the failing call.
std::string queryDevice(Driver &d, CUdevice dev) {
  const DriverApi &a = d.api;
  char name[256] = {};
  int sms = 0, major = 0, minor = 0, shared = 0, version = 0;
  size_t mem = 0;
  CUresult r = a.deviceGetName(name, sizeof name - 1, dev);
  r = r ? r : a.deviceGetAttribute(&sms, kAttrMultiprocessors, dev);
  r = r ? r : a.deviceGetAttribute(&major, kAttrMajor, dev);
  r = r ? r : a.deviceGetAttribute(&minor, kAttrMinor, dev);
  r = r ? r : a.deviceGetAttribute(&shared, kAttrSharedOptin, dev);
  r = r ? r : a.deviceTotalMem(&mem, dev);
  r = r ? r : a.driverGetVersion(&version);
  r = r ? r : a.primaryCtxRetain(&d.context, dev);
  if (r)
    return "querying CUDA device 0 failed: " + describe(a, r);
  d.info = DeviceInfo{name, major, minor, sms, version, mem, shared};
  return "";
}

Driver openDriver() {
  Driver d;
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    d.error = "no CUDA driver found (libcuda.so.1 is not on the loader path): this needs an "
              "NVIDIA GPU and its driver";
    return d;
  }
  if (!resolveAll(lib, d.api, d.error))
    return d;
  d.api.tensorMapEncodeTiled =
      reinterpret_cast<decltype(d.api.tensorMapEncodeTiled)>(dlsym(lib, "cuTensorMapEncodeTiled"));
  d.api.tensorMapEncodeIm2col = reinterpret_cast<decltype(d.api.tensorMapEncodeIm2col)>(
      dlsym(lib, "cuTensorMapEncodeIm2col"));
  d.api.launchKernelEx =
      reinterpret_cast<decltype(d.api.launchKernelEx)>(dlsym(lib, "cuLaunchKernelEx"));
  int count = 0;
  CUdevice dev = 0;
  if (CUresult r = d.api.init(0)) {
    d.error = "cuInit failed: " + describe(d.api, r);
    return d;
  }
  if (CUresult r = d.api.deviceGetCount(&count)) {
    d.error = "cuDeviceGetCount failed: " + describe(d.api, r);
    return d;
  }
  if (count == 0) {
    d.error = "no CUDA device is visible";
    return d;
  }
  if (CUresult r = d.api.deviceGet(&dev, 0)) {
    d.error = "cuDeviceGet failed: " + describe(d.api, r);
    return d;
  }
  d.error = queryDevice(d, dev);
  return d;
}

Driver &driver() {
  static Driver d = openDriver(); // thread-safe, once per process
  return d;
}

const DriverApi &api() {
  FUSEC_ASSERT(driver().error.empty(), "a CUDA call before openDevice succeeded");
  return driver().api;
}

bool check(CUresult r, const char *call, Diagnostics &diags, const std::string &what = "") {
  if (r == 0)
    return true;
  diags.error(Loc{}, std::string(call) + " failed" + (what.empty() ? "" : " for " + what) + ": " +
                         describe(api(), r));
  return false;
}

} // namespace

namespace {

/// The compute capability of `target` and whether it is architecture-specific ("a").
std::optional<std::tuple<int, int, bool>> parseTarget(const std::string &target) {
  llvm::StringRef digits(target);
  if (!digits.consume_front("sm_"))
    return std::nullopt;
  bool archSpecific = digits.consume_back("a");
  unsigned arch = 0;
  if (digits.getAsInteger(10, arch))
    return std::nullopt;
  return std::tuple(int(arch / 10), int(arch % 10), archSpecific);
}

} // namespace

bool cubinRunsOn(const std::string &target, int major, int minor) {
  auto t = parseTarget(target);
  if (!t)
    return false;
  auto [tMajor, tMinor, archSpecific] = *t;
  if (archSpecific)
    return tMajor == major && tMinor == minor;
  return tMajor == major && tMinor <= minor;
}

bool targetRunsOn(const std::string &target, int major, int minor) {
  auto t = parseTarget(target);
  if (!t)
    return false;
  auto [tMajor, tMinor, archSpecific] = *t;
  return cubinRunsOn(target, major, minor) ||
         (!archSpecific && (tMajor < major || (tMajor == major && tMinor <= minor)));
}

std::string DeviceInfo::target() const {
  std::string t = "sm_" + std::to_string(major) + std::to_string(minor);
  return major == 9 && minor == 0 ? t + "a" : t;
}

std::optional<DeviceInfo> openDevice(std::string *whyNot) {
  Driver &d = driver();
  std::string error = d.error;
  CUcontext current = nullptr;
  if (error.empty() && (d.api.ctxGetCurrent(&current) != 0 || !current))
    if (CUresult r = d.api.ctxSetCurrent(d.context))
      error = "cuCtxSetCurrent failed: " + describe(d.api, r);
  if (error.empty())
    return d.info;
  if (whyNot)
    *whyNot = error;
  return std::nullopt;
}

bool ensureDevice(Diagnostics &diags) {
  std::string whyNot;
  if (openDevice(&whyNot))
    return true;
  diags.error(Loc{}, whyNot);
  return false;
}

std::optional<DevicePtr> allocate(size_t bytes, Diagnostics &diags, const std::string &what) {
  DevicePtr p = 0;
  if (!check(api().memAlloc(&p, bytes ? bytes : 1), "cuMemAlloc", diags,
             what + " (" + std::to_string(bytes) + " bytes)"))
    return std::nullopt;
  return p;
}

void release(DevicePtr p) {
  if (p)
    api().memFree(p);
}

bool copyToDevice(DevicePtr dst, const void *src, size_t bytes, Diagnostics &diags) {
  return !bytes || check(api().memcpyHtoD(dst, src, bytes), "cuMemcpyHtoD", diags);
}

bool copyToHost(void *dst, DevicePtr src, size_t bytes, Diagnostics &diags) {
  return !bytes || check(api().memcpyDtoH(dst, src, bytes), "cuMemcpyDtoH", diags);
}

bool copyOnDevice(DevicePtr dst, DevicePtr src, size_t bytes, Stream stream, Diagnostics &diags) {
  return !bytes ||
         check(api().memcpyDtoDAsync(dst, src, bytes, stream), "cuMemcpyDtoDAsync", diags);
}

bool fill(DevicePtr dst, uint8_t value, size_t bytes, Diagnostics &diags) {
  return !bytes || check(api().memsetD8(dst, value, bytes), "cuMemsetD8", diags);
}

bool fill(DevicePtr dst, uint8_t value, size_t bytes, Stream stream, Diagnostics &diags) {
  return !bytes || check(api().memsetD8Async(dst, value, bytes, stream), "cuMemsetD8Async", diags);
}

std::optional<Module> loadModule(const std::string &image, const std::string &name,
                                 Diagnostics &diags) {
  Module m = nullptr;
  if (!check(api().moduleLoadData(&m, image.c_str()), "cuModuleLoadData", diags, name))
    return std::nullopt;
  return m;
}

void unloadModule(Module m) {
  if (m)
    api().moduleUnload(m);
}

std::optional<Function> getFunction(Module m, const std::string &name, Diagnostics &diags) {
  Function f = nullptr;
  if (!check(api().moduleGetFunction(&f, m, name.c_str()), "cuModuleGetFunction", diags, name))
    return std::nullopt;
  return f;
}

bool allowSharedBytes(Function f, unsigned bytes, Diagnostics &diags,
                      const std::string &kernelName) {
  return bytes <= 48 * 1024 || check(api().funcSetAttribute(f, kFuncMaxDynamicShared, int(bytes)),
                                     "cuFuncSetAttribute", diags, kernelName);
}

namespace {

// Every dtype has a TMA type of its size: i8 and bool move as bytes.
int tensorMapDataType(DType t) {
  switch (t) {
  case DType::F32:
    return kTmaFloat32;
  case DType::F16:
    return kTmaFloat16;
  case DType::BF16:
    return kTmaBfloat16;
  case DType::F64:
    return kTmaFloat64;
  case DType::I32:
    return kTmaInt32;
  case DType::I64:
    return kTmaInt64;
  case DType::I8:
  case DType::Bool:
    return kTmaUint8;
  }
  FUSEC_ASSERT(false, "a dtype without a TMA data type");
  return kTmaUint8;
}

int tensorMapSwizzle(unsigned bytes) {
  switch (bytes) {
  case 32:
    return kTmaSwizzle32B;
  case 64:
    return kTmaSwizzle64B;
  case 128:
    return kTmaSwizzle128B;
  }
  return kTmaSwizzleNone;
}

} // namespace

/// encodeTensorMap of an im2col view: cuTensorMapEncodeIm2col.
static std::optional<TensorMapBytes> encodeIm2col(DevicePtr first, DType dtype,
                                                  const KernelArg::TensorView &view,
                                                  Diagnostics &diags, const std::string &what) {
  const KernelArg::TensorView::Im2col &m = *view.im2col;
  size_t rank = view.dims.size();
  FUSEC_ASSERT(rank >= 3 && rank <= 5 && view.box.size() == 2 && view.strides.size() + 1 == rank &&
                   m.lower.size() + 2 == rank && m.upper.size() + 2 == rank &&
                   m.traversal.size() == rank,
               "encodeTensorMap of an im2col view tensorViewProblem refuses");
  uint64_t dims[5] = {}, strides[5] = {};
  uint32_t traversal[5] = {};
  int lower[3] = {}, upper[3] = {};
  for (size_t i = 0; i < rank; ++i) {
    dims[i] = uint64_t(view.dims[i]), traversal[i] = m.traversal[i];
    if (i + 1 < rank)
      strides[i] = uint64_t(view.strides[i]) * dtypeSize(dtype);
    if (i + 2 < rank)
      lower[i] = int(m.lower[i]), upper[i] = int(m.upper[i]);
  }
  TensorMapBytes map;
  if (!check(api().tensorMapEncodeIm2col(&map, tensorMapDataType(dtype), uint32_t(rank),
                                         reinterpret_cast<void *>(first), dims, strides, lower,
                                         upper, view.box[0], view.box[1], traversal,
                                         kTmaInterleaveNone, tensorMapSwizzle(view.swizzle),
                                         kTmaL2Promotion256B, kTmaOobFillNone),
             "cuTensorMapEncodeIm2col", diags, what))
    return std::nullopt;
  return map;
}

std::optional<TensorMapBytes> encodeTensorMap(DevicePtr first, DType dtype,
                                              const KernelArg::TensorView &view, Diagnostics &diags,
                                              const std::string &what) {
  const DriverApi &a = api();
  if (view.im2col ? !a.tensorMapEncodeIm2col : !a.tensorMapEncodeTiled) {
    std::string call = view.im2col ? "cuTensorMapEncodeIm2col" : "cuTensorMapEncodeTiled";
    diags.error(Loc{},
                "the CUDA driver lacks " + call + " (CUDA 12 or later): " + what + " needs it");
    return std::nullopt;
  }
  size_t rank = view.dims.size();
  if (view.im2col)
    return encodeIm2col(first, dtype, view, diags, what);
  FUSEC_ASSERT(rank >= 1 && rank <= 5 && view.box.size() == rank && view.strides.size() + 1 == rank,
               "encodeTensorMap of a view tensorViewProblem refuses");
  uint64_t dims[5] = {}, strides[5] = {};
  uint32_t box[5] = {}, elementStrides[5] = {1, 1, 1, 1, 1};
  for (size_t i = 0; i < rank; ++i) {
    dims[i] = uint64_t(view.dims[i]), box[i] = view.box[i];
    if (i + 1 < rank) // the driver takes the strides of dims 1 on, in bytes
      strides[i] = uint64_t(view.strides[i]) * dtypeSize(dtype);
  }
  TensorMapBytes map;
  if (!check(a.tensorMapEncodeTiled(
                 &map, tensorMapDataType(dtype), uint32_t(rank), reinterpret_cast<void *>(first),
                 dims, strides, box, elementStrides, kTmaInterleaveNone,
                 tensorMapSwizzle(view.swizzle), kTmaL2Promotion256B, kTmaOobFillNone),
             "cuTensorMapEncodeTiled", diags, what))
    return std::nullopt;
  return map;
}

std::span<const void *const> KernelParams::pointers() {
  where.clear();
  for (int32_t s : slots)
    where.push_back(s >= 0 ? static_cast<const void *>(&words[size_t(s)])
                           : static_cast<const void *>(&maps[size_t(-1 - s)]));
  return where;
}

bool launch(Function f, const LaunchConfig &c, std::span<const void *const> params, Stream stream,
            Diagnostics &diags, const std::string &kernelName) {
  // cuLaunchKernel only reads through these pointers.
  llvm::SmallVector<void *, 32> args;
  for (const void *p : params)
    args.push_back(const_cast<void *>(p));
  // The blocks of a cluster run at once and share their shared memory; a dependent kernel may
  // start before the kernel before it ends (Note [Dependent launch] in codegen/Codegen.cpp).
  LaunchAttribute attrs[2] = {};
  unsigned count = 0;
  if (c.cluster > 1) {
    LaunchAttribute &a = attrs[count++];
    a.id = kLaunchAttrClusterDimension;
    a.value.clusterDim[0] = c.cluster;
    a.value.clusterDim[1] = a.value.clusterDim[2] = 1;
  }
  if (c.dependent) {
    LaunchAttribute &a = attrs[count++];
    a.id = kLaunchAttrProgrammaticSerialization;
    a.value.programmaticStreamSerializationAllowed = 1;
  }
  if (c.cluster > 1 && !api().launchKernelEx) {
    diags.error(Loc{}, "the CUDA driver lacks cuLaunchKernelEx: kernel '" + kernelName +
                           "' runs in clusters and needs it");
    return false;
  }
  if (count && api().launchKernelEx) { // else a dependent kernel waits for nothing: plainly
    LaunchConfigEx config{{c.grid[0], c.grid[1], c.grid[2]},
                          {c.block[0], c.block[1], c.block[2]},
                          c.sharedBytes,
                          stream,
                          attrs,
                          count};
    return check(api().launchKernelEx(&config, f, args.data(), nullptr), "cuLaunchKernelEx", diags,
                 "kernel '" + kernelName + "'");
  }
  return check(api().launchKernel(f, c.grid[0], c.grid[1], c.grid[2], c.block[0], c.block[1],
                                  c.block[2], c.sharedBytes, stream, args.data(), nullptr),
               "cuLaunchKernel", diags, "kernel '" + kernelName + "'");
}

std::optional<Stream> createStream(Diagnostics &diags) {
  Stream s = nullptr;
  if (!check(api().streamCreate(&s, kStreamBlocking), "cuStreamCreate", diags))
    return std::nullopt;
  return s;
}

void destroyStream(Stream s) {
  if (s)
    api().streamDestroy(s);
}

bool synchronize(Stream s, Diagnostics &diags) {
  return check(api().streamSynchronize(s), "cuStreamSynchronize", diags);
}

bool waitForEvent(Stream s, Event e, Diagnostics &diags) {
  return check(api().streamWaitEvent(s, e, 0), "cuStreamWaitEvent", diags);
}

bool synchronizeEvent(Event e, Diagnostics &diags) {
  return check(api().eventSynchronize(e), "cuEventSynchronize", diags);
}

std::optional<bool> isCapturing(Stream s, Diagnostics &diags) {
  int status = 0; // CU_STREAM_CAPTURE_STATUS_NONE
  if (!check(api().streamIsCapturing(s, &status), "cuStreamIsCapturing", diags))
    return std::nullopt;
  return status != 0;
}

std::optional<Event> createEvent(Diagnostics &diags) {
  Event e = nullptr;
  if (!check(api().eventCreate(&e, 0), "cuEventCreate", diags))
    return std::nullopt;
  return e;
}

void destroyEvent(Event e) {
  if (e)
    api().eventDestroy(e);
}

bool recordEvent(Event e, Stream s, Diagnostics &diags) {
  return check(api().eventRecord(e, s), "cuEventRecord", diags);
}

std::optional<float> elapsedMs(Event start, Event end, Diagnostics &diags) {
  float ms = 0;
  if (!check(api().eventSynchronize(end), "cuEventSynchronize", diags) ||
      !check(api().eventElapsedTime(&ms, start, end), "cuEventElapsedTime", diags))
    return std::nullopt;
  return ms;
}

bool beginCapture(Stream s, Diagnostics &diags) {
  return check(api().streamBeginCapture(s, kCaptureThreadLocal), "cuStreamBeginCapture", diags);
}

std::optional<GraphExec> endCapture(Stream s, Diagnostics &diags) {
  CUgraph graph = nullptr;
  GraphExec exec = nullptr;
  if (!check(api().streamEndCapture(s, &graph), "cuStreamEndCapture", diags))
    return std::nullopt;
  bool ok = check(api().graphInstantiate(&exec, graph, 0), "cuGraphInstantiate", diags);
  api().graphDestroy(graph);
  return ok ? std::optional<GraphExec>(exec) : std::nullopt;
}

bool launchGraph(GraphExec g, Stream s, Diagnostics &diags) {
  return check(api().graphLaunch(g, s), "cuGraphLaunch", diags);
}

void destroyGraph(GraphExec g) {
  if (g)
    api().graphExecDestroy(g);
}

} // namespace fusec::gpu
