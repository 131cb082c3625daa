// The pointwise template's plan, which both back ends render (the CUDA C++
// emitter in Pointwise*.cpp, the LLVM IR emitter later): what the kernel's
// parameters mean, how each operand is indexed from an element of the output
// index space, the vector width and the launch. Internal to codegen/.
#pragma once

#include "codegen/GeneratedKernel.h"
#include "ir/Diagnostics.h"
#include "ir/Graph.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace fusec::codegen {

/// A size or stride known when the kernel is generated, or the parameter
/// (an index into PointwisePlan::args) that carries it.
struct PointwiseScalar {
  std::optional<int64_t> value;
  unsigned arg = 0;
};

/// How an operand (or a constant table) is indexed for output element i:
/// by i itself, or by the sum over `terms` of coordinate(axis) * stride
/// (0 for no terms: a broadcast scalar).
struct PointwiseIndex {
  bool flat = false;
  std::vector<std::pair<unsigned, PointwiseScalar>> terms; ///< (output axis, stride)
};

struct PointwisePlan {
  std::string entry;                             ///< the kernel's entry point
  Shape space;                                   ///< the output index space
  std::vector<PointwiseScalar> extents;          ///< per output axis
  std::vector<KernelArg> args;                   ///< Note [Pointwise kernel arguments]
  std::map<const Value *, unsigned> pointerArg;  ///< body inputs and kernel results
  std::map<const Value *, PointwiseIndex> index; ///< used body inputs, non-splat constants
  std::set<unsigned> coords;                     ///< output axes whose coordinate some index needs
  unsigned width = 1;                            ///< elements a vector on the vector path; 1: none
  std::optional<LaunchConfig> launch;            ///< set for static shapes
  Namer names;                                   ///< holds the parameters' names
};

/// The plan of `kernel` (template "pointwise"); nullopt after reporting an
/// op the template cannot run or results of different shapes.
std::optional<PointwisePlan> planPointwise(const Op &kernel, const std::string &entry,
                                           Diagnostics &diags);

} // namespace fusec::codegen
