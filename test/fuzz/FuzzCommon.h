// Shared by the fuzz targets: the round-trip oracle. Anything that loads must
// survive print -> parse and serialize -> load unchanged; a failure there is
// a bug (a crash for libFuzzer), not a user error.
#pragma once

#include "frontend/ModelFile.h"
#include "ir/TextFormat.h"

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

namespace fusec::fuzz {

[[noreturn]] inline void fail(const char *what, const Diagnostics &diags) {
  std::ostringstream os;
  diags.print(os);
  std::fprintf(stderr, "fuzz oracle failed: %s\n%s", what, os.str().c_str());
  std::abort();
}

inline std::string printed(const Module &m) {
  std::ostringstream os;
  printModule(m, os);
  return os.str();
}

/// A failed load must say why.
inline void checkFailureReported(const Diagnostics &diags) {
  if (!diags.hasErrors())
    fail("load failed without an error", diags);
}

/// `m` loaded: its text and its model file must both load back to the same text.
inline void checkRoundTrips(const Module &m) {
  std::string text = printed(m);
  Diagnostics diags;
  std::unique_ptr<Module> fromText = parseModule(text, "printed.fir", diags);
  if (!fromText)
    fail("printed text does not parse", diags);
  if (printed(*fromText) != text)
    fail("print -> parse -> print changed the text", diags);
  if (!storableAsModelFile(m))
    return;
  std::vector<uint8_t> bytes = serializeModel(m);
  std::unique_ptr<Module> fromFile = loadModelBuffer(bytes, "written.fb", "", diags);
  if (!fromFile)
    fail("written model file does not load", diags);
  if (printed(*fromFile) != text)
    fail("serialize -> load changed the module", diags);
}

} // namespace fusec::fuzz
