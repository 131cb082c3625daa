// Tuning without a GPU: the tuning cache's entries (disk hits in a new cache, corrupt entries are
// misses, an unwritable directory warns once, two processes storing one key leave a whole entry),
// its key, the kernel signature it is keyed by, and the candidate configs of the gemm template
// (each a distinct kernel that the template builds), and the tune stage reading the cache: a hit
// sets the kernel's config, an entry naming no candidate is stale. Timing candidates runs on the
// GPU (test/gpu/TuningTest.cpp).
#include "runtime/Tuning.h"

#include "codegen/Codegen.h"
#include "ir/Kernel.h"
#include "ir/TextFormat.h"
#include "runtime/gpu/TuningCache.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <fstream>
#include <gtest/gtest.h>
#include <set>
#include <sys/wait.h>
#include <unistd.h>

using namespace fusec;

namespace {

class TuningCacheTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("fusec-tuning-test", dir));
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir); }

  std::string path(const std::string &key) const {
    llvm::SmallString<128> p(dir);
    llvm::sys::path::append(p, key + ".tune");
    return std::string(p);
  }

  llvm::SmallString<128> dir;
  const std::string key = TuningCache::keyOf({"NVIDIA H100", "sm_90a", Backend::Nvrtc, "k"});
  const TuningEntry entry{"bm=128 bn=64 splitk=3", 12.5, 15.25, 17};
};

TEST_F(TuningCacheTest, StoredEntryIsADiskHitInANewCache) {
  Diagnostics diags;
  TuningCache(std::string(dir.str())).store(key, entry, diags);
  EXPECT_TRUE(diags.all().empty());
  std::string why;
  std::optional<TuningEntry> e = TuningCache(std::string(dir.str())).lookup(key, why);
  ASSERT_TRUE(e) << why;
  EXPECT_EQ(e->config, entry.config);
  EXPECT_DOUBLE_EQ(e->us, 12.5);
  EXPECT_DOUBLE_EQ(e->defaultUs, 15.25);
  EXPECT_EQ(e->candidates, 17u);
}

TEST_F(TuningCacheTest, TheTemplatesChoiceIsAnEmptyConfig) {
  Diagnostics diags;
  TuningCache(std::string(dir.str())).store(key, {"", 3, 3, 4}, diags);
  std::string why;
  std::optional<TuningEntry> e = TuningCache(std::string(dir.str())).lookup(key, why);
  ASSERT_TRUE(e) << why;
  EXPECT_EQ(e->config, "");
}

TEST(TuningEntryTest, FormatsAndReadsBackExactly) {
  const std::string key(32, 'a');
  for (double us : {0.1 + 0.2, 12.3456789012345, 1e-300, 0.0, 98765.4321}) {
    TuningEntry e{"bm=64 bn=64 splitk=3", us, us * 3, 19};
    std::string problem;
    std::optional<TuningEntry> back = parseTuningEntry(formatTuningEntry(key, e), key, problem);
    ASSERT_TRUE(back) << problem;
    EXPECT_EQ(back->config, e.config);
    EXPECT_EQ(back->us, e.us);
    EXPECT_EQ(back->defaultUs, e.defaultUs);
    EXPECT_EQ(back->candidates, 19u);
  }
}

TEST_F(TuningCacheTest, MissesSayWhy) {
  std::string why;
  EXPECT_FALSE(TuningCache(std::string(dir.str())).lookup(key, why));
  EXPECT_EQ(why, "no entry");
  EXPECT_FALSE(TuningCache("").lookup(key, why));
  EXPECT_EQ(why, "disk cache disabled");
}

TEST_F(TuningCacheTest, CorruptEntriesAreMissesAndAreReplaced) {
  const char *bad[] = {
      "",                                                                    // empty
      "fusec-tuning 2\n",                                                    // another format
      "fusec-tuning 1\nkey 00\nconfig \nus 1\ndefault-us 1\ncandidates 2\n", // another key
      "us 1\n",                                                              // no header
      nullptr,                                                               // filled below
      nullptr,
  };
  std::string good = "fusec-tuning 1\nkey " + key + "\nconfig bn=64\n";
  std::string nan = good + "us nan\ndefault-us 1\ncandidates 2\n";
  std::string truncated = good + "us 1\n";
  bad[4] = nan.c_str();
  bad[5] = truncated.c_str();
  for (const char *text : bad) {
    std::ofstream(path(key)) << text;
    std::string why;
    EXPECT_FALSE(TuningCache(std::string(dir.str())).lookup(key, why)) << text;
    EXPECT_NE(why.find("corrupt entry"), std::string::npos) << why;
  }
  Diagnostics diags;
  TuningCache(std::string(dir.str())).store(key, entry, diags);
  std::string why;
  EXPECT_TRUE(TuningCache(std::string(dir.str())).lookup(key, why)) << why;
}

TEST_F(TuningCacheTest, ADirectoryInPlaceOfAnEntryIsAMiss) {
  ASSERT_FALSE(llvm::sys::fs::create_directory(path(key)));
  std::string why;
  EXPECT_FALSE(TuningCache(std::string(dir.str())).lookup(key, why));
  EXPECT_NE(why.find("corrupt entry"), std::string::npos) << why;
}

TEST_F(TuningCacheTest, UnwritableDirectoryWarnsOnceAndKeepsTheEntryInMemory) {
  llvm::SmallString<128> file(dir);
  llvm::sys::path::append(file, "not-a-directory");
  std::ofstream(std::string(file)) << "x";
  TuningCache cache(std::string(file) + "/tuning");
  Diagnostics diags;
  cache.store(key, entry, diags);
  cache.store(TuningCache::keyOf({"x", "sm_80", Backend::Llvm, "k"}), entry, diags);
  ASSERT_EQ(diags.all().size(), 1u);
  EXPECT_EQ(diags.all()[0].severity, Severity::Warning);
  EXPECT_NE(diags.all()[0].message.find("is not writable"), std::string::npos);
  std::string why;
  EXPECT_TRUE(cache.lookup(key, why)) << why;
}

TEST_F(TuningCacheTest, TwoProcessesStoringOneKeyLeaveAWholeEntry) {
  pid_t child = fork();
  ASSERT_GE(child, 0);
  bool isChild = child == 0;
  for (int i = 0; i < 200; ++i) {
    Diagnostics diags;
    TuningEntry e = entry;
    e.us = isChild ? 1 : 2;
    TuningCache(std::string(dir.str())).store(key, e, diags);
    std::string why;
    std::optional<TuningEntry> read = TuningCache(std::string(dir.str())).lookup(key, why);
    if (!read || read->config != entry.config) {
      if (isChild)
        _exit(1);
      FAIL() << why;
    }
  }
  if (isChild)
    _exit(0);
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST(TuningKeyTest, NamesEveryPart) {
  TuningKey base{"NVIDIA H100", "sm_90a", Backend::Nvrtc, "sig"};
  std::set<std::string> keys = {TuningCache::keyOf(base)};
  for (int part = 0; part < 4; ++part) {
    TuningKey k = base;
    if (part == 0)
      k.device = "NVIDIA H200";
    else if (part == 1)
      k.target = "sm_80";
    else if (part == 2)
      k.backend = Backend::Llvm;
    else
      k.signature = "sig2";
    keys.insert(TuningCache::keyOf(k));
  }
  EXPECT_EQ(keys.size(), 5u);
  EXPECT_EQ(TuningCache::keyOf(base).size(), 32u);
  EXPECT_EQ(TuningCache::keyOf(base), TuningCache::keyOf(base));
}

/// The kernel op of a one-kernel function.
const Op &kernelOf(const Module &m) {
  for (const auto &op : m.graphs.front()->ops())
    if (op->kind() == OpKind::Kernel)
      return *op;
  ADD_FAILURE() << "no kernel";
  std::abort();
}

std::unique_ptr<Module> parse(const std::string &text) {
  Diagnostics diags;
  std::unique_ptr<Module> m = parseModule(text, "<test>", diags);
  EXPECT_TRUE(m) << (diags.all().empty() ? "" : diags.all()[0].message);
  return m;
}

/// A gemm kernel: x[M,K] times w[N,K]^T plus an epilogue op, with a config when given.
std::string gemmText(const std::string &names, int64_t m, int64_t n, int64_t k,
                     const std::string &dtype = "f16", const std::string &epilogue = "gelu",
                     const std::string &config = "") {
  std::string M = std::to_string(m), N = std::to_string(n), K = std::to_string(k);
  std::string attrs =
      "template = \"gemm\"" + (config.empty() ? "" : ", config = \"" + config + "\"");
  std::string x = dtype + "[" + M + "," + K + "]", w = dtype + "[" + N + "," + K + "]",
              y = dtype + "[" + M + "," + N + "]";
  return "func @f(%" + names + "x: " + x + ", %" + names + "w: " + w + ") -> " + y + " {\n" +
         "  %" + names + "y = kernel(%" + names + "x, %" + names + "w) {" + attrs + "} : " + y +
         " {\n  body(%" + names + "a: " + x + ", %" + names + "b: " + w + "):\n" + "    %" + names +
         "l = linear(%" + names + "a, %" + names + "b) : " + y + "\n" + "    %" + names +
         "e = " + epilogue + "(%" + names + "l) : " + y + "\n" + "    return %" + names + "e\n" +
         "  }\n  return %" + names + "y\n}\n";
}

std::string signatureOf(const std::string &text) {
  std::unique_ptr<Module> m = parse(text);
  return m ? kernelSignature(kernelOf(*m)) : "";
}

TEST(KernelSignatureTest, LeavesOutNamesAndConfig) {
  std::string sig = signatureOf(gemmText("", 256, 128, 64));
  EXPECT_EQ(sig, signatureOf(gemmText("other_", 256, 128, 64)));
  EXPECT_EQ(sig, signatureOf(gemmText("", 256, 128, 64, "f16", "gelu", "bn=64")));
  EXPECT_NE(sig.find("linear(%0, %1)"), std::string::npos) << sig;
}

TEST(KernelSignatureTest, NamesShapeDtypeAndEpilogue) {
  std::set<std::string> sigs = {
      signatureOf(gemmText("", 256, 128, 64)), signatureOf(gemmText("", 256, 128, 128)),
      signatureOf(gemmText("", 512, 128, 64)), signatureOf(gemmText("", 256, 128, 64, "bf16")),
      signatureOf(gemmText("", 256, 128, 64, "f16", "relu"))};
  EXPECT_EQ(sigs.size(), 5u);
}

/// Each candidate of `text`'s kernel for `target` builds, and no two give the same schedule.
void expectDistinctKernels(const std::string &text, std::string_view target, size_t atLeast) {
  std::unique_ptr<Module> m = parse(text);
  ASSERT_TRUE(m);
  Op &kernel = const_cast<Op &>(kernelOf(*m));
  std::vector<std::string> configs = tuningCandidates(kernel, target);
  ASSERT_GE(configs.size(), atLeast) << target;
  EXPECT_EQ(configs.front(), "");
  std::set<std::string> sources;
  for (const std::string &config : configs) {
    kernel.setAttr("config", config);
    Diagnostics diags;
    std::optional<GeneratedKernel> k = emitKernel(kernel, "k", diags, Backend::Nvrtc, target);
    ASSERT_TRUE(k) << "'" << config << "': " << (diags.all().empty() ? "" : diags.all()[0].message);
    EXPECT_TRUE(sources.insert(k->source).second) << "'" << config << "' repeats a kernel";
  }
}

TEST(TuningCandidatesTest, WarpSpecializedTilesAndSplits) {
  std::unique_ptr<Module> m = parse(gemmText("", 4096, 768, 3072));
  ASSERT_TRUE(m);
  std::vector<std::string> configs = tuningCandidates(kernelOf(*m), "sm_90a");
  auto has = [&](const std::string &c) {
    return std::find(configs.begin(), configs.end(), c) != configs.end();
  };
  EXPECT_FALSE(has("bm=128 bn=192 splitk=1")) << "the template's choice, \"\"";
  EXPECT_TRUE(has("bm=128 bn=256 splitk=1"));
  EXPECT_FALSE(has("bm=128 bn=192 splitk=2")) << "tiles over 128 wide run unsplit";
  EXPECT_TRUE(has("bm=128 bn=128 splitk=1"));
  EXPECT_TRUE(has("bm=128 bn=128 splitk=3"));
  EXPECT_FALSE(has("bm=128 bn=128 splitk=4")) << "more than three waves more";
  EXPECT_TRUE(has("specialized=0"));
  EXPECT_FALSE(has("bm=64 bn=128 splitk=1")) << "64-row tiles only for up to 256 rows";
  expectDistinctKernels(gemmText("", 4096, 768, 3072), "sm_90a", 6);
  expectDistinctKernels(gemmText("", 8, 4096, 4096), "sm_90a", 8); // decode: 64-row tiles
}

/// A conv2d kernel of 64 channels in and out over NHWC 2 x `side` x `side`, its filter
/// `filter` x `filter` (`extra`: more conv2d attributes), relu after it.
std::string convText(int64_t side, int64_t filter, const std::string &extra, int64_t out) {
  std::string S = std::to_string(side), O = std::to_string(out), F = std::to_string(filter);
  std::string x = "f16[2," + S + "," + S + ",64]{nhwc}", w = "f16[64," + F + "," + F + ",64]",
              y = "f16[2," + O + "," + O + ",64]{nhwc}";
  return "func @f(%x: " + x + ", %w: " + w + ") -> " + y + " {\n  %y = kernel(%x, %w) " +
         "{template = \"gemm\"} : " + y + " {\n  body(%a: " + x + ", %b: " + w + "):\n" +
         "    %c = conv2d(%a, %b) {" + extra + "acc = f32} : " + y + "\n    %r = relu(%c) : " + y +
         "\n    return %r\n  }\n  return %y\n}\n";
}

// Note [Halo tiles]: a stride-1 conv the im2col map reaches is tuned on both loads; a strided
// conv, which halo tiles cannot run, on the im2col loads only; every candidate builds.
TEST(TuningCandidatesTest, ConvolutionsOnHaloTilesAndIm2col) {
  std::string stride1 = convText(16, 3, "pads = [1, 1, 1, 1], ", 16);
  std::string stride2 = convText(16, 3, "strides = [2, 2], pads = [1, 1, 1, 1], ", 8);
  for (const std::string *text : {&stride1, &stride2}) {
    std::unique_ptr<Module> m = parse(*text);
    ASSERT_TRUE(m);
    std::vector<std::string> configs = tuningCandidates(kernelOf(*m), "sm_90a");
    bool halo = std::find(configs.begin(), configs.end(), "bm=128 bn=64 halo=1") != configs.end();
    EXPECT_EQ(halo, text == &stride1) << *text;
    EXPECT_TRUE(std::none_of(configs.begin(), configs.end(), [](const std::string &c) {
      return c.find("halo=0") != std::string::npos;
    })) << "halo=0 is the default's schedule";
  }
  expectDistinctKernels(stride1, "sm_90a", 6);
  expectDistinctKernels(stride2, "sm_90a", 4);
}

TEST(TuningCandidatesTest, MmaSyncAndSimtTiles) {
  expectDistinctKernels(gemmText("", 1024, 1024, 512), "sm_80", 6);
  expectDistinctKernels(gemmText("", 1000, 500, 300, "f32", "relu"), "sm_80", 4);
}

/// The tune stage without a GPU: lookups only (TuningMode::Cached).
TEST_F(TuningCacheTest, TheTuneStageAppliesHitsAndRefusesStaleEntries) {
  for (const char *stored : {"bm=128 bn=128 splitk=2", "bn=96"}) {
    std::unique_ptr<Module> m = parse(gemmText("", 4096, 768, 3072));
    ASSERT_TRUE(m);
    Op &kernel = const_cast<Op &>(kernelOf(*m));
    TuningCache cache(std::string(dir.str()));
    TuningRequest request{TuningMode::Cached, &cache,   nullptr,
                          "NVIDIA H100",      "sm_90a", Backend::Nvrtc};
    std::string key = TuningCache::keyOf(
        {request.device, request.target, request.backend, kernelSignature(kernel)});
    Diagnostics diags;
    cache.store(key, {stored, 40, 42, 7}, diags);
    TuningNotes notes;
    ASSERT_TRUE(tuneKernels(*m->graphs[0], request, notes, diags));
    const Attribute *config = kernel.attrIfPresent("config");
    if (std::string(stored) == "bn=96") {
      EXPECT_FALSE(config);
      EXPECT_EQ(notes[&kernel].rfind("miss [" + key + "]: stale entry", 0), 0u) << notes[&kernel];
    } else {
      ASSERT_TRUE(config);
      EXPECT_EQ(config->get<std::string>(), stored);
      EXPECT_EQ(notes[&kernel].rfind("hit [" + key + "]", 0), 0u) << notes[&kernel];
    }
  }
}

TEST(TuningCandidatesTest, NothingToTuneForOtherTemplates) {
  std::unique_ptr<Module> m = parse(R"(func @f(%x: f16[64,64]) -> f16[64,64] {
  %y = kernel(%x) {template = "pointwise"} : f16[64,64] {
  body(%a: f16[64,64]):
    %r = relu(%a) : f16[64,64]
    return %r
  }
  return %y
}
)");
  ASSERT_TRUE(m);
  EXPECT_TRUE(tuningCandidates(kernelOf(*m), "sm_90a").empty());
}

} // namespace
