// The NVRTC driver: compiles a kernel to PTX, and a syntax error comes back
// as a diagnostic carrying NVRTC's log and the program's name. Skipped, with
// the reason, where NVRTC cannot be loaded.
#include "runtime/gpu/Nvrtc.h"

#include "runtime/gpu/CudaDriver.h"

#include <cstdio>
#include <gtest/gtest.h>

using namespace fusec;

TEST(NvrtcTest, CompilesKernelToPtx) {
  std::string whyNot;
  if (!loadNvrtc(&whyNot))
    GTEST_SKIP() << whyNot;
  Diagnostics diags;
  std::optional<std::string> ptx =
      compileToPtx({"extern \"C\" __global__ void twice(float *x) { x[threadIdx.x] *= 2.0f; }",
                    "twice", "sm_80"},
                   diags);
  ASSERT_TRUE(ptx) << diags.str();
  EXPECT_NE(ptx->find(".target sm_80"), std::string::npos);
  EXPECT_NE(ptx->find(".entry twice"), std::string::npos);
}

TEST(NvrtcTest, SyntaxErrorCarriesLogAndProgramName) {
  std::string whyNot;
  if (!loadNvrtc(&whyNot))
    GTEST_SKIP() << whyNot;
  Diagnostics diags;
  std::optional<std::string> ptx =
      compileToPtx({"extern \"C\" __global__ void broken(float *x) { x[0] = undeclared_name; }",
                    "broken", "sm_90a"},
                   diags);
  EXPECT_FALSE(ptx);
  std::string text = diags.str();
  EXPECT_NE(text.find("NVRTC failed to compile program 'broken' for sm_90a"), std::string::npos);
  EXPECT_NE(text.find("undeclared_name"), std::string::npos) << text; // from NVRTC's log
  size_t at = text.find("source saved to ");
  ASSERT_NE(at, std::string::npos) << text;
  std::string saved = text.substr(at + 16, text.find('\n', at) - at - 16);
  EXPECT_EQ(std::remove(saved.c_str()), 0) << "no saved source at '" << saved << "'";
}

TEST(NvrtcTest, UnknownTargetIsAnError) {
  std::string whyNot;
  if (!loadNvrtc(&whyNot))
    GTEST_SKIP() << whyNot;
  Diagnostics diags;
  EXPECT_FALSE(compileToPtx({"__global__ void k() {}", "k", "gfx90a"}, diags));
  EXPECT_NE(diags.str().find("unknown GPU target 'gfx90a'"), std::string::npos);
}

// Which compiled code a device loads: a cubin of its own major version (no newer minor; an "a"
// target only on its own architecture), and the PTX of any older target (the driver's JIT).
TEST(NvrtcTest, TargetsRunOnNewerDevicesThroughPtx) {
  EXPECT_TRUE(gpu::cubinRunsOn("sm_90a", 9, 0));
  EXPECT_TRUE(gpu::cubinRunsOn("sm_80", 8, 6));
  EXPECT_FALSE(gpu::cubinRunsOn("sm_86", 8, 0));
  EXPECT_FALSE(gpu::cubinRunsOn("sm_80", 9, 0));
  EXPECT_TRUE(gpu::targetRunsOn("sm_80", 9, 0)); // the H100 JIT-compiles sm_80 PTX
  EXPECT_TRUE(gpu::targetRunsOn("sm_90", 9, 0));
  EXPECT_FALSE(gpu::targetRunsOn("sm_90a", 10, 0));
  EXPECT_FALSE(gpu::targetRunsOn("sm_90", 8, 0));
  EXPECT_FALSE(gpu::targetRunsOn("compute_90", 9, 0));
}
