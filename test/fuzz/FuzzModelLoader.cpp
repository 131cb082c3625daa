// libFuzzer target: arbitrary bytes as a model file. The loader must reject
// every corrupt file with a diagnostic, never crash, hang, leak or allocate
// by a size it read; whatever loads must round-trip. A small external data
// file (bytes 0..255) lets the fuzzer reach the external-data paths.
#include "test/fuzz/FuzzCommon.h"

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <span>
#include <unistd.h>

static std::string dataPath;

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  const char *tmp = std::getenv("TMPDIR");
  dataPath = std::string(tmp ? tmp : "/tmp") + "/fusec-fuzz-" + std::to_string(getpid()) + ".data";
  std::ofstream out(dataPath, std::ios::binary);
  for (int i = 0; i < 256; ++i)
    out.put(char(i));
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fusec::Diagnostics diags;
  std::unique_ptr<fusec::Module> module =
      fusec::loadModelBuffer(std::span(data, size), "fuzz.fb", dataPath, diags);
  if (!module)
    fusec::fuzz::checkFailureReported(diags);
  else
    fusec::fuzz::checkRoundTrips(*module);
  return 0;
}
