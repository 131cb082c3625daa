// The gemm template's tiles: the defaults, or the kernel's `config` attribute, checked.
// Defaults (docs/codegen-gemm.md has the table and the measurements behind it): for each way the
// operands are staged, block tiles from largest to smallest; the first that gives every SM of an
// H100 a tile and is at most twice as wide as N wins. Every default fits sm_80's 163 KiB of
// shared memory and assembles without spills.
#include "codegen/templates/Template.h"
#include "codegen/templates/gemm/Plan.h"

#include <algorithm>
#include <map>

namespace fusec::gemm {

namespace {

constexpr int64_t kWave = 132;

TileConfig defaultTiles(const Plan &plan) {
  if (!plan.tensorCores) {
    if (plan.acc == DType::F64)
      return TileConfig{64, 64, 16, 0, 0, 0, 8, 4, 4};
    return TileConfig{128, 128, 16, 0, 0, 0, 8, 8, 8};
  }
  // bm, bn, bk, warpsM, warpsN, stages; largest first
  std::vector<TileConfig> sizes = {{128, 256, 64, 2, 4, 3}, {128, 128, 32, 2, 2, 4}};
  // Registers for element-wise loads (rows not whole chunks) or f64 sources
  // leave no room for the larger tiles.
  auto heavy = [](const Matrix &x) {
    return !x.async && (x.inner % 8 != 0 || x.sources.front().stored == DType::F64);
  };
  if ((!plan.a.async && !plan.b.async) || heavy(plan.a) || heavy(plan.b))
    sizes = {{128, 128, 32, 2, 4, 3}};
  else if (!plan.b.async) // more rows a block: fewer reads of the B it converts
    sizes = {{256, 128, 32, 4, 2, 4}, {128, 128, 32, 2, 4, 3}};
  else if (!plan.a.async) // bk 32 would spill a register
    sizes = {{128, 256, 16, 2, 4, 4}, {128, 128, 32, 2, 4, 3}};
  sizes.push_back({64, 128, plan.a.async && plan.b.async ? 64 : 32, 2, 2, 3}); // the smallest
  auto fits = [&](const TileConfig &t) {
    return tileCount(plan, t).value_or(kWave) >= kWave &&
           t.bn <= std::max<int64_t>(2 * plan.n, 128);
  };
  TileConfig chosen = *std::find_if(sizes.begin(), sizes.end() - 1, fits); // else the smallest
  // One K step of 64 leaves ptxas one straight-line block that spills.
  if (plan.k <= 64)
    chosen.bk = std::min(chosen.bk, 32);
  return chosen;
}

bool parsePair(const std::string &v, int &x, int &y) {
  size_t at = v.find('x');
  if (at == std::string::npos)
    return false;
  x = std::atoi(v.substr(0, at).c_str());
  y = std::atoi(v.substr(at + 1).c_str());
  return x > 0 && y > 0;
}

/// Applies "key=value ..." to `t`; what is wrong with the first malformed entry, or "".
std::string parseConfig(const std::string &text, bool tensorCores, TileConfig &t) {
  std::map<std::string, int *> sizes = {
      {"bm", &t.bm}, {"bn", &t.bn}, {"bk", &t.bk}, {"stages", &t.stages}, {"group", &t.groupM}};
  if (tensorCores)
    sizes["specialized"] = &t.specialized;
  return templates::readConfig(text, [&](const std::string &key, const std::string &value) {
    if (auto it = sizes.find(key); it != sizes.end()) {
      *it->second = std::atoi(value.c_str());
      return key == "specialized" ? value == "0" || value == "1" : *it->second > 0;
    }
    if (key == "warps" && tensorCores)
      return parsePair(value, t.warpsM, t.warpsN);
    return key == "thread" && !tensorCores && parsePair(value, t.tm, t.tn);
  });
}

bool isPow2(int x) { return x > 0 && (x & (x - 1)) == 0; }

/// Why the tiles cannot run, or "" when they can.
std::string tileProblem(const TileConfig &t, bool tensorCores, bool registers, DType acc) {
  if (!tensorCores) {
    int bytes = 2 * t.bk * (t.bm + t.bn + 2) * (acc == DType::F64 ? 8 : 4);
    bool fits = t.bm % t.tm == 0 && t.bn % t.tn == 0 && t.threads() <= 1024 && bytes <= 48 * 1024;
    return fits ? "" : "SIMT tiles must divide into at most 1024 threads and 48 KiB";
  }
  if (!isPow2(t.bm) || !isPow2(t.bn) || t.bm < 32 || t.bn < 32 || t.bm > 256 || t.bn > 256 ||
      (t.bk != 16 && t.bk != 32 && t.bk != 64))
    return "bm and bn must be powers of two in [32, 256], bk 16, 32 or 64";
  if (t.bm % (16 * t.warpsM) || t.bn % (16 * t.warpsN) || t.threads() > 1024)
    return "each warp needs at least 16 rows and 16 columns, at most 32 warps";
  if (t.bm * t.bk / 8 % t.threads() || t.bn * t.bk / 8 % t.threads())
    return "each operand tile needs a multiple of one 16-byte chunk a thread";
  if (t.stages < (registers ? 3 : 2) || t.stages > 6 ||
      t.stages * (t.bm + t.bn) * t.bk * 2 > 227 * 1024 || t.bm * (t.bn + 8) * 4 > 227 * 1024)
    return "stages must be 2 (3 with an operand staged through registers) to 6, and they and "
           "the f32 output tile fit in 227 KiB";
  return "";
}

} // namespace

bool chooseTiles(Plan &plan, Diagnostics &diags) {
  const Op &kernel = *plan.kernel;
  plan.tile = defaultTiles(plan);
  const Attribute *config = kernel.attrIfPresent("config");
  if (!config)
    return true;
  const std::string &text = config->get<std::string>();
  std::string problem = parseConfig(text, plan.tensorCores, plan.tile);
  if (problem.empty())
    problem = tileProblem(plan.tile, plan.tensorCores, !plan.a.async || !plan.b.async, plan.acc);
  if (!problem.empty())
    diags.error(kernel.loc(), "gemm kernel config \"" + text + "\": " + problem);
  return problem.empty();
}

/// The tensor map of operand `x` (rows of `inner` elements, `rows` of them), read a box of
/// `boxRows` rows of 64 elements (one 128-byte swizzled panel) at a time.
KernelArg::TensorView panels(const Matrix &x, int64_t rows, int boxRows) {
  KernelArg::TensorView v;
  v.dims = {x.inner, rows};
  v.strides = {x.inner};
  v.box = {64, unsigned(boxRows)};
  v.swizzle = 128;
  return v;
}

void chooseSchedule(Plan &plan, std::string_view target) {
  const Matrix &a = plan.a, &b = plan.b;
  plan.wgmma = target == "sm_90a" && plan.tensorCores && plan.tile.specialized &&
               plan.batches == 1 && plan.m.isStatic() && a.async && b.async && a.kMajor &&
               a.batchOffset.empty() && b.batchOffset.empty();
  if (!plan.wgmma)
    return;
  TileConfig &t = plan.tile;
  t.bm = 128; // two consumer warpgroups of 64 rows
  t.bn = 128;
  t.bk = 64; // one 128-byte swizzled panel of K
  t.stages = 4;
  t.warpsM = 8;
  t.warpsN = 1;
  DType type = plan.operand;
  plan.args.push_back({KernelArg::Kind::TensorMap, "aMap", a.sources.front().input, 0, std::nullopt,
                       type, panels(a, plan.m.factor, t.bm)});
  int64_t bRows = b.kMajor ? plan.n : plan.k;
  for (size_t g = 0; g < b.sources.size(); ++g) // one B a chain (a grouped gemm has several)
    plan.args.push_back({KernelArg::Kind::TensorMap, "bMap" + std::to_string(g), b.sources[g].input,
                         0, std::nullopt, type, panels(b, bRows, b.kMajor ? t.bn : t.bk)});
}

std::optional<int64_t> tileCount(const Plan &plan, const TileConfig &t) {
  if (!plan.m.isStatic())
    return std::nullopt;
  return int64_t(plan.chains.size()) * plan.batches * ((plan.m.factor + t.bm - 1) / t.bm) *
         ((plan.n + t.bn - 1) / t.bn);
}

} // namespace fusec::gemm
