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

// max and min that propagate a NaN operand (fmaxf would drop it).
__device__ __forceinline__ float fusec_max_f32(float a, float b) {
  return a != a ? a : (b != b || a < b) ? b : a;
}

__device__ __forceinline__ float fusec_min_f32(float a, float b) {
  return a != a ? a : (b != b || b < a) ? b : a;
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
  // erff, not a shorter polynomial: one (Abramowitz-Stegun 7.1.26) raised the
  // row-reduction LayerNorm+GeLU kernel of 8192 columns from 96 to 128
  // registers, and it ran at 65% of copy bandwidth where erff ran at 90%
  // (H100, separate runs, 2026-11-21).
  return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
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
