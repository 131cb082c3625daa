// Reference kernels of the contractions: matmul, linear and attention.
//
// Operands are widened to double once; the right-hand matrix is laid out
// K×N row-major (transposed once up front when needed) so that the product
// runs in i-k-j order, adding a scaled row of B into a double accumulator
// row of the output: unit-stride inner loops and no per-element dispatch.
// Leading (batch) dims broadcast: each output batch index maps to one
// matrix of each operand through precomputed offsets. Results are rounded
// to the dtype once, at the end.
#include "ir/Assert.h"
#include "runtime/reference/Ops.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace fusec::ref {

namespace {

/// y += a · x over n elements.
inline void axpy(double *__restrict y, const double *__restrict x, double a, int64_t n) {
  for (int64_t j = 0; j < n; ++j)
    y[j] += a * x[j];
}

/// out (M×N) = A · B, where A(i, k) = a[i·rowStride + k·colStride] and B is
/// K×N row-major.
void gemm(const double *a, int64_t rowStride, int64_t colStride, const double *b, int64_t m,
          int64_t k, int64_t n, double *out) {
  for (int64_t i = 0; i < m; ++i) {
    double *row = out + i * n;
    std::fill(row, row + n, 0.0);
    for (int64_t p = 0; p < k; ++p)
      axpy(row, b + p * n, a[i * rowStride + p * colStride], n);
  }
}

/// Each of `count` rows×cols matrices transposed.
std::vector<double> transposeMatrices(const std::vector<double> &v, int64_t count, int64_t rows,
                                      int64_t cols) {
  return permuteDoubles(v, {count, rows, cols}, {0, 2, 1});
}

Sizes leadingDims(const Sizes &shape, size_t trailing) {
  return Sizes(shape.begin(), shape.end() - trailing);
}

/// Offsets, in whole matrices, of each operand's matrix for every index of
/// the broadcast batch shape; nullopt when the batch dims do not broadcast.
std::optional<std::vector<Sizes>> batchOffsets(const std::vector<Sizes> &batches, Sizes &batch) {
  std::optional<Sizes> shape = broadcastSizes(batches);
  if (!shape)
    return std::nullopt;
  batch = *shape;
  std::vector<Sizes> offsets;
  for (const Sizes &b : batches)
    offsets.push_back(stridedOffsets(batch, broadcastStrides(b, batch)));
  return offsets;
}

std::string opPrefix(const OpContext &ctx) { return "'" + std::string(ctx.op.name()) + "' "; }

/// One attention problem: per batch the row-major matrices q (Sq×D), k
/// (Sk×D), v (Sk×Dv) and the mask's element strides along Sq and Sk.
struct Attention {
  int64_t sq, sk, d, dv;
  double scale;
  bool causal;
  const double *mask = nullptr;
  int64_t maskRowStride = 0, maskColStride = 0;
};

/// The matrices of one batch index.
struct AttentionBatch {
  const double *q, *k, *v, *mask; // mask null when there is none
};

/// Output row i of one batch: softmax(q_i · kᵀ · scale + mask_i) · v, or 0
/// when every score is -inf (docs/ir.md).
void attendRow(const Attention &p, const AttentionBatch &m, int64_t i, std::vector<double> &scores,
               double *out) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  const double *qi = m.q + i * p.d;
  for (int64_t j = 0; j < p.sk; ++j) {
    if (p.causal && j > i) {
      scores[j] = -inf;
      continue;
    }
    double dot = 0;
    for (int64_t c = 0; c < p.d; ++c)
      dot += qi[c] * m.k[j * p.d + c];
    double bias = m.mask ? m.mask[i * p.maskRowStride + j * p.maskColStride] : 0.0;
    scores[j] = dot * p.scale + bias;
  }
  std::fill(out, out + p.dv, 0.0);
  // A row that sees no key is defined as 0, where the softmax would be
  // 0/0; a NaN or +inf score is not -inf and still makes the row NaN.
  if (std::all_of(scores.begin(), scores.begin() + p.sk, [](double s) { return s == -inf; }))
    return;
  softmaxLine(scores.data(), p.sk, 1);
  for (int64_t j = 0; j < p.sk; ++j)
    axpy(out, m.v + j * p.dv, scores[j], p.dv);
}

/// Checks the attention mask against the scores' shape and fills in its
/// strides; returns its per-batch offsets.
std::optional<Sizes> maskOffsets(const OpContext &ctx, const Sizes &batch, Attention &p) {
  const Tensor &mask = ctx.in(3);
  Sizes scores = batch;
  scores.push_back(p.sq);
  scores.push_back(p.sk);
  if (mask.shape.size() > scores.size() || broadcastSizes({mask.shape, scores}) != scores) {
    ctx.error(opPrefix(ctx) + "mask " + mask.typeStr() + " does not broadcast to the scores " +
              sizesStr(scores));
    return std::nullopt;
  }
  Sizes strides = broadcastStrides(mask.shape, scores);
  p.maskColStride = strides.back();
  p.maskRowStride = strides[strides.size() - 2];
  strides.resize(batch.size());
  return stridedOffsets(batch, strides);
}

} // namespace

bool runMatMul(const OpContext &ctx, Tensor &out) {
  const Tensor &a = ctx.in(0), &b = ctx.in(1);
  bool ta = ctx.op.getBool("transpose_a"), tb = ctx.op.getBool("transpose_b");
  size_t ra = a.shape.size(), rb = b.shape.size();
  int64_t m = a.shape[ra - (ta ? 1 : 2)], k = a.shape[ra - (ta ? 2 : 1)];
  int64_t kb = b.shape[rb - (tb ? 1 : 2)], n = b.shape[rb - (tb ? 2 : 1)];
  if (k != kb)
    return ctx.error(opPrefix(ctx) + "inner dims of " + operandTypes(ctx) + " do not agree (" +
                     std::to_string(k) + " vs " + std::to_string(kb) + ")");
  Sizes batchA = leadingDims(a.shape, 2), batchB = leadingDims(b.shape, 2), batch;
  auto offsets = batchOffsets({batchA, batchB}, batch);
  if (!offsets)
    return ctx.error(opPrefix(ctx) + "batch dims of " + operandTypes(ctx) + " do not broadcast");

  std::vector<double> ad = a.toDoubles(), bd = b.toDoubles();
  if (tb)
    bd = transposeMatrices(bd, product(batchB), n, k);
  int64_t batches = product(batch);
  std::vector<double> od(size_t(batches * m * n));
  for (int64_t i = 0; i < batches; ++i)
    gemm(ad.data() + (*offsets)[0][i] * m * k, ta ? 1 : k, ta ? m : 1,
         bd.data() + (*offsets)[1][i] * k * n, m, k, n, od.data() + i * m * n);
  batch.push_back(m);
  batch.push_back(n);
  out = Tensor::fromDoubles(a.dtype, batch, od);
  return true;
}

bool runLinear(const OpContext &ctx, Tensor &out) {
  const Tensor &x = ctx.in(0), &w = ctx.in(1);
  int64_t in = x.shape.back(), outFeatures = w.shape[0];
  if (w.shape[1] != in)
    return ctx.error(opPrefix(ctx) + "input features of " + operandTypes(ctx) + " do not agree (" +
                     std::to_string(in) + " vs " + std::to_string(w.shape[1]) + ")");
  if (ctx.numOperands() > 2 && ctx.in(2).shape != Sizes{outFeatures})
    return ctx.error(opPrefix(ctx) + "bias of " + operandTypes(ctx) + " is not [" +
                     std::to_string(outFeatures) + "]");
  Sizes shape = leadingDims(x.shape, 1);
  int64_t rows = product(shape);
  std::vector<double> wt = transposeMatrices(w.toDoubles(), 1, outFeatures, in);
  std::vector<double> od(size_t(rows * outFeatures));
  gemm(x.toDoubles().data(), in, 1, wt.data(), rows, in, outFeatures, od.data());
  if (ctx.numOperands() > 2) {
    std::vector<double> bias = ctx.in(2).toDoubles();
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < outFeatures; ++j)
        od[r * outFeatures + j] += bias[j];
  }
  shape.push_back(outFeatures);
  out = Tensor::fromDoubles(x.dtype, shape, od);
  return true;
}

bool runAttention(const OpContext &ctx, Tensor &out) {
  const Tensor &q = ctx.in(0), &k = ctx.in(1), &v = ctx.in(2);
  Attention p{q.shape.end()[-2], k.shape.end()[-2], q.shape.back(), v.shape.back(), 0, false};
  if (k.shape.back() != p.d || v.shape.end()[-2] != p.sk)
    return ctx.error(opPrefix(ctx) + "operands " + operandTypes(ctx) +
                     " do not agree on the key count or the depth");
  Sizes batch;
  auto offsets = batchOffsets(
      {leadingDims(q.shape, 2), leadingDims(k.shape, 2), leadingDims(v.shape, 2)}, batch);
  if (!offsets)
    return ctx.error(opPrefix(ctx) + "batch dims of " + operandTypes(ctx) + " do not broadcast");
  Sizes maskOffs;
  std::vector<double> maskd;
  if (ctx.numOperands() > 3) {
    std::optional<Sizes> offs = maskOffsets(ctx, batch, p);
    if (!offs)
      return false;
    maskOffs = std::move(*offs);
    maskd = ctx.in(3).toDoubles();
  }
  const Attribute *scale = ctx.op.attrIfPresent("scale");
  p.scale = scale ? scale->get<double>() : 1.0 / std::sqrt(double(p.d));
  p.causal = ctx.op.getBool("causal");

  // One row of scores is scratch; empty k (d = 0) does not bound its length.
  if (std::string problem = allocationProblem(DType::F64, {p.sk}); !problem.empty())
    return ctx.error(opPrefix(ctx) + "scores row " + problem);
  std::vector<double> qd = q.toDoubles(), kd = k.toDoubles(), vd = v.toDoubles();
  int64_t batches = product(batch);
  std::vector<double> od(size_t(batches * p.sq * p.dv)), scores(size_t(p.sk));
  for (int64_t b = 0; b < batches; ++b) {
    AttentionBatch m{qd.data() + (*offsets)[0][b] * p.sq * p.d,
                     kd.data() + (*offsets)[1][b] * p.sk * p.d,
                     vd.data() + (*offsets)[2][b] * p.sk * p.dv,
                     maskd.empty() ? nullptr : maskd.data() + maskOffs[b]};
    for (int64_t i = 0; i < p.sq; ++i)
      attendRow(p, m, i, scores, od.data() + (b * p.sq + i) * p.dv);
  }
  batch.push_back(p.sq);
  batch.push_back(p.dv);
  out = Tensor::fromDoubles(q.dtype, batch, od);
  return true;
}

} // namespace fusec::ref
