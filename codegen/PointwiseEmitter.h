// The pointwise template's emitter, internal to codegen/: Pointwise.cpp
// declares the kernel's parameters and names its values; PointwiseLoops.cpp
// writes the loops (scalar and vector) and chooses the launch.
#pragma once

#include "codegen/GeneratedKernel.h"
#include "ir/Diagnostics.h"
#include "ir/Graph.h"

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fusec::codegen {

inline bool isSplat(const DenseData &d) {
  size_t size = dtypeSize(d.dtype);
  for (size_t i = 1; i < d.numElements(); ++i)
    if (!std::equal(d.bytes.begin(), d.bytes.begin() + size, d.bytes.begin() + i * size))
      return false;
  return true;
}

inline bool hasAnonymousDim(const Shape &s) {
  for (const Dim &d : s)
    if (d.isAnonymous())
      return true;
  return false;
}

// Note [Pointwise kernel arguments]
// A pointwise kernel's parameters are, in order: one pointer per kernel
// operand (const, in its storage type), one pointer per kernel result, the
// number of output elements (long long), one long long per distinct symbolic
// dim of the output (a named dim once, each `?` once), then, for each operand
// that is not indexed by the flat index, one stride (in elements) per output
// axis that the operand spans and may not broadcast along: its contiguous
// stride, or 0 where its run-time size is 1. GeneratedKernel::args lists
// them with their meaning so that the launcher needs no knowledge of the source.
class PointwiseEmitter {
public:
  PointwiseEmitter(const Op &kernel, std::string_view graphName, Diagnostics &diags)
      : kernel(kernel), body(*kernel.body()), diags(diags) {
    out.name = kernelEntryName(kernel, graphName);
  }

  std::optional<GeneratedKernel> run();

private:
  bool check();
  void declareParams();
  void declareDims();
  std::vector<unsigned> strideAxes(const Shape &operand) const;
  std::vector<std::pair<unsigned, int64_t>> staticStrides(const Shape &operand) const;
  void chooseLaunch(unsigned width);
  std::string stridedIndex(const std::vector<std::pair<unsigned, std::string>> &terms);
  void emitCoordinates(std::ostream &os) const;
  void declareConst(const Op &op);
  void assignNames();
  unsigned vectorWidth() const;
  void emitElement(std::ostream &os, const std::string &indent, bool vector) const;
  void emitScalarLoop(std::ostream &os, const std::string &start) const;
  void emitVectorLoop(std::ostream &os, unsigned width) const;
  std::string comment() const;

  const Op &kernel;
  const Graph &body;
  Diagnostics &diags;
  GeneratedKernel out;
  Namer names;
  Shape space;                                     // the output index space
  std::vector<std::string> dims;                   // per axis: a literal or a parameter
  std::map<const Value *, std::string> pointer;    // kernel operands and results: the parameter
  std::map<const Value *, std::string> local;      // the register holding each value
  std::map<const Value *, std::string> inputIndex; // how an operand is indexed ("i": flat)
  std::map<const Value *, std::string> tableLoad;  // non-splat constants: "table[index]"
  std::set<unsigned> coords;                       // axes whose coordinate the loop needs
  std::vector<std::string> params;
  std::ostringstream tables, hoisted;
};

} // namespace fusec::codegen
