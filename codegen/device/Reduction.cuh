// Device helpers of the row_reduction template (codegen/RowReduction*.cpp),
// after those of Pointwise.cuh. Vector access: n = 1, 2, 4 or 8 consecutive
// f32/f16/bf16 elements at p (aligned to n elements; n is a literal at
// every call, so the branches fold and v stays in registers) widened to or
// narrowed from f32, as one or two accesses of up to 16 bytes; f16/bf16
// pairs convert with one instruction each. Reductions: warp (a power-of-two
// group of `width` lanes, xor shuffles, so every lane gets the total) and
// block (each warp's total through 32 shared slots; blockDim.x a multiple
// of 32, blockDim.y 1; a trailing barrier only when `reuse`, i.e. when the
// caller may write the same scratch again before another block reduction)
// sums, maxima and minima over f32, f64 and wrapping i64; max and min
// propagate NaN like fusec_max_f32.

__device__ __forceinline__ void fusec_f16x2_to_f32(unsigned w, float *v) {
  asm("{\n\t.reg .f16 lo, hi;\n\tmov.b32 {lo, hi}, %2;\n\tcvt.f32.f16 %0, lo;\n\t"
      "cvt.f32.f16 %1, hi;\n\t}"
      : "=f"(v[0]), "=f"(v[1])
      : "r"(w));
}

__device__ __forceinline__ unsigned fusec_f32_to_f16x2(const float *v) {
  unsigned w;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(w) : "f"(v[1]), "f"(v[0]));
  return w;
}

__device__ __forceinline__ void fusec_bf16x2_to_f32(unsigned w, float *v) {
  v[0] = __uint_as_float(w << 16);
  v[1] = __uint_as_float(w & 0xffff0000u);
}

__device__ __forceinline__ unsigned fusec_f32_to_bf16x2(const float *v) {
  unsigned w;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(w) : "f"(v[1]), "f"(v[0]));
  return w;
}

// n 16-bit elements at p as n / 2 words (n >= 2).
__device__ __forceinline__ void fusec_load_words(const unsigned short *p, unsigned *w, int n) {
  if (n == 8) {
    const uint4 r = *(const uint4 *)p;
    w[0] = r.x;
    w[1] = r.y;
    w[2] = r.z;
    w[3] = r.w;
  } else if (n == 4) {
    const uint2 r = *(const uint2 *)p;
    w[0] = r.x;
    w[1] = r.y;
  } else {
    w[0] = *(const unsigned *)p;
  }
}

__device__ __forceinline__ void fusec_store_words(unsigned short *p, const unsigned *w, int n) {
  if (n == 8)
    *(uint4 *)p = make_uint4(w[0], w[1], w[2], w[3]);
  else if (n == 4)
    *(uint2 *)p = make_uint2(w[0], w[1]);
  else
    *(unsigned *)p = w[0];
}

__device__ __forceinline__ void fusec_load_f16(const fusec_f16 *p, float *v, int n) {
  if (n == 1) {
    v[0] = fusec_f16_to_f32(p[0]);
    return;
  }
  unsigned w[4];
  fusec_load_words(p, w, n);
  for (int i = 0; i < n / 2; ++i)
    fusec_f16x2_to_f32(w[i], v + 2 * i);
}

__device__ __forceinline__ void fusec_load_bf16(const fusec_bf16 *p, float *v, int n) {
  if (n == 1) {
    v[0] = fusec_bf16_to_f32(p[0]);
    return;
  }
  unsigned w[4];
  fusec_load_words(p, w, n);
  for (int i = 0; i < n / 2; ++i)
    fusec_bf16x2_to_f32(w[i], v + 2 * i);
}

__device__ __forceinline__ void fusec_store_f16(fusec_f16 *p, const float *v, int n) {
  if (n == 1) {
    p[0] = fusec_f32_to_f16(v[0]);
    return;
  }
  unsigned w[4];
  for (int i = 0; i < n / 2; ++i)
    w[i] = fusec_f32_to_f16x2(v + 2 * i);
  fusec_store_words(p, w, n);
}

__device__ __forceinline__ void fusec_store_bf16(fusec_bf16 *p, const float *v, int n) {
  if (n == 1) {
    p[0] = fusec_f32_to_bf16(v[0]);
    return;
  }
  unsigned w[4];
  for (int i = 0; i < n / 2; ++i)
    w[i] = fusec_f32_to_bf16x2(v + 2 * i);
  fusec_store_words(p, w, n);
}

__device__ __forceinline__ void fusec_load_f32(const float *p, float *v, int n) {
  for (int i = 0; i < n; i += 4) {
    if (n - i >= 4) {
      const float4 r = *(const float4 *)(p + i);
      v[i] = r.x;
      v[i + 1] = r.y;
      v[i + 2] = r.z;
      v[i + 3] = r.w;
    } else if (n == 2) {
      const float2 r = *(const float2 *)p;
      v[0] = r.x;
      v[1] = r.y;
    } else {
      v[0] = p[0];
    }
  }
}

__device__ __forceinline__ void fusec_store_f32(float *p, const float *v, int n) {
  for (int i = 0; i < n; i += 4) {
    if (n - i >= 4)
      *(float4 *)(p + i) = make_float4(v[i], v[i + 1], v[i + 2], v[i + 3]);
    else if (n == 2)
      *(float2 *)p = make_float2(v[0], v[1]);
    else
      p[0] = v[0];
  }
}

// The combining functions the reductions below are built from.
__device__ __forceinline__ float fusec_sum_f32(float a, float b) { return a + b; }
__device__ __forceinline__ double fusec_sum_f64(double a, double b) { return a + b; }
__device__ __forceinline__ long long fusec_sum_i64(long long a, long long b) {
  return fusec_add_i(a, b);
}
__device__ __forceinline__ long long fusec_max_i64(long long a, long long b) {
  return a < b ? b : a;
}
__device__ __forceinline__ long long fusec_min_i64(long long a, long long b) {
  return b < a ? b : a;
}

// fusec_warp_OP_T(v, width) and fusec_block_OP_T(v, scratch[32], warps,
// reuse): the total of v over the lane's group of `width` lanes, or over the
// block of `warps` warps (a literal). Up to 8 warps, every thread combines
// the warps' partials itself from shared memory (broadcast reads, in one
// order, so every thread gets the same total): fewer instructions than a
// second round of shuffles. `reuse`: a barrier after the reads, for scratch
// written again before another barrier.
#define FUSEC_REDUCTION(OP, T, TYPE, IDENTITY)                                                 \
  __device__ __forceinline__ TYPE fusec_warp_##OP##_##T(TYPE v, int width) {                 \
    for (int offset = width >> 1; offset > 0; offset >>= 1)                                   \
      v = fusec_##OP##_##T(v, __shfl_xor_sync(0xffffffffu, v, offset));                       \
    return v;                                                                                 \
  }                                                                                           \
  __device__ __forceinline__ TYPE fusec_block_##OP##_##T(TYPE v, TYPE *scratch, int warps,    \
                                                         bool reuse) {                        \
    const unsigned lane = threadIdx.x & 31u;                                                  \
    v = fusec_warp_##OP##_##T(v, 32);                                                         \
    if (lane == 0)                                                                            \
      scratch[threadIdx.x >> 5] = v;                                                          \
    __syncthreads();                                                                          \
    if (warps <= 8) {                                                                         \
      v = scratch[0];                                                                         \
      for (int w = 1; w < warps; ++w)                                                         \
        v = fusec_##OP##_##T(v, scratch[w]);                                                  \
    } else {                                                                                  \
      v = lane < unsigned(warps) ? scratch[lane] : (IDENTITY);                                \
      v = fusec_warp_##OP##_##T(v, 32);                                                       \
    }                                                                                         \
    if (reuse)                                                                                \
      __syncthreads();                                                                        \
    return v;                                                                                 \
  }

FUSEC_REDUCTION(sum, f32, float, 0.0f)
FUSEC_REDUCTION(max, f32, float, -__int_as_float(0x7f800000))
FUSEC_REDUCTION(min, f32, float, __int_as_float(0x7f800000))
FUSEC_REDUCTION(sum, f64, double, 0.0)
FUSEC_REDUCTION(max, f64, double, -__longlong_as_double(0x7ff0000000000000LL))
FUSEC_REDUCTION(min, f64, double, __longlong_as_double(0x7ff0000000000000LL))
FUSEC_REDUCTION(sum, i64, long long, 0LL)
FUSEC_REDUCTION(max, i64, long long, (-9223372036854775807LL - 1))
FUSEC_REDUCTION(min, i64, long long, 9223372036854775807LL)

#undef FUSEC_REDUCTION
