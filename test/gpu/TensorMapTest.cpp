// GPU tests of TMA tensor maps (sm_90 and later; skipped elsewhere, with the reason): a map
// encoded over a device buffer loads a box with cp.async.bulk.tensor, zeros past the view's dims
// (even where the buffer goes on) and the 128-byte swizzle where it is asked for; and a program
// whose kernel takes a map encodes it per input buffer, through graph capture and replay, and
// refuses a view TMA cannot take when it is loaded.
//
// The kernel is hand-written CUDA C++ (NVRTC): one thread arms an mbarrier and issues the copy,
// every thread waits for the barrier's phase 0 and copies the shared box out as it landed.
#include "runtime/gpu/TensorMap.h"

#include "ir/TextFormat.h"
#include "runtime/CompilePipeline.h"
#include "runtime/gpu/CudaDriver.h"
#include "runtime/gpu/GpuHost.h"
#include "runtime/gpu/Nvrtc.h"

#include <gtest/gtest.h>
#include <vector>

namespace fusec {
namespace {

constexpr const char *kKernel =
    R"(struct alignas(64) tma_test_map { unsigned long long words[16]; };

extern "C" __global__ void tma_test_box(const __grid_constant__ tma_test_map map,
                                        unsigned short *out, long long x, long long y,
                                        long long bytes) {
  __shared__ __align__(1024) unsigned short box[64 * 16];
  __shared__ __align__(8) unsigned long long bar;
  unsigned b = (unsigned)__cvta_generic_to_shared(&bar);
  unsigned s = (unsigned)__cvta_generic_to_shared(box);
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                 :: "r"(b), "r"((unsigned)bytes) : "memory");
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];"
                 :: "r"(s), "l"((unsigned long long)&map), "r"((int)x), "r"((int)y), "r"(b)
                 : "memory");
  }
  __syncthreads();
  asm volatile("{\n.reg .pred done;\ntma_test_wait:\n"
               "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
               "@!done bra tma_test_wait;\n}" :: "r"(b), "r"(0u) : "memory");
  for (long long i = threadIdx.x; i < bytes / 2; i += blockDim.x)
    out[i] = box[i];
}
)";

// The tensor: 40 rows of 80 f16 (as bits), of which a view takes the first 72 columns; the 8
// beyond hold 0xBEEF, which no box may show.
constexpr int kRows = 40, kCols = 80, kViewCols = 72;

uint16_t element(int r, int c, uint16_t seed) {
  return c < kViewCols ? uint16_t(seed + r * 100 + c + 1) : 0xBEEF;
}

std::vector<uint16_t> tensorData(uint16_t seed) {
  std::vector<uint16_t> data(kRows * kCols);
  for (int r = 0; r < kRows; ++r)
    for (int c = 0; c < kCols; ++c)
      data[r * kCols + c] = element(r, c, seed);
  return data;
}

/// What a box of 64 x `rows` at (x, y) holds in shared memory: zeros outside the view, its 16-byte
/// chunks swizzled (chunk c of row r at c ^ r % 8) for a 128-byte swizzle.
std::vector<uint16_t> expectedBox(int x, int y, int rows, unsigned swizzle, uint16_t seed) {
  std::vector<uint16_t> box(64 * rows);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < 64; ++c) {
      bool inside = y + r < kRows && x + c < kViewCols;
      int at = swizzle == 128 ? (c / 8 ^ r % 8) * 8 + c % 8 : c;
      box[r * 64 + at] = inside ? element(y + r, x + c, seed) : 0;
    }
  return box;
}

KernelArg::TensorView view(unsigned boxRows, unsigned swizzle) {
  KernelArg::TensorView v;
  v.dims = {kViewCols, kRows};
  v.strides = {kCols};
  v.box = {64, boxRows};
  v.swizzle = swizzle;
  return v;
}

/// Skips without an sm_90 device; else its target.
std::optional<std::string> hopperTarget(std::string &whyNot) {
  std::optional<gpu::DeviceInfo> device = gpu::openDevice(&whyNot);
  if (!device)
    return std::nullopt;
  if (device->major < 9) {
    whyNot = "TMA needs sm_90; this is " + device->name + " (" + device->target() + ")";
    return std::nullopt;
  }
  return device->target();
}

/// Device memory freed on scope exit.
struct Buffer {
  gpu::DevicePtr p = 0;
  ~Buffer() { gpu::release(p); }
};

TEST(TensorMapGpu, EncodedMapLoadsBoxes) {
  std::string whyNot;
  std::optional<std::string> target = hopperTarget(whyNot);
  if (!target)
    GTEST_SKIP() << whyNot;
  Diagnostics diags;
  std::optional<std::string> ptx = compileToPtx({kKernel, "tma_test_box", *target}, diags);
  ASSERT_TRUE(ptx) << diags.str();
  std::optional<gpu::Module> module = gpu::loadModule(*ptx, "tma_test_box", diags);
  ASSERT_TRUE(module) << diags.str();
  std::optional<gpu::Function> f = gpu::getFunction(*module, "tma_test_box", diags);
  ASSERT_TRUE(f) << diags.str();
  std::vector<uint16_t> data = tensorData(0);
  Buffer in, out;
  in.p = gpu::allocate(data.size() * 2, diags, "tensor").value_or(0);
  out.p = gpu::allocate(64 * 16 * 2, diags, "box").value_or(0);
  ASSERT_TRUE(in.p && out.p) << diags.str();
  ASSERT_TRUE(gpu::copyToDevice(in.p, data.data(), data.size() * 2, diags)) << diags.str();
  struct Case {
    int x, y, rows;
    unsigned swizzle;
  };
  // Inside; reaching past both dims (zeros); the 128-byte swizzle.
  for (Case c : {Case{0, 0, 16, 0}, Case{32, 30, 16, 0}, Case{8, 3, 8, 128}}) {
    SCOPED_TRACE("box at (" + std::to_string(c.x) + ", " + std::to_string(c.y) + "), swizzle " +
                 std::to_string(c.swizzle));
    std::optional<gpu::TensorMapBytes> map =
        gpu::encodeTensorMap(in.p, DType::F16, view(c.rows, c.swizzle), diags, "the test's map");
    ASSERT_TRUE(map) << diags.str();
    ASSERT_TRUE(gpu::fill(out.p, 0xff, 64 * 16 * 2, diags)) << diags.str();
    uint64_t x = c.x, y = c.y, bytes = 64 * c.rows * 2;
    gpu::KernelParams params;
    params.addTensorMap(*map);
    params.addWord(out.p), params.addWord(x), params.addWord(y), params.addWord(bytes);
    ASSERT_TRUE(gpu::launch(*f, {{1, 1, 1}, {128, 1, 1}, 0}, params.pointers(), nullptr, diags,
                            "tma_test_box") &&
                gpu::synchronize(nullptr, diags))
        << diags.str();
    std::vector<uint16_t> got(64 * c.rows);
    ASSERT_TRUE(gpu::copyToHost(got.data(), out.p, got.size() * 2, diags)) << diags.str();
    EXPECT_EQ(got, expectedBox(c.x, c.y, c.rows, c.swizzle, 0));
  }
  gpu::unloadModule(*module);
}

/// A program of one step whose kernel is tma_test_box over its input (f16[40,80]), writing the
/// box at (32, 30) to its output; `v` is the view of its map.
std::unique_ptr<GpuProgram> boxProgram(const KernelArg::TensorView &v, const std::string &target,
                                       Diagnostics &diags) {
  std::unique_ptr<Module> m = parseModule(R"(func @tma(%x: f16[40,80]) -> f16[40,80] {
  %y = neg(%x) : f16[40,80]
  return %y
}
)",
                                          "tma.fir", diags);
  EntryNamer names;
  std::optional<LoweredProgram> lowered =
      m ? lowerProgram(*m->graphs.front(), {{kRows, kCols}}, names, true, Backend::Nvrtc, target,
                       nullptr, diags)
        : std::nullopt;
  if (!lowered)
    return nullptr;
  EXPECT_EQ(lowered->steps.steps.size(), 1u);
  GeneratedKernel &k = lowered->steps.steps.front().kernel;
  k.name = "tma_test_box";
  k.source = kKernel;
  k.args = {{KernelArg::Kind::TensorMap, "map", 0, 0, std::nullopt, DType::F16, v},
            {KernelArg::Kind::Output, "out", 0, 0, std::nullopt},
            {KernelArg::Kind::NumElements, "x", 0, 0, 32},
            {KernelArg::Kind::NumElements, "y", 0, 0, 30},
            {KernelArg::Kind::NumElements, "bytes", 0, 0, 64 * 16 * 2}};
  k.launch = LaunchConfig{{1, 1, 1}, {128, 1, 1}, 0};
  GpuBuildOptions opts;
  opts.target = target;
  std::unique_ptr<GpuProgram> p = GpuProgram::create(std::move(*lowered), opts, diags);
  if (!p || !p->compile(diags) || !p->load(diags))
    return nullptr;
  return p;
}

/// Runs `p` on `in` (a host tensor of seed `seed` already there) and checks the box.
void expectRun(GpuProgram &p, gpu::DevicePtr in, gpu::DevicePtr out, gpu::Stream stream,
               bool direct, uint16_t seed) {
  Diagnostics diags;
  ASSERT_TRUE(gpu::fill(out, 0xff, kRows * kCols * 2, diags)) << diags.str();
  bool ok =
      direct ? p.enqueueDirect({in}, {out}, stream, diags) : p.enqueue({in}, {out}, stream, diags);
  ASSERT_TRUE(ok && gpu::synchronize(stream, diags)) << diags.str();
  std::vector<uint16_t> got(64 * 16);
  ASSERT_TRUE(gpu::copyToHost(got.data(), out, got.size() * 2, diags)) << diags.str();
  EXPECT_EQ(got, expectedBox(32, 30, 16, 0, seed));
}

// Two input buffers: the first run captures a graph with the map of A, the second encodes B's
// and captures again, the third replays A's graph (its own copy of A's map), the fourth launches
// directly with B's map.
TEST(TensorMapGpu, ProgramEncodesPerBufferThroughGraphs) {
  std::string whyNot;
  std::optional<std::string> target = hopperTarget(whyNot);
  if (!target)
    GTEST_SKIP() << whyNot;
  Diagnostics diags;
  std::unique_ptr<GpuProgram> p = boxProgram(view(16, 0), *target, diags);
  ASSERT_TRUE(p) << diags.str();
  std::vector<uint16_t> a = tensorData(0), b = tensorData(7);
  size_t bytes = a.size() * 2;
  Buffer inA, inB, out;
  inA.p = gpu::allocate(bytes, diags, "A").value_or(0);
  inB.p = gpu::allocate(bytes, diags, "B").value_or(0);
  out.p = gpu::allocate(bytes, diags, "out").value_or(0);
  ASSERT_TRUE(inA.p && inB.p && out.p) << diags.str();
  ASSERT_TRUE(gpu::copyToDevice(inA.p, a.data(), bytes, diags) &&
              gpu::copyToDevice(inB.p, b.data(), bytes, diags))
      << diags.str();
  std::optional<gpu::Stream> stream = gpu::createStream(diags);
  ASSERT_TRUE(stream) << diags.str();
  expectRun(*p, inA.p, out.p, *stream, false, 0);
  expectRun(*p, inB.p, out.p, *stream, false, 7);
  expectRun(*p, inA.p, out.p, *stream, false, 0);
  expectRun(*p, inB.p, out.p, *stream, true, 7);
  gpu::destroyStream(*stream);
}

TEST(TensorMapGpu, ProgramRefusesAViewTmaCannotTake) {
  std::string whyNot;
  std::optional<std::string> target = hopperTarget(whyNot);
  if (!target)
    GTEST_SKIP() << whyNot;
  Diagnostics diags;
  KernelArg::TensorView v = view(16, 0);
  v.strides = {76}; // 152 bytes
  EXPECT_FALSE(boxProgram(v, *target, diags));
  EXPECT_NE(diags.str().find("error: kernel 'tma_test_box': tensor map 'map' over operand 0 "
                             "(f16[40,80]): strides[0] is 76 elements (152 bytes); TMA takes a "
                             "positive multiple of 16 bytes below 2^40"),
            std::string::npos)
      << diags.str();
}

} // namespace
} // namespace fusec
