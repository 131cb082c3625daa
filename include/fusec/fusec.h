// fusec's public header for embedding applications: plain C++, no LLVM or
// CUDA types. The JIT API (build or load a graph, compile, run on a caller's
// stream) grows here; today it identifies the library.
#pragma once

namespace fusec {

/// The library version, "MAJOR.MINOR.PATCH".
const char *version();

} // namespace fusec
