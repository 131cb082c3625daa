// Embedding fusec: build a LayerNorm + GeLU graph as .fir text, compile it
// with fp16 autocast, run it on the GPU on device buffers this program owns,
// and check the result against a plain C++ computation.
//
//   fusec-embed-example [ROWS]
//
// Exit codes: 0 the GPU result matches, 1 it does not or an error occurred,
// 77 no usable GPU (so a test runner can report it skipped).
#include "fusec/fusec.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr int kCols = 768;

std::string graphText() {
  std::string n = std::to_string(kCols);
  return "func @ln_gelu(%x: f32[rows," + n + "], %g: f32[" + n + "], %b: f32[" + n +
         "]) -> f32[rows," + n +
         "] {\n"
         "  %y = layer_norm(%x, %g, %b) : f32[rows," +
         n +
         "]\n"
         "  %z = gelu(%y) : f32[rows," +
         n +
         "]\n"
         "  return %z\n"
         "}\n";
}

/// LayerNorm then exact GeLU of one row, in double.
void reference(const float *x, const float *g, const float *b, float *out) {
  double mean = 0, var = 0;
  for (int i = 0; i < kCols; ++i)
    mean += x[i];
  mean /= kCols;
  for (int i = 0; i < kCols; ++i)
    var += (x[i] - mean) * (x[i] - mean);
  double rstd = 1.0 / std::sqrt(var / kCols + 1e-5);
  for (int i = 0; i < kCols; ++i) {
    double y = (x[i] - mean) * rstd * g[i] + b[i];
    out[i] = float(0.5 * y * (1.0 + std::erf(y / std::sqrt(2.0))));
  }
}

int fail(const std::string &what, const std::string &error) {
  std::fprintf(stderr, "%s: %s\n", what.c_str(), error.c_str());
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  int64_t rows = argc > 1 ? std::atoll(argv[1]) : 1000;
  std::string error;
  auto model = fusec::Model::parse(graphText(), "ln_gelu.fir", &error);
  if (!model)
    return fail("parse", error);
  fusec::CompileOptions options;
  options.precision = fusec::Precision::FP16;
  auto graph = fusec::CompiledGraph::compile(*model, "", options, &error);
  if (!graph)
    return fail("compile", error);

  std::vector<float> x(rows * kCols), g(kCols), b(kCols), got(rows * kCols), want(kCols);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  for (float *v : {x.data(), g.data(), b.data()})
    for (size_t i = 0, n = v == x.data() ? x.size() : kCols; i < n; ++i)
      v[i] = u(rng);

  auto dx = fusec::DeviceBuffer::allocate(x.size() * 4, &error);
  if (!dx) {
    std::fprintf(stderr, "skipped: %s\n", error.c_str());
    return 77;
  }
  auto dg = fusec::DeviceBuffer::allocate(g.size() * 4, &error);
  auto db = fusec::DeviceBuffer::allocate(b.size() * 4, &error);
  auto dz = fusec::DeviceBuffer::allocate(got.size() * 4, &error);
  if (!dg || !db || !dz || !dx->upload(x.data(), &error) || !dg->upload(g.data(), &error) ||
      !db->upload(b.data(), &error))
    return fail("device buffers", error);
  if (!graph->run({{dx->data(), {rows, kCols}}, {dg->data(), {kCols}}, {db->data(), {kCols}}},
                  {{dz->data(), {rows, kCols}}}, nullptr, &error) ||
      !fusec::synchronize(nullptr, &error) || !dz->download(got.data(), &error))
    return fail("run", error);

  double worst = 0;
  for (int64_t r = 0; r < rows; ++r) {
    reference(&x[r * kCols], g.data(), b.data(), want.data());
    for (int i = 0; i < kCols; ++i)
      worst = std::max(worst, std::fabs(double(got[r * kCols + i]) - want[i]) /
                                  std::max(1.0, std::fabs(double(want[i]))));
  }
  for (const fusec::KernelInfo &k : graph->kernels({{rows, kCols}, {kCols}, {kCols}}, &error))
    std::printf("kernel %s (%s), %u blocks of %u threads, from %s\n", k.name.c_str(),
                k.templateName.c_str(), k.grid[0], k.block[0], k.cacheSource.c_str());
  std::printf("rows %lld: worst error %.3g against the double reference (fp16 autocast)\n",
              (long long)rows, worst);
  return worst <= 2e-2 ? 0 : 1;
}
