// Live ranges of a graph's values over its op order, for memory planning
// (passes/MemoryPlan.cpp, the runtime when it binds shapes) and codegen.
//
// Program points: the graph's inputs are defined at point 0, op i (0-based,
// in list order) runs at point i + 1, and the graph's outputs are read at
// point numOps + 1. A value is live from the point that defines it to the
// last point that reads it, both inclusive; a value nothing reads is live at
// its definition only. A kernel's body is not looked into: the kernel op
// reads its operands and defines its results like any other op.
#pragma once

#include "ir/Graph.h"

#include <unordered_map>

namespace fusec {

/// An inclusive range of program points.
struct LiveRange {
  unsigned first = 0;
  unsigned last = 0;

  bool overlaps(const LiveRange &o) const { return first <= o.last && o.first <= last; }
};

class Liveness {
public:
  /// Computes the ranges of every input and op result of `g` (not of bodies).
  explicit Liveness(const Graph &g);

  /// The point at which `op` runs; asserts that it is an op of the graph.
  unsigned point(const Op &op) const;
  /// The point after the last op, where graph outputs are read.
  unsigned endPoint() const { return end; }
  /// The live range of an input or op result of the graph.
  LiveRange range(const Value &v) const;
  /// True when `op` is the last reader of `v` and `v` is not a graph output:
  /// `v`'s storage is free once `op` has read it.
  bool diesAt(const Value &v, const Op &op) const;

private:
  std::unordered_map<const Op *, unsigned> points;
  std::unordered_map<const Value *, LiveRange> ranges;
  unsigned end = 0;
};

} // namespace fusec
