// GPU tests: every graph of test/gpu/cases/*.fir and examples/*.fir, run on
// the GPU after the default pipeline and compared with the CPU reference on
// fresh seeded random inputs, outputs poisoned (0xff bytes) before the run; a second run must
// give the same bytes.
//
// A case file's `// DIMS:` lines list the bindings of its named dims to
// run, each binding a comma-separated NAME=SIZE list, bindings separated by
// spaces (`// DIMS: m=1,n=7 m=1000,n=37`); a dim no binding names is 7. Its
// `// BACKENDS:` line lists the back ends to run it with (default: nvrtc);
// an LLVM run is compared with the reference and with the NVRTC run. Its
// `// TARGETS:` line lists GPU targets to generate for besides the device's
// own (`sm_80` on an H100: the attention template's mma.sync kernels).
// Case files run at fp32 (their graphs name their own dtypes); examples run
// at fp32, fp16 and bf16 autocast, with every named dim at 1 and at 7, on
// both back ends (on LLVM a gemm kernel runs op by op until the LLVM back
// end renders the gemm template).
// The tolerance is gpuToleranceFor the lowest float precision of the
// optimized graph (runtime/reference/Equivalence.h).
//
// Inputs are fresh on every run: the seed is $FUSEC_GPU_TEST_SEED when set,
// else drawn at start; a failure names it, so that it can be reproduced.
//
// Without a usable GPU every test is reported skipped, with the reason.
// The sources are found under $FUSEC_SOURCE_DIR (default: the source tree
// this binary was built from), so an installed copy can run elsewhere.
#include "frontend/ModelFile.h"
#include "runtime/CompilePipeline.h"
#include "runtime/gpu/GpuHost.h"
#include "runtime/reference/Equivalence.h"
#include "runtime/reference/Reference.h"
#include "tools/ToolSupport.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cstdlib>
#include <gtest/gtest.h>
#include <random>

namespace fusec {
namespace {

struct GpuCase {
  std::string file;  // relative to the source dir
  std::string graph; // graph name
  DimBindings dims;
  PrecisionChoice precision = PrecisionChoice::FP32;
  Backend backend = Backend::Nvrtc;
  std::string label;  // the test name
  std::string target; // the GPU target to generate for; empty: the device's
};

void PrintTo(const GpuCase &c, std::ostream *os) { *os << c.label; }

std::string sourceDir() {
  const char *dir = std::getenv("FUSEC_SOURCE_DIR");
  return dir && *dir ? dir : FUSEC_DEFAULT_SOURCE_DIR;
}

std::vector<std::string> firFiles(const std::string &relDir) {
  std::vector<std::string> files;
  std::error_code ec;
  llvm::SmallString<256> dir(sourceDir());
  llvm::sys::path::append(dir, relDir);
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec))
    if (llvm::StringRef(it->path()).ends_with(".fir"))
      files.push_back(relDir + "/" + llvm::sys::path::filename(it->path()).str());
  std::sort(files.begin(), files.end());
  return files;
}

/// The bindings of a case file's `// DIMS:` lines; one empty binding if none.
std::vector<DimBindings> dimsOf(llvm::StringRef text) {
  std::vector<DimBindings> out;
  llvm::SmallVector<llvm::StringRef> lines, bindings, pairs;
  text.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    if (!line.consume_front("// DIMS:"))
      continue;
    bindings.clear();
    line.split(bindings, ' ', -1, false);
    for (llvm::StringRef b : bindings) {
      DimBindings dims;
      pairs.clear();
      b.split(pairs, ',', -1, false);
      for (llvm::StringRef p : pairs) {
        auto [name, value] = p.split('=');
        dims[name.str()] = std::stoll(value.str());
      }
      out.push_back(dims);
    }
  }
  if (out.empty())
    out.push_back({});
  return out;
}

/// The words of a case file's line starting with `prefix`; `otherwise` if it has none.
std::vector<std::string> wordsOf(llvm::StringRef text, llvm::StringRef prefix,
                                 std::vector<std::string> otherwise) {
  llvm::SmallVector<llvm::StringRef> lines, words;
  text.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    if (!line.consume_front(prefix))
      continue;
    line.split(words, ' ', -1, false);
    return {words.begin(), words.end()};
  }
  return otherwise;
}

/// The back ends of a case file's `// BACKENDS:` line; nvrtc if none.
std::vector<Backend> backendsOf(llvm::StringRef text) {
  std::vector<Backend> out;
  for (const std::string &n : wordsOf(text, "// BACKENDS:", {"nvrtc"}))
    out.push_back(n == "llvm" ? Backend::Llvm : Backend::Nvrtc);
  return out;
}

/// The device's own target (""), then those of a case file's `// TARGETS:` line: `sm_80` runs
/// the kernels generated for sm_80 too (mma.sync where the H100's are wgmma).
std::vector<std::string> targetsOf(llvm::StringRef text) {
  std::vector<std::string> out = wordsOf(text, "// TARGETS:", {});
  out.insert(out.begin(), "");
  return out;
}

std::string bindingLabel(const DimBindings &dims) {
  std::string s;
  for (const auto &[name, size] : dims)
    s += "_" + name + std::to_string(size);
  return s;
}

std::string identifier(std::string s) {
  for (char &c : s)
    c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return s;
}

void addFileCases(const std::string &file, bool example, std::vector<GpuCase> &cases) {
  llvm::SmallString<256> path(sourceDir());
  llvm::sys::path::append(path, file);
  auto buffer = llvm::MemoryBuffer::getFile(path);
  Diagnostics diags;
  std::unique_ptr<Module> m = loadAnyModel(std::string(path), diags);
  if (!buffer || !m)
    return; // reported by the test that loads it
  std::vector<DimBindings> bindings =
      example ? std::vector<DimBindings>{{}, {}} : dimsOf((*buffer)->getBuffer());
  std::vector<PrecisionChoice> precisions = {PrecisionChoice::FP32};
  if (example)
    precisions = {PrecisionChoice::FP32, PrecisionChoice::FP16, PrecisionChoice::BF16};
  const char *precisionNames[] = {"fp32", "fp16", "bf16"};
  std::string stem = llvm::sys::path::stem(file).str();
  std::vector<Backend> backends = example ? std::vector<Backend>{Backend::Nvrtc, Backend::Llvm}
                                          : backendsOf((*buffer)->getBuffer());
  std::vector<std::string> targets =
      example ? std::vector<std::string>{""} : targetsOf((*buffer)->getBuffer());
  for (const auto &g : m->graphs)
    for (size_t b = 0; b < bindings.size(); ++b)
      for (PrecisionChoice p : precisions)
        for (Backend backend : backends)
          for (size_t t = 0; t < targets.size(); ++t) {
            GpuCase c{file, g->name(), bindings[b], p, backend, "", targets[t]};
            for (const Value *v : g->inputs())
              for (const Dim &d : v->type().shape)
                if (!d.isStatic() && !d.isAnonymous())
                  c.dims.emplace(d.symbol, example && b == 0 ? 1 : 7);
            c.label = identifier(
                stem + "_" + g->name() + bindingLabel(c.dims) + "_" + precisionNames[int(p)] +
                (backend == Backend::Llvm ? "_llvm" : "") + (t > 0 ? "_" + c.target : ""));
            bool seen = std::any_of(cases.begin(), cases.end(),
                                    [&](const GpuCase &o) { return o.label == c.label; });
            if (!seen) // a static example binds nothing: once is enough
              cases.push_back(std::move(c));
          }
}

std::vector<GpuCase> discoverCases() {
  std::vector<GpuCase> cases;
  for (const std::string &file : firFiles("test/gpu/cases"))
    addFileCases(file, false, cases);
  for (const std::string &file : firFiles("examples"))
    addFileCases(file, true, cases);
  return cases;
}

uint64_t runSeed() {
  static const uint64_t seed = [] {
    const char *env = std::getenv("FUSEC_GPU_TEST_SEED");
    return env && *env ? std::strtoull(env, nullptr, 0) : uint64_t(std::random_device{}());
  }();
  return seed;
}

const Graph *findGraph(const Module &m, const std::string &name) {
  for (const auto &g : m.graphs)
    if (g->name() == name)
      return g.get();
  return nullptr;
}

class GpuCases : public ::testing::TestWithParam<GpuCase> {};

TEST_P(GpuCases, MatchesReference) {
  std::string whyNot;
  std::optional<gpu::DeviceInfo> device = gpu::openDevice(&whyNot);
  if (!device)
    GTEST_SKIP() << "no GPU: " << whyNot;
  const GpuCase &c = GetParam();
  if (!c.target.empty() && !gpu::targetRunsOn(c.target, device->major, device->minor))
    GTEST_SKIP() << "code for " << c.target << " does not run on " << device->name;
  Diagnostics diags;
  std::unique_ptr<Module> m = loadAnyModel(sourceDir() + "/" + c.file, diags);
  ASSERT_TRUE(m) << diags.str();
  const Graph *g = findGraph(*m, c.graph);
  ASSERT_TRUE(g);
  std::vector<Tensor> inputs, want, got;
  std::vector<std::vector<int64_t>> shapes;
  for (unsigned i = 0; i < g->numInputs(); ++i) {
    Tensor t;
    ASSERT_TRUE(randomInput(*g->input(i), resolveShape(g->input(i)->type().shape, c.dims),
                            runSeed() * 1000003 + i, t, diags))
        << diags.str();
    shapes.push_back(t.shape);
    inputs.push_back(std::move(t));
  }
  ASSERT_TRUE(runReference(*g, inputs, want, diags)) << diags.str();
  Module optimized;
  optimized.graphs.push_back(g->clone());
  ASSERT_TRUE(prepareModule(optimized, c.precision, diags)) << diags.str();
  GpuBuildOptions opts;
  opts.backend = c.backend;
  opts.target = c.target;
  std::unique_ptr<GpuProgram> p = buildGpuProgram(*optimized.graphs[0], shapes, opts, diags);
  ASSERT_TRUE(p) << diags.str();
  ASSERT_TRUE(runOnHostTensors(*p, inputs, got, diags)) << diags.str();
  EquivalenceResult r;
  r.tolerance = gpuToleranceFor(lowestPrecision(*optimized.graphs[0]));
  for (unsigned k = 0; k < want.size(); ++k)
    compareOutput(*g, k, want[k], got[k], r);
  EXPECT_LE(r.worstError, r.tolerance)
      << r.worstWhere << " (FUSEC_GPU_TEST_SEED=" << runSeed() << ")";
  // A second run of the program gives the same bytes: its kernels leave their scratch as they
  // found it (a split decode's counters back at zero).
  std::vector<Tensor> again;
  ASSERT_TRUE(runOnHostTensors(*p, inputs, again, diags)) << diags.str();
  for (unsigned k = 0; k < got.size(); ++k)
    EXPECT_TRUE(again[k].bytes == got[k].bytes) << "output " << k << " differs on a second run";
  if (c.backend == Backend::Llvm) { // and against the NVRTC back end's kernels
    std::unique_ptr<GpuProgram> nvrtc = buildGpuProgram(*optimized.graphs[0], shapes, {}, diags);
    ASSERT_TRUE(nvrtc) << diags.str();
    std::vector<Tensor> other;
    ASSERT_TRUE(runOnHostTensors(*nvrtc, inputs, other, diags)) << diags.str();
    EquivalenceResult between;
    between.tolerance = r.tolerance;
    for (unsigned k = 0; k < want.size(); ++k)
      compareOutput(*g, k, other[k], got[k], between);
    EXPECT_LE(between.worstError, between.tolerance)
        << "LLVM against NVRTC: " << between.worstWhere << " (FUSEC_GPU_TEST_SEED=" << runSeed()
        << ")";
  }
  RecordProperty("worst_error", std::to_string(r.worstError));
  RecordProperty("kernels", std::to_string(p->kernels().size()));
}

INSTANTIATE_TEST_SUITE_P(All, GpuCases, ::testing::ValuesIn(discoverCases()),
                         [](const ::testing::TestParamInfo<GpuCase> &info) {
                           return info.param.label;
                         });

} // namespace
} // namespace fusec
