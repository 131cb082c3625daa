// Device helpers of the pointwise template, prepended to every generated
// pointwise kernel. Self-contained: no toolkit headers, so NVRTC compiles it
// fast. f16 and bf16 are stored as 16-bit patterns and widened to f32 for
// math; narrowing uses the hardware's round-to-nearest-even (inline PTX).
// f64 values narrow to f16/bf16 through an f32 rounded to odd, which is
// exact: f32 keeps more than two extra bits, so no value is rounded twice.
// Integer math is int64 with wrapping (unsigned arithmetic, no UB); float to
// integer conversions truncate and saturate with NaN -> 0 (PTX cvt.rzi), as
// docs/ir.md "cast" specifies.

typedef unsigned short fusec_f16;
typedef unsigned short fusec_bf16;

__device__ __forceinline__ float fusec_f16_to_f32(fusec_f16 h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
}

__device__ __forceinline__ float fusec_bf16_to_f32(fusec_bf16 b) {
  return __uint_as_float(((unsigned)b) << 16);
}

__device__ __forceinline__ fusec_f16 fusec_f32_to_f16(float f) {
  fusec_f16 h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}

__device__ __forceinline__ fusec_bf16 fusec_f32_to_bf16(float f) {
  fusec_bf16 b;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(b) : "f"(f));
  return b;
}

// The f32 nearest to x toward zero, with its last bit set when inexact.
__device__ __forceinline__ float fusec_f64_to_f32_odd(double x) {
  float f;
  asm("cvt.rz.f32.f64 %0, %1;" : "=f"(f) : "d"(x));
  if ((double)f != x && x == x)
    f = __uint_as_float(__float_as_uint(f) | 1u);
  return f;
}

__device__ __forceinline__ fusec_f16 fusec_f64_to_f16(double x) {
  return fusec_f32_to_f16(fusec_f64_to_f32_odd(x));
}

__device__ __forceinline__ fusec_bf16 fusec_f64_to_bf16(double x) {
  return fusec_f32_to_bf16(fusec_f64_to_f32_odd(x));
}

__device__ __forceinline__ long long fusec_f64_to_i64(double x) {
  long long r;
  asm("cvt.rzi.s64.f64 %0, %1;" : "=l"(r) : "d"(x));
  return r;
}

__device__ __forceinline__ int fusec_f64_to_i32(double x) {
  int r;
  asm("cvt.rzi.s32.f64 %0, %1;" : "=r"(r) : "d"(x));
  return r;
}

__device__ __forceinline__ signed char fusec_f64_to_i8(double x) {
  int r = fusec_f64_to_i32(x);
  return (signed char)(r < -128 ? -128 : r > 127 ? 127 : r);
}

// Integer arithmetic on int64, wrapping; the store narrows (two's complement).
__device__ __forceinline__ long long fusec_add_i(long long a, long long b) {
  return (long long)((unsigned long long)a + (unsigned long long)b);
}

__device__ __forceinline__ long long fusec_sub_i(long long a, long long b) {
  return (long long)((unsigned long long)a - (unsigned long long)b);
}

__device__ __forceinline__ long long fusec_mul_i(long long a, long long b) {
  return (long long)((unsigned long long)a * (unsigned long long)b);
}

__device__ __forceinline__ long long fusec_neg_i(long long a) {
  return (long long)(0ull - (unsigned long long)a);
}

__device__ __forceinline__ long long fusec_abs_i(long long a) {
  return a < 0 ? fusec_neg_i(a) : a;
}

// Truncating division; a division by zero gives 0 (the CPU reference
// reports it as a run-time error; the GPU cannot stop mid-kernel).
__device__ __forceinline__ long long fusec_div_i(long long a, long long b) {
  return b == 0 ? 0 : b == -1 ? fusec_neg_i(a) : a / b;
}

// a^b wrapped; a negative b gives the integer part of the real result.
__device__ __forceinline__ long long fusec_pow_i(long long a, long long b) {
  if (b < 0)
    return a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;
  unsigned long long result = 1, base = (unsigned long long)a;
  for (unsigned long long e = (unsigned long long)b; e; e >>= 1, base *= base)
    if (e & 1)
      result *= base;
  return (long long)result;
}

// max and min that propagate a NaN operand (fmaxf would drop it): max.NaN,
// one instruction on sm_80 and later (a NaN result is the canonical NaN).
__device__ __forceinline__ float fusec_max_f32(float a, float b) {
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}

__device__ __forceinline__ float fusec_min_f32(float a, float b) {
  float r;
  asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}

__device__ __forceinline__ double fusec_max_f64(double a, double b) {
  return a != a ? a : (b != b || a < b) ? b : a;
}

__device__ __forceinline__ double fusec_min_f64(double a, double b) {
  return a != a ? a : (b != b || b < a) ? b : a;
}

__device__ __forceinline__ float fusec_sigmoid_f32(float x) {
  return 1.0f / (1.0f + expf(-x));
}

__device__ __forceinline__ double fusec_sigmoid_f64(double x) {
  return 1.0 / (1.0 + exp(-x));
}

__device__ __forceinline__ float fusec_gelu_f32(float x) {
  return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
}

// Note [Math of f16 and bf16 values]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// A value typed f16 or bf16 promises 11 or 8 significant bits. Its math runs
// in f32 registers, but exp and GeLU of such values need a relative error
// well below 2^-12, not the ulp-accurate expf and erff: in a softmax or a
// LayerNorm+GeLU of 1024 columns those made the kernel issue-bound, not
// memory-bound (69% of issue slots busy; H100, ncu, 2026-11-22). The forms
// below take about a third of the instructions:
//  - exp(x) = 2^(x log2 e) by ex2.approx (relative error about 2^-22), plus
//    the rounding of x log2 e to f32: |x| 2^-24 relative, under 1e-6 for
//    every result f16 can hold and 5.3e-6 for bf16's.
//  - GeLU(x) = x Phi(x), Phi(x) = erfc(-x / sqrt 2) / 2. With z = |x| / sqrt 2
//    and t = 1 / (1 + z / 2), erfc(z) = t exp(-z^2 + P(t)), P the degree-5
//    least-squares fit, on Chebyshev nodes of t in [1 / (1 + 9.5 / 2), 1], of
//    ln(erfc(z) / t) + z^2 (absolute error 8.5e-6: erfc's relative error;
//    past z = 9.5, |x| > 13.4, the result is below f32's normals); Phi(x) =
//    erfc(z) / 2 for x < 0, else 1 - erfc(z) / 2, and 2^((-z^2 + P(t)) log2 e
//    - 1) is erfc(z) / 2 / t in one ex2.approx, log2 e and the halving folded
//    into P's coefficients. Unlike 1 + erf(x / sqrt 2), which cancels for
//    negative x, it keeps its relative accuracy in the tail. Against a double
//    reference, in f32 arithmetic: relative error at most 8.7e-6 where
//    |GeLU(x)| > 1e-6 (1.1e-5 above 1e-30), 28 times below f16's half ulp
//    (scripts/gelu-fit.py fits P and checks this, and that both back ends use
//    the same coefficients: test/lit/tools/gelu-coefficients.test). Five
//    FMAs, not the nine of the degree-9 form before: GeLU's math is what
//    GEMM + bias + GeLU's epilogue still costs (Note [Staged epilogue] in
//    codegen/templates/gemm/Gemm.cpp).
// Both flush results below 2^-126 to zero (as Triton's default does): f16
// cannot hold them, and for bf16 they are its subnormals. Handling them
// costs 4 instructions an element, 5% of LayerNorm+GeLU f16 16384 x 1024.
// f32 and f64 values keep expf/exp and erff/erf.
__device__ __forceinline__ float fusec_exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

__device__ __forceinline__ float fusec_exp_narrow_f32(float x) {
  return fusec_exp2_approx(x * 1.44269504088896341f);
}

__device__ __forceinline__ float fusec_gelu_narrow_f32(float x) {
  constexpr double kLog2e = 1.44269504088896341;
  float t;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(t) : "f"(fmaf(fabsf(x), 0.35355339059327373f, 1.0f)));
  float p = float(0.23123851680391477 * kLog2e); // P(t) log2 e, the halving folded in
  p = fmaf(p, t, float(-0.71689088395907140 * kLog2e));
  p = fmaf(p, t, float(0.48370833554712710 * kLog2e));
  p = fmaf(p, t, float(0.24925300968442110 * kLog2e));
  p = fmaf(p, t, float(1.01937109751734050 * kLog2e));
  p = fmaf(p, t, float(-1.26667162439997120 * kLog2e - 1.0));
  const float z2 = x * float(-0.5 * kLog2e); // -z^2 log2 e = x z2
  const float half = t * fusec_exp2_approx(fmaf(z2, x, p)); // erfc(z) / 2
  return x * (x < 0.0f ? half : 1.0f - half);
}

__device__ __forceinline__ double fusec_gelu_f64(double x) {
  return 0.5 * x * (1.0 + erf(x * 0.70710678118654752));
}

__device__ __forceinline__ float fusec_gelu_tanh_f32(float x) {
  return 0.5f * x * (1.0f + tanhf(0.79788456080286536f * (x + 0.044715f * x * x * x)));
}

__device__ __forceinline__ double fusec_gelu_tanh_f64(double x) {
  return 0.5 * x * (1.0 + tanh(0.79788456080286536 * (x + 0.044715 * x * x * x)));
}

// Vectors of 2, 4, 8 and 16 bytes: what the vector path of the pointwise
// template loads and stores in one instruction.
typedef unsigned short fusec_v2;
typedef unsigned fusec_v4;
struct alignas(8) fusec_v8 {
  unsigned a, b;
};
struct alignas(16) fusec_v16 {
  unsigned a, b, c, d;
};

// Pairs (kir's widen and narrow of 2 lanes): an f16 or bf16 pair in one
// 32-bit word to two f32 (a, b), and back, rounded, in one instruction.
__device__ __forceinline__ fusec_v8 fusec_f16x2_to_f32x2(fusec_v4 w) {
  float lo, hi;
  asm("{\n\t.reg .f16 lo, hi;\n\tmov.b32 {lo, hi}, %2;\n\tcvt.f32.f16 %0, lo;\n\t"
      "cvt.f32.f16 %1, hi;\n\t}"
      : "=f"(lo), "=f"(hi)
      : "r"(w));
  return {__float_as_uint(lo), __float_as_uint(hi)};
}

__device__ __forceinline__ fusec_v8 fusec_bf16x2_to_f32x2(fusec_v4 w) {
  return {w << 16, w & 0xffff0000u};
}

__device__ __forceinline__ fusec_v4 fusec_f32x2_to_f16x2(fusec_v8 v) {
  fusec_v4 r;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(__uint_as_float(v.b)), "f"(__uint_as_float(v.a)));
  return r;
}

__device__ __forceinline__ fusec_v4 fusec_f32x2_to_bf16x2(fusec_v8 v) {
  fusec_v4 r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(__uint_as_float(v.b)), "f"(__uint_as_float(v.a)));
  return r;
}
