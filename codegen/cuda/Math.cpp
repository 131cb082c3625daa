// The math of the pointwise template (see PointwiseMath.h). Each pointwise op
// of ir/Ops.def is one case that returns a C expression; semantics follow
// docs/ir.md: max/min propagate NaN, integer ops wrap and divide toward zero,
// casts round to nearest even, truncate and saturate (NaN -> 0), and
// anything -> bool is `x != 0`. Float math runs in f32 registers (f64 for
// f64), the precision the IR promises for stored f16/bf16/f32 values.
#include "codegen/cuda/Math.h"

#include "ir/Assert.h"
#include "ir/TextLiterals.h"

#include <charconv>
#include <cmath>
#include <cstring>

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

/// Binary arithmetic: add sub mul div pow max min.
std::string arithmeticExpr(OpKind k, DType t, const std::string &a, const std::string &b) {
  if (isInteger(t)) {
    switch (k) {
    case OpKind::Add:
      return call("fusec_add_i", a, b);
    case OpKind::Sub:
      return call("fusec_sub_i", a, b);
    case OpKind::Mul:
      return call("fusec_mul_i", a, b);
    case OpKind::Div:
      return call("fusec_div_i", a, b);
    case OpKind::Pow:
      return call("fusec_pow_i", a, b);
    case OpKind::Max:
      return a + " < " + b + " ? " + b + " : " + a;
    case OpKind::Min:
      return b + " < " + a + " ? " + b + " : " + a;
    default:
      break;
    }
  }
  switch (k) {
  case OpKind::Add:
    return infix(a, "+", b);
  case OpKind::Sub:
    return infix(a, "-", b);
  case OpKind::Mul:
    return infix(a, "*", b);
  case OpKind::Div:
    return infix(a, "/", b);
  case OpKind::Pow:
    return call(mathFn(t, "pow"), a, b);
  case OpKind::Max:
    return call(helper(t, "max"), a, b);
  case OpKind::Min:
    return call(helper(t, "min"), a, b);
  default:
    FUSEC_ASSERT(false, "not a binary arithmetic op");
  }
}

std::string compareExpr(OpKind k, const std::string &a, const std::string &b) {
  switch (k) {
  case OpKind::Eq:
    return infix(a, "==", b);
  case OpKind::Ne:
    return infix(a, "!=", b);
  case OpKind::Lt:
    return infix(a, "<", b);
  case OpKind::Le:
    return infix(a, "<=", b);
  case OpKind::Gt:
    return infix(a, ">", b);
  case OpKind::Ge:
    return infix(a, ">=", b);
  default:
    FUSEC_ASSERT(false, "not a comparison");
  }
}

std::string unaryExpr(const kir::MathOp &op, DType t, const std::string &x) {
  bool isInt = isInteger(t);
  switch (op.kind) {
  case OpKind::Neg:
    return isInt ? call("fusec_neg_i", x) : "-" + x;
  case OpKind::Abs:
    return call(isInt ? "fusec_abs_i" : mathFn(t, "fabs"), x);
  case OpKind::Relu: // a NaN stays NaN
    return x + " < 0 ? " + (isInt ? "0" : floatLiteral(0, t == DType::F64)) + " : " + x;
  case OpKind::Exp:
    return expExpr(t, x);
  case OpKind::Log:
    return call(mathFn(t, "log"), x);
  case OpKind::Sqrt:
    return call(mathFn(t, "sqrt"), x);
  case OpKind::Rsqrt:
    return call(mathFn(t, "rsqrt"), x);
  case OpKind::Tanh:
    return call(mathFn(t, "tanh"), x);
  case OpKind::Erf:
    return call(mathFn(t, "erf"), x);
  case OpKind::Sigmoid:
    return call(helper(t, "sigmoid"), x);
  case OpKind::Silu:
    return x + " * " + call(helper(t, "sigmoid"), x);
  case OpKind::Gelu:
    if (op.tanh)
      return call(helper(t, "gelu_tanh"), x);
    // Note [Math of f16 and bf16 values] in device/Pointwise.cuh
    return call(isNarrowFloat(t) ? "fusec_gelu_narrow_f32" : helper(t, "gelu"), x);
  default:
    FUSEC_ASSERT(false, "not a unary pointwise op");
  }
}

/// Converts a value of float dtype `from` (f32 or f64 registers) to `to`.
std::string castFromFloat(DType from, DType to, const std::string &x) {
  std::string wide = from == DType::F64 ? x : "(double)" + x;
  switch (to) {
  case DType::F32:
    return from == DType::F64 ? "(float)" + x : x;
  case DType::F64:
    return wide;
  case DType::F16: // rounds to the f16 grid, kept in f32 registers
    return from == DType::F64 ? call("fusec_f16_to_f32", call("fusec_f64_to_f16", x))
                              : call("fusec_f16_to_f32", call("fusec_f32_to_f16", x));
  case DType::BF16:
    return from == DType::F64 ? call("fusec_bf16_to_f32", call("fusec_f64_to_bf16", x))
                              : call("fusec_bf16_to_f32", call("fusec_f32_to_bf16", x));
  case DType::I32:
    return call("fusec_f64_to_i32", wide);
  case DType::I64:
    return call("fusec_f64_to_i64", wide);
  case DType::I8:
    return call("fusec_f64_to_i8", wide);
  case DType::Bool:
    return x + " != 0";
  }
  FUSEC_ASSERT(false, "unknown dtype");
}

} // namespace

std::string_view computeType(DType t) {
  switch (t) {
  case DType::F32:
  case DType::F16:
  case DType::BF16:
    return "float";
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

std::string_view storageType(DType t) {
  switch (t) {
  case DType::F16:
    return "fusec_f16";
  case DType::BF16:
    return "fusec_bf16";
  case DType::Bool:
    return "unsigned char";
  default:
    return computeType(t);
  }
}

std::string loadExpr(DType t, const std::string &ptr, const std::string &index) {
  std::string element = ptr + "[" + index + "]";
  switch (t) {
  case DType::F16:
    return call("fusec_f16_to_f32", element);
  case DType::BF16:
    return call("fusec_bf16_to_f32", element);
  case DType::Bool:
    return element + " != 0";
  default:
    return element;
  }
}

std::string storeExpr(DType t, const std::string &value) {
  switch (t) {
  case DType::F16:
    return call("fusec_f32_to_f16", value);
  case DType::BF16:
    return call("fusec_f32_to_bf16", value);
  case DType::Bool:
    return "(unsigned char)" + value;
  default:
    return value;
  }
}

std::string castExpr(DType from, DType to, const std::string &x) {
  if (from == to)
    return x;
  if (isFloat(from))
    return castFromFloat(from == DType::F64 ? DType::F64 : DType::F32, to, x);
  if (to == DType::Bool)
    return x + " != 0";
  if (from == DType::Bool)
    return "(" + std::string(computeType(to)) + ")(" + x + " ? 1 : 0)";
  if (isNarrowFloat(to)) // integer -> f64 is exact below 2^53; rounds once to f16/bf16
    return castFromFloat(DType::F64, to, "(double)" + x);
  return "(" + std::string(computeType(to)) + ")" + x; // wraps, or rounds to nearest
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

std::string expExpr(DType t, const std::string &x) {
  // Note [Math of f16 and bf16 values] in device/Pointwise.cuh
  return call(isNarrowFloat(t) ? "fusec_exp_narrow_f32" : mathFn(t, "exp"), x);
}

std::string pointwiseExpr(const kir::MathOp &op, const std::vector<std::string> &args) {
  DType t = op.operand;
  if (op.kind == OpKind::Cast)
    return castExpr(t, op.result, args[0]);
  if (op.kind == OpKind::Where)
    return args[0] + " ? " + args[1] + " : " + args[2];
  if (isComparison(op.kind))
    return compareExpr(op.kind, args[0], args[1]);
  if (isBinaryArithmetic(op.kind))
    return arithmeticExpr(op.kind, t, args[0], args[1]);
  return unaryExpr(op, t, args[0]);
}

std::string pointwiseExpr(const Op &op, const std::vector<std::string> &args) {
  return pointwiseExpr(kir::mathOf(op), args);
}

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

} // namespace fusec::cuda
