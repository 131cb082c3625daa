// Arena memory planning: the byte offset of every intermediate tensor in one
// arena, sharing bytes between tensors that are never live at once. The
// memory-plan pass runs it for static shapes and records the offsets in the
// IR; the runtime runs it once symbolic dims are bound.
//
// What gets a buffer: every result of a top-level op other than `const`
// (weights live with the model) that is not a graph output (the caller owns
// outputs). Graph inputs are the caller's too.
//
// In-place reuse: an op that may write over an operand (pointwise ops,
// reshape, a `pointwise` kernel of one result whose body is pointwise) takes the buffer of
// an operand that dies at it when the two have the same element count and
// element size, so element i of the result overlays element i of the operand
// (for a kernel, only a result as large as its largest, which spans the
// kernel's index space).
// Such a chain of values is one buffer, live from its first definition to its
// last read.
//
// Placement is greedy by size with best fit: buffers in decreasing size, each
// in the smallest gap (at kArenaAlignment-aligned offsets) between buffers
// already placed whose live ranges overlap its own, else after the highest.
#pragma once

#include "ir/Graph.h"
#include "ir/Liveness.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace fusec {

/// Every arena offset is a multiple of this many bytes.
inline constexpr int64_t kArenaAlignment = 256;

/// One region of the arena and the values that live in it, in definition
/// order (more than one through in-place reuse).
struct ArenaBuffer {
  int64_t offset = 0;
  int64_t bytes = 0;
  LiveRange live; // from the first value's definition to the last value's last read
  std::vector<const Value *> values;
};

struct MemoryPlan {
  std::vector<ArenaBuffer> buffers;
  /// Planned value -> index into `buffers`.
  std::unordered_map<const Value *, unsigned> bufferOf;
  /// Values that took over the buffer of an operand of their op.
  std::unordered_map<const Value *, const Value *> reusedOperand;
  /// Arena size needed: the highest end of any buffer.
  int64_t peakBytes = 0;

  /// The byte offset of `v`, or nullopt when `v` has no arena buffer.
  std::optional<int64_t> offsetOf(const Value &v) const;
};

/// Byte size of a value under some binding of its shape; nullopt if unknown.
using ByteSizeFn = std::function<std::optional<int64_t>(const Value &)>;

/// True for the values that get an arena buffer (see the file comment).
bool needsArenaBuffer(const Value &v);

/// Plans `g`'s top-level values with sizes from `bytesOf`. Returns nullopt
/// when some value that needs a buffer has no size; `unsized` (if given) is
/// then set to it.
std::optional<MemoryPlan> planMemory(const Graph &g, const ByteSizeFn &bytesOf,
                                     const Value **unsized = nullptr);

/// planMemory with sizes from the value types, named dims bound by `dims`.
/// Returns nullopt when a value's shape has an anonymous dim (`?`) or a name
/// `dims` does not bind.
std::optional<MemoryPlan> planMemory(const Graph &g, const std::map<std::string, int64_t> &dims,
                                     const Value **unsized = nullptr);

} // namespace fusec
