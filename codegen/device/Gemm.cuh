// Device helpers of the gemm template (codegen/Gemm*.cpp), after those of
// Pointwise.cuh. Thin wrappers over the PTX the tensor-core kernels need on
// sm_80 and later: cp.async 16-byte copies (zero-filled past the edges),
// ldmatrix (.trans for operands stored the other way round), mma.sync
// m16n8k16 with f32 accumulators, and the XOR swizzle of the shared-memory
// tiles. A tile is rows of `chunks` 16-byte chunks; chunk c of row r lives
// at chunk (c ^ s(r)) of that row, where s permutes each group of 8 (or 4,
// or 2) consecutive rows so that the 8 rows an ldmatrix phase reads at one
// chunk column, and the chunks a warp's cp.async writes, fall in distinct
// bank groups: no bank conflicts. Everything here is inlined into
// constant-sized unrolled loops by the generated kernel; no templates.

typedef struct __align__(16) {
  unsigned x, y, z, w;
}
fusec_u32x4;

// The shared-window address of a generic pointer to shared memory.
__device__ __forceinline__ unsigned fusec_smem_u32(const void *p) {
  unsigned r;
  asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(r) : "l"(p));
  return r;
}

// The 16-byte chunk offset of chunk `chunk` of row `row` in a swizzled tile
// of `chunks` chunks a row (a power of two >= 2).
__device__ __forceinline__ int fusec_swizzle(int row, int chunk, int chunks) {
  int s = chunks >= 8 ? (row & 7) : chunks == 4 ? ((row >> 1) & 3) : ((row >> 2) & 1);
  return row * chunks + (chunk ^ s);
}

// 16 bytes from global to shared memory, asynchronously; zeros when !valid
// (src is then not read, but must still be a valid address).
__device__ __forceinline__ void fusec_cp_async16(unsigned dst, const void *src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(valid ? 16 : 0)
               : "memory");
}

__device__ __forceinline__ void fusec_cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

// Waits until at most `pending` committed groups are still in flight.
__device__ __forceinline__ void fusec_cp_async_wait(int pending) {
  switch (pending) {
  case 0:
    asm volatile("cp.async.wait_group 0;\n" ::: "memory");
    break;
  case 1:
    asm volatile("cp.async.wait_group 1;\n" ::: "memory");
    break;
  case 2:
    asm volatile("cp.async.wait_group 2;\n" ::: "memory");
    break;
  case 3:
    asm volatile("cp.async.wait_group 3;\n" ::: "memory");
    break;
  default:
    asm volatile("cp.async.wait_group 4;\n" ::: "memory");
    break;
  }
}

__device__ __forceinline__ void fusec_st_shared16(unsigned dst, fusec_u32x4 v) {
  asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(dst), "r"(v.x), "r"(v.y),
               "r"(v.z), "r"(v.w)
               : "memory");
}

__device__ __forceinline__ void fusec_ldmatrix_x4(unsigned addr, unsigned &r0, unsigned &r1,
                                                  unsigned &r2, unsigned &r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(addr));
}

__device__ __forceinline__ void fusec_ldmatrix_x4_trans(unsigned addr, unsigned &r0, unsigned &r1,
                                                        unsigned &r2, unsigned &r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(addr));
}

// d += a * b for one 16x8x16 tile: a row-major 16x16, b column-major 16x8.
__device__ __forceinline__ void fusec_mma_bf16(float *d, const unsigned *a, const unsigned *b) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
               "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

__device__ __forceinline__ void fusec_mma_f16(float *d, const unsigned *a, const unsigned *b) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
               "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// Two f32 values rounded to nearest even and packed, lo in the low half.
__device__ __forceinline__ unsigned fusec_pack_bf16x2(float lo, float hi) {
  unsigned r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

__device__ __forceinline__ unsigned fusec_pack_f16x2(float lo, float hi) {
  unsigned r;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

// Word `i` (a constant after unrolling) of a 16-byte vector.
__device__ __forceinline__ unsigned fusec_word(fusec_u32x4 v, int i) {
  return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

__device__ __forceinline__ fusec_u32x4 fusec_load16(const void *p) {
  fusec_u32x4 v;
  asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

// Four adjacent 16-bit elements stored at once (p 8-byte aligned).
__device__ __forceinline__ void fusec_store4_u16(unsigned short *p, unsigned short a,
                                                 unsigned short b, unsigned short c,
                                                 unsigned short d) {
  asm volatile("st.global.v2.u32 [%0], {%1, %2};\n" ::"l"(p),
               "r"((unsigned)a | ((unsigned)b << 16)), "r"((unsigned)c | ((unsigned)d << 16))
               : "memory");
}

// Four adjacent f32 elements stored at once (p 16-byte aligned).
__device__ __forceinline__ void fusec_store4_f32(float *p, float a, float b, float c, float d) {
  asm volatile("st.global.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"l"(p), "f"(a), "f"(b), "f"(c), "f"(d)
               : "memory");
}

// Two f32 accumulators into shared memory (8-byte aligned).
__device__ __forceinline__ void fusec_st_shared_f32x2(float *p, float a, float b) {
  asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(fusec_smem_u32(p)), "f"(a), "f"(b)
               : "memory");
}

// The f64 whose bits are hi:lo.
__device__ __forceinline__ double fusec_f64_from_words(unsigned lo, unsigned hi) {
  double d;
  asm("mov.b64 %0, {%1, %2};" : "=d"(d) : "r"(lo), "r"(hi));
  return d;
}
