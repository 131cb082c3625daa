// The NVRTC driver (see Nvrtc.h). The few entry points it uses are declared
// here from NVRTC's documented C API and resolved with dlsym, so building
// fusec needs no toolkit. The library is searched in $CUDA_HOME/lib64,
// /usr/local/cuda/lib64, then on the default loader path; the first that
// loads wins, once per process. Each NVRTC call is checked once, and its
// error string is carried into the diagnostic.
#include "runtime/gpu/Nvrtc.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <dlfcn.h>
#include <mutex>
#include <vector>

namespace fusec {

namespace {

// NVRTC's C API (nvrtc.h): nvrtcResult is an enum, 0 = NVRTC_SUCCESS.
using NvrtcResult = int;
using NvrtcProgram = struct NvrtcProgramImpl *;
using GetErrorStringFn = const char *(*)(NvrtcResult);
using VersionFn = NvrtcResult (*)(int *, int *);
using CreateProgramFn = NvrtcResult (*)(NvrtcProgram *, const char *, const char *, int,
                                        const char *const *, const char *const *);
using DestroyProgramFn = NvrtcResult (*)(NvrtcProgram *);
using CompileProgramFn = NvrtcResult (*)(NvrtcProgram, int, const char *const *);
using GetSizeFn = NvrtcResult (*)(NvrtcProgram, size_t *);
using GetTextFn = NvrtcResult (*)(NvrtcProgram, char *);

struct NvrtcApi {
  GetErrorStringFn getErrorString = nullptr;
  VersionFn version = nullptr;
  CreateProgramFn createProgram = nullptr;
  DestroyProgramFn destroyProgram = nullptr;
  CompileProgramFn compileProgram = nullptr;
  GetSizeFn getPTXSize = nullptr, getProgramLogSize = nullptr;
  GetTextFn getPTX = nullptr, getProgramLog = nullptr;
  GetSizeFn getCUBINSize = nullptr;
  GetTextFn getCUBIN = nullptr;
  NvrtcVersion loadedVersion;
  std::string error; // why loading failed; empty when loaded
};

std::vector<std::string> candidatePaths() {
  std::vector<std::string> dirs;
  if (const char *home = std::getenv("CUDA_HOME"); home && *home)
    dirs.push_back(std::string(home) + "/lib64/");
  dirs.push_back("/usr/local/cuda/lib64/");
  dirs.push_back(""); // the default loader path
  std::vector<std::string> paths;
  for (const std::string &dir : dirs)
    for (const char *lib : {"libnvrtc.so.13", "libnvrtc.so"})
      paths.push_back(dir + lib);
  return paths;
}

template <typename Fn> bool resolve(void *lib, const char *name, Fn &fn, std::string &error) {
  fn = reinterpret_cast<Fn>(dlsym(lib, name));
  if (!fn)
    error = std::string("NVRTC library lacks symbol ") + name;
  return fn != nullptr;
}

NvrtcApi openNvrtc() {
  NvrtcApi api;
  void *lib = nullptr;
  for (const std::string &path : candidatePaths())
    if ((lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)))
      break;
  if (!lib) {
    api.error = "NVRTC not found: set CUDA_HOME to a CUDA toolkit (tried $CUDA_HOME/lib64, "
                "/usr/local/cuda/lib64 and the loader path for libnvrtc.so.13 and libnvrtc.so)";
    return api;
  }
  bool ok = resolve(lib, "nvrtcGetErrorString", api.getErrorString, api.error) &&
            resolve(lib, "nvrtcVersion", api.version, api.error) &&
            resolve(lib, "nvrtcCreateProgram", api.createProgram, api.error) &&
            resolve(lib, "nvrtcDestroyProgram", api.destroyProgram, api.error) &&
            resolve(lib, "nvrtcCompileProgram", api.compileProgram, api.error) &&
            resolve(lib, "nvrtcGetPTXSize", api.getPTXSize, api.error) &&
            resolve(lib, "nvrtcGetPTX", api.getPTX, api.error) &&
            resolve(lib, "nvrtcGetProgramLogSize", api.getProgramLogSize, api.error) &&
            resolve(lib, "nvrtcGetProgramLog", api.getProgramLog, api.error) &&
            resolve(lib, "nvrtcGetCUBINSize", api.getCUBINSize, api.error) &&
            resolve(lib, "nvrtcGetCUBIN", api.getCUBIN, api.error);
  if (ok && api.version(&api.loadedVersion.major, &api.loadedVersion.minor) != 0)
    api.error = "nvrtcVersion failed";
  return api;
}

const NvrtcApi &nvrtc() {
  static NvrtcApi api = openNvrtc(); // thread-safe, once per process
  return api;
}

/// Checks one NVRTC call: on failure reports "NVRTC <call> failed for
/// program P: NVRTC_ERROR_..." and returns false.
bool check(NvrtcResult r, const char *call, const PtxRequest &req, Diagnostics &diags) {
  if (r == 0)
    return true;
  diags.error(Loc{}, std::string("NVRTC ") + call + " failed for program '" + req.name +
                         "': " + nvrtc().getErrorString(r));
  return false;
}

bool validTarget(llvm::StringRef target) {
  llvm::StringRef digits = target;
  if (!digits.consume_front("sm_"))
    return false;
  digits.consume_back("a");
  unsigned arch;
  return !digits.getAsInteger(10, arch) && arch >= 70;
}

/// Saves the source of a failed compile in the temp directory; "" on failure.
std::string saveSource(const PtxRequest &req) {
  llvm::SmallString<128> path;
  int fd;
  if (llvm::sys::fs::createTemporaryFile("fusec-" + req.name, "cu", fd, path))
    return "";
  llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
  os << req.source;
  return std::string(path);
}

std::string programLog(NvrtcProgram prog) {
  size_t size = 0;
  if (nvrtc().getProgramLogSize(prog, &size) != 0 || size == 0)
    return "";
  std::string log(size, '\0');
  if (nvrtc().getProgramLog(prog, log.data()) != 0)
    return "";
  log.resize(log.find('\0') == std::string::npos ? size : log.find('\0'));
  return log;
}

void reportCompileFailure(NvrtcProgram prog, const PtxRequest &req, Diagnostics &diags) {
  std::string saved = saveSource(req);
  std::string msg = "NVRTC failed to compile program '" + req.name + "' for " + req.target;
  msg += saved.empty() ? " (its source could not be saved)" : "; source saved to " + saved;
  msg += "\n" + programLog(prog);
  diags.error(Loc{}, msg);
  if (!saved.empty())
    diags.note(Loc{}, "reproduce with: nvcc -ptx -std=c++17 -arch=" + req.target + " " + saved);
}

/// The PTX or cubin of a compiled program; nullopt after reporting.
std::optional<std::string> programText(NvrtcProgram prog, GetSizeFn getSize, GetTextFn getText,
                                       const char *call, const PtxRequest &req,
                                       Diagnostics &diags) {
  size_t size = 0;
  if (!check(getSize(prog, &size), call, req, diags))
    return std::nullopt;
  std::string text(size, '\0');
  if (!check(getText(prog, text.data()), call, req, diags))
    return std::nullopt;
  return text;
}

} // namespace

std::optional<NvrtcVersion> loadNvrtc(std::string *whyNot) {
  const NvrtcApi &api = nvrtc();
  if (!api.error.empty()) {
    if (whyNot)
      *whyNot = api.error;
    return std::nullopt;
  }
  return api.loadedVersion;
}

std::vector<const char *> nvrtcOptions(NvrtcVersion v) {
  std::vector<const char *> options = {"-default-device", "--std=c++17"};
  if (v.major > 12 || (v.major == 12 && v.minor >= 4))
    options.push_back("--minimal");
  return options;
}

std::optional<CompiledCuda> compileCuda(const PtxRequest &req, Diagnostics &diags) {
  std::string whyNot;
  if (!loadNvrtc(&whyNot)) {
    diags.error(Loc{}, whyNot);
    return std::nullopt;
  }
  if (!validTarget(req.target)) {
    diags.error(Loc{}, "unknown GPU target '" + req.target + "' (expected sm_80, sm_90a, ...)");
    return std::nullopt;
  }
  const NvrtcApi &api = nvrtc();
  NvrtcProgram prog = nullptr;
  std::string file = req.name + ".cu";
  if (!check(api.createProgram(&prog, req.source.c_str(), file.c_str(), 0, nullptr, nullptr),
             "nvrtcCreateProgram", req, diags))
    return std::nullopt;
  std::string arch = "--gpu-architecture=" + req.target;
  std::vector<const char *> options = nvrtcOptions(api.loadedVersion);
  options.push_back(arch.c_str());
  std::optional<CompiledCuda> out;
  if (api.compileProgram(prog, int(options.size()), options.data()) != 0) {
    reportCompileFailure(prog, req, diags);
  } else {
    auto ptx = programText(prog, api.getPTXSize, api.getPTX, "nvrtcGetPTX", req, diags);
    auto cubin = programText(prog, api.getCUBINSize, api.getCUBIN, "nvrtcGetCUBIN", req, diags);
    if (ptx && cubin)
      out = CompiledCuda{ptx->substr(0, ptx->find('\0')), std::move(*cubin)};
  }
  api.destroyProgram(&prog);
  return out;
}

std::optional<std::string> compileToPtx(const PtxRequest &req, Diagnostics &diags) {
  std::optional<CompiledCuda> code = compileCuda(req, diags);
  return code ? std::optional<std::string>(std::move(code->ptx)) : std::nullopt;
}

} // namespace fusec
