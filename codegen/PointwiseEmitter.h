// The pointwise template's CUDA C++ emitter, internal to codegen/: renders a
// PointwisePlan. Pointwise.cpp writes the signature, names the values and
// declares the constants; PointwiseLoops.cpp writes the loops (scalar and
// vector).
#pragma once

#include "codegen/GeneratedKernel.h"
#include "codegen/PointwisePlan.h"
#include "ir/Graph.h"

#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace fusec::codegen {

class PointwiseEmitter {
public:
  PointwiseEmitter(const Op &kernel, PointwisePlan plan)
      : kernel(kernel), body(*kernel.body()), plan(std::move(plan)) {}

  GeneratedKernel run();

private:
  std::string param(const KernelArg &a) const;
  std::string scalar(const PointwiseScalar &s) const;
  std::string indexExpr(const PointwiseIndex &index) const;
  const std::string &pointer(const Value *v) const { return plan.args[plan.pointerArg.at(v)].name; }
  bool isFlat(const Value *v) const {
    auto it = plan.index.find(v);
    return it != plan.index.end() && it->second.flat;
  }
  void emitCoordinates(std::ostream &os) const;
  void declareConst(const Op &op);
  void assignNames();
  void emitElement(std::ostream &os, const std::string &indent, bool vector) const;
  void emitScalarLoop(std::ostream &os, const std::string &start) const;
  void emitVectorLoop(std::ostream &os) const;
  std::string comment() const;

  const Op &kernel;
  const Graph &body;
  PointwisePlan plan;
  std::map<const Value *, std::string> local;     // the register holding each value
  std::map<const Value *, std::string> tableLoad; // non-splat constants: "table[index]"
  std::ostringstream tables, hoisted;
};

} // namespace fusec::codegen
