// The tuning cache (see TuningCache.h).
//
// Note [Tuning key]
// The key is BLAKE3 (first 16 bytes, hex) over, each length-prefixed: the
// GPU's name, the target, the back end, the kernel's signature and fusec's
// version. The signature (ir/Kernel.h) is the kernel's structure with its
// names and config left out: its template, its operand and result types
// (dtype, shape, and so layout: a transposed operand is another op in the
// body), and every op of its body with its attributes, the epilogue
// included. So two models that meet the same gemm share its tuning, and a
// change of shape, dtype, layout, epilogue, GPU or fusec release tunes anew
// (a release may generate other code for the same config); within a
// release, an entry whose config is no longer one of the kernel's
// candidates is stale, a miss (runtime/Tuning.cpp).
//
// Entry format (text): "fusec-tuning 1", "key <hex>", "config <text>",
// "us <winner's device time>", "default-us <the template's choice's>",
// "candidates <count>", one a line.
#include "runtime/gpu/TuningCache.h"

#include "include/fusec/fusec.h"
#include "ir/FileIO.h"
#include "runtime/gpu/KernelCache.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <charconv>
#include <cmath>

namespace fusec {

namespace {

constexpr llvm::StringLiteral kHeader = "fusec-tuning 1";
// An entry is a few short lines.
constexpr uint64_t kMaxEntryBytes = 64 * 1024;

std::string entryPath(const std::string &dir, const std::string &hexKey) {
  llvm::SmallString<128> path(dir);
  llvm::sys::path::append(path, hexKey + ".tune");
  return std::string(path);
}

/// `v` in the shortest form that reads back the same.
std::string shortest(double v) {
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, v);
  return ec == std::errc() ? std::string(buffer, end) : "nan";
}

} // namespace

std::optional<TuningEntry> parseTuningEntry(std::string_view text, const std::string &hexKey,
                                            std::string &problem) {
  llvm::SmallVector<llvm::StringRef, 8> lines;
  llvm::StringRef(text.data(), text.size()).split(lines, '\n', -1, /*KeepEmpty=*/false);
  if (lines.size() != 6 || lines[0] != kHeader || lines[1] != "key " + hexKey) {
    problem = "bad header";
    return std::nullopt;
  }
  TuningEntry e;
  auto field = [&](llvm::StringRef line, llvm::StringRef name) -> std::optional<llvm::StringRef> {
    if (!line.consume_front(name) || !line.consume_front(" "))
      return std::nullopt;
    return line;
  };
  auto number = [&](size_t i, llvm::StringRef name, double &to) {
    std::optional<llvm::StringRef> v = field(lines[i], name);
    return v && !v->getAsDouble(to) && std::isfinite(to) && to >= 0;
  };
  std::optional<llvm::StringRef> config = field(lines[2], "config");
  if (!config && lines[2] == "config")
    config = "";
  double candidates = 0;
  if (!config || !number(3, "us", e.us) || !number(4, "default-us", e.defaultUs) ||
      !number(5, "candidates", candidates) || candidates != std::floor(candidates) ||
      candidates > 1e6) {
    problem = "bad field";
    return std::nullopt;
  }
  e.config = config->str();
  e.candidates = unsigned(candidates);
  return e;
}

std::string formatTuningEntry(const std::string &hexKey, const TuningEntry &e) {
  return kHeader.str() + "\nkey " + hexKey + "\nconfig " + e.config + "\nus " + shortest(e.us) +
         "\ndefault-us " + shortest(e.defaultUs) + "\ncandidates " + std::to_string(e.candidates) +
         "\n";
}

TuningCache::TuningCache(std::string dir) : dir(std::move(dir)) {}

TuningCache &TuningCache::global() {
  static TuningCache cache = [] {
    std::string kernels = KernelCache::defaultDirectory();
    if (kernels.empty())
      return TuningCache("");
    llvm::SmallString<128> path(kernels);
    llvm::sys::path::append(path, "tuning");
    return TuningCache(std::string(path));
  }();
  return cache;
}

std::string TuningCache::keyOf(const TuningKey &key) {
  llvm::BLAKE3 hasher;
  auto add = [&](llvm::StringRef s) {
    uint64_t size = s.size();
    uint8_t bytes[8];
    for (int i = 0; i < 8; ++i)
      bytes[i] = uint8_t(size >> (8 * i));
    hasher.update(llvm::ArrayRef<uint8_t>(bytes, 8));
    hasher.update(s);
  };
  add(key.device);
  add(key.target);
  add(backendName(key.backend));
  add(key.signature);
  add(version());
  auto digest = hasher.final();
  return llvm::toHex(llvm::ArrayRef<uint8_t>(digest.data(), 16), /*LowerCase=*/true);
}

std::optional<TuningEntry> TuningCache::lookup(const std::string &hexKey, std::string &whyMissed) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = memory.find(hexKey); it != memory.end())
      return it->second;
  }
  if (dir.empty()) {
    whyMissed = "disk cache disabled";
    return std::nullopt;
  }
  std::string path = entryPath(dir, hexKey);
  if (!llvm::sys::fs::exists(path)) {
    whyMissed = "no entry";
    return std::nullopt;
  }
  Diagnostics scratch;
  std::optional<std::vector<uint8_t>> bytes =
      readFile(path, scratch, kMaxEntryBytes, FileRole::Cache);
  std::string problem = "unreadable";
  std::optional<TuningEntry> e;
  if (bytes)
    e = parseTuningEntry(
        std::string_view(reinterpret_cast<const char *>(bytes->data()), bytes->size()), hexKey,
        problem);
  if (!e) {
    whyMissed = "corrupt entry " + path + ": " + problem;
    return std::nullopt;
  }
  std::lock_guard<std::mutex> lock(mutex);
  memory.emplace(hexKey, *e);
  return e;
}

void TuningCache::store(const std::string &hexKey, const TuningEntry &entry, Diagnostics &diags) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    memory[hexKey] = entry;
  }
  if (!dir.empty())
    writeCacheFile(dir, hexKey + ".tune", formatTuningEntry(hexKey, entry), warnedUnwritable,
                   "tuning cache", "tuned configs are not saved", diags);
}

} // namespace fusec
