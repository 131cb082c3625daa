// libFuzzer target: arbitrary bytes as a model file. The loader must reject
// every corrupt file with a diagnostic, never crash, hang, leak or allocate
// by a size it read; whatever loads must round-trip. A small external data
// file (bytes 0..255) lets the fuzzer reach the external-data paths.
//
// A mutated model file almost always fails its checksum (Note [File
// checksums]), which would leave the loader's deeper checks unfuzzed. So
// each input is loaded as it is, then, when it verifies as a flatbuffer and
// has a checksum, loaded again with its checksum recomputed, as if the
// damage had been written that way, and with the data file's checksum
// recorded, so that the external-data checks are reached too.
#include "frontend/Checksum.h"
#include "test/fuzz/FuzzCommon.h"

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <numeric>
#include <span>
#include <unistd.h>
#include <vector>

static std::string dataPath;
static uint64_t dataChecksum;

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  const char *tmp = std::getenv("TMPDIR");
  dataPath = std::string(tmp ? tmp : "/tmp") + "/fusec-fuzz-" + std::to_string(getpid()) + ".data";
  std::vector<uint8_t> data(256);
  std::iota(data.begin(), data.end(), 0);
  std::ofstream(dataPath, std::ios::binary).write(reinterpret_cast<const char *>(data.data()), 256);
  dataChecksum = fusec::checksumOf(data);
  return 0;
}

static void load(std::span<const uint8_t> bytes) {
  fusec::Diagnostics diags;
  std::unique_ptr<fusec::Module> module = fusec::loadModelBuffer(bytes, "fuzz.fb", dataPath, diags);
  if (!module)
    fusec::fuzz::checkFailureReported(diags);
  else
    fusec::fuzz::checkRoundTrips(*module);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  load(std::span(data, size));
  std::vector<uint8_t> resealed(data, data + size); // 8-byte aligned, as resealing needs
  if (fusec::resealModelBuffer(resealed, dataChecksum))
    load(resealed);
  return 0;
}
