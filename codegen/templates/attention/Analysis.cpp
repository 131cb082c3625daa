// The attention template's analysis (Plan.h): which bodies it takes, how each operand is laid
// out, and the tiles: the block's rows, keys a tile, mma.sync or wgmma.
#include "codegen/templates/Index.h"
#include "codegen/templates/Template.h"
#include "codegen/templates/attention/Plan.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace fusec::attention {

namespace {

bool isView(const Op *op) { return op && isStridedView(op->kind()); }

/// The strides of `v` in the body input it views through reshapes, transposes and slices
/// (contiguous), `source` set to that input and `offset` to the element `v`'s first is; nullopt
/// when a reshape cannot be read in place.
std::optional<Sizes> viewedStrides(const Value *v, const Value *&source, int64_t &offset) {
  Sizes shape = staticSizes(v->type().shape);
  const Op *def = v->definingOp();
  if (!isView(def)) {
    source = v;
    offset = 0;
    return templates::contiguousStrides(shape);
  }
  const Value *x = def->operand(0);
  std::optional<Sizes> in = viewedStrides(x, source, offset);
  if (!in)
    return std::nullopt;
  if (def->kind() == OpKind::Reshape)
    return templates::reshapedStrides(staticSizes(x->type().shape), *in, shape);
  if (def->kind() == OpKind::Slice) { // the first element moves; the axis steps further
    unsigned axis = *normalizeAxis(def->getInt("axis"), shape.size());
    int64_t start = sliceBound(def->getInt("start"), staticSizes(x->type().shape)[axis]);
    offset += start * (*in)[axis];
    (*in)[axis] *= def->getInt("step");
    return in;
  }
  const std::vector<int64_t> &perm = def->getInts("perm");
  Sizes out(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    out[i] = (*in)[size_t(perm[i])];
  return out;
}

/// The strides of `v` in the tensor the reshapes and transposes that read it make: `v`'s only
/// use, then that view's only use, and so on, up to `last` (contiguous; a slice is no way out:
/// it would leave elements unwritten); nullopt when a reshape cannot be written in place.
std::optional<Sizes> writtenStrides(const Value *v, const Value *&last) {
  const Op *user = v->uses().size() == 1 ? v->uses().begin()->user : nullptr;
  if (!user || (user->kind() != OpKind::Reshape && user->kind() != OpKind::Transpose)) {
    last = v;
    return templates::contiguousStrides(staticSizes(v->type().shape));
  }
  const Value *y = user->result();
  std::optional<Sizes> out = writtenStrides(y, last);
  Sizes shape = staticSizes(v->type().shape);
  if (!out)
    return std::nullopt;
  if (user->kind() == OpKind::Reshape)
    return templates::reshapedStrides(staticSizes(y->type().shape), *out, shape);
  const std::vector<int64_t> &perm = user->getInts("perm");
  Sizes in(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    in[size_t(perm[i])] = (*out)[i];
  return in;
}

/// A tensor of `shape` and `strides` ([..., rows, cols], or any shape that broadcasts to batch +
/// [rows, cols]) read broadcast to the output's batch dims `batch` and matrices of rows x cols.
Operand operandOf(const Sizes &shape, const Sizes &strides, const Sizes &batch, int64_t rows,
                  int64_t cols) {
  Sizes full = batch;
  full.push_back(rows);
  full.push_back(cols);
  Sizes broadcast(full.size(), 0);
  for (size_t i = 0; i < shape.size(); ++i) { // from the last dim of both
    size_t at = full.size() - 1 - i, own = shape.size() - 1 - i;
    if (shape[own] != 1 || full[at] == 1)
      broadcast[at] = shape[own] == 1 ? 0 : strides[own];
  }
  Operand x;
  x.batch.assign(broadcast.begin(), broadcast.end() - 2);
  x.row = broadcast.end()[-2];
  x.col = broadcast.back();
  return x;
}

bool refuse(Diagnostics &diags, const Op &kernel, const std::string &why) {
  diags.error(kernel.loc(),
              "attention kernel '%" + kernel.result(0)->name() + "': " + why + "; runs op by op");
  return false;
}

bool isHeadDim(int64_t d) { return d % 8 == 0 && d >= 32 && d <= 256; }

/// Shared memory a block may have: 227 KiB on Hopper, 163 KiB on sm_80 (99 KiB on sm_86/89).
int64_t sharedLimit(const Plan &p) { return (p.wgmma ? 227 : 163) * 1024; }

/// Streaming multiprocessors of the target's largest part (H100 SXM, A100): what a decode's splits
/// aim to fill. The kernel is generated without a device (ahead of time too), so from the target.
int64_t targetSMs(std::string_view target) { return target.starts_with("sm_90") ? 132 : 108; }

/// Dims of `x` a tensor map keeps besides the head dim and the rows: the batch dims of more
/// than one index along which it does not broadcast.
int keptBatchDims(const Plan &p, const Operand &x) {
  int n = 0;
  for (size_t i = 0; i < p.batch.size(); ++i)
    n += p.batch[i] > 1 && x.batch[i] != 0;
  return n;
}

/// The view a TMA copy of `x` reads: `width` columns a row (up to 64 a box: one swizzled
/// panel), `rows` rows, the batch dims it keeps (last first), boxes of `boxRows` rows.
KernelArg::TensorView tensorView(const Plan &p, const Operand &x, int64_t width, int64_t rows,
                                 int64_t tileWidth, int boxRows) {
  KernelArg::TensorView t;
  t.offset = x.offset;
  t.dims = {width, rows};
  t.strides = {x.row};
  t.box = {unsigned(std::min<int64_t>(tileWidth, 64)), unsigned(boxRows)};
  t.swizzle = tileWidth <= 32 ? 64 : 128;
  for (size_t i = p.batch.size(); i-- > 0;)
    if (p.batch[i] > 1 && x.batch[i] != 0) {
      t.dims.push_back(p.batch[i]);
      t.strides.push_back(x.batch[i]);
      t.box.push_back(1);
    }
  return t;
}

/// Keys from which sm_90a's warp-specialized schedule is the default: on the H100 it ran B4 H16
/// S4096 D128 at 580 TFLOP/s against the one-warpgroup schedule's 386-431, S2048 D64 at 0.91x
/// cuDNN against 0.87-0.89x, but BERT's S512 in 39.6 us against 35.6 and B1 H12 S128 in 8.0
/// against 7.1, where 128-query blocks leave SMs idle and the rows are too short to pipeline
/// (bench/RESULTS.md, 2026-11-27).
constexpr int64_t kSpecializedKeys = 1024;

/// What a `config` says of the warp-specialized schedule (specialized=0|1), if anything: read
/// before the tiles are planned, since it picks their defaults.
std::optional<bool> configSpecialized(const std::string &text) {
  std::optional<bool> said;
  templates::readConfig(text, [&](const std::string &key, const std::string &value) {
    if (key == "specialized")
      said = value == "1";
    return true;
  });
  return said;
}

/// The warp-specialized schedule's tiles (sm_90a, docs/codegen-attention.md section 5): 128
/// queries a block in two consumer warpgroups, 128 keys a tile where two stages fit (64 at d
/// 256), three stages where they fit in 160 KiB. False where a tensor map cannot read an
/// operand (more than three batch dims of its own).
bool planSpecialized(Plan &p) {
  for (const Operand *x : {&p.q, &p.k, &p.v})
    if (keptBatchDims(p, *x) > 3)
      return false;
  p.specialized = true;
  p.warps = 8;
  p.blocks = 1;
  p.bc = 128;
  p.stages = 2;
  if (p.sharedBytes() > sharedLimit(p))
    p.bc = 64;
  p.stages = 3;
  if (p.sharedBytes() > 160 * 1024)
    p.stages = 2;
  return true;
}

/// Decode (Sq at most 16): a block's rows are the queries of every head that reads its K/V, when
/// their O fits a warp's registers (blocks x dv up to 128: 64 registers; more spills), else
/// those of one head. Four warps split each tile of 64 keys; three K/V stages, two where they
/// would not fit or one tile holds every key.
void planDecode(Plan &p) {
  p.decode = true;
  p.wgmma = false; // a handful of rows: mma.sync's m16 wastes less than wgmma's m64
  p.grouped.assign(p.batch.size(), false);
  p.group = 1;
  for (size_t i = 0; i < p.batch.size(); ++i)
    if (p.batch[i] > 1 && p.k.batch[i] == 0 && p.v.batch[i] == 0)
      p.grouped[i] = true, p.group *= p.batch[i];
  if ((p.rows() + 15) / 16 * p.dvk() > 128)
    p.grouped.assign(p.batch.size(), false), p.group = 1;
  p.blocks = int(std::max<int64_t>((p.rows() + 15) / 16, 1));
  p.bc = 64;
  p.stages = 3;
  if (p.sharedBytes() > sharedLimit(p) || p.keys() <= p.bc) // no third stage for one tile
    p.stages = 2;
}

/// Decode blocks that, streaming K/V, saturate the H100's memory: 64 read as fast as 256.
constexpr int64_t kStreamingBlocks = 64;

/// The splits of a decode's keys: about one block an SM, and none once the units alone are
/// kStreamingBlocks, since every split adds its share of the combine (B8 Hkv8 Sk4096 d128: 60.7 us
/// in one split, 61.5 in two, 62.8 in four; B1: 16.8 us in 16 splits, 47 in one; bench/RESULTS.md,
/// 2026-11-27). At most one split per 256 keys, and 64.
int chooseSplits(const Plan &p, std::string_view target) {
  int64_t sms = targetSMs(target), units = std::max<int64_t>(p.units(), 1);
  if (units >= kStreamingBlocks || p.rows() == 0)
    return 1;
  int64_t most = std::clamp<int64_t>((p.keys() + 255) / 256, 1, 64);
  return int(std::clamp<int64_t>(sms / units, 1, most));
}

/// Applies a `config` attribute ("bc=128 stages=3 blocks=1"; blocks only for mma.sync, splits only
/// for decode, whose tiles are rounded up to 16 keys a warp) to `p`; what is wrong with it, or "".
std::string readConfig(const std::string &text, Plan &p) {
  std::string problem =
      templates::readConfig(text, [&](const std::string &key, const std::string &value) {
        int x = std::atoi(value.c_str());
        if (key == "bc")
          p.bc = x;
        else if (key == "stages")
          p.stages = x;
        else if (key == "blocks") // a warpgroup's rows are fixed, a decode's its unit's
          p.blocks = p.wgmma || p.decode ? p.blocks : x;
        else if (key == "warps")
          p.warps = x;
        else if (key == "splits" && p.decode)
          p.splits = x;
        else if (key == "specialized") // planned before (analyze); only sm_90a's rows
          return (value == "0" || value == "1");
        else
          return false;
        return x > 0;
      });
  if (p.specialized && p.warps != 8)
    return "a warp-specialized block has warps=8 (two consumer warpgroups)";
  if (!problem.empty())
    return problem;
  if (p.decode) { // every warp takes 16 keys of a tile or more
    int step = 16 * p.warps;
    p.bc = (p.bc + step - 1) / step * step;
  }
  int64_t limit = sharedLimit(p);
  if (p.bc % 32 != 0 || p.bc > 256 || p.stages < 2 || p.stages > 4 || (p.blocks > 2 && !p.decode) ||
      (p.warps != 4 && p.warps != 8) || p.sharedBytes() > limit)
    return "bc must be a multiple of 32 up to 256, stages 2 to 4, blocks 1 or 2, warps 4 or 8, "
           "and the tiles fit in " +
           std::to_string(limit / 1024) + " KiB";
  if (p.decode && p.splits > 64)
    return "a decode's splits are 1 to 64";
  return "";
}

} // namespace

bool analyze(const Op &kernel, const std::string &entry, std::string_view target, Plan &p,
             Diagnostics &diags) {
  const Graph &body = *kernel.body();
  p.kernel = &kernel;
  p.entry = entry;
  for (const auto &op : body.ops()) {
    if (op->kind() == OpKind::Const || isView(op.get()))
      continue;
    if (p.attention || op->kind() != OpKind::Attention)
      return refuse(diags, kernel,
                    "the template takes one attention op and the reshapes and transposes around "
                    "it (casts and epilogues are not fused yet)");
    p.attention = op.get();
  }
  if (!p.attention)
    return refuse(diags, kernel, "it holds no attention");
  if (!kernel.hasStaticShapes())
    return refuse(diags, kernel, "its shapes are symbolic");
  const Op &a = *p.attention;
  std::vector<std::optional<Sizes>> strides(a.numOperands());
  std::vector<const Value *> sources(a.numOperands());
  std::vector<int64_t> offsets(a.numOperands(), 0);
  for (unsigned i = 0; i < a.numOperands(); ++i) {
    const Value *x = a.operand(i);
    // A constant mask becomes a table of the kernel's (f32 elements), when it is small enough
    // to spell out.
    if (i == 3 && x->definingOp() && x->definingOp()->kind() == OpKind::Const) {
      const DenseData &d = x->definingOp()->getDense("value");
      if (d.numElements() == 0 || d.numElements() > kMaxMaskTable || d.dtype == DType::F64)
        return refuse(diags, kernel,
                      "a constant mask of " + std::to_string(d.numElements()) + " " +
                          std::string(dtypeName(d.dtype)) + " elements (it holds 1 to " +
                          std::to_string(kMaxMaskTable) + " f16, bf16 or f32)");
      p.maskTable = &d;
      strides[i] = templates::contiguousStrides(staticSizes(x->type().shape));
      continue;
    }
    strides[i] = viewedStrides(x, sources[i], offsets[i]);
    if (!sources[i]->isGraphInput())
      return refuse(diags, kernel, "an operand is computed inside the kernel");
    if (!strides[i])
      return refuse(diags, kernel, "a reshape of a transposed operand needs a copy");
  }
  const Value *last = nullptr;
  std::optional<Sizes> written = writtenStrides(a.result(), last);
  if (body.outputs().size() != 1 || body.outputs()[0] != last)
    return refuse(diags, kernel, "the kernel returns something else than the attention");
  if (!written)
    return refuse(diags, kernel, "a reshape of the transposed result needs a copy");
  p.dtype = a.result()->type().dtype;
  for (unsigned i = 0; i < 3; ++i)
    if (a.operand(i)->type().dtype != p.dtype || !isNarrowFloat(p.dtype))
      return refuse(diags, kernel, "q, k, v and the result must all be f16 or all bf16");
  if (const Attribute *acc = a.attrIfPresent("acc"); acc && acc->get<DType>() != DType::F32)
    return refuse(diags, kernel, "it accumulates in f32 only");
  Sizes out = staticSizes(a.result()->type().shape);
  Sizes key = staticSizes(a.operand(1)->type().shape);
  p.sq = out.end()[-2];
  p.dv = out.back();
  p.sk = key.end()[-2];
  p.d = key.back();
  if (!isHeadDim(p.d) || !isHeadDim(p.dv))
    return refuse(diags, kernel,
                  "head dims " + std::to_string(p.d) + " and " + std::to_string(p.dv) +
                      " (it takes multiples of 8 from 32 to 256)");
  p.batch.assign(out.begin(), out.end() - 2);
  p.q = operandOf(staticSizes(a.operand(0)->type().shape), *strides[0], p.batch, p.sq, p.d);
  p.k = operandOf(key, *strides[1], p.batch, p.sk, p.d);
  p.v = operandOf(staticSizes(a.operand(2)->type().shape), *strides[2], p.batch, p.sk, p.dv);
  p.o = operandOf(out, *written, p.batch, p.sq, p.dv);
  p.hasMask = a.numOperands() > 3;
  if (p.hasMask) {
    if (a.operand(3)->type().dtype == DType::F64)
      return refuse(diags, kernel, "an f64 mask");
    p.maskType = p.maskTable ? DType::F32 : a.operand(3)->type().dtype;
    p.mask = operandOf(staticSizes(a.operand(3)->type().shape), *strides[3], p.batch, p.sq, p.sk);
  }
  Operand *read[] = {&p.q, &p.k, &p.v, &p.mask};
  for (unsigned i = 0; i < a.numOperands(); ++i) { // the kernel operand each views, from where
    read[i]->offset = offsets[i];
    if (sources[i])
      read[i]->input = sources[i]->index();
  }
  // Q, K and V go by 16-byte copies of 8 elements and O by pairs: the head dim contiguous, every
  // other stride and the first element whole chunks (pairs).
  for (const Operand *x : {&p.q, &p.k, &p.v, &p.o}) {
    int64_t unit = x == &p.o ? 2 : 8;
    bool aligned = x->row % unit == 0 && x->offset % unit == 0;
    for (int64_t stride : x->batch)
      aligned = aligned && stride % unit == 0;
    if (x->col != 1 || !aligned)
      return refuse(diags, kernel,
                    "q, k, v and the result are read and written with the head dim contiguous and "
                    "rows 16-byte aligned");
  }
  p.causal = a.getBool("causal");
  const Attribute *scale = a.attrIfPresent("scale");
  p.scale = scale ? scale->get<double>() : 1.0 / std::sqrt(double(p.d));
  // 32-bit registers a thread: S (blocks x 32) + O (blocks x dv / 2) + Q (blocks x d / 4) when
  // it stays in registers; the rest of the 255 hold addresses, fragments and the softmax state.
  // Two row blocks a warp (128 queries a block) read each K/V fragment for twice the rows; one
  // where there are few queries, or causal wide heads, whose blocks are many and uneven
  // (bench/RESULTS.md, 2026-11-27).
  // On Hopper a block of one warpgroup: S = Q·Kᵀ and O += P·V as m64nNk16 wgmmas of the swizzled
  // tiles in place (Q and K K-major, V MN-major; rows of 64 or 128 bytes, wider ones in panels).
  // Values wider than 128 keep one row block a warp (O alone holds dv / 2 registers a block).
  // Four warps (one warpgroup) a block: two warpgroups sharing each K/V tile (config warps=8)
  // were slower at every long row on the H100 (d 128: 1423 against 1297 us; 170 registers a
  // thread leave one block an SM; bench/RESULTS.md, 2026-11-27).
  p.wgmma = target == "sm_90a";
  p.blocks = p.wgmma || p.sq <= 64 || (p.causal && p.dv > 64) || p.dvk() > 128 ? 1 : 2;
  p.bc = p.blocks == 2 && p.dv > 64 ? 32 : 64;
  if (p.sharedBytes() > sharedLimit(p))
    p.bc = 32;
  const Attribute *config = kernel.attrIfPresent("config");
  std::string text = config ? config->get<std::string>() : "";
  if (p.sq <= 16)
    planDecode(p);
  else if (p.wgmma && configSpecialized(text).value_or(p.sk >= kSpecializedKeys))
    planSpecialized(p);
  p.splits = 0; // unset: chosen below unless the config sets it
  if (std::string problem = config ? readConfig(text, p) : ""; !problem.empty())
    return refuse(diags, kernel, "config \"" + text + "\": " + problem);
  if (p.splits == 0)
    p.splits = p.decode ? chooseSplits(p, target) : 1;
  if (p.decode) { // whole tiles a split, and no split without keys
    int64_t perSplit = (p.keys() + p.splits - 1) / p.splits;
    p.splitKeys = std::max<int64_t>((perSplit + p.bc - 1) / p.bc * p.bc, p.bc);
    p.splits = int(std::max<int64_t>((p.keys() + p.splitKeys - 1) / p.splitKeys, 1));
  }
  // A decode reads Q's fragments from shared memory each tile: its warps wait on memory, and
  // the registers go to more blocks an SM.
  p.qInRegisters = !p.wgmma && !p.decode && p.blocks * (p.bc / 2 + p.dvk() / 2 + p.dk() / 4) <= 176;
  Namer names;
  for (unsigned j = 0; j < kernel.numOperands(); ++j)
    p.args.push_back({KernelArg::Kind::Input, names.fresh("in_", kernel.operand(j)->name()), j, 0,
                      std::nullopt});
  p.args.push_back(
      {KernelArg::Kind::Output, names.fresh("out_", kernel.result(0)->name()), 0, 0, std::nullopt});
  if (p.specialized) {
    p.args.push_back({KernelArg::Kind::TensorMap, "qMap", p.q.input, 0, std::nullopt, p.dtype,
                      tensorView(p, p.q, p.d, p.sq, p.qkWidth(), p.br())});
    p.args.push_back({KernelArg::Kind::TensorMap, "kMap", p.k.input, 0, std::nullopt, p.dtype,
                      tensorView(p, p.k, p.d, p.sk, p.qkWidth(), p.bc)});
    p.args.push_back({KernelArg::Kind::TensorMap, "vMap", p.v.input, 0, std::nullopt, p.dtype,
                      tensorView(p, p.v, p.dv, p.sk, p.vWidth(), p.bc)});
  }
  if (p.splits > 1) {
    p.args.push_back({KernelArg::Kind::Scratch, "parts", 0, 0, std::nullopt, DType::F32});
    p.args.push_back({KernelArg::Kind::Scratch, "counters", unsigned(p.partsBytes()), 0,
                      std::nullopt, DType::I32});
  }
  return true;
}

} // namespace fusec::attention
