// Seeded random well-formed modules for the compile-path fuzzer: the fuzzer's
// bytes (read through FuzzedDataProvider) choose every decision, so every
// input is a module that verifies, and a mutation of the bytes is a nearby
// module.
//
// What it makes: one to three graphs with odd names (`@a.b`, `@a_b`,
// `@a$b`), each of typed inputs (every dtype; static, named and `?` dims;
// rank 0 to 4, rank-4 ones sometimes tagged {nchw} or {nhwc}), ops of every
// kind of ir/Ops.def with valid attributes (broadcasting partners, kernel ops
// with a body under any template, several results), values with odd names
// (`%y.1`, `%y_1`, `%y$1`) and outputs (op results, inputs, repeats).
//
// Valid by construction, at compile time and at run time: every value
// carries, besides its symbolic type, its concrete sizes once symbolic dims
// are bound (named dims to their sizes, every input's `?` to one size), and
// an op is kept only when its inferred type is valid both symbolically and
// for the concrete sizes (ir's own inference run on both). What inference
// cannot see (an integer division by zero, a reduce_max over nothing) is left
// to the reference, which reports it; the fuzzer then skips the input.
//
// Limits: one size for every `?` of a graph's inputs (what
// EquivalenceOptions can bind); constants are small. Big modules (a long
// pointwise chain, a concat of thousands of operands) are a mode of their
// own, for the pass-time and parameter-space oracles: one costs seconds.
#pragma once

#include "ir/Graph.h"
#include "passes/PassManager.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

class FuzzedDataProvider;

namespace fusec::fuzz {

/// The bounds of one generated module.
struct GeneratorLimits {
  unsigned maxGraphs = 3;
  unsigned maxOpsPerGraph = 10;
  /// Every module big: one graph of a pointwise chain of 1,000 to 6,000
  /// ops or a concat of 1,000 to 6,000 operands (see the file comment).
  bool big = false;
};

/// A generated module and the sizes that make it concrete.
struct GeneratedModule {
  std::unique_ptr<Module> module;
  /// Per graph: the size of each named dim, and of every input `?` under "?".
  std::vector<std::map<std::string, int64_t>> dims;
  /// Per graph, per input: its concrete shape under `dims`.
  std::vector<std::vector<std::vector<int64_t>>> inputShapes;
  /// The pipeline's autocast (mostly FP32) and the seed of the equivalence check's inputs.
  PrecisionChoice precision = PrecisionChoice::FP32;
  uint64_t seed = 0;
};

/// Reads decisions from `data` until the module is complete (an exhausted
/// provider reads zeros, which end every list). The module verifies.
GeneratedModule generateModule(FuzzedDataProvider &data, const GeneratorLimits &limits = {});

} // namespace fusec::fuzz
