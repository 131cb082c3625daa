// The math of the pointwise ops in CUDA C++: C types, literals and one expression per pointwise op
// of ir/Ops.def, as text over the helpers of device/Pointwise.cuh. Internal to codegen/.
#pragma once

#include "codegen/kir/Kir.h"
#include "ir/Graph.h"

#include <string>
#include <vector>

namespace fusec::cuda {

/// The C type of a kir element of dtype `t`: fusec_f16 and fusec_bf16 (16-bit patterns), float,
/// double, the integer's own type (so that each result wraps), bool.
std::string cType(DType t);
/// The C type of a kir value of `lanes` elements: fusec_v2 ... fusec_v16 for vectors.
std::string cType(kir::Type t);
/// Element `i` of a constant as a literal of its compute type.
std::string constantLiteral(const DenseData &d, size_t i);
/// The value of math `op` over `args` (its operands in compute types).
std::string pointwiseExpr(const kir::MathOp &op, const std::vector<std::string> &args);

} // namespace fusec::cuda
