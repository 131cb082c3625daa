// The writer of a row_reduction kernel's CUDA C++, internal to codegen/:
// RowReduction.cpp writes the signature, the loop over rows and the launch;
// RowReductionSweep.cpp writes what runs inside a row (per-row values, the
// passes over its elements, the reductions across threads).
#pragma once

#include "codegen/GeneratedKernel.h"
#include "codegen/RowReductionPlan.h"

#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fusec::rowred {

class Writer {
public:
  Writer(const Op &kernel, const Program &prog, const Schedule &sched, std::string entry)
      : kernel(kernel), prog(prog), sched(sched) {
    out.name = std::move(entry);
  }

  /// The kernel: source, arguments and, for static rows, the launch.
  GeneratedKernel run();

private:
  struct Pass; // the code of one sweep, being written

  // RowReduction.cpp
  void declareParams();
  void writeRowLoop(std::ostream &os);
  std::string comment() const;

  // RowReductionSweep.cpp
  void writeRowSetup(std::ostream &os);
  void writeRowScope(unsigned level, std::ostream &os);
  void writeSweep(unsigned s, std::ostream &os);
  void writePassLoop(const Pass &p, std::ostream &os) const;
  std::string openPassLoop(bool usesCol, std::string &ind, std::ostream &os) const;
  void writeCombine(unsigned s, std::ostream &os);
  unsigned blockReductions() const;
  void need(unsigned node, Pass &p);
  void addStores(unsigned s, Pass &p);
  std::string elementValue(const Node &n, Pass &p);
  std::string rowValue(const Node &n) const;
  /// The C type of node `n`'s register.
  static std::string cType(const Node &n);
  /// The __device__ tables of the program's non-splat constants.
  std::string tablesText() const;
  /// The C expression of Expr node `n` over its arguments' names `a`.
  std::string exprText(const Node &n, const std::vector<std::string> &a) const;
  std::string rowIndex(unsigned mask) const;
  std::string elementIndex(unsigned mask) const;
  std::string rowGuard() const;
  bool isHoisted(const Node &n) const;

  const Op &kernel;
  const Program &prog;
  const Schedule &sched;
  GeneratedKernel out;
  std::vector<std::string> params;
  std::vector<std::string> inNames, outNames;
  std::string shared, hoisted;
};

} // namespace fusec::rowred
