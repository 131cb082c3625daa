// Tuning on the GPU (skipped without one, with the reason), on each gemm schedule (wgmma on
// sm_90a, mma.sync, SIMT): --tune times a gemm kernel's candidate configs, keeps the fastest in
// the tuning cache and runs it, matching the CPU reference (odd sizes, outputs poisoned first); a
// new cache over the same directory (what a new process sees) hits the entry and compiles the same
// schedule; without --tune an unknown kernel misses and keeps the template's choice; a kernel whose
// config the model sets is not tuned.
#include "ir/TextFormat.h"
#include "runtime/CompilePipeline.h"
#include "runtime/gpu/GpuHost.h"
#include "runtime/reference/Equivalence.h"
#include "runtime/reference/Reference.h"

#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

namespace fusec {
namespace {

// One gemm a schedule: sm_90a's warp-specialized wgmma (f16 operands), mma.sync (a weight cast
// from f32 in the prologue, which the warp-specialized schedule does not take), SIMT (f32).
constexpr const char *kModels[] = {
    R"(func @mlp(%x: f16[777,384], %w: f16[320,384], %b: f16[320]) -> f16[777,320] {
  %l = linear(%x, %w, %b) : f16[777,320]
  %y = gelu(%l) : f16[777,320]
  return %y
}
)",
    R"(func @mlp(%x: f16[777,384], %w: f32[320,384], %b: f16[320]) -> f16[777,320] {
  %wh = cast(%w) {to = f16} : f16[320,384]
  %l = linear(%x, %wh, %b) : f16[777,320]
  %y = gelu(%l) : f16[777,320]
  return %y
}
)",
    R"(func @mlp(%x: f32[777,384], %w: f32[320,384], %b: f32[320]) -> f32[777,320] {
  %l = linear(%x, %w, %b) : f32[777,320]
  %y = gelu(%l) : f32[777,320]
  return %y
}
)"};

class TuningGpuTest : public ::testing::TestWithParam<int> {
protected:
  void SetUp() override {
    std::string whyNot;
    if (!gpu::openDevice(&whyNot))
      GTEST_SKIP() << "no GPU: " << whyNot;
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("fusec-tuning-gpu-test", dir));
  }
  void TearDown() override {
    if (!dir.empty())
      llvm::sys::fs::remove_directories(dir);
  }

  /// The model, optimized, with `config` set on its gemm kernel when given.
  std::unique_ptr<Module> model(const std::string &config = "") {
    Diagnostics diags;
    std::unique_ptr<Module> m = parseModule(kModels[GetParam()], "<tuning>", diags);
    EXPECT_TRUE(m && prepareModule(*m, PrecisionChoice::FP32, diags)) << diags.str();
    for (const auto &op : m->graphs[0]->ops())
      if (op->kind() == OpKind::Kernel && !config.empty())
        op->setAttr("config", config);
    return m;
  }

  /// The program's gemm kernel's report.
  static const GpuKernelReport &gemmOf(const GpuProgram &p) {
    for (const GpuKernelReport &k : p.kernels())
      if (k.templateName == "gemm")
        return k;
    ADD_FAILURE() << "no gemm kernel";
    return p.kernels().front();
  }

  std::unique_ptr<GpuProgram> build(const Graph &g, TuningMode mode, TuningCache &tuning) {
    GpuBuildOptions opts;
    opts.cache = &kernels;
    opts.tuning = mode;
    opts.tuningCache = &tuning;
    Diagnostics diags;
    std::unique_ptr<GpuProgram> p =
        buildGpuProgram(g, {{777, 384}, {320, 384}, {320}}, opts, diags);
    EXPECT_TRUE(p) << diags.str();
    return p;
  }

  /// Runs `p` on seeded random inputs and compares with the CPU reference of `g`.
  void expectMatchesReference(GpuProgram &p, const Graph &original) {
    Diagnostics diags;
    std::vector<Tensor> inputs, want, got;
    for (unsigned i = 0; i < original.numInputs(); ++i) {
      const TensorType &t = original.input(i)->type();
      inputs.emplace_back(t.dtype, staticSizes(t.shape));
      fillRandom(inputs.back(), 31 + i);
    }
    ASSERT_TRUE(runReference(original, inputs, want, diags)) << diags.str();
    ASSERT_TRUE(runOnHostTensors(p, inputs, got, diags)) << diags.str();
    EquivalenceResult r;
    r.tolerance = gpuToleranceFor(original.outputs()[0]->type().dtype);
    compareOutput(original, 0, want[0], got[0], r);
    EXPECT_LE(r.worstError, r.tolerance) << r.worstWhere;
  }

  llvm::SmallString<128> dir;
  KernelCache kernels{""};
};

TEST_P(TuningGpuTest, TunesOnceThenANewProcessHits) {
  std::unique_ptr<Module> m = model();
  Diagnostics diags;
  std::unique_ptr<Module> original = parseModule(kModels[GetParam()], "<tuning>", diags);
  ASSERT_TRUE(m && original);
  std::string schedule;
  {
    TuningCache tuning{std::string(dir.str())};
    std::unique_ptr<GpuProgram> p = build(*m->graphs[0], TuningMode::Tune, tuning);
    ASSERT_TRUE(p);
    const GpuKernelReport &k = gemmOf(*p);
    EXPECT_EQ(k.tuning.rfind("tuned [", 0), 0u) << k.tuning;
    EXPECT_NE(k.tuning.find("candidates"), std::string::npos) << k.tuning;
    schedule = k.schedule;
    expectMatchesReference(*p, *original->graphs[0]);
  }
  TuningCache fresh{std::string(dir.str())};
  std::unique_ptr<GpuProgram> again = build(*m->graphs[0], TuningMode::Cached, fresh);
  ASSERT_TRUE(again);
  const GpuKernelReport &k = gemmOf(*again);
  EXPECT_EQ(k.tuning.rfind("hit [", 0), 0u) << k.tuning;
  EXPECT_EQ(k.schedule, schedule);
  expectMatchesReference(*again, *original->graphs[0]);
}

TEST_P(TuningGpuTest, WithoutTuneAnUnknownKernelMisses) {
  std::unique_ptr<Module> m = model();
  ASSERT_TRUE(m);
  TuningCache tuning{std::string(dir.str())};
  std::unique_ptr<GpuProgram> p = build(*m->graphs[0], TuningMode::Cached, tuning);
  ASSERT_TRUE(p);
  EXPECT_EQ(gemmOf(*p).tuning.rfind("miss [", 0), 0u) << gemmOf(*p).tuning;
  std::error_code ec;
  EXPECT_TRUE(llvm::sys::fs::directory_iterator(dir, ec) == llvm::sys::fs::directory_iterator())
      << "a miss stores nothing";
}

TEST_P(TuningGpuTest, AConfigTheModelSetsIsNotTuned) {
  std::unique_ptr<Module> m = model("group=4");
  ASSERT_TRUE(m);
  TuningCache tuning{std::string(dir.str())};
  std::unique_ptr<GpuProgram> p = build(*m->graphs[0], TuningMode::Tune, tuning);
  ASSERT_TRUE(p);
  EXPECT_EQ(gemmOf(*p).tuning, "");
}

INSTANTIATE_TEST_SUITE_P(Schedules, TuningGpuTest, ::testing::Values(0, 1, 2),
                         [](const ::testing::TestParamInfo<int> &info) {
                           return std::string(info.param == 0   ? "wgmma"
                                              : info.param == 1 ? "mma_sync"
                                                                : "simt");
                         });

} // namespace
} // namespace fusec
