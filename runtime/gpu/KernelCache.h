// The kernel cache: compiled code (PTX and cubin) by a key that names
// everything that went into it, in memory and on disk, so that a kernel is
// compiled once per machine. See Note [Kernel cache key] in KernelCache.cpp.
//
// Disk: one file per key under the cache directory ($FUSEC_CACHE_DIR, else
// $XDG_CACHE_HOME/fusec, else ~/.cache/fusec), written atomically (temporary
// file + rename), so concurrent writers of one key from several threads or
// processes each leave a whole file. Every read is checked (magic, key,
// sizes, checksum); a bad entry is reported as a miss and recompiled, never
// trusted. A directory that cannot be written (read-only, full disk) costs
// a warning, once per process; compiling still works. FUSEC_CACHE=0 turns
// the disk cache off.
#pragma once

#include "ir/Diagnostics.h"
#include "runtime/gpu/Nvrtc.h"

#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fusec {

/// Where a compiled program came from, and why it was not found earlier.
struct CacheLookup {
  enum class Source { Memory, Disk, Compiled } source = Source::Compiled;
  std::string key;       ///< 32 hex digits
  std::string whyMissed; ///< for Compiled: "no entry", "corrupt entry: ...", "disabled"
};

/// "memory", "disk" or "compiled".
const char *cacheSourceName(CacheLookup::Source s);

/// Writes `bytes` to `dir`/`name` through a temporary file renamed into place, creating `dir`.
/// When that fails, and `warned` was false, warns once: "<what> directory 'DIR' is not writable
/// (WHY); <consequence>" (the kernel and tuning caches' entries).
void writeCacheFile(const std::string &dir, const std::string &name, std::string_view bytes,
                    std::atomic<bool> &warned, const std::string &what,
                    const std::string &consequence, Diagnostics &diags);

class KernelCache {
public:
  /// A cache in `dir`; an empty `dir` keeps entries in memory only.
  explicit KernelCache(std::string dir);

  /// The process-wide cache, configured from the environment.
  static KernelCache &global();
  /// Its directory: $FUSEC_CACHE_DIR, else $XDG_CACHE_HOME/fusec, else
  /// ~/.cache/fusec; "" (memory only) with FUSEC_CACHE=0.
  static std::string defaultDirectory();

  /// The compiled `req`: from memory, from disk, or from NVRTC (then stored
  /// in both). Returns nullopt after reporting a compile error.
  std::optional<CompiledCuda> getOrCompile(const PtxRequest &req, Diagnostics &diags,
                                           CacheLookup *lookup = nullptr);

  /// getOrCompile for every request, in parallel (one task per request on
  /// a pool of the machine's hardware threads). Fills `lookups` and
  /// `wallMs` per request; appends each request's diagnostics to `diags`
  /// in request order. An element is nullopt where its compile failed.
  std::vector<std::optional<CompiledCuda>> getOrCompileAll(const std::vector<PtxRequest> &reqs,
                                                           Diagnostics &diags,
                                                           std::vector<CacheLookup> &lookups,
                                                           std::vector<double> &wallMs);

  /// The key of `req`: a hash of its source, target, NVRTC version and
  /// options, and fusec's version.
  static std::string keyOf(const PtxRequest &req);
  /// The key as an NVRTC of version `nvrtcVersion` ("13.0") would have it.
  static std::string keyOf(const PtxRequest &req, const std::string &nvrtcVersion);

  const std::string &directory() const { return dir; }

  /// Adds compiled code under `key` (the kernels of an artifact).
  void insert(const std::string &key, CompiledCuda code);
  /// From now on a miss is an error "kernel 'NAME' (key K) is not in
  /// <where>" instead of a compile: what running an artifact needs.
  void refuseMisses(std::string where) { refuseMissesIn = std::move(where); }
  /// Keys requests as NVRTC `version` did (an artifact's kernels were
  /// compiled elsewhere; this machine's NVRTC, if any, does not matter).
  void keyAsNvrtc(std::string version) { keyVersion = std::move(version); }

private:
  std::optional<CompiledCuda> readEntry(const std::string &key, std::string &whyMissed);
  void writeEntry(const std::string &key, const CompiledCuda &code, Diagnostics &diags);

  std::string dir;
  std::mutex mutex;
  std::map<std::string, CompiledCuda> memory;
  std::atomic<bool> warnedUnwritable = false;
  std::string refuseMissesIn; // non-empty: never compile
  std::string keyVersion;     // non-empty: the NVRTC version keys name
};

} // namespace fusec
