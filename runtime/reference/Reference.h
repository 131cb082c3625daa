// The CPU reference executor: runs any verified graph on the host. It is
// the oracle for every GPU and pass test, so it is written to be obviously
// right first: values are stored in their dtype (f16/bf16 rounded to nearest
// even), pointwise math is done in double and rounded on store (what f32
// hardware arithmetic gives for + - * / sqrt), and reductions and
// contractions accumulate in double.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/Graph.h"
#include "ir/Specialize.h"
#include "runtime/reference/MemoryBudget.h"
#include "runtime/reference/Tensor.h"

#include <map>
#include <string>
#include <vector>

namespace fusec {

/// Binds the graph's symbolic input dims to the given tensors' shapes,
/// reporting dtype, rank or size mismatches (named dims must agree across
/// inputs). Returns false on error.
bool bindInputs(const Graph &g, const std::vector<Tensor> &inputs, DimBindings &bindings,
                Diagnostics &diags);

/// The static shape of `type` under `bindings`; asserts every symbol is bound.
std::vector<int64_t> resolveShape(const Shape &shape, const DimBindings &bindings);

/// A seeded random value for graph input `input` at the given shape.
/// Note [Random inputs]: values are uniform in [-1, 1), except weights of
/// contractions (matmul's b, linear's w, conv2d's w), which are scaled by
/// 1/√K as real initializers are: with unscaled weights a deep graph's
/// activations grow to the hundreds, softmax saturates, and no low-precision
/// rewrite could stay within its tolerance; and a batch_norm's running
/// variance, uniform in [0.5, 1.5) (a negative one is no variance at all);
/// and a gather's (or gather_elements') integer indices into an axis of static extent d, uniform
/// over [-d, d) (integers are otherwise -1, 0 or 1).
/// Reports "input '%x' of type ... needs more than 4 GiB" and returns false
/// when the shape is too large for one host tensor.
bool randomInput(const Value &input, const std::vector<int64_t> &shape, uint64_t seed, Tensor &out,
                 Diagnostics &diags);

/// Runs `g` on `inputs`, filling `outputs` (one per graph output). Errors
/// (bad inputs, a shape that turns out inconsistent at run time, results
/// beyond `budget`, by default this machine's memory: Note [Memory budget])
/// are reported at the offending op and make it return false. The tensors
/// it holds are charged to `budget` while they live; the outputs are the
/// caller's.
bool runReference(const Graph &g, const std::vector<Tensor> &inputs, std::vector<Tensor> &outputs,
                  Diagnostics &diags, MemoryBudget *budget = nullptr);

} // namespace fusec
