// Reproducers of the compile-path fuzzer as text: the module in the text IR
// after comment lines giving what the oracle needs besides it (the
// pipeline's autocast, the equivalence check's seed, and per graph the size
// of each dim), e.g.
//
//   // fuzz-compile reproducer: --precision=fp32 --equivalence-seed=7
//   // What it shows (any comment lines).
//   // @a.b dims: ?=2 n=3
//   func @a.b(%x: f32[?,n]) -> ...
//
// fuzz-compile-gen writes one from a fuzzer input; fuzz-compile replays an
// input that starts with that first line's prefix as one. A reproducer keeps
// its meaning when the generator changes (a saved byte input does not), and
// is a .fir file that fusec-opt and fusec read as is.
#pragma once

#include "test/fuzz/GraphGenerator.h"

#include <optional>
#include <string>
#include <string_view>

namespace fusec::fuzz {

inline constexpr std::string_view kReproducerPrefix = "// fuzz-compile reproducer:";

std::string reproducerText(const GeneratedModule &gen);

/// The module of a reproducer and its sizes; nullopt, with the reason on
/// stderr, when the text is not one (libFuzzer may mutate one into anything).
std::optional<GeneratedModule> parseReproducer(std::string_view text);

} // namespace fusec::fuzz
