// The kernel cache (see KernelCache.h).
//
// Note [Kernel cache key]
// The key is BLAKE3 (first 16 bytes, hex) over, each length-prefixed: the
// whole source (the CUDA C++ translation unit with its device helpers, so a
// change to a helper changes every key; or the LLVM IR module), the target
// architecture, the back end, its compiler (NVRTC's version and the NVRTC
// options fusec passes; or the LLVM version fusec links), and fusec's
// version. The driver's version is not part of it: an NVRTC entry holds a
// cubin for a real architecture, which any driver new enough to run that
// architecture loads unchanged, and an LLVM entry holds PTX, which the
// driver compiles at load (into its own cache). What a kernel computes is
// entirely in its source (shapes are baked in), so nothing else can change
// the compiled code.
//
// Entry format: "FUSECK1\n", the key and "\n", then three little-endian u64:
// PTX size, cubin size, xxh3 of PTX followed by cubin; then the two payloads.
#include "runtime/gpu/KernelCache.h"

#include "codegen/llvm/Nvptx.h"
#include "include/fusec/fusec.h"
#include "ir/FileIO.h"
#include "runtime/gpu/Nvtx.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

namespace fusec {

namespace {

constexpr char kMagic[] = "FUSECK1\n";
// An entry holds one kernel's PTX and cubin: far less than this.
constexpr uint64_t kMaxEntryBytes = uint64_t(256) << 20;

void appendU64(std::string &s, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    s += char(v >> (8 * i));
}

uint64_t readU64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i)
    v |= uint64_t(p[i]) << (8 * i);
  return v;
}

uint64_t checksum(const std::string &ptx, const std::string &cubin) {
  return llvm::xxh3_64bits(llvm::StringRef(ptx + cubin));
}

} // namespace

std::string KernelCache::defaultDirectory() {
  if (const char *off = std::getenv("FUSEC_CACHE"); off && std::strcmp(off, "0") == 0)
    return "";
  if (const char *dir = std::getenv("FUSEC_CACHE_DIR"); dir && *dir)
    return dir;
  llvm::SmallString<128> path;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    path = xdg;
  else if (!llvm::sys::path::home_directory(path))
    return "";
  else
    llvm::sys::path::append(path, ".cache");
  llvm::sys::path::append(path, "fusec");
  return std::string(path);
}

const char *cacheSourceName(CacheLookup::Source s) {
  switch (s) {
  case CacheLookup::Source::Memory:
    return "memory";
  case CacheLookup::Source::Disk:
    return "disk";
  case CacheLookup::Source::Compiled:
    break;
  }
  return "compiled";
}

KernelCache::KernelCache(std::string dir) : dir(std::move(dir)) {}

KernelCache &KernelCache::global() {
  static KernelCache cache(defaultDirectory());
  return cache;
}

std::string KernelCache::keyOf(const PtxRequest &req) {
  if (req.backend == Backend::Llvm) // no NVRTC in the key, nor loaded for it
    return keyOf(req, "");
  NvrtcVersion v = loadNvrtc().value_or(NvrtcVersion{});
  return keyOf(req, std::to_string(v.major) + "." + std::to_string(v.minor));
}

std::string KernelCache::keyOf(const PtxRequest &req, const std::string &nvrtcVersion) {
  NvrtcVersion v;
  auto [major, minor] = llvm::StringRef(nvrtcVersion).split('.');
  if (major.getAsInteger(10, v.major) || minor.getAsInteger(10, v.minor))
    v = {};
  llvm::BLAKE3 hasher;
  auto add = [&](llvm::StringRef s) {
    std::string size;
    appendU64(size, s.size());
    hasher.update(size);
    hasher.update(s);
  };
  add(req.source);
  add(req.target);
  add(backendName(req.backend));
  if (req.backend == Backend::Llvm) {
    add(LLVM_VERSION_STRING);
  } else {
    add(nvrtcVersion);
    for (const char *option : nvrtcOptions(v))
      add(option);
  }
  add(version());
  auto digest = hasher.final();
  return llvm::toHex(llvm::ArrayRef<uint8_t>(digest.data(), 16), /*LowerCase=*/true);
}

std::optional<CompiledCuda> KernelCache::readEntry(const std::string &key, std::string &whyMissed) {
  llvm::SmallString<128> path(dir);
  llvm::sys::path::append(path, key + ".fck");
  if (!llvm::sys::fs::exists(path)) {
    whyMissed = "no entry";
    return std::nullopt;
  }
  Diagnostics scratch;
  std::optional<std::vector<uint8_t>> bytes =
      readFile(std::string(path), scratch, kMaxEntryBytes, FileRole::Cache);
  std::string header = std::string(kMagic) + key + "\n";
  size_t fixed = header.size() + 24;
  if (!bytes || bytes->size() < fixed || std::memcmp(bytes->data(), header.data(), header.size())) {
    whyMissed = "corrupt entry " + std::string(path) + ": bad header";
    return std::nullopt;
  }
  uint64_t ptxSize = readU64(bytes->data() + header.size());
  uint64_t cubinSize = readU64(bytes->data() + header.size() + 8);
  uint64_t sum = readU64(bytes->data() + header.size() + 16);
  if (ptxSize > bytes->size() - fixed || cubinSize != bytes->size() - fixed - ptxSize) {
    whyMissed = "corrupt entry " + std::string(path) + ": sizes do not match the file";
    return std::nullopt;
  }
  const char *payload = reinterpret_cast<const char *>(bytes->data() + fixed);
  CompiledCuda code{std::string(payload, ptxSize), std::string(payload + ptxSize, cubinSize)};
  if (checksum(code.ptx, code.cubin) != sum) {
    whyMissed = "corrupt entry " + std::string(path) + ": checksum mismatch";
    return std::nullopt;
  }
  return code;
}

void KernelCache::writeEntry(const std::string &key, const CompiledCuda &code, Diagnostics &diags) {
  std::string entry = std::string(kMagic) + key + "\n";
  appendU64(entry, code.ptx.size());
  appendU64(entry, code.cubin.size());
  appendU64(entry, checksum(code.ptx, code.cubin));
  entry += code.ptx;
  entry += code.cubin;
  writeCacheFile(dir, key + ".fck", entry, warnedUnwritable, "kernel cache",
                 "compiled kernels are not saved", diags);
}

void writeCacheFile(const std::string &dir, const std::string &name, std::string_view bytes,
                    std::atomic<bool> &warned, const std::string &what,
                    const std::string &consequence, Diagnostics &diags) {
  llvm::SmallString<128> path(dir);
  llvm::sys::path::append(path, name);
  Diagnostics scratch;
  std::error_code ec = llvm::sys::fs::create_directories(dir);
  if ((!ec && writeFileAtomically(std::string(path), bytes, scratch)) || warned.exchange(true))
    return;
  std::string why = ec ? ec.message() : scratch.all().empty() ? "" : scratch.all()[0].message;
  diags.warning(Loc{},
                what + " directory '" + dir + "' is not writable (" + why + "); " + consequence);
}

namespace {

/// PTX and cubin from NVRTC, or PTX from LLVM's NVPTX back end.
std::optional<CompiledCuda> compile(const PtxRequest &req, Diagnostics &diags) {
  if (req.backend == Backend::Nvrtc)
    return compileCuda(req, diags);
  std::optional<std::string> ptx = llvmir::compileToPtx(req.source, req.target, diags);
  return ptx ? std::optional(CompiledCuda{std::move(*ptx), ""}) : std::nullopt;
}

} // namespace

void KernelCache::insert(const std::string &key, CompiledCuda code) {
  std::lock_guard<std::mutex> lock(mutex);
  memory[key] = std::move(code);
}

std::optional<CompiledCuda> KernelCache::getOrCompile(const PtxRequest &req, Diagnostics &diags,
                                                      CacheLookup *lookup) {
  CacheLookup local;
  CacheLookup &l = lookup ? *lookup : local;
  l.key = keyVersion.empty() ? keyOf(req) : keyOf(req, keyVersion);
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = memory.find(l.key); it != memory.end()) {
      l.source = CacheLookup::Source::Memory;
      return it->second;
    }
  }
  if (!refuseMissesIn.empty()) {
    diags.error(Loc{}, "kernel '" + req.name + "' (key " + l.key + ") is not in " + refuseMissesIn);
    return std::nullopt;
  }
  std::optional<CompiledCuda> code;
  if (dir.empty())
    l.whyMissed = "disk cache disabled";
  else if ((code = readEntry(l.key, l.whyMissed)))
    l.source = CacheLookup::Source::Disk;
  if (!code) {
    l.source = CacheLookup::Source::Compiled;
    nvtx::Range range(std::string(backendName(req.backend)) + " " + req.name);
    if (!(code = compile(req, diags)))
      return std::nullopt;
    if (!dir.empty())
      writeEntry(l.key, *code, diags);
  }
  std::lock_guard<std::mutex> lock(mutex);
  memory.emplace(l.key, *code);
  return code;
}

} // namespace fusec

namespace fusec {

std::vector<std::optional<CompiledCuda>>
KernelCache::getOrCompileAll(const std::vector<PtxRequest> &reqs, Diagnostics &diags,
                             std::vector<CacheLookup> &lookups, std::vector<double> &wallMs) {
  size_t n = reqs.size();
  std::vector<std::optional<CompiledCuda>> code(n);
  std::vector<Diagnostics> each(n);
  lookups.assign(n, {});
  wallMs.assign(n, 0);
  {
    llvm::DefaultThreadPool pool(llvm::hardware_concurrency());
    for (size_t i = 0; i < n; ++i)
      pool.async([&, i] {
        auto start = std::chrono::steady_clock::now();
        code[i] = getOrCompile(reqs[i], each[i], &lookups[i]);
        wallMs[i] =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count();
      });
    pool.wait();
  }
  // Once for the whole batch: an environment error (NVRTC missing) is the
  // same for every request.
  std::vector<std::string> seen;
  for (const Diagnostics &d : each)
    for (const Diagnostic &one : d.all()) {
      if (std::find(seen.begin(), seen.end(), one.message) != seen.end())
        continue;
      seen.push_back(one.message);
      if (one.severity == Severity::Error)
        diags.error(one.loc, one.message);
      else if (one.severity == Severity::Warning)
        diags.warning(one.loc, one.message);
      else
        diags.note(one.loc, one.message);
    }
  return code;
}

} // namespace fusec
