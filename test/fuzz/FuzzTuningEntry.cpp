// libFuzzer target: arbitrary bytes as a tuning-cache entry (runtime/gpu/TuningCache.h), which
// any process sharing the cache directory may have written. Reading must reject what is not an
// entry, never crash or hang; what it accepts must format and read back to the same entry.
#include "runtime/gpu/TuningCache.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string key = "0123456789abcdef0123456789abcdef";
  std::string_view text(reinterpret_cast<const char *>(data), size);
  std::string problem;
  std::optional<fusec::TuningEntry> entry = fusec::parseTuningEntry(text, key, problem);
  if (!entry) {
    if (problem.empty())
      std::abort(); // a rejection says why
    return 0;
  }
  std::optional<fusec::TuningEntry> again =
      fusec::parseTuningEntry(fusec::formatTuningEntry(key, *entry), key, problem);
  if (!again || again->config != entry->config || again->us != entry->us ||
      again->defaultUs != entry->defaultUs || again->candidates != entry->candidates)
    std::abort(); // what reads must round-trip
  return 0;
}
