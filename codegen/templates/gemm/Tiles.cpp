// The gemm template's schedule and tiles: the defaults, or the kernel's `config` attribute,
// checked. mma.sync defaults (docs/codegen-gemm.md has the table and the measurements behind it):
// for each way the operands are staged, block tiles from largest to smallest; the first that
// gives every SM of an H100 a tile and is at most twice as wide as N wins; each fits sm_80's 163
// KiB of shared memory and assembles without spills. sm_90a's warp-specialized schedule takes
// the tile width and split of K of least estimated time (Note [Specialized tiles]).
#include "codegen/templates/Template.h"
#include "codegen/templates/gemm/Plan.h"
#include "ir/Assert.h"

#include <algorithm>
#include <bit>
#include <map>

namespace fusec::gemm {

namespace {

constexpr int64_t kWave = 132;
/// Shared memory the warp-specialized stages and output tile of a block may take: of the SM's
/// 228 KiB, 1 KiB a block is the system's and 1 KiB its mbarriers and flags.
constexpr int kSpecializedShared = 226 * 1024;
/// The most scratch a split K may take for its partial tiles.
constexpr int64_t kMaxScratch = int64_t(256) << 20;

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
    return !x.async && (!x.wholeChunks() || x.sources.front().stored == DType::F64);
  };
  if ((!plan.a.async && !plan.b.async) || heavy(plan.a) || heavy(plan.b))
    sizes = {{128, 128, 32, 2, 4, 3}};
  else if (!plan.b.async) // more rows a block: fewer reads of the B it converts
    sizes = {{256, 128, 32, 4, 2, 4}, {128, 128, 32, 2, 4, 3}};
  else if (!plan.a.async) // bk 32 would spill a register
    sizes = {{128, 256, 16, 2, 4, 4}, {128, 128, 32, 2, 4, 3}};
  int smallK = plan.a.async && plan.b.async ? 64 : 32;
  // At most 64 columns (a convolution of 64 channels): 64-wide tiles waste no half of each
  // product; 128 x 64 took 35.3 us where 128 x 128 took 60.5 (3x3, 64 channels, N32 56x56, H200).
  if (plan.n <= 64)
    sizes = {{128, 64, smallK, 2, 2, 4}};
  sizes.push_back({64, plan.n <= 64 ? 64 : 128, smallK, 2, 2, 3}); // the smallest
  auto fits = [&](TileConfig t) {
    t.paired = plan.paired;
    // At most half of a tile past N (a 256-wide tile for N = 128 computed its second half for
    // nothing: 3x3/2 128 -> 128 at 56^2, N32, 66.8 us against cuDNN's 25.2).
    return tileCount(plan, t).value_or(kWave) >= kWave && t.bn < std::max<int64_t>(2 * plan.n, 129);
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

/// Applies the config's entries to `t`: those the tensor-core (`tensorCores`) or SIMT kernel
/// reads, and on the warp-specialized schedule (`specialized`) its own; what is wrong with the
/// first malformed entry, or "".
std::string parseConfig(const std::string &text, bool tensorCores, bool specialized,
                        TileConfig &t) {
  std::map<std::string, int *> sizes = {
      {"bm", &t.bm}, {"bn", &t.bn}, {"bk", &t.bk}, {"stages", &t.stages}, {"group", &t.groupM}};
  if (tensorCores)
    sizes["specialized"] = &t.specialized;
  if (specialized) {
    sizes["splitk"] = &t.splitK;
    sizes["epiwarps"] = &t.epilogueWarps;
    sizes["cluster"] = &t.cluster;
    sizes["overlap"] = &t.overlap;
    sizes["slices"] = &t.slicesAsked;
    sizes["halo"] = &t.halo;
  }
  return templates::readConfig(text, [&](const std::string &key, const std::string &value) {
    if (auto it = sizes.find(key); it != sizes.end()) {
      *it->second = std::atoi(value.c_str());
      if (key == "overlap")
        return value == "0" || value == "1" || value == "2";
      if (key == "specialized" || key == "epiwarps" || key == "halo")
        return value == "0" || value == "1";
      return *it->second > 0;
    }
    if (key == "warps" && tensorCores)
      return parsePair(value, t.warpsM, t.warpsN);
    return key == "thread" && !tensorCores && parsePair(value, t.tm, t.tn);
  });
}

bool isPow2(int x) { return x > 0 && (x & (x - 1)) == 0; }

/// Why the tiles cannot run, or "" when they can.
std::string tileProblem(const TileConfig &t, bool tensorCores, bool registers, DType acc) {
  if (t.paired && t.bn % 8 != 0) // the epilogue reads each product's half four columns at a time
    return "a paired gemm's tiles are a multiple of 8 wide";
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

/// The window's bounding box past the input's last column and row: the last window corner's
/// distance beyond extent - 1 (im2col's upper corners, innermost first).
std::pair<int64_t, int64_t> upperCorners(const Window &w) {
  return {(w.ow - 1) * w.strideW - w.padLeft - (w.w - 1),
          (w.oh - 1) * w.strideH - w.padTop - (w.h - 1)};
}

/// Whether TMA's im2col mode loads a conv2d's A (Note [Implicit gemm on the tensor memory
/// accelerator] in Gemm.cpp): whole 64-channel panels (C a multiple of 64), the corners and
/// strides within a 4-d im2col map's reach (-128 to 127, 1 to 8), and the filter's extent (its
/// last tap's offset) within the same reach.
bool im2colWindow(const Window &w) {
  auto [right, bottom] = upperCorners(w);
  auto reaches = [](int64_t corner) { return corner >= -128 && corner < 128; };
  return w.c % 64 == 0 && reaches(-w.padLeft) && reaches(-w.padTop) && reaches(right) &&
         reaches(bottom) && w.strideW <= 8 && w.strideH <= 8 && reaches((w.kw - 1) * w.dilationW) &&
         reaches((w.kh - 1) * w.dilationH);
}

/// Whether halo tiles can load a conv2d's A (Note [Halo tiles] in Gemm.cpp): stride 1, whole
/// 64-channel panels, a filter of more than one tap (a 1x1's A is its input's rows), and a
/// piece's 8 rows with the filter's reach within a TMA box's 256 (haloFits asks for the shared
/// memory).
bool haloWindow(const Window &w) {
  return w.strideH == 1 && w.strideW == 1 && w.c % 64 == 0 && w.kh * w.kw > 1 &&
         HaloTiles::kSide + (w.kh - 1) * w.dilationH <= 256;
}

int specializedStages(const Plan &plan, const TileConfig &t);

/// Whether halo tiles can run `plan`'s conv2d at all: its window (haloWindow), one product a tile
/// (a paired gemm's B tiles are not laid out for them), and two stages of the narrowest tiles
/// (the box's rows, kh B tiles a stage) beside the output tile, at either tile height.
bool haloFits(const Plan &plan) {
  if (!plan.a.window || !haloWindow(*plan.a.window) || plan.paired)
    return false;
  for (int bm : {64, 128}) {
    TileConfig t;
    t.bm = bm;
    t.bn = 64;
    t.halo = 1;
    if (specializedStages(plan, t) < 2)
      return false;
  }
  return true;
}

/// Whether sm_90a's warp-specialized schedule can run `plan`: one product of static rows, A
/// K-major and, when gathered (a conv2d's), by TMA's im2col mode or by halo tiles, both operands
/// copied as stored (no cast), and no empty extent (a tensor map has none, and the stage ring
/// needs a K step).
bool specializable(const Plan &plan, std::string_view target) {
  const Matrix &a = plan.a, &b = plan.b;
  bool empty = plan.m.factor == 0 || plan.n == 0 || plan.k == 0;
  bool window = !a.window || im2colWindow(*a.window) || haloFits(plan);
  return target == "sm_90a" && plan.tensorCores && plan.batches == 1 && plan.m.isStatic() &&
         !empty && a.async && b.async && a.kMajor && window && a.batchOffset.empty() &&
         b.batchOffset.empty();
}

/// The im2col view of a conv2d's NHWC input whose TMA loads fill `boxRows` rows of A with one
/// 128-byte panel of channels.
KernelArg::TensorView windowPanels(const Window &w, int64_t rows, int boxRows) {
  KernelArg::TensorView v;
  int64_t images = rows / (w.oh * w.ow);
  v.dims = {w.c, w.w, w.h, images};
  v.strides = {w.c, w.c * w.w, w.c * w.w * w.h};
  v.box = {64, unsigned(boxRows)};
  v.swizzle = 128;
  auto [right, bottom] = upperCorners(w);
  v.im2col = KernelArg::TensorView::Im2col{
      {-w.padLeft, -w.padTop}, {right, bottom}, {1, unsigned(w.strideW), unsigned(w.strideH), 1}};
  return v;
}

/// Halo tiles' A (Note [Halo tiles] in Gemm.cpp): the NHWC input as {c, w, h, images}, a box
/// a piece's 8 columns and its boxRows input rows, 64 channels of each.
KernelArg::TensorView haloPanels(const Window &w, int64_t m, int bm) {
  HaloTiles tiles(w, m, bm);
  KernelArg::TensorView v;
  v.dims = {w.c, w.w, w.h, tiles.images};
  v.strides = {w.c, w.c * w.w, w.c * w.w * w.h};
  v.box = {64, unsigned(HaloTiles::kSide), unsigned(tiles.boxRows), 1};
  v.swizzle = 128;
  return v;
}

/// The deepest pipeline of at most 6 stages of t's tiles that fits a block's share of shared
/// memory beside the output tile.
int specializedStages(const Plan &plan, const TileConfig &t) {
  int share = kSpecializedShared / t.blocksPerSM() - (t.blocksPerSM() - 1) * 2048;
  return std::min(6, (share - t.outputBytes()) / plan.stageBytes(t));
}

/// Why an epilogue that starts from the products rounded to their 2-byte dtype (what `key`, the
/// epilogue warps or the overlapped epilogue, hands it) cannot run `plan`, or "": each product
/// f16 or bf16 and without linear's bias (added before that rounding, so a chain with one needs
/// the f32 accumulators); a paired gemm only where `paired` (the staged epilogue reads both of
/// its products, of A's dtype, from its tile; the others keep one product a tile).
std::string roundedProductsProblem(const Plan &plan, const std::string &key, bool paired) {
  if (plan.paired && !paired)
    return key + " does not run a paired gemm";
  for (const Chain &chain : plan.chains)
    if (chain.bias || dtypeSize(chain.anchor->result()->type().dtype) != 2)
      return key + " needs products of f16 or bf16 without linear's bias";
  return "";
}

/// Why the epilogue warps cannot run tiles `t` of `plan`, or "" when they can: two consumer
/// warpgroups, no split of K, and the rounded products.
std::string epilogueWarpsProblem(const Plan &plan, const TileConfig &t) {
  if (t.bm != 128 || t.splitK != 1)
    return "epiwarps=1 needs 128-row tiles and no split of K";
  return roundedProductsProblem(plan, "epiwarps=1", false);
}

/// The bytes of an element of `plan`'s widest result (2 at least).
int widestResult(const Plan &plan) {
  int widest = 2;
  for (unsigned r = 0; r < plan.kernel->numResults(); ++r)
    widest = std::max(widest, int(dtypeSize(plan.kernel->result(r)->type().dtype)));
  return widest;
}

/// Why the overlapped epilogue cannot run tiles `t` of `plan`, or "" when it can: no split of K,
/// epilogue warps or cluster, and the rounded products (what the registers keep).
std::string overlapProblem(const Plan &plan, const TileConfig &t) {
  std::string key = "overlap=" + std::to_string(t.overlap);
  if (t.splitK != 1 || t.epilogueWarps || t.cluster != 1)
    return key + " runs without splitk, epiwarps or cluster";
  if (t.overlap == 1 && t.slicesAsked &&
      (t.bn % t.slicesAsked || !isPow2(t.sliceColumns) || t.sliceColumns < 8 ||
       t.sliceColumns * widestResult(plan) > 128))
    return "slices=" + std::to_string(t.slicesAsked) +
           ": slices of the tile's columns a power of two wide, 8 columns or more and at most "
           "128 bytes of the widest result";
  return roundedProductsProblem(plan, key, t.overlap == 2);
}

/// Whether the overlapped epilogue stores `plan`'s results by TMA: each of a dtype a tensor map
/// holds, its rows a multiple of 16 bytes (N * size; else stored from the registers).
bool storesByTensorMap(const Plan &plan) {
  if (!plan.planar.empty()) // Note [Planar results]: stored from the registers
    return false;
  for (unsigned r = 0; r < plan.kernel->numResults(); ++r) {
    DType t = plan.kernel->result(r)->type().dtype;
    if ((t != DType::F16 && t != DType::BF16 && t != DType::F32) || plan.n * dtypeSize(t) % 16)
      return false;
  }
  return true;
}

/// The overlapped epilogue's slices (TileConfig::sliceColumns, sliceBytes): the tile's columns
/// over the slices asked for, by default a quarter of them and at most 32 (a power of two: a
/// 192-wide tile's six slices are 32 wide, a 256-wide tile's eight) and 128 bytes of the widest
/// result (a TMA store's swizzled row), and the bytes of one slice of every result where they go
/// out by TMA. Eight slices of a 256-wide tile, not four, on the H200 (bench/RESULTS.md
/// 2026-11-28, 8192 x 4096 x 1024): NVRTC 100.3 -> 97.0 us, LLVM 97.1 -> 95.5 (once the tile loop
/// kept its invariants: Note [Tile loop invariants] in Gemm.cpp).
void setSlices(const Plan &plan, TileConfig &t) {
  t.sliceColumns = t.sliceBytes = 0;
  if (t.overlap != 1)
    return;
  t.sliceColumns =
      t.slicesAsked
          ? t.bn / t.slicesAsked
          : int(std::bit_floor(unsigned(std::min({t.bn / 4, 32, 128 / widestResult(plan)}))));
  if (!storesByTensorMap(plan))
    return;
  t.sliceBytes = plan.sliceOffset(t, plan.kernel->numResults());
}

/// Whether `plan`'s epilogue reads no input but those broadcast along the rows (a bias: one
/// value a column, or one for all).
bool readsRowBroadcastsOnly(const Plan &plan) {
  for (const Chain &chain : plan.chains)
    for (const Op *o : chain.ops)
      for (const Value *v : o->operands()) {
        std::optional<int64_t> count = staticNumElements(v->type().shape);
        if (v->isGraphInput() && (!count || (*count != 1 && *count != plan.n)))
          return false;
      }
  return true;
}

/// Whether `plan`'s epilogue is light enough to gain from the register slices of overlap=1:
/// adds, multiplies, casts, clamps and batch_norms (a subtraction, a multiply-add and an rsqrt of
/// its parameters) of the products and of row broadcasts. GeLU's math and a residual's reads,
/// slice by slice between the wgmmas, cost more than they save (bench/RESULTS.md, 2026-11-28).
bool lightEpilogue(const Plan &plan) {
  for (const Chain &chain : plan.chains)
    for (const Op *o : chain.ops)
      switch (o->kind()) {
      case OpKind::Const:
      case OpKind::Cast:
      case OpKind::Add:
      case OpKind::Sub:
      case OpKind::Mul:
      case OpKind::Max:
      case OpKind::Min:
      case OpKind::Relu:
      case OpKind::Neg:
      case OpKind::BatchNorm:
        break;
      default:
        return false;
      }
  return readsRowBroadcastsOnly(plan);
}

/// Why the warp-specialized tiles cannot run in clusters of t.cluster blocks, or "" when they
/// can: alone, or two blocks on a whole number of tile-row pairs (no block without a tile of
/// its own), without a split of K or epilogue warps, each loading half of B's tile (an N-major
/// B's tile has at least two 64-column panels).
std::string clusterProblem(const Plan &plan, const TileConfig &t) {
  if (t.cluster == 1)
    return "";
  if (t.cluster != 2)
    return "cluster is 1 or 2";
  if (t.halo)
    return "cluster=2 runs without halo tiles";
  if (t.splitK > 1 || t.epilogueWarps)
    return "cluster=2 runs without splitk or epiwarps";
  if ((plan.m.factor + t.bm - 1) / t.bm % 2)
    return "cluster=2 needs an even number of tile rows (" + std::to_string(plan.m.factor) +
           " rows of " + std::to_string(t.bm) + "-row tiles)";
  if (!plan.b.kMajor && t.bn < 128)
    return "cluster=2 with B N-major needs tiles 128 or 256 wide";
  return "";
}

// Note [Specialized tiles]
// The warp-specialized schedule's default tile width bn (256, 192, 128 or 64) and split of K (1 to
// 16; bn <= 128) are those of least estimated time on an H100's 132 SMs, in microseconds fitted to
// the tile sweep of docs/codegen-gemm.md ("Choosing the tiles"): units = tiles x splits run in
// ceil(units / 132) waves of the persistent grid; a unit costs its K steps (0.29, 0.40, 0.54, 0.70
// us a step of 64 at bn 64, 128, 192, 256: an SM's rate, below peak for the narrow tiles; 192's
// fitted to the H200's 4096 x 3072 x 768, where 256 stays ahead, and 8192³ keeps 256 by a hair),
// its epilogue (1.2, 1.8, 2.4, 3.0 us; bn 192 and 256 run it 32 columns at a time) and, split,
// writing its partial tile and the last split's reading them back (2 us + 0.33 us a split and 64
// columns). The whole product moves its operands and result at most at 2 TB/s, 40 GB/s an SM at
// work (decode: the weights stream at the rate the units in flight can draw). Products of at most
// 128 rows (decode, BERT at one sequence of 128) take 64-row tiles, two blocks an SM: half the
// shared memory a stage, twice the loads in flight an SM (8 x 4096 x 4096: 27.3 us against 34.1
// with 128 rows; 128 x 768 x 768: 9.1 against 9.6, as `--tune` found).
TileConfig specializedTiles(const Plan &plan) {
  TileConfig best;
  best.bm = plan.m.factor <= 128 ? 64 : 128; // a consumer warpgroup a 64 rows
  best.bk = 64;                              // one 128-byte swizzled panel of K
  best.warpsM = best.bm / 16;
  best.warpsN = 1;
  int64_t slots = kWave * best.blocksPerSM(); // blocks of the persistent grid
  // Halo tiles where TMA's im2col mode does not reach the window (Note [Halo tiles] in Gemm.cpp)
  best.halo = plan.a.window && !im2colWindow(*plan.a.window);
  int64_t kSteps = (plan.k + 63) / 64; // the work, in K steps of 64 (a halo step is kh of them)
  int64_t splittable = plan.kSteps(best);
  double bytes = double(plan.chains.size()) *
                 double(plan.m.factor * plan.k + plan.k * plan.n + plan.m.factor * plan.n) *
                 double(dtypeSize(plan.operand));
  double bestCost = 0;
  for (int bn : {256, 192, 128, 64}) {
    if ((bn > 128 && best.bm == 64) || (bn == 64 && plan.paired && !plan.b.kMajor) ||
        (bn == 192 && plan.paired))
      continue;
    double step = bn == 256 ? 0.70 : bn == 192 ? 0.54 : bn == 128 ? 0.40 : 0.29;
    double epilogue = bn == 256 ? 3.0 : bn == 192 ? 2.4 : bn == 128 ? 1.8 : 1.2;
    TileConfig t = best;
    t.bn = bn;
    t.paired = plan.paired;
    int64_t tiles = tileCount(plan, t).value_or(kWave);
    // Halo tiles: only widths with two stages (a stage holds kh tiles of B).
    if (best.halo && specializedStages(plan, t) < 2)
      continue;
    for (int64_t splits = 1; splits <= std::min<int64_t>(bn <= 128 ? 16 : 1, splittable);
         ++splits) {
      int64_t units = tiles * splits, waves = (units + slots - 1) / slots;
      double steps = double((kSteps + splits - 1) / splits);
      double partial = splits > 1 ? 2.0 + 0.33 * double(splits) * bn / 64 : 0;
      double compute = double(waves) * (steps * step + epilogue + partial);
      double busy = double(std::min(units, slots)) / best.blocksPerSM(); // SMs at work
      double stream = bytes / std::min(2.0e6, busy * 40e3);
      double cost = std::max(compute, stream) + 0.01 * compute; // streaming: the less work
      if (bestCost == 0 || cost < bestCost) {
        bestCost = cost;
        best.bn = bn;
        best.splitK = int(splits);
      }
    }
  }
  best.paired = plan.paired;
  // Notes [Overlapped epilogue] and [Staged epilogue] in Gemm.cpp: where each block has a next
  // tile to hide the epilogue under, a light one from registers when the results go out by TMA,
  // heavier math (GeLU) and a paired tile's two products staged in shared memory; a residual's
  // reads stay between tiles.
  std::optional<int64_t> tiles = tileCount(plan, best);
  bool hidden = best.splitK == 1 && tiles && *tiles > slots;
  best.overlap = lightEpilogue(plan) && storesByTensorMap(plan) && !plan.paired ? 1 : 2;
  if (!hidden || !overlapProblem(plan, best).empty() || !readsRowBroadcastsOnly(plan))
    best.overlap = 0;
  // A conv2d of at most 64 output channels: its short K loop (9 steps for a 3x3 of 64) hides
  // little, and the overlap's registers and shared memory cost more (H200, the tuner's candidates,
  // 2026-11-29: ResNet's 3x3 of 64 28.2 -> 24.1 us, with batch_norm + relu 31.1 -> 26.4, the 1x1
  // 13.9 -> 11.9).
  if (plan.a.window && plan.n <= 64)
    best.overlap = 0;
  setSlices(plan, best);
  best.stages = specializedStages(plan, best);
  FUSEC_ASSERT(best.stages >= 2, "the warp-specialized defaults need two stages");
  return best;
}

/// Why the warp-specialized tiles cannot run, or "" when they can.
std::string specializedProblem(const Plan &plan, const TileConfig &t) {
  if (plan.paired && !plan.b.kMajor && t.bn < 128) // each product's half whole 64-column panels
    return "a paired gemm's warp-specialized tiles with B N-major are 128 or 256 wide";
  if ((t.bm != 64 && t.bm != 128) || t.bk != 64 || t.warpsM != t.bm / 16 || t.warpsN != 1)
    return "the warp-specialized schedule's tiles are bm x bn x 64, bm 64 or 128 (a consumer "
           "warpgroup a 64 rows; warps are set by bm)";
  if (t.bn != 64 && t.bn != 128 && t.bn != 192 && t.bn != 256)
    return "the warp-specialized schedule's bn is 64, 128, 192 or 256";
  if (t.bm == 64 && t.bn > 128) // 128 registers a thread at launch hold no m64n192 wgmma
    return "the warp-specialized schedule's 64-row tiles are at most 128 wide";
  if (plan.paired && t.bn == 192) // each product's half a power of two wide
    return "a paired gemm's warp-specialized tiles are 64, 128 or 256 wide";
  if (t.halo && !haloFits(plan))
    return "halo=1 runs a conv2d of stride 1 over channels a multiple of 64, of more than one "
           "filter tap, one product a tile, whose box and filter rows fit two stages";
  if (!t.halo && plan.a.window && !im2colWindow(*plan.a.window))
    return "halo=0 loads A by TMA's im2col mode, which does not reach this conv2d's window";
  int most = specializedStages(plan, t);
  if (t.stages < 2 || t.stages > most)
    return "the warp-specialized schedule of " + std::to_string(t.bm) + " x " +
           std::to_string(t.bn) + " tiles takes 2 to " + std::to_string(most) + " stages";
  if (t.splitK > 16)
    return "splitk is at most 16";
  return clusterProblem(plan, t);
}

/// Whether config `text` has an entry for `key` ("warps" is not "epiwarps").
bool asks(const std::string &text, const std::string &key) {
  bool found = false;
  templates::readConfig(text, [&](const std::string &k, const std::string &) {
    found = found || k == key;
    return true;
  });
  return found;
}

/// chooseTiles with config `text`.
bool chooseTilesWith(Plan &plan, std::string_view target, const std::string &text,
                     Diagnostics &diags) {
  const Op &kernel = *plan.kernel;
  // The schedule first (an opt-out in the config), then its defaults and the config over them.
  TileConfig optOut;
  std::string problem = parseConfig(text, plan.tensorCores, true, optOut);
  plan.wgmma = problem.empty() && optOut.specialized && specializable(plan, target);
  plan.tile = plan.wgmma ? specializedTiles(plan) : defaultTiles(plan);
  plan.tile.paired = plan.paired;
  for (const char *key : {"splitk", "epiwarps", "cluster", "overlap", "slices", "halo"})
    if (problem.empty() && !plan.wgmma && asks(text, key))
      problem = std::string(key) +
                " applies to sm_90a's warp-specialized schedule only, which this kernel does not "
                "take";
  if (problem.empty() && !text.empty()) {
    TileConfig defaults = plan.tile;
    problem = parseConfig(text, plan.tensorCores, plan.wgmma, plan.tile);
    TileConfig &t = plan.tile;
    if (problem.empty() && plan.wgmma && !asks(text, "warps"))
      t.warpsM = t.bm / 16; // one consumer warpgroup a 64 rows
    bool asked = asks(text, "overlap");
    if (problem.empty() && (t.splitK > 1 || t.epilogueWarps || t.cluster > 1) && !asked)
      t.overlap = 0; // the default overlap gives way to what the config asks for
    bool changed = t.bn != defaults.bn || t.bm != defaults.bm ||
                   t.epilogueWarps != defaults.epilogueWarps || t.overlap != defaults.overlap ||
                   t.slicesAsked != defaults.slicesAsked || // the slice buffers beside the stages
                   t.halo != defaults.halo;                 // a stage's size
    setSlices(plan, t);
    if (problem.empty() && plan.wgmma && changed && !asks(text, "stages"))
      t.stages = specializedStages(plan, t);
    if (problem.empty() && (t.cluster > 1 || t.overlap) && !asks(text, "splitk"))
      t.splitK = 1; // a cluster or an overlapped epilogue asked for over the default split
    if (problem.empty())
      problem = plan.wgmma ? specializedProblem(plan, plan.tile)
                           : tileProblem(plan.tile, plan.tensorCores,
                                         !plan.a.async || !plan.b.async, plan.acc);
    if (problem.empty() && t.epilogueWarps)
      problem = epilogueWarpsProblem(plan, t);
    if (problem.empty() && t.overlap)
      problem = overlapProblem(plan, t);
    if (problem.empty() && t.slicesAsked && t.overlap != 1)
      problem = "slices applies to the overlapped epilogue (overlap=1)";
  }
  if (!problem.empty()) {
    diags.error(kernel.loc(), "gemm kernel config \"" + text + "\": " + problem);
    return false;
  }
  if (!plan.wgmma)
    return true;
  TileConfig &t = plan.tile;
  t.splitK = int(std::min<int64_t>(t.splitK, plan.kSteps(t))); // a K step a split
  if (plan.scratchBytes() > kMaxScratch) {
    diags.error(kernel.loc(), "gemm kernel config \"" + text +
                                  "\": splitk=" + std::to_string(t.splitK) + " needs " +
                                  std::to_string(plan.scratchBytes() >> 20) +
                                  " MiB of partial tiles, more than the 256 MiB allowed");
    return false;
  }
  const Matrix &a = plan.a, &b = plan.b;
  DType type = plan.operand;
  plan.args.push_back({KernelArg::Kind::TensorMap, "aMap", a.sources.front().input, 0, std::nullopt,
                       type,
                       !a.window ? panels(a, plan.m.factor, t.bm)
                       : t.halo  ? haloPanels(*a.window, plan.m.factor, t.bm)
                                 : windowPanels(*a.window, plan.m.factor, t.bm)});
  int64_t bRows = b.kMajor ? plan.n : plan.k;
  // One B a chain (a grouped gemm has several); paired, each fills half a K-major tile's rows.
  // In a cluster each block loads half a K-major tile's rows (Note [Clustered tiles]).
  int bBox = b.kMajor ? t.bn / (plan.paired || t.cluster > 1 ? 2 : 1) : t.bk;
  for (size_t g = 0; g < b.sources.size(); ++g)
    plan.args.push_back({KernelArg::Kind::TensorMap, "bMap" + std::to_string(g), b.sources[g].input,
                         0, std::nullopt, type, panels(b, bRows, bBox)});
  // The overlapped epilogue's results, a slice of bm rows at a time, swizzled over the slice's
  // row where it is 32, 64 or 128 bytes (Note [Overlapped epilogue] in Gemm.cpp).
  for (unsigned r = 0; t.sliceBytes && r < plan.kernel->numResults(); ++r) {
    DType result = plan.kernel->result(r)->type().dtype;
    unsigned row = unsigned(t.sliceColumns * dtypeSize(result));
    KernelArg::TensorView v;
    v.output = true;
    v.dims = {plan.n, plan.m.factor};
    v.strides = {plan.n};
    v.box = {unsigned(t.sliceColumns), unsigned(t.bm)};
    if (t.halo) { // a box a piece: 8 x 8 pixels of one image's NHWC result
      const Window &w = *plan.a.window;
      HaloTiles tiles = plan.haloTiles(t);
      v.dims = {plan.n, w.ow, w.oh, tiles.images};
      v.strides = {plan.n, plan.n * w.ow, plan.n * w.ow * w.oh};
      v.box = {unsigned(t.sliceColumns), unsigned(HaloTiles::kSide), unsigned(HaloTiles::kSide), 1};
    }
    v.swizzle = row >= 32 ? row : 0;
    plan.args.push_back(
        {KernelArg::Kind::TensorMap, "outMap" + std::to_string(r), r, 0, std::nullopt, result, v});
  }
  if (t.splitK > 1) {
    plan.args.push_back({KernelArg::Kind::Scratch, "parts", 0, 0, std::nullopt, DType::F32});
    plan.args.push_back({KernelArg::Kind::Scratch, "counters", unsigned(plan.partsBytes()), 0,
                         std::nullopt, DType::I32});
  }
  return true;
}

// Note [Tuning candidates]
// What `--tune` times for a gemm kernel (runtime/Tuning.cpp): the template's own choice first, then
// on sm_90a's warp-specialized schedule every tile width with 128-row tiles (64-row ones too up to
// 256 rows) and the splits of K that add fewer than three waves to the unsplit tiles, each
// 128-row width with the epilogue warps too (Note [Epilogue warps] in Gemm.cpp), each unsplit
// tile with and without the overlapped epilogue (Note [Overlapped epilogue] in Gemm.cpp; a
// 256-wide tile's in four slices and in eight) and in
// clusters of two where it can (Note [Clustered tiles] in Gemm.cpp), a stride-1 conv2d's on halo
// tiles and on im2col loads (Note [Halo tiles] in Gemm.cpp), and the mma.sync schedule with its
// defaults; on mma.sync the tile shapes of defaultTiles and their
// neighbours; on SIMT a few block and thread tiles. Each is kept only when chooseTiles takes it and
// it gives other tiles than a candidate before it, so every candidate is a distinct kernel.
std::vector<std::string> candidateTexts(const Plan &plan, std::string_view target) {
  std::vector<std::string> texts = {""};
  auto add = [&](const std::string &t) { texts.push_back(t); };
  if (specializable(plan, target)) {
    int64_t kSteps = (plan.k + 63) / 64;
    for (int bm : {128, 64}) {
      if (bm == 64 && plan.m.factor > 256)
        continue;
      for (int bn : {256, 192, 128, 64}) {
        if (bm == 64 && bn > 128)
          continue;
        TileConfig t;
        t.bm = bm;
        t.bn = bn;
        t.paired = plan.paired;
        int64_t tiles = tileCount(plan, t).value_or(kWave), slots = kWave * t.blocksPerSM();
        std::string tile = "bm=" + std::to_string(bm) + " bn=" + std::to_string(bn);
        for (int split : {1, 2, 3, 4, 6, 8, 12, 16}) {
          if (split > 1 && (bn > 128 || split > kSteps || tiles * (split - 1) >= 3 * slots))
            break;
          add(tile + " splitk=" + std::to_string(split));
        }
        for (const char *overlap : {" overlap=0", " overlap=1", " overlap=2"}) // the epilogues
          add(tile + overlap);
        if (bn == 256) // four slices beside the default eight (setSlices)
          add(tile + " overlap=1 slices=4");
        add(tile + " cluster=2"); // Note [Clustered tiles] in Gemm.cpp
        if (haloFits(plan) && im2colWindow(*plan.a.window))
          for (const char *halo : {" halo=0", " halo=1"}) // Note [Halo tiles] in Gemm.cpp
            add(tile + halo);
        if (bm == 128) // Note [Epilogue warps] in Gemm.cpp
          add(tile + " epiwarps=1");
      }
    }
    add("specialized=0");
    return texts;
  }
  if (plan.tensorCores) {
    for (const char *tiles :
         {"bm=128 bn=256 bk=64 warps=2x4 stages=3", "bm=128 bn=256 bk=32 warps=2x4 stages=4",
          "bm=128 bn=256 bk=16 warps=2x4 stages=4", "bm=256 bn=128 bk=32 warps=4x2 stages=4",
          "bm=128 bn=128 bk=32 warps=2x4 stages=3", "bm=128 bn=128 bk=32 warps=2x2 stages=4",
          "bm=128 bn=128 bk=64 warps=2x2 stages=3", "bm=64 bn=128 bk=64 warps=2x2 stages=3",
          "bm=64 bn=128 bk=32 warps=2x2 stages=4", "bm=128 bn=64 bk=32 warps=2x2 stages=4",
          "bm=64 bn=64 bk=64 warps=2x2 stages=4"})
      add("specialized=0 " + std::string(tiles));
    return texts;
  }
  for (const char *tiles : {"bm=128 bn=128 bk=16 thread=8x8", "bm=128 bn=64 bk=16 thread=8x4",
                            "bm=64 bn=128 bk=16 thread=4x8", "bm=64 bn=64 bk=16 thread=4x4",
                            "bm=64 bn=64 bk=16 thread=8x8", "bm=128 bn=128 bk=8 thread=8x8"})
    add(tiles);
  return texts;
}

/// Shared memory a block of mma.sync tiles `t` takes: the stages, or the f32 output tile.
int64_t mmaSharedBytes(const TileConfig &t) {
  return std::max<int64_t>(int64_t(t.stages) * (t.bm + t.bn) * t.bk * 2, t.bm * (t.bn + 8) * 4);
}

} // namespace

bool chooseTiles(Plan &plan, std::string_view target, Diagnostics &diags) {
  const Attribute *config = plan.kernel->attrIfPresent("config");
  return chooseTilesWith(plan, target, config ? config->get<std::string>() : "", diags);
}

std::vector<std::string> tuningConfigs(const Op &kernel, std::string_view target) {
  Diagnostics quiet;
  Plan base;
  if (!analyzeGemm(kernel, "tune", base, quiet) || !base.m.isStatic())
    return {};
  // Before sm_90 a block has at most 163 KiB of shared memory (sm_80's).
  int64_t sharedLimit = target.starts_with("sm_9") ? 227 * 1024 : 163 * 1024;
  std::vector<std::string> out;
  std::vector<std::vector<int>> seen;
  for (const std::string &text : candidateTexts(base, target)) {
    Plan p = base;
    if (!chooseTilesWith(p, target, text, quiet))
      continue;
    const TileConfig &t = p.tile;
    if (!p.wgmma && p.tensorCores && mmaSharedBytes(t) > sharedLimit)
      continue;
    std::vector<int> tiles = {p.wgmma,   t.bm,      t.bn,           t.bk,
                              t.warpsM,  t.warpsN,  t.stages,       t.groupM,
                              t.tm,      t.tn,      t.splitK,       t.epilogueWarps,
                              t.cluster, t.overlap, t.sliceColumns, t.halo};
    if (std::find(seen.begin(), seen.end(), tiles) != seen.end())
      continue;
    seen.push_back(tiles);
    out.push_back(text);
  }
  if (out.size() < 2)
    return {};
  return out;
}

int Plan::sliceOffset(const TileConfig &t, unsigned r) const {
  int bytes = 0;
  for (unsigned q = 0; q < r; ++q)
    bytes += t.bm * t.sliceColumns * int(dtypeSize(kernel->result(q)->type().dtype));
  return bytes;
}

int64_t Plan::outputTiles() const { return tileCount(*this, tile).value_or(0); }

std::optional<int64_t> tileCount(const Plan &plan, const TileConfig &t) {
  if (!plan.m.isStatic())
    return std::nullopt;
  int64_t rows = t.halo ? plan.haloTiles(t).count() : (plan.m.factor + t.bm - 1) / t.bm;
  return plan.tileChains() * plan.batches * rows * ((plan.n + t.outN() - 1) / t.outN());
}

HaloTiles::HaloTiles(const Window &w, int64_t m, int bm)
    : boxRows(kSide + (w.kh - 1) * w.dilationH), across((w.ow + kSide - 1) / kSide),
      down((w.oh + kSide - 1) / kSide), images(m / (w.oh * w.ow)), pieces(across * down * images),
      perTile(bm / 64), whole(w.ow % kSide == 0 && w.oh % kSide == 0 && pieces % perTile == 0) {}

int64_t Plan::kSteps(const TileConfig &t) const {
  if (t.halo)
    return a.window->c / 64 * a.window->kw;
  return (k + t.bk - 1) / t.bk;
}

int Plan::aStageBytes(const TileConfig &t) const {
  if (t.halo) {
    HaloTiles tiles = haloTiles(t);
    return int(tiles.perTile * tiles.boxBytes());
  }
  return t.bm * t.bk * 2;
}

int Plan::stageBytes(const TileConfig &t) const {
  return aStageBytes(t) + int(t.halo ? a.window->kh : 1) * t.bn * t.bk * 2;
}

} // namespace fusec::gemm
