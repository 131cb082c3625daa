// The kernel IR (codegen/kir/Kir.h): what the verifier refuses, the builder's
// reuse of constants within their scope, and that both renderers take a
// hand-built kernel (the templates' kernels are checked by lit and GPU tests).
#include "codegen/kir/Kir.h"

#include "codegen/cuda/Render.h"
#include "codegen/llvm/Nvptx.h"
#include "codegen/llvm/Render.h"
#include "test/kir/KirSamples.h"

#include <gtest/gtest.h>

using namespace fusec;
using namespace fusec::kir;

namespace {

/// Expects each of `lines` somewhere in `text` (a kernel's printing or rendering), naming the
/// missing one.
void expectContainsAll(const std::string &text, const std::vector<std::string> &lines) {
  for (const std::string &line : lines)
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
}

/// out[i] = narrow(widen(in[i]) * 2) for i < n, f16 in memory.
Kernel doubleKernel() {
  Kernel k;
  k.name = "twice";
  Builder b(k);
  ValueId in = b.param("in", Type::pointer(DType::F16, Space::Global), true);
  ValueId out = b.param("out", Type::pointer(DType::F16, Space::Global));
  ValueId n = b.param("n", Type::index());
  DenseData two = DenseData::makeSplat(DType::F16, {}, {0x00, 0x40}); // 2.0
  ValueId c = b.literal(two, "two");
  ValueId zero = b.index(0), one = b.index(1);
  b.forLoop(zero, n, one, "i", 0, [&](ValueId i) {
    ValueId x = b.widen(DType::F16, b.load(in, i), "x");
    ValueId y = b.math({OpKind::Mul, DType::F16, DType::F16}, {x, c}, "y");
    b.store(out, i, b.narrow(DType::F16, y));
  });
  return k;
}

TEST(Kir, AWellFormedKernelVerifiesAndRendersOnBothBackEnds) {
  Kernel k = doubleKernel();
  EXPECT_TRUE(verify(k).empty());
  std::string cuda = cuda::render(k);
  EXPECT_NE(cuda.find("for (long long i = 0LL; i < n; i += 1LL) {"), std::string::npos) << cuda;
  EXPECT_NE(cuda.find("const float y = x * two;"), std::string::npos) << cuda;
  std::string ir = llvmir::render(k);
  EXPECT_NE(
      ir.find("define ptx_kernel void @twice(ptr noalias readonly %in, ptr noalias %out, i64 %n)"),
      std::string::npos)
      << ir;
  EXPECT_NE(ir.find("fmul float %x, 2.0"), std::string::npos) << ir;
}

TEST(Kir, ConstantsAreReusedOnlyWhereTheyAreInScope) {
  Kernel k;
  Builder b(k);
  ValueId n = b.param("n", Type::index());
  ValueId four = b.index(4);
  EXPECT_EQ(b.index(4), four);
  ValueId inner = kNoValue;
  b.forLoop(four, n, four, "i", 0, [&](ValueId) {
    EXPECT_EQ(b.index(4), four); // defined in an enclosing block
    inner = b.index(7);
    EXPECT_EQ(b.index(7), inner);
  });
  EXPECT_NE(b.index(7), inner); // the loop's constant is out of scope here
  EXPECT_TRUE(verify(k).empty()) << verify(k).front();
}

TEST(Kir, TheVerifierRefusesUsesOutOfScopeAndBadTypes) {
  Kernel k = doubleKernel();
  Builder b(k);
  // The loop counter used after the loop.
  ValueId counter = k.body.back().result;
  ValueId in = 0;
  b.load(in, counter, 1, "late");
  // A store through the read-only parameter, and f16 lanes stored as f32.
  ValueId zero = b.index(0);
  ValueId v = b.load(in, zero, 1, "v");
  b.store(in, zero, v);
  ValueId wide = b.widen(DType::F16, v, "wide");
  ValueId out = 1;
  k.body.push_back({.op = Opcode::Store, .operands = {out, zero, wide}});
  std::vector<std::string> errors = verify(k);
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_EQ(errors[0], "%late: uses a value not defined before it in scope");
  EXPECT_EQ(errors[1], "a store: stores through read-only parameter %in");
  EXPECT_EQ(errors[2], "a store: moves f32 through ptr<global f16>");
}

/// A warp sum through shuffles, staged through shared memory between barriers.
TEST(Kir, SharedMemoryBarriersAndShufflesRenderOnBothBackEnds) {
  Kernel k;
  k.name = "warpsum";
  Builder b(k);
  ValueId out = b.param("out", Type::pointer(DType::F32, Space::Global));
  ValueId scratch = b.sharedArray(DType::F32, 32, "scratch");
  ValueId lane = b.special(Special::TidX);
  DenseData one = DenseData::makeSplat(DType::F32, {}, {0x00, 0x00, 0x80, 0x3f});
  b.store(scratch, lane, b.literal(one, "one"));
  b.barrier();
  ValueId x = b.load(scratch, lane, 1, "x");
  ValueId y = b.shuffle(ShuffleMode::Xor, x, b.index(16), 32);
  ValueId sum = b.math({OpKind::Add, DType::F32, DType::F32}, {x, y}, "sum");
  b.store(out, lane, sum);
  ASSERT_TRUE(verify(k).empty()) << verify(k).front();
  EXPECT_NE(print(k).find("shuffle.xor %x, %t_1, %t_2 width 32 : f32"), std::string::npos)
      << print(k);
  std::string cuda = cuda::render(k);
  EXPECT_NE(cuda.find("__shared__ alignas(16) float scratch[32];"), std::string::npos) << cuda;
  EXPECT_NE(cuda.find("__syncthreads();"), std::string::npos) << cuda;
  EXPECT_NE(cuda.find("__shfl_xor_sync(0xffffffffu, x, (int)16LL, 32)"), std::string::npos) << cuda;
  std::string ir = llvmir::render(k);
  EXPECT_NE(ir.find("@warpsum_scratch = internal addrspace(3) global [32 x float] undef, align 16"),
            std::string::npos)
      << ir;
  EXPECT_NE(ir.find("call void @llvm.nvvm.barrier0()"), std::string::npos) << ir;
  EXPECT_NE(ir.find("@llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %x, i32 16, i32 31)"),
            std::string::npos)
      << ir;

  // A shuffle of a vector, or within 3 lanes, is refused.
  ValueId pair = b.load(scratch, lane, 2, "pair");
  b.shuffle(ShuffleMode::Down, pair, b.index(1), 32);
  b.shuffle(ShuffleMode::Down, x, b.index(1), 3);
  std::vector<std::string> errors = verify(k);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_NE(errors[0].find("shuffles a 32- or 64-bit scalar by an i64 lane and mask, not f32x2"),
            std::string::npos);
  EXPECT_NE(errors[1].find("within 3 lanes"), std::string::npos);
}

/// One m16n8k16 step as the gemm template builds it: a cp.async of a tile
/// into dynamic shared memory, ldmatrix, mma into f32 accumulators kept in a
/// local array, and the accumulators packed into bf16 pairs.
TEST(Kir, TensorCorePrimitivesRenderOnBothBackEnds) {
  Kernel k;
  k.name = "mma1";
  Builder b(k);
  ValueId in = b.param("in", Type::pointer(DType::BF16, Space::Global), true);
  ValueId out = b.param("out", Type::pointer(DType::I32, Space::Global));
  ValueId tile = b.dynamicShared(DType::BF16, "tile");
  ValueId tid = b.special(Special::TidX);
  ValueId lane = b.convert(DType::I32, tid, "lane");
  ValueId chunk = b.arith(IndexOp::Mul, lane, b.constant(DType::I32, 8), "chunk");
  ValueId swizzled = b.arith(IndexOp::Xor, chunk, b.constant(DType::I32, 16), "swizzled");
  ValueId first = b.mul(tid, b.index(8), "first");
  ValueId inside = b.less(tid, b.index(32));
  b.copyAsync(tile, swizzled, in, first, inside);
  b.commitAsync();
  b.waitAsync(0);
  b.barrier();
  ValueId a = b.loadMatrix(tile, chunk, false, "a");
  ValueId bt = b.loadMatrix(tile, chunk, true, "bt");
  ValueId frag = b.localArray(DType::I32, 4, "frag");
  ValueId zero = b.constant(DType::I32, 0);
  b.store(frag, zero, bt, 4);
  ValueId bPair = b.load(frag, zero, 2, "b_pair");
  ValueId acc = b.localArray(DType::F32, 4, "acc");
  DenseData nothing = DenseData::makeSplat(DType::F32, {}, {0, 0, 0, 0});
  ValueId z = b.literal(nothing, "z");
  for (int q = 0; q < 4; ++q)
    b.store(acc, b.index(q), z);
  ValueId c = b.load(acc, b.index(0), 4, "c");
  ValueId d = b.mma(DType::BF16, a, bPair, c, "d");
  b.store(acc, b.index(0), d, 4);
  ValueId d0 = b.load(acc, b.index(0), 1, "d0");
  ValueId d1 = b.load(acc, b.index(1), 1, "d1");
  ValueId packed = b.pack(DType::BF16, d0, d1, "packed");
  b.store(out, tid, packed);
  ASSERT_TRUE(verify(k).empty()) << verify(k).front();

  std::string text = print(k);
  expectContainsAll(
      text,
      {"%tile = dynamic_shared bf16 : ptr<shared bf16>", "%swizzled = xor %chunk, %t_2 : i32",
       "cp.async %tile[%swizzled], %in[%first], 16 bytes if %t_5", "cp.async.commit_group",
       "cp.async.wait_group 0", "%a = ldmatrix.x4 %tile[%chunk] : i32x4",
       "%bt = ldmatrix.x4.trans %tile[%chunk] : i32x4",
       "%d = mma.m16n8k16.bf16 %a, %b_pair, %c : f32x4", "%packed = pack.bf16x2 %d0, %d1 : i32"});

  std::string cuda = cuda::render(k);
  expectContainsAll(
      cuda,
      {"extern __shared__ __align__(128) fusec_bf16 mma1_tile[];",
       "fusec_cp_async16((fusec_smem_u32(mma1_tile) + 2u * (unsigned)(swizzled)), in + first, ",
       "asm volatile(\"cp.async.commit_group;\" ::: \"memory\");",
       "asm volatile(\"cp.async.wait_group 0;\" ::: \"memory\");",
       "const fusec_v16 a = fusec_ldmatrix_x4((fusec_smem_u32(mma1_tile) + 2u * "
       "(unsigned)(chunk)));",
       "fusec_ldmatrix_x4_trans(", "const fusec_v16 d = fusec_mma_m16n8k16_bf16(a, b_pair, c);",
       "const int packed = fusec_pack_bf16x2(d0, d1);"});

  std::string ir = llvmir::render(k);
  expectContainsAll(ir,
                    {"@mma1_dynamic_shared = external addrspace(3) global [0 x i8], align 128",
                     "@llvm.nvvm.cp.async.cg.shared.global.16.s(",
                     "@llvm.nvvm.cp.async.commit.group()", "@llvm.nvvm.cp.async.wait.group(i32 0)",
                     "@llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.b16.p3(",
                     "@llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.trans.b16.p3(",
                     "@llvm.nvvm.mma.m16n8k16.row.col.bf16(", "fptrunc"});

  // An mma of f32 pairs and a wait past 7 groups are refused.
  b.mma(DType::F32, a, bPair, c, "bad");
  b.waitAsync(9);
  std::vector<std::string> errors = verify(k);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_NE(errors[0].find("mma.m16n8k16 takes"), std::string::npos) << errors[0];
  EXPECT_NE(errors[1].find("waits for 0 to 7 groups"), std::string::npos) << errors[1];
}

/// exp2 (ex2.approx.ftz) of an f32 on both back ends; it takes nothing else.
TEST(Kir, Exp2RendersOnBothBackEnds) {
  Kernel k;
  k.name = "pow2";
  Builder b(k);
  ValueId in = b.param("in", Type::pointer(DType::F32, Space::Global), true);
  ValueId out = b.param("out", Type::pointer(DType::F32, Space::Global));
  ValueId tid = b.special(Special::TidX);
  ValueId x = b.load(in, tid, 1, "x");
  ValueId y = b.exp2(x, "y");
  b.store(out, tid, y);
  ASSERT_TRUE(verify(k).empty()) << verify(k).front();
  EXPECT_NE(print(k).find("%y = exp2 %x : f32"), std::string::npos) << print(k);
  std::string cuda = cuda::render(k);
  EXPECT_NE(cuda.find("const float y = fusec_exp2_approx(x);"), std::string::npos) << cuda;
  std::string ir = llvmir::render(k);
  EXPECT_NE(ir.find("@llvm.nvvm.ex2.approx.ftz.f("), std::string::npos) << ir;

  b.exp2(tid, "bad");
  std::vector<std::string> errors = verify(k);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("takes an f32"), std::string::npos) << errors[0];
}

TEST(Kir, AtomicsAndFencesRenderOnBothBackEnds) {
  Kernel k;
  k.name = "count";
  Builder b(k);
  ValueId counters = b.param("counters", Type::pointer(DType::I32, Space::Global));
  ValueId readOnly = b.param("fixed", Type::pointer(DType::I32, Space::Global), true);
  ValueId values = b.param("values", Type::pointer(DType::F32, Space::Global));
  ValueId block = b.special(Special::CtaidX);
  b.fence();
  ValueId one = b.constant(DType::I32, 1);
  b.atomicAdd(counters, block, one, "before");
  ASSERT_TRUE(verify(k).empty()) << verify(k).front();
  std::string text = print(k);
  EXPECT_NE(text.find("fence.gpu"), std::string::npos) << text;
  EXPECT_NE(text.find("= atomic.add %counters["), std::string::npos) << text;
  std::string cuda = cuda::render(k);
  EXPECT_NE(cuda.find("__threadfence();"), std::string::npos) << cuda;
  EXPECT_NE(cuda.find("const int before = atomicAdd(&counters["), std::string::npos) << cuda;
  std::string ir = llvmir::render(k);
  EXPECT_NE(ir.find("@llvm.nvvm.membar.gl()"), std::string::npos) << ir;
  EXPECT_NE(ir.find("atomicrmw add ptr"), std::string::npos) << ir;

  b.atomicAdd(values, block, one, "f32");
  b.atomicAdd(readOnly, block, one, "fixed");
  std::vector<std::string> errors = verify(k);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_NE(errors[0].find("adds an i32 to an i32 in global memory"), std::string::npos)
      << errors[0];
  EXPECT_NE(errors[1].find("adds through read-only parameter %fixed"), std::string::npos)
      << errors[1];
}

/// One warpgroup step as the attention template builds it: a wgmma of two swizzled shared tiles
/// and one of a register A with an MN-major B, fenced, committed and waited for, with the
/// accumulators guarded; then a fence for the asynchronous proxy.
TEST(Kir, WarpgroupPrimitivesRenderOnBothBackEnds) {
  Kernel k;
  k.name = "wg";
  k.maxThreads = 128;
  Builder b(k);
  ValueId out = b.param("out", Type::pointer(DType::F32, Space::Global));
  ValueId smem = b.dynamicShared(DType::I8, "smem", 1024);
  ValueId acc = b.localArray(DType::F32, 32, "acc");
  ValueId layout = b.index(Builder::wgmmaLayout(128, 1024, 16));
  ValueId zero = b.constant(DType::I32, 0);
  ValueId other = b.constant(DType::I32, 8192);
  b.proxyFence();
  b.barrier();
  b.wgmmaFence({acc});
  b.wgmma(DType::F16, 64, acc, {smem, zero, layout}, {smem, other, layout}, false,
          Accumulate::Overwrite);
  ValueId frag = b.loadMatrix(smem, zero, false, "frag");
  b.wgmma(DType::BF16, 64, acc, frag, {smem, other, layout}, true);
  b.wgmmaCommit();
  b.wgmmaWait(0, {acc});
  ValueId tid = b.special(Special::TidX);
  ValueId x = b.load(acc, b.index(0), 1, "x");
  b.store(out, tid, x);
  ASSERT_TRUE(verify(k).empty()) << verify(k).front();
  EXPECT_EQ(Builder::wgmmaLayout(128, 1024, 16), int64_t(1) << 62 | int64_t(64) << 32 | 1 << 16);

  std::string text = print(k);
  expectContainsAll(text, {"%smem = dynamic_shared i8 align 1024 : ptr<shared i8>",
                           "  fence.proxy.async\n", "  wgmma.fence guarding %acc\n",
                           "  wgmma.m64n64k16.f16 %acc = %t %smem[%t_1], %t %smem[%t_2]\n",
                           "  wgmma.m64n64k16.bf16 %acc += %frag, %t %smem[%t_2] transposed b\n",
                           "  wgmma.commit_group\n", "  wgmma.wait_group 0 guarding %acc\n"});

  std::string cuda = cuda::render(k);
  expectContainsAll(cuda, {"extern __shared__ __align__(1024) signed char wg_smem[];",
                           "asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\");",
                           "asm volatile(\"wgmma.fence.sync.aligned;\" ::: \"memory\");",
                           "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0, %1, ",
                           "%31}, %32, %33, p, 1, 1, 0, 0;", "setp.ne.b32 p, %34, 0;",
                           "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%0, ",
                           "%31}, {%32, %33, %34, %35}, %36, p, 1, 1, 1;", "\"+f\"(acc[31])",
                           "\"=f\"(acc[31])\n", "\"r\"(0)\n", "\"r\"(1)\n",
                           "\"l\"(fusec_wgmma_desc(", "\"r\"((frag).a), \"r\"((frag).b)",
                           "asm volatile(\"wgmma.wait_group.sync.aligned 0;\" ::: \"memory\");",
                           "asm volatile(\"\" : \"+f\"(acc[r])::\"memory\");"});

  std::string ir = llvmir::render(k);
  expectContainsAll(ir, {"@wg_dynamic_shared = external addrspace(3) global [0 x i8], align 1024",
                         "fence.proxy.async.shared::cta;", "wgmma.fence.sync.aligned;",
                         "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {$0, $1, ",
                         "$31}, $32, $33, p, 1, 1, 0, 0;", "setp.ne.b32 p, $34, 0;",
                         "$31}, {$32, $33, $34, $35}, $36, p, 1, 1, 1;",
                         "wgmma.wait_group.sync.aligned 0;", "\"=f,0,~{memory}\"",
                         "=f,l,l,r,~{memory}", "=f,r,r,r,r,l,r,0,1,"});

  // An accumulator that is not a local f32 array, and an N that is not a multiple of 8.
  b.wgmma(DType::F16, 60, acc, {smem, zero, layout}, {smem, other, layout}, false);
  b.wgmmaWait(0, {smem});
  std::vector<std::string> errors = verify(k);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_NE(errors[0].find("a wgmma: wgmma m64nNk16"), std::string::npos) << errors[0];
  EXPECT_NE(errors[1].find("guard local register arrays"), std::string::npos) << errors[1];
}

/// The sm_90 primitives in the warp-specialized skeleton of test/kir/KirSamples.h: two tensor-map
/// parameters, mbarrier init, its fence, expect_tx, 2-d and 3-d TMA loads, waits and an arrive,
/// named barriers (sync and arrive) and setmaxnreg in each warpgroup role's branch.
TEST(Kir, HopperPrimitivesPrintAndRenderOnBothBackEnds) {
  Kernel k = test::hopperSample();
  ASSERT_TRUE(verify(k).empty()) << verify(k).front();

  std::string text = print(k);
  expectContainsAll(
      text, {"kernel @hopper(%a_map: tensormap readonly, %b_map: tensormap readonly, %out: ",
             ") maxthreads 384 minblocks 1 {", "    mbarrier.init %bars[%t_2], 256\n",
             "    mbarrier.init_fence\n", "    setmaxnreg.dec 40\n",
             "      mbarrier.expect_tx %bars[%t_1], 16384\n",
             "      tma.load.2d %smem[%t_1], %a_map, %bars[%t_1], (%x, %t_5)\n",
             "      tma.load.3d %smem[%t_9], %b_map, %bars[%t_1], (%x, %t_5, %t_8)\n",
             "    barrier.arrive %t_10, 384\n", "    setmaxnreg.inc 232\n",
             "    mbarrier.wait %bars[%t_1], %t_5\n", "    mbarrier.arrive %bars[%t_2]\n",
             "    barrier %t_12, 256\n", "  barrier\n"});

  std::string cuda = cuda::render(k);
  std::string bar1 = "\"r\"((fusec_smem_u32(bars) + 8u * (unsigned)(1LL)))";
  expectContainsAll(
      cuda,
      {std::string("__launch_bounds__(384, 1) hopper("),
       std::string("const __grid_constant__ fusec_tensor_map a_map,"),
       "asm volatile(\"mbarrier.init.shared::cta.b64 [%0], 256;\" :: " + bar1 + " : \"memory\");",
       std::string("asm volatile(\"fence.mbarrier_init.release.cluster;\" ::: \"memory\");"),
       std::string("asm volatile(\"setmaxnreg.dec.sync.aligned.u32 40;\" ::: \"memory\");"),
       std::string("asm volatile(\"mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 16384;\""),
       std::string("asm volatile(\"cp.async.bulk.tensor.2d.shared::cluster.global.tile."
                   "mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\" :: "
                   "\"r\"((fusec_smem_u32(hopper_smem) + (unsigned)(0LL))), \"l\"(&a_map), "),
       std::string("[%1, {%3, %4, %5}], [%2];\" :: \"r\"((fusec_smem_u32(hopper_smem) + "
                   "(unsigned)(8192LL))), \"l\"(&b_map), "),
       std::string(", \"r\"(x), \"r\"(0), \"r\"(1) : \"memory\");"),
       std::string("asm volatile(\"bar.arrive %0, 384;\" :: \"r\"(2) : \"memory\");"),
       std::string("asm volatile(\"setmaxnreg.inc.sync.aligned.u32 232;\" ::: \"memory\");"),
       std::string("asm volatile(\"{\\n.reg .pred p;\\nretry:\\nmbarrier.try_wait.parity."
                   "shared::cta.b64 p, [%0], %1;\\n@!p bra retry;\\n}\" :: "),
       "asm volatile(\"mbarrier.arrive.shared::cta.b64 _, [%0];\" :: " + bar1 + " : \"memory\");",
       std::string("asm volatile(\"bar.sync %0, 256;\" :: \"r\"(1) : \"memory\");"),
       std::string("  __syncthreads();\n")});
  GeneratedKernel generated;
  generated.name = k.name;
  generated.source = cuda;
  std::string unit = cuda::translationUnit({generated});
  EXPECT_NE(unit.find("struct alignas(64) fusec_tensor_map {"), std::string::npos);

  std::string ir = llvmir::render(k);
  expectContainsAll(
      ir,
      {"define ptx_kernel void @hopper(ptr byval([128 x i8]) align 64 %a_map, ptr byval([128 x "
       "i8]) align 64 %b_map, ptr noalias %out)",
       "!{ptr @hopper, !\"grid_constant\", !4}", "!4 = !{i32 1, i32 2}",
       "call void @llvm.nvvm.setmaxnreg.dec.sync.aligned.u32(i32 40)",
       "call void @llvm.nvvm.setmaxnreg.inc.sync.aligned.u32(i32 232)",
       "call void @llvm.nvvm.barrier.sync.cnt(i32 1, i32 256)",
       "call void asm sideeffect \"bar.arrive $0, 384;\", \"r,~{memory}\"(i32 2) #3",
       "attributes #3 = { convergent }",
       "\"mbarrier.init.shared::cta.b64 [$0], 256;\", \"r,~{memory}\"(i32 ptrtoint (ptr "
       "addrspace(3) getelementptr (i64, ptr addrspace(3) @hopper_bars, i64 1) to i32))",
       "\"fence.mbarrier_init.release.cluster;\", \"~{memory}\"()",
       "\"mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], 16384;\"",
       "\"cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [$0], "
       "[$1, {$3, $4}], [$2];\", \"r,l,r,r,r,~{memory}\"(i32 ptrtoint (ptr addrspace(3) "
       "@hopper_dynamic_shared to i32), ptr %a_map, ",
       "[$1, {$3, $4, $5}], [$2];\", \"r,l,r,r,r,r,~{memory}\"",
       "\"{\\0A.reg .pred p;\\0Aretry:\\0Ambarrier.try_wait.parity.shared::cta.b64 p, [$0], "
       "$1;\\0A@!p bra retry;\\0A}\", \"r,r,~{memory}\"",
       "\"mbarrier.arrive.shared::cta.b64 _, [$0];\""});

  // The tensor maps are read in place (cvta.param of the parameter), never copied to local memory.
  Diagnostics diags;
  std::optional<std::string> ptx = llvmir::compileToPtx(ir, "sm_90a", diags);
  ASSERT_TRUE(ptx) << diags.str();
  expectContainsAll(*ptx, {".param .align 64 .b8 hopper_param_0[128]", "cvta.param.u64",
                           "setmaxnreg.inc.sync.aligned.u32 232;", "barrier.sync \t1, 256;"});
  EXPECT_EQ(ptx->find(".local"), std::string::npos) << *ptx;
}

/// The cluster primitives in the sample of test/kir/KirSamples.h: a multicast TMA load, a remote
/// mbarrier arrival, the cluster barrier and a dependent launch's wait, printed and rendered.
TEST(Kir, ClusterPrimitivesPrintAndRenderOnBothBackEnds) {
  Kernel k = test::clusterSample();
  ASSERT_TRUE(verify(k).empty()) << verify(k).front();
  std::string text = print(k);
  expectContainsAll(text, {") maxthreads 128 dependent {", "  barrier.cluster\n",
                           ", (%t_6, %t_6) multicast 3\n",
                           "    mbarrier.arrive_remote %bars[%t_2], %t_6\n"});

  std::string cuda = cuda::render(k);
  expectContainsAll(
      cuda,
      {"  asm volatile(\"griddepcontrol.wait;\" ::: \"memory\");\n",
       "asm volatile(\"barrier.cluster.arrive.release;\\nbarrier.cluster.wait.acquire;\" ::: "
       "\"memory\");",
       "mov.b16 mask, 3;\\ncp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_"
       "tx::bytes.multicast::cluster [%0], [%1, {%3, %4}], [%2], mask;",
       "mapa.shared::cluster.u32 remote, %0, %1;\\nmbarrier.arrive.shared::cluster.b64 _, "
       "[remote];"});

  std::string ir = llvmir::render(k);
  expectContainsAll(
      ir, {"call void asm sideeffect \"griddepcontrol.wait;\", \"~{memory}\"()",
           "\"barrier.cluster.arrive.release;\\0Abarrier.cluster.wait.acquire;\", \"~{memory}\"()",
           "bytes.multicast::cluster [$0], [$1, {$3, $4}], [$2], mask;\\0A}\", "
           "\"r,l,r,r,r,~{memory}\"",
           "mapa.shared::cluster.u32 remote, $0, $1;\\0Ambarrier.arrive.shared::cluster.b64 _, "
           "[remote];\\0A}\", \"r,r,~{memory}\""});
  // griddepcontrol.wait comes first, before any other instruction of the kernel.
  EXPECT_LT(ir.find("griddepcontrol.wait"), ir.find("mbarrier.init")) << ir;
}

TEST(Kir, StorePrimitivesPrintAndRenderOnBothBackEnds) {
  Kernel k = test::storeSample();
  ASSERT_TRUE(verify(k).empty()) << verify(k).front();
  std::string text = print(k);
  expectContainsAll(text,
                    {"  %lo = unpack.f16.lo %word : f32\n", "  %hi = unpack.f16.hi %word : f32\n",
                     "  barrier.warp\n", "    tma.store.2d %map, (%x, %t_5), %smem[%t_2]\n",
                     "    cp.async.bulk.commit_group\n", "    cp.async.bulk.wait_group.read 0\n"});

  std::string cuda = cuda::render(k);
  expectContainsAll(
      cuda, {"const float lo = fusec_unpack_f16_lo(word);",
             "const float hi = fusec_unpack_f16_hi(word);", "  __syncwarp();\n",
             "asm volatile(\"cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%1, {%2, %3}], "
             "[%0];\" :: \"r\"((fusec_smem_u32(store_smem) + (unsigned)(0LL))), \"l\"(&map), "
             "\"r\"(x), \"r\"(0) : \"memory\");",
             "asm volatile(\"cp.async.bulk.commit_group;\" ::: \"memory\");",
             "asm volatile(\"cp.async.bulk.wait_group.read 0;\" ::: \"memory\");"});

  std::string ir = llvmir::render(k);
  expectContainsAll(
      ir, {"lshr i32 %word, 16", "bitcast i16", "fpext half",
           "call void @llvm.nvvm.bar.warp.sync(i32 -1)",
           "\"cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [$1, {$2, $3}], [$0];\", "
           "\"r,l,r,r,~{memory}\"",
           "\"cp.async.bulk.commit_group;\", \"~{memory}\"()",
           "\"cp.async.bulk.wait_group.read 0;\", \"~{memory}\"()"});
}

/// What the verifier refuses of the sm_90 primitives, each named for its reason.
TEST(Kir, TheVerifierRefusesMisusedHopperPrimitives) {
  Kernel k;
  k.name = "bad";
  Builder b(k);
  ValueId map = b.tensorMapParam("map");
  ValueId out = b.param("out", Type::pointer(DType::I64, Space::Global));
  ValueId smem = b.dynamicShared(DType::I8, "smem");
  ValueId words = b.sharedArray(DType::I32, 2, "words");
  ValueId bars = b.sharedArray(DType::I64, 2, "bars", 8);
  ValueId zero = b.index(0);
  ValueId x = b.constant(DType::I32, 0);
  ValueId id0 = b.constant(DType::I32, 0);
  ValueId id1 = b.constant(DType::I32, 1);
  auto refusal = [&](const std::function<void()> &build, const std::string &why) {
    size_t before = k.body.size();
    build();
    std::vector<std::string> errors = verify(k);
    ASSERT_EQ(errors.size(), 1u) << why;
    EXPECT_NE(errors[0].find(why), std::string::npos) << errors[0];
    k.body.resize(before);
  };
  ASSERT_TRUE(verify(k).empty()) << verify(k).front();
  std::vector<ValueId> two = {x, x}, wide = {zero, x}, six(6, x);
  refusal([&] { b.tensorLoad(smem, zero, map, words, zero, two); },
          "a tma load: tma loads the box at 1 to 5 i32 coordinates");
  refusal([&] { b.tensorLoad(smem, zero, map, bars, zero, wide); }, "a tma load: tma loads");
  refusal([&] { b.tensorLoad(smem, zero, map, bars, zero, six); }, "a tma load: tma loads");
  refusal([&] { b.tensorLoad(smem, zero, out, bars, zero, {x}); }, "a tma load: tma loads");
  refusal([&] { b.load(map, zero, 1, "peek"); },
          "%peek: uses tensor map %map, which only a tma load or store takes");
  refusal([&] { b.tensorLoad(map, zero, map, bars, zero, {x}); },
          "uses tensor map %map, which only a tma load or store takes");
  refusal([&] { b.param("p", Type::pointer(DType::F32, Space::Param)); },
          "a parameter in the param space is a tensor map, not ptr<param f32>");
  refusal([&] { b.mbarrierInit(words, zero, 1); },
          "an mbarrier: an mbarrier is an element of a shared i64 array, not of ptr<shared i32>");
  refusal([&] { b.mbarrierArrive(out, zero); }, "not of ptr<global i64>");
  refusal([&] { b.mbarrierInit(bars, zero, 0); }, "mbarrier.init expects 1 to 2^20 - 1 arrivals");
  refusal([&] { b.mbarrierExpectTx(bars, zero, 1 << 20); },
          "mbarrier.expect_tx expects 0 to 2^20 - 1 bytes, not 1048576");
  refusal([&] { b.mbarrierWait(bars, zero, zero); }, "mbarrier.wait takes an i32 parity, not i64");
  refusal([&] { b.mbarrierArriveRemote(bars, zero, zero); },
          "a remote mbarrier arrival takes the i32 rank of a block of the cluster, not i64");
  refusal([&] { b.mbarrierArriveRemote(words, zero, x); }, "not of ptr<shared i32>");
  refusal([&] { b.tensorLoad(smem, zero, map, words, zero, two, 3); }, "a tma load: tma loads");
  refusal([&] { b.tensorStore(smem, zero, map, wide); },
          "a tma store: tma stores a shared address to the box at 1 to 5 i32 coordinates");
  refusal([&] { b.tensorStore(out, zero, map, two); }, "a tma store: tma stores");
  refusal([&] { b.tensorStore(smem, zero, out, two); }, "a tma store: tma stores");
  refusal([&] { b.bulkWait(8); }, "cp.async.bulk.wait_group waits for 0 to 7 groups");
  refusal([&] { b.unpack(DType::F16, zero, 0); },
          "unpacks the low or high f16 or bf16 half of an i32");
  refusal([&] { b.unpack(DType::F32, x, 1); }, "unpacks the low or high f16 or bf16 half");
  refusal([&] { b.barrier(id0, 256); }, "a barrier: a named barrier's id is an i32 from 1 to 15");
  refusal([&] { b.barrierArrive(zero, 256); }, "a named barrier's id is an i32");
  refusal([&] { b.barrier(id1, 100); },
          "a named barrier counts a multiple of 32 threads up to 1024, not 100");
  refusal([&] { k.body.push_back({.op = Opcode::Barrier, .arrive = true}); },
          "the block's barrier (bar.sync 0) takes no thread count");
  refusal(
      [&] {
        k.body.push_back({.op = Opcode::Barrier, .operands = {id1}, .imm = 256, .cluster = true});
      },
      "the cluster's barrier names no barrier");
  refusal([&] { b.setMaxRegisters(240, true); },
          "a setmaxnreg: setmaxnreg needs the kernel's maxthreads and minblocks");
  k.maxThreads = 384;
  refusal([&] { b.setMaxRegisters(240, true); }, "needs the kernel's maxthreads and minblocks");
  k.minBlocks = 1;
  refusal([&] { b.setMaxRegisters(20, true); },
          "setmaxnreg sets 24 to 256 registers, a multiple of 8, not 20");
  refusal([&] { b.setMaxRegisters(244, false); }, "a multiple of 8, not 244");
  b.setMaxRegisters(240, true);
  b.barrier(id1, 256);
  EXPECT_TRUE(verify(k).empty()) << verify(k).front();
}

/// A block of several rows: the row is tid.y; launch bounds with a minimum of blocks an SM.
TEST(Kir, SecondThreadAxisAndMinimumBlocksRenderOnBothBackEnds) {
  Kernel k;
  k.name = "rows";
  k.maxThreads = 128;
  k.minBlocks = 5;
  Builder b(k);
  ValueId out = b.param("out", Type::pointer(DType::I64, Space::Global));
  ValueId row = b.special(Special::TidY);
  b.store(out, row, row);
  ASSERT_TRUE(verify(k).empty()) << verify(k).front();
  std::string text = print(k);
  EXPECT_NE(text.find("maxthreads 128 minblocks 5"), std::string::npos) << text;
  EXPECT_NE(text.find("tid.y"), std::string::npos) << text;
  std::string cuda = cuda::render(k);
  EXPECT_NE(cuda.find("__launch_bounds__(128, 5)"), std::string::npos) << cuda;
  EXPECT_NE(cuda.find("(long long)threadIdx.y"), std::string::npos) << cuda;
  std::string ir = llvmir::render(k);
  EXPECT_NE(ir.find("@llvm.nvvm.read.ptx.sreg.tid.y()"), std::string::npos) << ir;
  EXPECT_NE(ir.find("minctasm"), std::string::npos) << ir;
}

/// f16 pairs widened and narrowed as one 32-bit word; a shared array aligned
/// to its element.
TEST(Kir, PairConversionsAndSharedAlignmentRenderOnBothBackEnds) {
  Kernel k;
  k.name = "pairs";
  Builder b(k);
  ValueId in = b.param("in", Type::pointer(DType::F16, Space::Global), true);
  ValueId out = b.param("out", Type::pointer(DType::F16, Space::Global));
  ValueId zero = b.index(0);
  ValueId wide = b.widen(DType::F16, b.load(in, zero, 2), "wide");
  b.store(out, zero, b.narrow(DType::F16, wide), 2);
  b.sharedArray(DType::F32, 32, "slots", 4);
  b.literal(DType::F64, 0.5, "half");
  b.literal(DType::I32, -3, "minus3");
  ASSERT_TRUE(verify(k).empty()) << verify(k).front();
  std::string text = print(k);
  EXPECT_NE(text.find("%half = literal 0.5 : f64"), std::string::npos) << text;
  EXPECT_NE(text.find("%minus3 = literal -3 : i32"), std::string::npos) << text;
  EXPECT_NE(text.find("widen f16 %t_1 : f32x2"), std::string::npos) << text;
  EXPECT_NE(text.find("narrow f16 %wide : f16x2"), std::string::npos) << text;
  EXPECT_NE(text.find("alloca f32[32] align 4 : ptr<shared f32>"), std::string::npos) << text;
  std::string cuda = cuda::render(k);
  EXPECT_NE(cuda.find("const fusec_v8 wide = fusec_f16x2_to_f32x2("), std::string::npos) << cuda;
  EXPECT_NE(cuda.find("fusec_f32x2_to_f16x2(wide)"), std::string::npos) << cuda;
  EXPECT_NE(cuda.find("__shared__ alignas(4) float slots[32];"), std::string::npos) << cuda;
  std::string ir = llvmir::render(k);
  EXPECT_NE(ir.find("fpext <2 x half> %"), std::string::npos) << ir;
  EXPECT_NE(ir.find("fptrunc <2 x float> %wide to <2 x half>"), std::string::npos) << ir;
  EXPECT_NE(ir.find("@pairs_slots = internal addrspace(3) global [32 x float] undef, align 4"),
            std::string::npos)
      << ir;

  // Narrowing what is not f32 (4 halves), or aligning below the element,
  // is refused.
  b.narrow(DType::F16, b.load(in, zero, 4));
  b.sharedArray(DType::F32, 32, "loose", 2);
  std::vector<std::string> errors = verify(k);
  ASSERT_EQ(errors.size(), 2u) << errors.front();
  EXPECT_NE(errors[0].find("converts from f32, not f16x4"), std::string::npos) << errors[0];
  EXPECT_NE(errors[1].find("aligns to 2 bytes"), std::string::npos) << errors[1];
}

TEST(Kir, PrintedFormNamesEveryValueOnce) {
  std::string text = print(doubleKernel());
  EXPECT_NE(
      text.find("kernel @twice(%in: ptr<global f16> readonly, %out: ptr<global f16>, %n: i64)"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("  for %i = %t to %n step %t_1 {"), std::string::npos) << text;
  EXPECT_NE(text.find("    %y = math mul(%x, %two) f16 -> f16 : f32"), std::string::npos) << text;
  EXPECT_NE(text.find("    store %out[%i], %t_3 : f16"), std::string::npos) << text;
}

} // namespace
