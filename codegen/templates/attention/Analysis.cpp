// The attention template's analysis (Plan.h): which bodies it takes, how each operand is laid
// out, and the tiles: the block's rows, keys a tile, mma.sync or wgmma.
#include "codegen/templates/Template.h"
#include "codegen/templates/attention/Plan.h"

#include <cmath>

namespace fusec::attention {

namespace {

/// `shape` ([..., rows, cols], or any shape that broadcasts to batch + [rows, cols]) read as a
/// row-major tensor broadcast to the output's batch dims `batch` and matrices of rows x cols.
Operand operandOf(const Sizes &shape, const Sizes &batch, int64_t rows, int64_t cols) {
  Sizes full = batch;
  full.push_back(rows);
  full.push_back(cols);
  Sizes strides(full.size(), 0);
  int64_t stride = 1;
  for (size_t i = 0; i < shape.size(); ++i) { // from the last dim of both
    size_t at = full.size() - 1 - i;
    int64_t size = shape[shape.size() - 1 - i];
    if (size != 1 || full[at] == 1)
      strides[at] = size == 1 ? 0 : stride;
    stride *= size;
  }
  Operand x;
  x.batch.assign(strides.begin(), strides.end() - 2);
  x.row = strides.end()[-2];
  x.col = strides.back();
  return x;
}

bool refuse(Diagnostics &diags, const Op &kernel, const std::string &why) {
  diags.error(kernel.loc(),
              "attention kernel '%" + kernel.result(0)->name() + "': " + why + "; runs op by op");
  return false;
}

bool isHeadDim(int64_t d) { return d == 32 || d == 64 || d == 128; }

/// Applies a `config` attribute ("bc=128 stages=3 blocks=1"; blocks only for mma.sync) to `p`;
/// what is wrong with it, or "".
std::string readConfig(const std::string &text, Plan &p) {
  std::string problem =
      templates::readConfig(text, [&](const std::string &key, const std::string &value) {
        int x = std::atoi(value.c_str());
        if (key == "bc")
          p.bc = x;
        else if (key == "stages")
          p.stages = x;
        else if (key == "blocks") // a warpgroup's rows are fixed: wgmma ignores it
          p.blocks = p.wgmma ? 1 : x;
        else
          return false;
        return x > 0;
      });
  if (!problem.empty())
    return problem;
  // Shared memory a block may have: 227 KiB on Hopper, 163 KiB on sm_80 (99 KiB on sm_86/89).
  int64_t limit = (p.wgmma ? 227 : 163) * 1024;
  int64_t shared = p.br() * p.d * 2 + p.stages * p.bc * (p.d + p.dv) * 2;
  if (p.bc % 32 != 0 || p.bc > 256 || p.stages < 2 || p.stages > 4 || p.blocks > 2 ||
      shared > limit)
    return "bc must be a multiple of 32 up to 256, stages 2 to 4, blocks 1 or 2, and the tiles "
           "fit in " +
           std::to_string(limit / 1024) + " KiB";
  return "";
}

} // namespace

bool analyze(const Op &kernel, const std::string &entry, bool warpgroups, Plan &p,
             Diagnostics &diags) {
  const Graph &body = *kernel.body();
  p.kernel = &kernel;
  p.entry = entry;
  for (const auto &op : body.ops()) {
    if (op->kind() == OpKind::Const)
      continue;
    if (p.attention || op->kind() != OpKind::Attention)
      return refuse(diags, kernel,
                    "the template takes one attention op (casts and epilogues "
                    "around it are not fused yet)");
    p.attention = op.get();
  }
  if (!p.attention)
    return refuse(diags, kernel, "it holds no attention");
  const Op &a = *p.attention;
  for (unsigned i = 0; i < a.numOperands(); ++i) {
    const Value *x = a.operand(i);
    if (x->isGraphInput())
      continue;
    // A constant mask becomes a table of the kernel's (f32 elements), when it is small enough
    // to spell out.
    if (i == 3 && x->definingOp()->kind() == OpKind::Const) {
      const DenseData &d = x->definingOp()->getDense("value");
      if (d.numElements() == 0 || d.numElements() > kMaxMaskTable || d.dtype == DType::F64)
        return refuse(diags, kernel,
                      "a constant mask of " + std::to_string(d.numElements()) + " " +
                          std::string(dtypeName(d.dtype)) + " elements (it holds 1 to " +
                          std::to_string(kMaxMaskTable) + " f16, bf16 or f32)");
      p.maskTable = &d;
      continue;
    }
    return refuse(diags, kernel, "an operand is computed inside the kernel");
  }
  if (body.outputs().size() != 1 || body.outputs()[0] != a.result())
    return refuse(diags, kernel, "the kernel returns something else than the attention");
  if (!kernel.hasStaticShapes())
    return refuse(diags, kernel, "its shapes are symbolic");
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
                      " (it takes 32, 64 and 128)");
  p.batch.assign(out.begin(), out.end() - 2);
  p.q = operandOf(staticSizes(a.operand(0)->type().shape), p.batch, p.sq, p.d);
  p.k = operandOf(key, p.batch, p.sk, p.d);
  p.v = operandOf(staticSizes(a.operand(2)->type().shape), p.batch, p.sk, p.dv);
  p.o = operandOf(out, p.batch, p.sq, p.dv);
  p.hasMask = a.numOperands() > 3;
  if (p.hasMask) {
    if (a.operand(3)->type().dtype == DType::F64)
      return refuse(diags, kernel, "an f64 mask");
    p.maskType = p.maskTable ? DType::F32 : a.operand(3)->type().dtype;
    p.mask = operandOf(staticSizes(a.operand(3)->type().shape), p.batch, p.sq, p.sk);
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
  p.wgmma = warpgroups;
  p.blocks = p.wgmma || p.sq <= 64 || (p.causal && p.dv > 64) ? 1 : 2;
  p.bc = p.blocks == 2 && p.dv > 64 ? 32 : 64;
  if (const Attribute *config = kernel.attrIfPresent("config")) {
    const std::string &text = config->get<std::string>();
    std::string problem = readConfig(text, p);
    if (!problem.empty())
      return refuse(diags, kernel, "config \"" + text + "\": " + problem);
  }
  p.qInRegisters = !p.wgmma && p.blocks * (p.bc / 2 + p.dv / 2 + p.d / 4) <= 176;
  Namer names;
  for (unsigned j = 0; j < kernel.numOperands(); ++j)
    p.args.push_back({KernelArg::Kind::Input, names.fresh("in_", kernel.operand(j)->name()), j, 0,
                      std::nullopt});
  p.args.push_back(
      {KernelArg::Kind::Output, names.fresh("out_", kernel.result(0)->name()), 0, 0, std::nullopt});
  return true;
}

} // namespace fusec::attention
