// The math of the pointwise template: C types, loads, stores, casts and one
// expression per pointwise op of ir/Ops.def, as CUDA C++ text over the
// helpers of device/Pointwise.cuh. Internal to codegen/.
#pragma once

#include "codegen/kir/Kir.h"
#include "ir/Graph.h"

#include <string>
#include <string_view>
#include <vector>

namespace fusec::cuda {

/// The register type math runs in: float for f32/f16/bf16, double for f64,
/// the integer's own type for integers (so each result wraps), bool.
std::string_view computeType(DType t);
/// The element type in memory (f16/bf16 as 16-bit patterns).
std::string_view storageType(DType t);
/// `ptr[index]` widened to computeType(t).
std::string loadExpr(DType t, const std::string &ptr, const std::string &index);
/// `value` (of computeType(t)) narrowed to storageType(t).
std::string storeExpr(DType t, const std::string &value);
/// `x` (of computeType(from)) converted as `cast` specifies, as computeType(to).
std::string castExpr(DType from, DType to, const std::string &x);
/// A float literal that reads back to `v` in its C type (double when
/// `isDouble`, else float); NaN and infinities as bit patterns.
std::string floatLiteral(double v, bool isDouble);
/// Element `i` of a constant as a literal of computeType(d.dtype).
std::string constantLiteral(const DenseData &d, size_t i);
/// exp(x) for `x` of computeType(t), to the precision dtype `t` promises.
std::string expExpr(DType t, const std::string &x);
/// The value of math `op` over `args` (its operands as computeType).
std::string pointwiseExpr(const kir::MathOp &op, const std::vector<std::string> &args);
/// The value of pointwise `op` over `args` (its operands as computeType).
std::string pointwiseExpr(const Op &op, const std::vector<std::string> &args);

} // namespace fusec::cuda
