// Shape and type inference for every op of ir/Ops.def: one function per row's
// `infer` column, each following the op's section of docs/ir.md exactly.
// OpTable.cpp points the table's rows at these; everything else calls them
// through opInfo(kind).infer or inferResultTypes (ir/Verifier.h).
#pragma once

#include "ir/OpTable.h"

#include <optional>

namespace fusec {

/// Whether two dims may be equal at run time: a `?` agrees with anything, a
/// named dim only with the same name, a static dim only with the same value.
bool dimsAgree(const Dim &a, const Dim &b);

/// Numpy broadcasting of two shapes, right-aligned. A static 1 broadcasts to
/// the other dim; otherwise the dims must agree (dimsAgree), and the result
/// keeps the more precise of the two (static over named over `?`). Returns
/// nullopt when the shapes do not broadcast.
std::optional<Shape> broadcastShapes(const Shape &a, const Shape &b);

// The inference functions named in Ops.def; see InferFn in ir/OpTable.h.
#define OP(Id, spelling, cls, minOperands, maxOperands, infer, attrs)                              \
  bool infer(const InferContext &ctx, std::vector<TensorType> &results,                            \
             const std::function<void(std::string)> &error);
#include "ir/Ops.def"

} // namespace fusec
