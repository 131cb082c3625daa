// Device helpers of kir's tensor-core primitives (codegen/cuda/Render.cpp),
// after those of Pointwise.cuh: thin wrappers over the PTX of sm_80 and
// later that CUDA C++ has no expression for. cp.async 16-byte copies
// (zero-filled when not valid), ldmatrix.x4 (.trans), mma.sync m16n8k16
// with f32 accumulators, and the packing conversions. Fragments travel as
// fusec_v16 / fusec_v8 (words), as kir's i32x4, i32x2 and f32x4 values do.

// The shared-window address of a generic pointer to shared memory.
__device__ __forceinline__ unsigned fusec_smem_u32(const void *p) {
  return (unsigned)__cvta_generic_to_shared(p);
}

// 16 bytes from global to shared memory, asynchronously; zeros when !valid
// (src is then not read, but must still be a valid address).
__device__ __forceinline__ void fusec_cp_async16(unsigned dst, const void *src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(valid ? 16 : 0)
               : "memory");
}

__device__ __forceinline__ fusec_v16 fusec_ldmatrix_x4(unsigned addr) {
  fusec_v16 r;
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r.a), "=r"(r.b), "=r"(r.c), "=r"(r.d)
               : "r"(addr));
  return r;
}

__device__ __forceinline__ fusec_v16 fusec_ldmatrix_x4_trans(unsigned addr) {
  fusec_v16 r;
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r.a), "=r"(r.b), "=r"(r.c), "=r"(r.d)
               : "r"(addr));
  return r;
}

// c + a * b for one 16x8x16 tile: a row-major 16x16, b column-major 16x8;
// c and the result are four f32 as words.
#define FUSEC_MMA_M16N8K16(NAME, TYPE)                                                            \
  __device__ __forceinline__ fusec_v16 NAME(fusec_v16 a, fusec_v8 b, fusec_v16 c) {                \
    float d0 = __uint_as_float(c.a), d1 = __uint_as_float(c.b), d2 = __uint_as_float(c.c),       \
          d3 = __uint_as_float(c.d);                                                             \
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." TYPE "." TYPE ".f32 "                  \
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"             \
                 : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)                                         \
                 : "r"(a.a), "r"(a.b), "r"(a.c), "r"(a.d), "r"(b.a), "r"(b.b));                   \
    return fusec_v16{__float_as_uint(d0), __float_as_uint(d1), __float_as_uint(d2),               \
                     __float_as_uint(d3)};                                                        \
  }
FUSEC_MMA_M16N8K16(fusec_mma_m16n8k16_f16, "f16")
FUSEC_MMA_M16N8K16(fusec_mma_m16n8k16_bf16, "bf16")
#undef FUSEC_MMA_M16N8K16

// Two f32 values rounded to nearest even and packed, lo in the low half.
__device__ __forceinline__ int fusec_pack_bf16x2(float lo, float hi) {
  unsigned r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return (int)r;
}

__device__ __forceinline__ int fusec_pack_f16x2(float lo, float hi) {
  unsigned r;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return (int)r;
}

// The low or high half of a packed pair as f32 (exact).
__device__ __forceinline__ float fusec_unpack_f16_lo(int w) {
  return fusec_f16_to_f32((fusec_f16)((unsigned)w & 0xffffu));
}

__device__ __forceinline__ float fusec_unpack_f16_hi(int w) {
  return fusec_f16_to_f32((fusec_f16)((unsigned)w >> 16));
}

__device__ __forceinline__ float fusec_unpack_bf16_lo(int w) {
  return __uint_as_float((unsigned)w << 16);
}

__device__ __forceinline__ float fusec_unpack_bf16_hi(int w) {
  return __uint_as_float((unsigned)w & 0xffff0000u);
}

// A wgmma matrix descriptor (PTX ISA "Matrix Descriptor Format"): the layout
// fields of `layout` (kir::Builder::wgmmaLayout) and the start address.
__device__ __forceinline__ unsigned long long fusec_wgmma_desc(long long layout, unsigned addr) {
  return (unsigned long long)layout | ((addr & 0x3FFFFu) >> 4);
}
