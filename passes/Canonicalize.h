// Internals of the canonicalize pass, shared by its files: the rewriter that
// patterns create ops through, the pattern table (CanonicalizePatterns.cpp),
// and the op key that CSE hashes and compares (CanonicalizeCse.cpp).
#pragma once

#include "ir/Builder.h"
#include "passes/PassManager.h"

#include <vector>

namespace fusec::canonicalize {

/// Creates ops just before the op being rewritten (the anchor), at its
/// location, with inferred result types; remembers them so that a rejected
/// rewrite can be undone.
class Rewriter {
public:
  Rewriter(Graph &g, Op &anchor);

  /// The new op's result, or null when its types do not infer (the rewrite
  /// then does not apply; nothing is reported).
  Value *create(OpKind kind, const std::vector<Value *> &operands, AttrList attrs = {});
  Value *constant(DenseRef data);

  const std::vector<Op *> &created() const { return createdOps; }
  /// Erases the created ops, newest first; they must be unused.
  void discard();

private:
  Value *record(Value *v);

  Graph &graph;
  Diagnostics scratch; // inference failures only mean "this rewrite does not apply"
  Builder builder;
  std::vector<Op *> createdOps;
};

/// A local rewrite: the value that replaces the anchor's result, or null
/// when it does not apply. It may return a value of another type; the
/// driver then drops the rewrite (a rewrite never changes a value's type).
using Pattern = Value *(*)(Rewriter &rw, const Op &op);

/// The replacement given by the first pattern for op's kind that applies,
/// or null. Constant folding is not a pattern; the driver does it.
Value *applyPatterns(Rewriter &rw, const Op &op);

/// CSE's key: kind, operands (by identity), attributes (defaults filled in,
/// dense values by content) and result types. Equal ops compute equal values.
size_t hashOp(const Op &op);
bool opsEquivalent(const Op &a, const Op &b);

} // namespace fusec::canonicalize
