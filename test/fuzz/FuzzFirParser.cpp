// libFuzzer target: arbitrary bytes as .fir text. The parser and verifier
// must report bad input as diagnostics, never crash, hang or leak; whatever
// parses must round-trip through text and through a model file.
#include "test/fuzz/FuzzCommon.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  fusec::Diagnostics diags;
  std::unique_ptr<fusec::Module> module = fusec::parseModule(text, "fuzz.fir", diags);
  if (!module)
    fusec::fuzz::checkFailureReported(diags);
  else
    fusec::fuzz::checkRoundTrips(*module);
  return 0;
}
