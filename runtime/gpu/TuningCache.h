// The tuning cache: the config `--tune` found fastest for a kernel, by a key
// that names everything the choice depends on (Note [Tuning key] in
// TuningCache.cpp), kept beside the kernel cache so that a kernel is tuned
// once per machine and every later process starts from the winner.
//
// Disk: one small text file per key under <kernel cache directory>/tuning,
// written atomically (temporary file + rename), so processes that tune the
// same kernel at once each leave a whole entry and readers never see half of
// one. Every read is checked (header, key, fields); a bad entry is a miss,
// never trusted. An unwritable directory costs one warning a process; the
// winner still applies to the program that tuned it.
#pragma once

#include "codegen/GeneratedKernel.h"
#include "ir/Diagnostics.h"

#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace fusec {

/// What a tuned config is chosen for.
struct TuningKey {
  std::string device; ///< the GPU's name ("NVIDIA H100 80GB HBM3")
  std::string target; ///< "sm_90a"
  Backend backend = Backend::Nvrtc;
  std::string signature; ///< the kernel's structure (ir/Kernel.h kernelSignature)
};

/// A tuned kernel's winner, and what it was measured against.
struct TuningEntry {
  std::string config;   ///< the kernel's `config`; "" is the template's own choice
  double us = 0;        ///< its device time
  double defaultUs = 0; ///< the template's own choice's
  unsigned candidates = 0;
};

/// An entry's text (the format of Note [Tuning key] in TuningCache.cpp), and back: nullopt, with
/// what is wrong in `problem`, for text that is not the entry of `hexKey`. Doubles are written in
/// their shortest form that reads back the same, so an entry round-trips exactly.
std::string formatTuningEntry(const std::string &hexKey, const TuningEntry &entry);
std::optional<TuningEntry> parseTuningEntry(std::string_view text, const std::string &hexKey,
                                            std::string &problem);

class TuningCache {
public:
  /// Entries under `dir`; an empty `dir` keeps them in memory only.
  explicit TuningCache(std::string dir);

  /// The process-wide cache: "tuning" in the kernel cache's directory
  /// (KernelCache.h; FUSEC_CACHE=0 keeps it in memory).
  static TuningCache &global();

  /// 32 hex digits naming `key` with fusec's version.
  static std::string keyOf(const TuningKey &key);

  /// The entry of `hexKey`, from memory or disk; nullopt with why it missed
  /// ("no entry", "corrupt entry ...", "disk cache disabled").
  std::optional<TuningEntry> lookup(const std::string &hexKey, std::string &whyMissed);
  /// Keeps `entry` under `hexKey` in memory and on disk (a warning, once,
  /// when the directory cannot be written).
  void store(const std::string &hexKey, const TuningEntry &entry, Diagnostics &diags);

  const std::string &directory() const { return dir; }

private:
  std::string dir;
  std::mutex mutex;
  std::map<std::string, TuningEntry> memory;
  std::atomic<bool> warnedUnwritable = false;
};

} // namespace fusec
