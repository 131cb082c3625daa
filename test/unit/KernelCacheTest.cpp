// The kernel cache: memory, disk and compile in that order; corrupt and
// truncated entries are recompiled, never trusted; an unwritable directory
// costs a warning and compiling still works; many threads and two processes
// compiling the same kernels into one directory leave whole, valid entries.
// Needs NVRTC (skipped, with the reason, without it); no GPU.
#include "runtime/gpu/KernelCache.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <fstream>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace fusec;
using Source = CacheLookup::Source;

namespace {

class KernelCacheTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string whyNot;
    if (!loadNvrtc(&whyNot))
      GTEST_SKIP() << whyNot;
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("fusec-cache-test", dir));
  }
  void TearDown() override {
    if (!dir.empty())
      llvm::sys::fs::remove_directories(dir);
  }

  static PtxRequest program(int n) {
    std::string name = "scale" + std::to_string(n);
    return {"extern \"C\" __global__ void " + name +
                "(float *x) { x[threadIdx.x] *= " + std::to_string(n) + ".0f; }",
            name, "sm_80"};
  }

  std::string entryPath(const PtxRequest &req) const {
    llvm::SmallString<128> path(dir);
    llvm::sys::path::append(path, KernelCache::keyOf(req) + ".fck");
    return std::string(path);
  }

  llvm::SmallString<128> dir;
};

TEST_F(KernelCacheTest, CompilesThenHitsMemoryThenDisk) {
  KernelCache first(std::string(dir.str())), second(std::string(dir.str()));
  Diagnostics diags;
  CacheLookup a, b, c;
  auto compiled = first.getOrCompile(program(1), diags, &a);
  auto fromMemory = first.getOrCompile(program(1), diags, &b);
  auto fromDisk = second.getOrCompile(program(1), diags, &c);
  ASSERT_TRUE(compiled && fromMemory && fromDisk);
  EXPECT_EQ(a.source, Source::Compiled);
  EXPECT_EQ(a.whyMissed, "no entry");
  EXPECT_EQ(b.source, Source::Memory);
  EXPECT_EQ(c.source, Source::Disk);
  EXPECT_EQ(compiled->cubin, fromDisk->cubin);
  EXPECT_EQ(compiled->ptx, fromDisk->ptx);
  EXPECT_FALSE(compiled->cubin.empty());
  EXPECT_NE(KernelCache::keyOf(program(1)), KernelCache::keyOf(program(2)));
}

// The back end is part of the key: the same text for the two compilers is
// two entries (and an LLVM entry survives an NVRTC upgrade).
TEST_F(KernelCacheTest, KeyNamesTheBackEnd) {
  PtxRequest nvrtc = program(1), llvm = program(1);
  llvm.backend = Backend::Llvm;
  EXPECT_NE(KernelCache::keyOf(nvrtc), KernelCache::keyOf(llvm));
  EXPECT_NE(KernelCache::keyOf(nvrtc, "12.8"), KernelCache::keyOf(nvrtc, "13.0"));
  EXPECT_EQ(KernelCache::keyOf(llvm, "12.8"), KernelCache::keyOf(llvm, "13.0"));
}

TEST_F(KernelCacheTest, CorruptEntryIsRecompiledAndRewritten) {
  Diagnostics diags;
  ASSERT_TRUE(KernelCache(std::string(dir.str())).getOrCompile(program(3), diags));
  {
    std::fstream f(entryPath(program(3)), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-5, std::ios::end);
    f.put('\x7f'); // one flipped byte inside the cubin
  }
  CacheLookup l;
  ASSERT_TRUE(KernelCache(std::string(dir.str())).getOrCompile(program(3), diags, &l));
  EXPECT_EQ(l.source, Source::Compiled);
  EXPECT_NE(l.whyMissed.find("checksum mismatch"), std::string::npos) << l.whyMissed;
  ASSERT_TRUE(KernelCache(std::string(dir.str())).getOrCompile(program(3), diags, &l));
  EXPECT_EQ(l.source, Source::Disk); // the recompiled entry replaced the bad one
}

TEST_F(KernelCacheTest, TruncatedEntryIsRecompiled) {
  Diagnostics diags;
  ASSERT_TRUE(KernelCache(std::string(dir.str())).getOrCompile(program(4), diags));
  uint64_t size = 0;
  ASSERT_FALSE(llvm::sys::fs::file_size(entryPath(program(4)), size));
  ASSERT_EQ(truncate(entryPath(program(4)).c_str(), off_t(size / 2)), 0);
  CacheLookup l;
  ASSERT_TRUE(KernelCache(std::string(dir.str())).getOrCompile(program(4), diags, &l));
  EXPECT_EQ(l.source, Source::Compiled);
  EXPECT_NE(l.whyMissed.find("corrupt entry"), std::string::npos) << l.whyMissed;
}

// An entry that is not a regular file is a miss, never waited on or read
// without end: a FIFO (opening one blocked until a writer came) and a
// symbolic link to /dev/zero (links are not followed inside the cache).
TEST_F(KernelCacheTest, SpecialEntriesAreMissesNotHangs) {
  Diagnostics diags;
  std::string fifo = entryPath(program(7)), link = entryPath(program(8));
  llvm::sys::fs::create_directories(llvm::sys::path::parent_path(fifo));
  llvm::sys::fs::create_directories(llvm::sys::path::parent_path(link));
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  ASSERT_EQ(symlink("/dev/zero", link.c_str()), 0);
  for (auto [p, path] : {std::pair{program(7), fifo}, std::pair{program(8), link}}) {
    CacheLookup l;
    ASSERT_TRUE(KernelCache(std::string(dir.str())).getOrCompile(p, diags, &l));
    EXPECT_EQ(l.source, Source::Compiled);
    EXPECT_NE(l.whyMissed.find("corrupt entry"), std::string::npos) << l.whyMissed;
    llvm::sys::fs::file_status st;
    ASSERT_FALSE(llvm::sys::fs::status(path, st, /*Follow=*/false));
    EXPECT_EQ(st.type(), llvm::sys::fs::file_type::regular_file) << "the entry was rewritten";
  }
}

// A cache directory that cannot be created (its parent is a regular file,
// as good as read-only or full for the writer): compiling still works and
// the first failed write is a warning, once.
TEST_F(KernelCacheTest, UnwritableDirectoryWarnsOnceAndStillCompiles) {
  llvm::SmallString<128> file(dir);
  llvm::sys::path::append(file, "not-a-directory");
  std::ofstream(std::string(file)) << "x";
  KernelCache cache(std::string(file) + "/cache");
  Diagnostics diags;
  ASSERT_TRUE(cache.getOrCompile(program(5), diags));
  ASSERT_TRUE(cache.getOrCompile(program(6), diags));
  ASSERT_EQ(diags.all().size(), 1u);
  EXPECT_EQ(diags.all()[0].severity, Severity::Warning);
  EXPECT_NE(diags.all()[0].message.find("is not writable"), std::string::npos);
  EXPECT_FALSE(diags.hasErrors());
}

TEST_F(KernelCacheTest, EightThreadsShareOneCache) {
  KernelCache shared(std::string(dir.str()));
  std::vector<std::thread> threads;
  std::vector<std::string> cubins(16);
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int k = 0; k < 2; ++k) {
        Diagnostics diags;
        auto code = shared.getOrCompile(program(10 + k), diags);
        cubins[t * 2 + k] = code ? code->cubin : "";
      }
    });
  for (std::thread &t : threads)
    t.join();
  for (int t = 0; t < 8; ++t)
    for (int k = 0; k < 2; ++k) {
      EXPECT_FALSE(cubins[t * 2 + k].empty());
      EXPECT_EQ(cubins[t * 2 + k], cubins[k]);
    }
  CacheLookup l;
  Diagnostics diags;
  ASSERT_TRUE(KernelCache(std::string(dir.str())).getOrCompile(program(10), diags, &l));
  EXPECT_EQ(l.source, Source::Disk);
}

TEST_F(KernelCacheTest, TwoProcessesCompileIntoOneDirectory) {
  std::vector<pid_t> children;
  for (int p = 0; p < 2; ++p) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      KernelCache cache(std::string(dir.str()));
      Diagnostics diags;
      bool ok = cache.getOrCompile(program(20), diags) && cache.getOrCompile(program(21), diags);
      _exit(ok ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  for (int n : {20, 21}) {
    CacheLookup l;
    Diagnostics diags;
    ASSERT_TRUE(KernelCache(std::string(dir.str())).getOrCompile(program(n), diags, &l));
    EXPECT_EQ(l.source, Source::Disk) << l.whyMissed;
  }
}

} // namespace
