// TMA tensor map arguments without a GPU: the views a program refuses when it is loaded, each
// with the limit it breaks (cuTensorMapEncodeTiled's, cuda.h), the launch-time refusal of a
// misaligned buffer (before any driver call), and the packing of parameters of mixed sizes.
#include "runtime/gpu/TensorMap.h"

#include "ir/TextFormat.h"

#include <cstdint>
#include <functional>
#include <gtest/gtest.h>

using namespace fusec;

namespace {

/// A legal 3-d view of f16: 64 columns of 128 rows of 6 heads, boxes of 64 x 32, 128-byte
/// swizzle (what the attention template reads K with).
KernelArg::TensorView goodView() {
  KernelArg::TensorView v;
  v.dims = {64, 128, 6};
  v.strides = {64, 64 * 128};
  v.box = {64, 32, 1};
  v.swizzle = 128;
  return v;
}

KernelArg mapArg(KernelArg::TensorView v, DType t = DType::F16) {
  KernelArg a{KernelArg::Kind::TensorMap, "kMap", 0, 0, std::nullopt, t, std::move(v)};
  return a;
}

/// tensorViewProblem of goodView() after `edit`.
std::string problemAfter(const std::function<void(KernelArg::TensorView &)> &edit,
                         DType t = DType::F16) {
  KernelArg::TensorView v = goodView();
  edit(v);
  return tensorViewProblem(v, t);
}

TEST(TensorMapTest, LegalViewsPass) {
  EXPECT_EQ(tensorViewProblem(goodView(), DType::F16), "");
  KernelArg::TensorView flat; // rank 1, f32, no swizzle, a box of 4 floats (16 bytes)
  flat.dims = {1000};
  flat.box = {4};
  flat.swizzle = 0;
  EXPECT_EQ(tensorViewProblem(flat, DType::F32), "");
  // A box may reach past the tensor (TMA fills zeros), and strides need not nest (a permuted view).
  EXPECT_EQ(problemAfter([](auto &v) { v.dims = {64, 16, 6}, v.strides = {64 * 6, 64}; }), "");
}

/// A legal im2col view of f16: NHWC 2 x 17 x 17 x 128, 64 channels of 128 pixels a load, a 3 x 3
/// window of stride 2 and pad 1 (cuTensorMapEncodeIm2col's arguments; Tiles.cpp windowPanels).
KernelArg::TensorView im2colView() {
  KernelArg::TensorView v;
  v.dims = {128, 17, 17, 2};
  v.strides = {128, 128 * 17, 128 * 17 * 17};
  v.box = {64, 128};
  v.swizzle = 128;
  v.im2col = KernelArg::TensorView::Im2col{{-1, -1}, {-1, -1}, {1, 2, 2, 1}};
  return v;
}

TEST(TensorMapTest, Im2colViewsAreChecked) {
  EXPECT_EQ(tensorViewProblem(im2colView(), DType::F16), "");
  auto problem = [](const std::function<void(KernelArg::TensorView &)> &edit) {
    KernelArg::TensorView v = im2colView();
    edit(v);
    return tensorViewProblem(v, DType::F16);
  };
  EXPECT_EQ(problem([](auto &v) {
              v.dims.pop_back(), v.dims.pop_back(), v.strides.resize(1);
              v.im2col->lower.clear(), v.im2col->upper.clear(), v.im2col->traversal.resize(2);
            }),
            "rank 2; an im2col map takes 3 to 5 dims");
  EXPECT_EQ(problem([](auto &v) {
              v.box = {64, 128, 1};
            }),
            "an im2col view needs a box of channels and pixels, a stride per dim after the first, "
            "a lower and an upper corner per spatial dim and a traversal stride per dim");
  EXPECT_EQ(
      problem([](auto &v) { v.box[1] = 2048; }),
      "its box is 64 channels by 2048 pixels; TMA moves 1 to 256 channels of 1 to 1024 pixels");
  EXPECT_EQ(problem([](auto &v) { v.im2col->lower[1] = -200; }),
            "a corner of spatial dim 1 is -200; a 4-d im2col map takes -128 to 127");
  EXPECT_EQ(problem([](auto &v) { v.im2col->traversal[2] = 9; }),
            "traversal[2] is 9; TMA takes 1 to 8");
  EXPECT_EQ(problem([](auto &v) { v.im2col->upper[0] = -20; }),
            "spatial dim 0's bounding box is empty (-1 to -4)");
  // The tiled checks still apply: a panel wider than the swizzle.
  EXPECT_EQ(problem([](auto &v) { v.box[0] = 128; }),
            "box[0] is 128 elements (256 bytes), more than its 128-byte swizzle");
}

TEST(TensorMapTest, RankAndEntriesAreChecked) {
  EXPECT_EQ(problemAfter([](auto &v) { v.dims.clear(), v.strides.clear(), v.box.clear(); }),
            "rank 0; TMA takes 1 to 5 dims");
  EXPECT_EQ(problemAfter([](auto &v) {
              v.dims = {64, 2, 2, 2, 2, 2};
              v.strides = {64, 128, 256, 512, 1024};
              v.box = {64, 1, 1, 1, 1, 1};
            }),
            "rank 6; TMA takes 1 to 5 dims");
  EXPECT_EQ(problemAfter([](auto &v) { v.box.pop_back(); }),
            "3 dims, 2 box extents and 2 strides: it needs a box extent per dim and a stride per "
            "dim after the first");
}

TEST(TensorMapTest, DimsAndBoxesHaveTheirRanges) {
  EXPECT_EQ(problemAfter([](auto &v) { v.dims[2] = 0; }), "dims[2] is 0; TMA takes 1 to 2^32");
  EXPECT_EQ(problemAfter([](auto &v) { v.dims[1] = (int64_t(1) << 32) + 1; }),
            "dims[1] is 4294967297; TMA takes 1 to 2^32");
  EXPECT_EQ(problemAfter([](auto &v) { v.dims[1] = int64_t(1) << 32; }), "");
  EXPECT_EQ(problemAfter([](auto &v) { v.box[1] = 257; }),
            "box[1] is 257 elements; TMA moves 1 to 256 along a dim");
  EXPECT_EQ(problemAfter([](auto &v) { v.box[2] = 0; }),
            "box[2] is 0 elements; TMA moves 1 to 256 along a dim");
}

TEST(TensorMapTest, StridesAreWholeSixteenBytesBelow2To40) {
  EXPECT_EQ(problemAfter([](auto &v) { v.strides[0] = 100; }),
            "strides[0] is 100 elements (200 bytes); TMA takes a positive multiple of 16 bytes "
            "below 2^40");
  EXPECT_EQ(problemAfter([](auto &v) { v.strides[1] = 0; }),
            "strides[1] is 0 elements (0 bytes); TMA takes a positive multiple of 16 bytes below "
            "2^40");
  EXPECT_EQ(problemAfter([](auto &v) { v.strides[1] = int64_t(1) << 39; }),
            "strides[1] is 549755813888 elements (1099511627776 bytes); TMA takes a positive "
            "multiple of 16 bytes below 2^40");
  EXPECT_EQ(problemAfter([](auto &v) { v.strides[1] = (int64_t(1) << 39) - 8; }), "");
  // 8 f16 are 16 bytes; 8 f32 are 32: the same stride in elements is good for both.
  EXPECT_EQ(problemAfter([](auto &v) { v.strides[0] = 8; }), "");
  EXPECT_EQ(
      problemAfter([](auto &v) { v.strides[0] = 4, v.swizzle = 0, v.box[0] = 8; }, DType::F32), "");
}

TEST(TensorMapTest, BoxRowsAndSwizzleAgree) {
  EXPECT_EQ(problemAfter([](auto &v) { v.box[0] = 4; }),
            "box[0] is 4 elements (8 bytes); TMA moves a multiple of 16 bytes along dim 0");
  EXPECT_EQ(problemAfter([](auto &v) { v.swizzle = 16; }),
            "swizzle is 16 bytes; TMA swizzles over 0, 32, 64 or 128");
  EXPECT_EQ(problemAfter([](auto &v) { v.swizzle = 64; }),
            "box[0] is 64 elements (128 bytes), more than its 64-byte swizzle");
  EXPECT_EQ(problemAfter([](auto &v) { v.swizzle = 64, v.box[0] = 32; }), "");
  EXPECT_EQ(problemAfter([](auto &v) { v.box[0] = 128, v.swizzle = 0; }), "");
  EXPECT_EQ(problemAfter([](auto &v) { v.box[0] = 128; }),
            "box[0] is 128 elements (256 bytes), more than its 128-byte swizzle");
}

TEST(TensorMapTest, OffsetKeepsTheStartAligned) {
  EXPECT_EQ(problemAfter([](auto &v) { v.offset = 4; }),
            "offset is 4 elements (8 bytes); TMA needs the view's start 16-byte aligned");
  EXPECT_EQ(problemAfter([](auto &v) { v.offset = -8; }),
            "offset is -8 elements (-16 bytes); TMA needs the view's start 16-byte aligned");
  EXPECT_EQ(problemAfter([](auto &v) { v.offset = 8; }), "");
}

TEST(TensorMapTest, ViewStaysInsideItsBuffer) {
  TensorType buffer{DType::F16, staticShape({6, 128, 64})};
  EXPECT_EQ(tensorMapArgProblem(mapArg(goodView()), buffer), "");
  KernelArg::TensorView v = goodView();
  v.offset = 8; // the last element is now 8 past the end
  EXPECT_EQ(tensorMapArgProblem(mapArg(v), buffer),
            "the view reaches element 49159, past the buffer's 49152 elements");
  v = goodView();
  v.dims[2] = int64_t(1) << 32, v.strides[1] = (int64_t(1) << 39) - 8;
  EXPECT_EQ(tensorMapArgProblem(mapArg(v), buffer),
            "the view reaches beyond int64, past the buffer's 49152 elements");
  EXPECT_EQ(tensorMapArgProblem(mapArg(goodView(), DType::F32), buffer),
            "its elements are f32, the buffer's f16");
  // Same-size elements may be read as either (bf16 bits through an f16 map).
  EXPECT_EQ(tensorMapArgProblem(mapArg(goodView(), DType::BF16), buffer), "");
}

TEST(TensorMapTest, EmptyViewIsNeverEncoded) {
  KernelArg::TensorView v = goodView();
  v.dims[1] = 0; // no key at all
  EXPECT_TRUE(isEmptyView(v));
  EXPECT_FALSE(isEmptyView(goodView()));
  TensorType empty{DType::F16, staticShape({6, 0, 64})};
  EXPECT_EQ(tensorMapArgProblem(mapArg(v), empty), "");
  // Its map is zeros, whatever the address, without a driver.
  TensorMapArg arg(mapArg(v), "fusec_g_o");
  Diagnostics diags;
  const gpu::TensorMapBytes *map = arg.mapFor(0x1008, diags);
  ASSERT_TRUE(map);
  EXPECT_EQ(*map, gpu::TensorMapBytes{});
  EXPECT_FALSE(diags.hasErrors());
}

TEST(TensorMapTest, ProgramLoadNamesKernelMapAndOperand) {
  Diagnostics diags;
  std::unique_ptr<Module> m = parseModule(R"(func @g(%k: f16[6,128,64]) -> f16[6,128,64] {
  %y = neg(%k) : f16[6,128,64]
  return %y
}
)",
                                          "test.fir", diags);
  ASSERT_TRUE(m) << diags.str();
  const Op &op = *m->graphs.front()->ops().back();
  KernelArg::TensorView v = goodView();
  EXPECT_TRUE(checkTensorMapArg(mapArg(v), op, "fusec_g_y", diags));
  v.box[1] = 300;
  EXPECT_FALSE(checkTensorMapArg(mapArg(v), op, "fusec_g_y", diags));
  EXPECT_NE(diags.str().find("test.fir:2:"), std::string::npos) << diags.str();
  EXPECT_NE(diags.str().find("error: kernel 'fusec_g_y': tensor map 'kMap' over operand 0 "
                             "(f16[6,128,64]): box[1] is 300 elements; TMA moves 1 to 256 "
                             "along a dim"),
            std::string::npos)
      << diags.str();
  KernelArg out = mapArg(goodView());
  out.tensorMap->output = true, out.tensorMap->offset = 16;
  EXPECT_FALSE(checkTensorMapArg(out, op, "fusec_g_y", diags));
  EXPECT_NE(diags.str().find("tensor map 'kMap' over result 0 (f16[6,128,64]): the view "
                             "reaches element 49167"),
            std::string::npos)
      << diags.str();
}

// A caller's buffer that leaves the view's start misaligned is refused before any driver call:
// no launch ever gets a map TMA cannot use.
TEST(TensorMapTest, MisalignedBufferIsRefusedAtLaunch) {
  KernelArg::TensorView v = goodView();
  TensorMapArg arg(mapArg(v), "fusec_g_y");
  Diagnostics diags;
  EXPECT_FALSE(arg.mapFor(0x7f0000001008, diags));
  EXPECT_NE(diags.str().find("error: tensor map 'kMap' of kernel 'fusec_g_y' would start at "
                             "0x7f0000001008, not 16-byte aligned as TMA needs: its buffer is at "
                             "0x7f0000001008"),
            std::string::npos)
      << diags.str();
}

TEST(TensorMapTest, ParametersKeepTheirSizesAndAlignment) {
  gpu::TensorMapBytes a, b;
  for (unsigned i = 0; i < 16; ++i)
    a.words[i] = i, b.words[i] = 100 + i;
  gpu::KernelParams params;
  params.addWord(0x1000);
  params.addTensorMap(a);
  params.addWord(42);
  for (int i = 0; i < 5; ++i) // grows the maps' storage: pointers are taken at the end
    params.addTensorMap(i % 2 ? a : b);
  std::span<const void *const> p = params.pointers();
  ASSERT_EQ(p.size(), 8u);
  EXPECT_EQ(*static_cast<const uint64_t *>(p[0]), 0x1000u);
  EXPECT_EQ(*static_cast<const uint64_t *>(p[2]), 42u);
  EXPECT_EQ(*static_cast<const gpu::TensorMapBytes *>(p[1]), a);
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(*static_cast<const gpu::TensorMapBytes *>(p[3 + i]), i % 2 ? a : b);
  for (size_t i : {1, 3, 4, 5, 6, 7})
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p[i]) % 64, 0u) << "parameter " << i;
  EXPECT_EQ(sizeof(gpu::TensorMapBytes), 128u);
  EXPECT_EQ(alignof(gpu::TensorMapBytes), 64u);
}

TEST(TensorMapTest, ParameterSpaceAlignsMaps) {
  KernelArg in{KernelArg::Kind::Input, "in_x", 0, 0, std::nullopt};
  KernelArg n{KernelArg::Kind::NumElements, "numel", 0, 0, 7};
  EXPECT_EQ(kernelParamBytes({in, n}), 16u);
  EXPECT_EQ(kernelParamBytes({in, mapArg(goodView()), n}), 64u + 128u + 8u);
  EXPECT_EQ(kernelParamBytes({mapArg(goodView()), mapArg(goodView())}), 256u);
}

} // namespace
