// The builder of a row_reduction program, internal to codegen/ (see
// RowReductionPlan.h): RowReductionProgram.cpp walks the body, leaves and
// pointwise ops; RowReductionReduce.cpp turns reductions and
// normalizations into Reduce nodes and the expressions of their formulas.
#pragma once

#include "codegen/templates/rowred/Plan.h"

#include <map>
#include <set>

namespace fusec::rowred {

/// Builds the Program of one kernel body; run() once.
class ProgramBuilder {
public:
  ProgramBuilder(const Op &kernel, const std::string &entry, Diagnostics &diags)
      : kernel(kernel), body(*kernel.body()), entry(entry), diags(diags) {}

  std::optional<Program> run();

private:
  /// Sets the view from the body's first anchor; false after an error.
  bool setView();
  /// Turns one body op into nodes; false after an error at it.
  bool visit(const Op &op);
  bool visitPointwise(const Op &op);
  bool visitReduce(const Op &op);
  bool visitNorm(const Op &op);
  /// Whether anchor `op` reduces the view's rows; reports when not.
  bool checkAnchor(const Op &op);
  /// Records body output `j` as a Store; false after an error.
  bool addStore(unsigned j);
  /// The node of operand `i` of `user`, in the rows' space when `inRows`.
  std::optional<unsigned> operand(const Op &user, unsigned i, bool inRows);
  /// The node of a body input or constant `v` as `user` reads it.
  std::optional<unsigned> leaf(const Value *v, bool inRows, const Op &user);
  unsigned tableLeaf(const Value *v, unsigned mask);
  /// Appends `n`, named `prefix` + the C form of `irName`, made unique.
  /// `base`, or base_1, base_2, ...: a C identifier no other of the kernel has.
  std::string unique(const std::string &base);
  unsigned add(Node n, const std::string &irName, const char *prefix = "v_");
  /// An Expr node computing `what` (its kind and parameters) over `args`;
  /// its mask and level follow from them.
  unsigned expr(DType type, std::vector<unsigned> args, Node what, const std::string &irName);
  /// A Reduce node over elementwise node `input`, accumulating in `type`.
  unsigned reduce(ReduceKind kind, unsigned input, DType type, const std::string &irName);
  void layerNorm(const Op &op, unsigned x, DType t);
  void softmax(const Op &op, unsigned x, DType t);

  const Op &kernel;
  const Graph &body;
  std::string entry;
  Diagnostics &diags;
  Program prog;
  std::map<const Value *, unsigned> computed;
  std::set<const Value *> inRowSpace; // results of reductions without keepdims, and their users
  std::map<std::pair<const Value *, bool>, unsigned> leaves;
  std::set<std::string> names;
};

} // namespace fusec::rowred
