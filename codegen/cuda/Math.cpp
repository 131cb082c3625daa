// The math of the pointwise ops in CUDA C++ (Math.h). Each pointwise op of ir/Ops.def is one case
// that returns a C expression; semantics follow docs/ir.md: max/min propagate NaN, integer ops
// wrap and divide toward zero, casts round to nearest even, truncate and saturate (NaN -> 0), and
// anything -> bool is `x != 0`. Float math runs in f32 registers (f64 for f64), the precision the
// IR promises for stored f16/bf16/f32 values.
#include "codegen/cuda/Math.h"

#include "ir/Assert.h"
#include "ir/TextLiterals.h"

#include <charconv>
#include <cmath>

namespace fusec::cuda {

namespace {

/// "expf" for f32 math, "exp" for f64 math.
std::string mathFn(DType t, std::string_view name) {
  return std::string(name) + (t == DType::F64 ? "" : "f");
}

/// "fusec_max_f32" / "fusec_max_f64": helpers that come in both widths.
std::string helper(DType t, std::string_view name) {
  return "fusec_" + std::string(name) + (t == DType::F64 ? "_f64" : "_f32");
}

std::string call(std::string_view fn, const std::string &a) {
  return std::string(fn) + "(" + a + ")";
}

std::string call(std::string_view fn, const std::string &a, const std::string &b) {
  return std::string(fn) + "(" + a + ", " + b + ")";
}

std::string infix(const std::string &a, std::string_view op, const std::string &b) {
  return a + " " + std::string(op) + " " + b;
}

std::string intLiteral(int64_t v) {
  if (v == INT64_MIN)
    return "(-9223372036854775807LL - 1)";
  return std::to_string(v) + "LL";
}

/// A float literal that reads back to `v` in its C type (double when `isDouble`, else float); NaN
/// and infinities as bit patterns.
std::string floatLiteral(double v, bool isDouble) {
  if (std::isnan(v))
    return isDouble ? "__longlong_as_double(0x7ff8000000000000LL)" : "__int_as_float(0x7fc00000)";
  if (std::isinf(v)) {
    std::string inf =
        isDouble ? "__longlong_as_double(0x7ff0000000000000LL)" : "__int_as_float(0x7f800000)";
    return v < 0 ? "-" + inf : inf;
  }
  char buf[64];
  auto res = isDouble ? std::to_chars(buf, buf + sizeof buf, v)
                      : std::to_chars(buf, buf + sizeof buf, float(v));
  std::string s(buf, res.ptr);
  if (s.find_first_of(".e") == std::string::npos)
    s += ".0";
  return isDouble ? s : s + "f";
}

/// Binary arithmetic: add sub mul div pow max min.
std::string arithmeticExpr(OpKind k, DType t, const std::string &a, const std::string &b) {
  std::string_view name = opInfo(k).spelling;
  if (isInteger(t) && k == OpKind::Max)
    return a + " < " + b + " ? " + b + " : " + a;
  if (isInteger(t) && k == OpKind::Min)
    return b + " < " + a + " ? " + b + " : " + a;
  if (isInteger(t)) // fusec_add_i ... fusec_pow_i
    return call("fusec_" + std::string(name) + "_i", a, b);
  if (k == OpKind::Max || k == OpKind::Min)
    return call(helper(t, name), a, b);
  if (k == OpKind::Pow)
    return call(mathFn(t, name), a, b);
  static constexpr std::string_view kOperators[] = {"+", "-", "*", "/"}; // add sub mul div
  return infix(a, kOperators[size_t(k) - size_t(OpKind::Add)], b);
}

/// Converts a value of float dtype `from` (f32 or f64 registers) to `to`.
std::string castFromFloat(DType from, DType to, const std::string &x) {
  std::string wide = from == DType::F64 ? x : "(double)" + x;
  switch (to) {
  case DType::F32:
    return from == DType::F64 ? "(float)" + x : x;
  case DType::F64:
    return wide;
  case DType::F16:
  case DType::BF16: { // rounds to the f16/bf16 grid, kept in f32 registers
    std::string name(dtypeName(to));
    std::string narrow = call("fusec_" + std::string(dtypeName(from)) + "_to_" + name, x);
    return call("fusec_" + name + "_to_f32", narrow);
  }
  case DType::I32:
  case DType::I64:
  case DType::I8: // truncates and saturates, NaN -> 0
    return call("fusec_f64_to_" + std::string(dtypeName(to)), wide);
  case DType::Bool:
    return x + " != 0";
  }
  FUSEC_ASSERT(false, "unknown dtype");
}

/// `x` (of compute type `from`) converted as `cast` specifies, to compute type `to`.
std::string castExpr(DType from, DType to, const std::string &x) {
  if (from == to)
    return x;
  if (isFloat(from))
    return castFromFloat(from == DType::F64 ? DType::F64 : DType::F32, to, x);
  if (to == DType::Bool)
    return x + " != 0";
  if (from == DType::Bool)
    return "(" + cType(kir::computeType(to)) + ")(" + x + " ? 1 : 0)";
  if (isNarrowFloat(to)) // integer -> f64 is exact below 2^53; rounds once to f16/bf16
    return castFromFloat(DType::F64, to, "(double)" + x);
  return "(" + cType(kir::computeType(to)) + ")" + x; // wraps, or rounds to nearest
}

} // namespace

std::string cType(DType t) {
  switch (t) {
  case DType::F32:
    return "float";
  case DType::F16:
    return "fusec_f16";
  case DType::BF16:
    return "fusec_bf16";
  case DType::F64:
    return "double";
  case DType::I32:
    return "int";
  case DType::I64:
    return "long long";
  case DType::I8:
    return "signed char";
  case DType::Bool:
    return "bool";
  }
  FUSEC_ASSERT(false, "unknown dtype");
}

std::string cType(kir::Type t) {
  if (t.lanes == 1)
    return cType(t.elem);
  return "fusec_v" + std::to_string(t.lanes * dtypeSize(t.elem));
}

std::string constantLiteral(const DenseData &d, size_t i) {
  if (d.numElements() == 0) // a kernel reading an empty constant runs over no elements
    return isFloat(d.dtype)         ? floatLiteral(0, d.dtype == DType::F64)
           : d.dtype == DType::Bool ? "false"
                                    : intLiteral(0);
  if (isFloat(d.dtype))
    return floatLiteral(d.elementAsDouble(i), d.dtype == DType::F64);
  if (d.dtype == DType::Bool)
    return elementBits(d, i) ? "true" : "false";
  unsigned bits = 8 * dtypeSize(d.dtype);
  uint64_t raw = elementBits(d, i);
  int64_t v = bits == 64 ? int64_t(raw) : int64_t(raw << (64 - bits)) >> (64 - bits);
  return intLiteral(v);
}

std::string pointwiseExpr(const kir::MathOp &op, const std::vector<std::string> &args) {
  DType t = op.operand;
  const std::string &x = args[0];
  bool isInt = isInteger(t);
  switch (op.kind) {
  case OpKind::Neg:
    return isInt ? call("fusec_neg_i", x) : "-" + x;
  case OpKind::Abs:
    return call(isInt ? "fusec_abs_i" : mathFn(t, "fabs"), x);
  case OpKind::Relu: // a NaN stays NaN
    return x + " < 0 ? " + (isInt ? "0" : floatLiteral(0, t == DType::F64)) + " : " + x;
  case OpKind::Exp:
    if (isNarrowFloat(t)) // Note [Math of f16 and bf16 values] in device/Pointwise.cuh
      return call("fusec_exp_narrow_f32", x);
    [[fallthrough]];
  case OpKind::Log:
  case OpKind::Sqrt:
  case OpKind::Rsqrt:
  case OpKind::Tanh:
  case OpKind::Erf:
  case OpKind::Sin:
  case OpKind::Cos:
  case OpKind::Floor:
  case OpKind::Ceil:
    return call(mathFn(t, opInfo(op.kind).spelling), x);
  case OpKind::Round: // rint: to nearest, ties to even (cvt.rni)
    return call(mathFn(t, "rint"), x);
  case OpKind::Sign: // a zero stays itself, a NaN stays NaN
    if (isInt)
      return "(" + x + " > 0) - (" + x + " < 0)";
    return x + " > 0 ? " + floatLiteral(1, t == DType::F64) + " : " + x + " < 0 ? " +
           floatLiteral(-1, t == DType::F64) + " : " + x;
  case OpKind::Sigmoid:
    return call(helper(t, "sigmoid"), x);
  case OpKind::Silu:
    return x + " * " + call(helper(t, "sigmoid"), x);
  case OpKind::Gelu:
    if (op.tanh)
      return call(helper(t, "gelu_tanh"), x);
    // Note [Math of f16 and bf16 values] in device/Pointwise.cuh
    return call(isNarrowFloat(t) ? "fusec_gelu_narrow_f32" : helper(t, "gelu"), x);
  case OpKind::Add:
  case OpKind::Sub:
  case OpKind::Mul:
  case OpKind::Div:
  case OpKind::Pow:
  case OpKind::Max:
  case OpKind::Min:
    return arithmeticExpr(op.kind, t, x, args[1]);
  case OpKind::Eq:
  case OpKind::Ne:
  case OpKind::Lt:
  case OpKind::Le:
  case OpKind::Gt:
  case OpKind::Ge: {
    static constexpr std::string_view kOperators[] = {"==", "!=", "<", "<=", ">", ">="};
    return infix(x, kOperators[size_t(op.kind) - size_t(OpKind::Eq)], args[1]);
  }
  case OpKind::Cast:
    return castExpr(t, op.result, x);
  case OpKind::Where:
    return x + " ? " + args[1] + " : " + args[2];
#define FUSEC_CASES_Pointwise(Id)
#include "ir/OpCases.def"
    break;
  }
  FUSEC_ASSERT(false, "not a pointwise op");
}

} // namespace fusec::cuda
