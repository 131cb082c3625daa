// The verifier: checks a graph against the op table and reports every error
// it finds, each at its op's location, naming the op and showing the types.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/Graph.h"

namespace fusec {

/// Checks, for every op: operand count, attribute names and kinds, required
/// attributes, operands defined before use, inferred result types equal to
/// the declared ones; and for the graph: unique value names, outputs defined.
/// A `kernel` op's body is verified as a graph of its own: its inputs match
/// the operands, its outputs the results, and it holds no `kernel`.
/// Returns true when no error was reported.
bool verify(const Graph &g, Diagnostics &diags);
bool verify(const Module &m, Diagnostics &diags);

/// Runs the op's inference function on the given operand types and
/// attributes (and body, for a `kernel` op), reporting problems at `loc`.
/// Used by the verifier, the parser (when a result type is omitted) and the
/// builder.
bool inferResultTypes(OpKind kind, const std::vector<TensorType> &operandTypes,
                      const AttrList &attrs, const Loc &loc, Diagnostics &diags,
                      std::vector<TensorType> &results, const Graph *body = nullptr);

/// Checks attribute names and kinds against the op's signature, coercing
/// ambiguous literals (int → float, ints → shape) in place.
bool checkAttributes(OpKind kind, AttrList &attrs, const Loc &loc, Diagnostics &diags);

} // namespace fusec
