// The CPU reference executor on the normalizations, contractions and
// windowed ops, each checked against a naive loop nest written here from
// the docs/ir.md formula (f64 inputs where the check is to be tight).
#include "ReferenceTestUtil.h"

#include <cmath>
#include <limits>

using namespace fusec;
using namespace fusec::testing;

namespace {

using Ints = std::vector<int64_t>;

std::vector<double> transpose4(const std::vector<double> &v, const Ints &s, const Ints &perm) {
  std::vector<double> out;
  Ints idx(4);
  Ints shape = {s[perm[0]], s[perm[1]], s[perm[2]], s[perm[3]]};
  for (idx[0] = 0; idx[0] < shape[0]; ++idx[0])
    for (idx[1] = 0; idx[1] < shape[1]; ++idx[1])
      for (idx[2] = 0; idx[2] < shape[2]; ++idx[2])
        for (idx[3] = 0; idx[3] < shape[3]; ++idx[3]) {
          Ints src(4);
          for (int d = 0; d < 4; ++d)
            src[perm[d]] = idx[d];
          out.push_back(v[((src[0] * s[1] + src[1]) * s[2] + src[2]) * s[3] + src[3]]);
        }
  return out;
}

} // namespace

TEST(ReferenceNN, LayerNormOverTrailingDims) {
  GraphRunner r;
  Value *x = r.input("x", DType::F64, {2, 3, 4});
  Value *g = r.input("g", DType::F64, {3, 4}), *b = r.input("b", DType::F64, {3, 4});
  Value *y = r.op(OpKind::LayerNorm, {x, g, b}, {{"axis", 1}, {"epsilon", 1e-3}});
  Tensor tx = randomTensor(DType::F64, {2, 3, 4}, 11, -3, 3);
  Tensor tg = randomTensor(DType::F64, {3, 4}, 12), tb = randomTensor(DType::F64, {3, 4}, 13);
  auto out = r.run({y}, {tx, tg, tb});
  std::vector<double> want;
  for (int i = 0; i < 2; ++i) {
    double mean = 0, var = 0;
    for (int j = 0; j < 12; ++j)
      mean += tx.getDouble(i * 12 + j) / 12;
    for (int j = 0; j < 12; ++j)
      var += std::pow(tx.getDouble(i * 12 + j) - mean, 2) / 12;
    for (int j = 0; j < 12; ++j)
      want.push_back((tx.getDouble(i * 12 + j) - mean) / std::sqrt(var + 1e-3) * tg.getDouble(j) +
                     tb.getDouble(j));
  }
  expectNear(out[0], want, 1e-12);
}

TEST(ReferenceNN, RmsNormAndSoftmax) {
  GraphRunner r;
  Value *x = r.input("x", DType::F32, {3, 5}), *g = r.input("g", DType::F32, {5});
  Value *rms = r.op(OpKind::RmsNorm, {x, g});
  Value *sm = r.b.softmax(x);
  Value *sm0 = r.op(OpKind::Softmax, {x}, {{"axis", 0}});
  Tensor tx = randomTensor(DType::F32, {3, 5}, 21, -4, 4), tg = randomTensor(DType::F32, {5}, 22);
  auto out = r.run({rms, sm, sm0}, {tx, tg});
  std::vector<double> wantRms, wantSm, wantSm0(15);
  for (int i = 0; i < 3; ++i) {
    double ms = 0, z = 0;
    for (int j = 0; j < 5; ++j) {
      ms += tx.getDouble(i * 5 + j) * tx.getDouble(i * 5 + j) / 5;
      z += std::exp(tx.getDouble(i * 5 + j));
    }
    for (int j = 0; j < 5; ++j) {
      wantRms.push_back(tx.getDouble(i * 5 + j) / std::sqrt(ms + 1e-6) * tg.getDouble(j));
      wantSm.push_back(std::exp(tx.getDouble(i * 5 + j)) / z);
    }
  }
  for (int j = 0; j < 5; ++j) {
    double z = 0;
    for (int i = 0; i < 3; ++i)
      z += std::exp(tx.getDouble(i * 5 + j));
    for (int i = 0; i < 3; ++i)
      wantSm0[i * 5 + j] = std::exp(tx.getDouble(i * 5 + j)) / z;
  }
  expectNear(out[0], wantRms, 1e-6);
  expectNear(out[1], wantSm, 1e-6);
  expectNear(out[2], wantSm0, 1e-6);
}

TEST(ReferenceNN, SoftmaxOfLargeValuesIsStable) {
  GraphRunner r;
  Value *x = r.input("x", DType::F32, {3});
  auto out = r.run({r.b.softmax(x)}, {makeTensor(DType::F32, {3}, {1000, 1000, -1e30})});
  expectExact(out[0], {0.5, 0.5, 0});
}

TEST(ReferenceNN, BatchNormNCHWMatchesNHWC) {
  GraphRunner r;
  Ints nchw = {2, 3, 2, 2}, nhwc = {2, 2, 2, 3};
  Value *x = r.input("x", DType::F32, nchw, Layout::NCHW);
  Value *xt = r.input("xt", DType::F32, nhwc, Layout::NHWC);
  std::vector<Value *> params;
  for (const char *n : {"scale", "bias", "mean", "var"})
    params.push_back(r.input(n, DType::F32, {3}));
  Value *y = r.op(OpKind::BatchNorm, {x, params[0], params[1], params[2], params[3]});
  Value *yt = r.op(OpKind::BatchNorm, {xt, params[0], params[1], params[2], params[3]});
  Tensor tx = randomTensor(DType::F32, nchw, 31);
  Tensor txt = makeTensor(DType::F32, nhwc, transpose4(tx.toDoubles(), nchw, {0, 2, 3, 1}));
  std::vector<Tensor> p = {randomTensor(DType::F32, {3}, 32), randomTensor(DType::F32, {3}, 33),
                           randomTensor(DType::F32, {3}, 34),
                           randomTensor(DType::F32, {3}, 35, 0.5, 2)};
  auto out = r.run({y, yt}, {tx, txt, p[0], p[1], p[2], p[3]});
  std::vector<double> want;
  for (int i = 0; i < 24; ++i) {
    int c = (i / 4) % 3;
    want.push_back((tx.getDouble(i) - p[2].getDouble(c)) / std::sqrt(p[3].getDouble(c) + 1e-5) *
                       p[0].getDouble(c) +
                   p[1].getDouble(c));
  }
  expectNear(out[0], want, 1e-6);
  expectExact(out[1], transpose4(out[0].toDoubles(), nchw, {0, 2, 3, 1}));
}

namespace {

/// C[b] = op(A[b]) · op(B[b]) for row-major batches of matrices.
std::vector<double> naiveMatMul(const Tensor &a, const Tensor &b, int64_t batches, int64_t m,
                                int64_t k, int64_t n, bool ta, bool tb, bool broadcastB) {
  std::vector<double> out;
  for (int64_t bi = 0; bi < batches; ++bi)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < k; ++p) {
          double av = a.getDouble(bi * m * k + (ta ? p * m + i : i * k + p));
          int64_t bb = broadcastB ? 0 : bi;
          sum += av * b.getDouble(bb * k * n + (tb ? j * k + p : p * n + j));
        }
        out.push_back(sum);
      }
  return out;
}

} // namespace

TEST(ReferenceNN, MatMulBatchedAndTransposed) {
  GraphRunner r;
  Value *a = r.input("a", DType::F64, {3, 4, 5}), *b = r.input("b", DType::F64, {5, 2});
  Value *at = r.input("at", DType::F64, {3, 5, 4}), *bt = r.input("bt", DType::F64, {3, 2, 5});
  Tensor ta = randomTensor(DType::F64, {3, 4, 5}, 41), tb = randomTensor(DType::F64, {5, 2}, 42);
  Tensor tat = randomTensor(DType::F64, {3, 5, 4}, 43);
  Tensor tbt = randomTensor(DType::F64, {3, 2, 5}, 44);
  auto out = r.run({r.b.matmul(a, b), r.b.matmul(at, bt, true, true)}, {ta, tb, tat, tbt});
  EXPECT_EQ(out[0].shape, (Ints{3, 4, 2}));
  EXPECT_EQ(out[1].shape, (Ints{3, 4, 2}));
  expectNear(out[0], naiveMatMul(ta, tb, 3, 4, 5, 2, false, false, true), 1e-14);
  expectNear(out[1], naiveMatMul(tat, tbt, 3, 4, 5, 2, true, true, false), 1e-14);
}

TEST(ReferenceNN, MatMulBroadcastsBatchDims) {
  GraphRunner r;
  Value *a = r.input("a", DType::F32, {2, 1, 3, 4}), *b = r.input("b", DType::F32, {3, 4, 2});
  Tensor ta = randomTensor(DType::F32, {2, 1, 3, 4}, 45);
  Tensor tb = randomTensor(DType::F32, {3, 4, 2}, 46);
  auto out = r.run({r.b.matmul(a, b)}, {ta, tb});
  ASSERT_EQ(out[0].shape, (Ints{2, 3, 3, 2}));
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int m = 0; m < 3; ++m)
        for (int n = 0; n < 2; ++n) {
          double sum = 0;
          for (int k = 0; k < 4; ++k)
            sum += ta.getDouble((i * 3 + m) * 4 + k) * tb.getDouble((j * 4 + k) * 2 + n);
          EXPECT_NEAR(out[0].getDouble(((i * 3 + j) * 3 + m) * 2 + n), sum, 1e-6);
        }
}

TEST(ReferenceNN, LinearWithBias) {
  GraphRunner r;
  Value *x = r.input("x", DType::F64, {2, 3, 4}), *w = r.input("w", DType::F64, {5, 4});
  Value *b = r.input("b", DType::F64, {5});
  Tensor tx = randomTensor(DType::F64, {2, 3, 4}, 51), tw = randomTensor(DType::F64, {5, 4}, 52);
  Tensor tb = randomTensor(DType::F64, {5}, 53);
  auto out = r.run({r.op(OpKind::Linear, {x, w, b})}, {tx, tw, tb});
  std::vector<double> want = naiveMatMul(tx, tw, 1, 6, 4, 5, false, true, true);
  for (size_t i = 0; i < want.size(); ++i)
    want[i] += tb.getDouble(i % 5);
  EXPECT_EQ(out[0].shape, (Ints{2, 3, 5}));
  expectNear(out[0], want, 1e-14);
}

namespace {

/// softmax(q·kᵀ·scale + mask)·v for one batch, straight from the formula.
std::vector<double> naiveAttention(const Tensor &q, const Tensor &k, const Tensor &v,
                                   const Tensor *mask, int64_t batch, int64_t sq, int64_t sk,
                                   int64_t d, double scale, bool causal) {
  std::vector<double> out;
  for (int64_t i = 0; i < sq; ++i) {
    std::vector<double> w(sk);
    double z = 0;
    for (int64_t j = 0; j < sk; ++j) {
      double s = 0;
      for (int64_t c = 0; c < d; ++c)
        s += q.getDouble((batch * sq + i) * d + c) * k.getDouble((batch * sk + j) * d + c);
      s = s * scale + (mask ? mask->getDouble(i * sk + j) : 0.0);
      w[j] = causal && j > i ? 0.0 : std::exp(s);
      z += w[j];
    }
    for (int64_t c = 0; c < d; ++c) {
      double acc = 0;
      for (int64_t j = 0; j < sk; ++j)
        acc += w[j] / z * v.getDouble((batch * sk + j) * d + c);
      out.push_back(acc);
    }
  }
  return out;
}

} // namespace

TEST(ReferenceNN, AttentionCausalAndMasked) {
  GraphRunner r;
  Ints shape = {2, 4, 3};
  Value *q = r.input("q", DType::F64, shape), *k = r.input("k", DType::F64, shape);
  Value *v = r.input("v", DType::F64, shape), *m = r.input("m", DType::F64, {4, 4});
  Value *causal = r.op(OpKind::Attention, {q, k, v}, {{"causal", true}});
  Value *masked = r.op(OpKind::Attention, {q, k, v, m}, {{"scale", 0.25}});
  Tensor tq = randomTensor(DType::F64, shape, 61, -2, 2), tk = randomTensor(DType::F64, shape, 62);
  Tensor tv = randomTensor(DType::F64, shape, 63), tm = randomTensor(DType::F64, {4, 4}, 64);
  tm.setDouble(1, -std::numeric_limits<double>::infinity()); // row 0 never sees key 1
  auto out = r.run({causal, masked}, {tq, tk, tv, tm});
  std::vector<double> wantCausal, wantMasked;
  for (int b = 0; b < 2; ++b) {
    auto c = naiveAttention(tq, tk, tv, nullptr, b, 4, 4, 3, 1 / std::sqrt(3.0), true);
    auto mk = naiveAttention(tq, tk, tv, &tm, b, 4, 4, 3, 0.25, false);
    wantCausal.insert(wantCausal.end(), c.begin(), c.end());
    wantMasked.insert(wantMasked.end(), mk.begin(), mk.end());
  }
  EXPECT_EQ(out[0].shape, shape);
  expectNear(out[0], wantCausal, 1e-13);
  expectNear(out[1], wantMasked, 1e-13);
  // Causal row 0 attends only to key 0: it is exactly v[0].
  for (int c = 0; c < 3; ++c)
    EXPECT_EQ(out[0].getDouble(c), tv.getDouble(c));
}

TEST(ReferenceNN, AttentionRowWithNoVisibleKeyIsZero) {
  // An f32 mask over 5 queries and 5 keys: row 0 all -inf, row 1 all
  // -3.4028235e38 (HF's f32 mask value), row 2 -inf but for key 3, row 3 -inf
  // but a +inf at key 4, row 4 a NaN at key 0 and -inf elsewhere.
  constexpr double inf = std::numeric_limits<double>::infinity();
  const double lowest = std::numeric_limits<float>::lowest(), nan = std::nan("");
  GraphRunner r;
  Value *q = r.input("q", DType::F64, {5, 3}), *k = r.input("k", DType::F64, {5, 3});
  Value *v = r.input("v", DType::F64, {5, 2}), *m = r.input("m", DType::F32, {5, 5});
  Value *k0 = r.input("k0", DType::F64, {0, 3}), *v0 = r.input("v0", DType::F64, {0, 2});
  Value *masked = r.op(OpKind::Attention, {q, k, v, m});
  Value *causal = r.op(OpKind::Attention, {q, k, v, m}, {{"causal", true}});
  Value *noKeys = r.op(OpKind::Attention, {q, k0, v0});
  std::vector<double> mask(25, -inf);
  std::fill(mask.begin() + 5, mask.begin() + 10, lowest);
  mask[2 * 5 + 3] = 0.5;
  mask[3 * 5 + 4] = inf;
  mask[4 * 5 + 0] = nan;
  Tensor tq = randomTensor(DType::F64, {5, 3}, 71, -2, 2),
         tk = randomTensor(DType::F64, {5, 3}, 72);
  Tensor tv = randomTensor(DType::F64, {5, 2}, 73), tm = makeTensor(DType::F32, {5, 5}, mask);
  auto out = r.run({masked, causal, noKeys},
                   {tq, tk, tv, tm, Tensor(DType::F64, {0, 3}), Tensor(DType::F64, {0, 2})});
  // The mean of v's rows [0, n): equal scores weigh their keys equally.
  auto mean = [&](int n, int c) {
    double sum = 0;
    for (int j = 0; j < n; ++j)
      sum += tv.getDouble(j * 2 + c);
    return sum / n;
  };
  expectNear(out[0],
             {0, 0, mean(5, 0), mean(5, 1), tv.getDouble(6), tv.getDouble(7), nan, nan, nan, nan},
             1e-13);
  // Causal hides key 3 from rows 2 and 3 (and key 4 from row 3): both see only
  // -inf scores, as row 0 does; row 1 averages keys 0 and 1.
  expectNear(out[1], {0, 0, mean(2, 0), mean(2, 1), 0, 0, 0, 0, nan, nan}, 1e-13);
  for (auto [result, row] : {std::pair{0, 0}, {1, 0}, {1, 2}, {1, 3}})
    for (int c = 0; c < 2; ++c)
      EXPECT_EQ(out[result].getDouble(row * 2 + c), 0.0) << "result " << result << " row " << row;
  EXPECT_EQ(out[2].shape, (Ints{5, 2}));
  expectExact(out[2], std::vector<double>(10, 0.0));
}

namespace {

struct ConvCase {
  Ints x = {2, 4, 7, 6}, w = {6, 2, 3, 2}; // NCHW, OIHW; groups = 2
  Ints strides = {2, 1}, pads = {1, 0, 2, 1}, dilations = {1, 2};
  int64_t groups = 2, oh = 4, ow = 5; // (7+1+2-2-1)/2+1, (6+0+1-2-1)/1+1
};

std::vector<double> naiveConv(const ConvCase &c, const Tensor &x, const Tensor &w,
                              const Tensor &b) {
  int64_t cg = c.w[1], perGroup = c.w[0] / c.groups;
  std::vector<double> out;
  for (int64_t n = 0; n < c.x[0]; ++n)
    for (int64_t o = 0; o < c.w[0]; ++o)
      for (int64_t oh = 0; oh < c.oh; ++oh)
        for (int64_t ow = 0; ow < c.ow; ++ow) {
          double sum = 0;
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t kh = 0; kh < c.w[2]; ++kh)
              for (int64_t kw = 0; kw < c.w[3]; ++kw) {
                int64_t ih = oh * c.strides[0] - c.pads[0] + kh * c.dilations[0];
                int64_t iw = ow * c.strides[1] - c.pads[1] + kw * c.dilations[1];
                if (ih < 0 || ih >= c.x[2] || iw < 0 || iw >= c.x[3])
                  continue;
                int64_t ch = o / perGroup * cg + ci;
                sum += x.getDouble(((n * c.x[1] + ch) * c.x[2] + ih) * c.x[3] + iw) *
                       w.getDouble(((o * cg + ci) * c.w[2] + kh) * c.w[3] + kw);
              }
          out.push_back(sum + b.getDouble(o));
        }
  return out;
}

} // namespace

TEST(ReferenceNN, Conv2dNCHWAndNHWCGiveTheSameNumbers) {
  ConvCase c;
  GraphRunner r;
  Ints xt = {c.x[0], c.x[2], c.x[3], c.x[1]}, wt = {c.w[0], c.w[2], c.w[3], c.w[1]};
  Value *x = r.input("x", DType::F32, c.x, Layout::NCHW), *w = r.input("w", DType::F32, c.w);
  Value *xh = r.input("xh", DType::F32, xt, Layout::NHWC), *wh = r.input("wh", DType::F32, wt);
  Value *b = r.input("b", DType::F32, {c.w[0]});
  AttrList attrs = {
      {"strides", c.strides}, {"pads", c.pads}, {"dilations", c.dilations}, {"groups", c.groups}};
  Value *y = r.op(OpKind::Conv2d, {x, w, b}, attrs), *yh = r.op(OpKind::Conv2d, {xh, wh, b}, attrs);
  Tensor tx = randomTensor(DType::F32, c.x, 71), tw = randomTensor(DType::F32, c.w, 72);
  Tensor tb = randomTensor(DType::F32, {c.w[0]}, 73);
  Tensor txh = makeTensor(DType::F32, xt, transpose4(tx.toDoubles(), c.x, {0, 2, 3, 1}));
  Tensor twh = makeTensor(DType::F32, wt, transpose4(tw.toDoubles(), c.w, {0, 2, 3, 1}));
  auto out = r.run({y, yh}, {tx, tw, txh, twh, tb});
  ASSERT_EQ(out[0].shape, (Ints{2, 6, c.oh, c.ow}));
  ASSERT_EQ(out[1].shape, (Ints{2, c.oh, c.ow, 6}));
  expectNear(out[0], naiveConv(c, tx, tw, tb), 1e-6);
  expectExact(out[1], transpose4(out[0].toDoubles(), out[0].shape, {0, 2, 3, 1}));
}

TEST(ReferenceNN, Conv2dChannelMismatchAtRunTime) {
  GraphRunner r;
  Value *x =
      r.input("x", TensorType{DType::F32,
                              {Dim::fixed(1), Dim::anonymous(), Dim::fixed(4), Dim::fixed(4)},
                              Layout::None});
  Value *w = r.input("w", DType::F32, {2, 3, 3, 3});
  r.b.setLoc(Loc::text("c.fir", 5, 8));
  Value *y = r.op(OpKind::Conv2d, {x, w});
  std::string err =
      r.runError({y}, {Tensor(DType::F32, {1, 2, 4, 4}), Tensor(DType::F32, {2, 3, 3, 3})});
  EXPECT_NE(err.find("c.fir:5:8: error: 'conv2d' operands f32[1,2,4,4] and f32[2,3,3,3] do not "
                     "agree on channels"),
            std::string::npos)
      << err;
}

TEST(ReferenceNN, PoolsWithPadding) {
  GraphRunner r;
  Ints shape = {1, 2, 5, 5}, shapeT = {1, 5, 5, 2};
  Value *x = r.input("x", DType::F32, shape), *xt = r.input("xt", DType::F32, shapeT, Layout::NHWC);
  AttrList attrs = {{"kernel", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}};
  AttrList withPad = attrs;
  withPad.push_back({"count_include_pad", true});
  Value *mx = r.op(OpKind::MaxPool2d, {x}, attrs), *avg = r.op(OpKind::AvgPool2d, {x}, attrs);
  Value *avgPad = r.op(OpKind::AvgPool2d, {x}, withPad);
  Value *mxT = r.op(OpKind::MaxPool2d, {xt}, attrs);
  Tensor tx = randomTensor(DType::F32, shape, 81, -5, -1); // negative: padding must not win
  Tensor txt = makeTensor(DType::F32, shapeT, transpose4(tx.toDoubles(), shape, {0, 2, 3, 1}));
  auto out = r.run({mx, avg, avgPad, mxT}, {tx, txt});
  std::vector<double> wantMax, wantAvg, wantAvgPad;
  for (int c = 0; c < 2; ++c)
    for (int oh = 0; oh < 3; ++oh)
      for (int ow = 0; ow < 3; ++ow) {
        double mxv = -1e300, sum = 0;
        int count = 0;
        for (int ih = oh * 2 - 1; ih < oh * 2 + 2; ++ih)
          for (int iw = ow * 2 - 1; iw < ow * 2 + 2; ++iw) {
            if (ih < 0 || ih >= 5 || iw < 0 || iw >= 5)
              continue;
            double v = tx.getDouble((c * 5 + ih) * 5 + iw);
            mxv = std::max(mxv, v);
            sum += v;
            ++count;
          }
        wantMax.push_back(mxv);
        wantAvg.push_back(sum / count);
        wantAvgPad.push_back(sum / 9);
      }
  ASSERT_EQ(out[0].shape, (Ints{1, 2, 3, 3}));
  expectExact(out[0], wantMax);
  expectNear(out[1], wantAvg, 1e-6);
  expectNear(out[2], wantAvgPad, 1e-6);
  expectExact(out[3], transpose4(out[0].toDoubles(), out[0].shape, {0, 2, 3, 1}));
}

TEST(ReferenceNN, AttentionBroadcastsBatchDims) {
  // Keys and values shared by both batches, and a mask of rank 1, against
  // the naive formula on explicitly repeated operands; and against the op on
  // explicitly broadcast ones.
  GraphRunner r;
  Value *q = r.input("q", DType::F64, {2, 3, 4}), *k = r.input("k", DType::F64, {5, 4});
  Value *v = r.input("v", DType::F64, {1, 5, 4}), *m = r.input("m", DType::F64, {5});
  Value *shared = r.op(OpKind::Attention, {q, k, v, m});
  Value *k2 = r.op(OpKind::Broadcast, {k}, {{"shape", staticShape({2, 5, 4})}});
  Value *v2 = r.op(OpKind::Broadcast, {v}, {{"shape", staticShape({2, 5, 4})}});
  Value *m2 = r.op(OpKind::Broadcast, {m}, {{"shape", staticShape({2, 3, 5})}});
  Value *explicitly = r.op(OpKind::Attention, {q, k2, v2, m2});
  Tensor tq = randomTensor(DType::F64, {2, 3, 4}, 91), tk = randomTensor(DType::F64, {5, 4}, 92);
  Tensor tv = randomTensor(DType::F64, {1, 5, 4}, 93), tm = randomTensor(DType::F64, {5}, 94);
  auto out = r.run({shared, explicitly}, {tq, tk, tv, tm});
  EXPECT_EQ(out[0].shape, (Ints{2, 3, 4}));
  EXPECT_EQ(out[0].bytes, out[1].bytes);

  auto repeat = [](const Tensor &t, int times, Ints shape) {
    std::vector<double> v;
    for (int i = 0; i < times; ++i)
      for (double x : t.toDoubles())
        v.push_back(x);
    return makeTensor(t.dtype, std::move(shape), v);
  };
  Tensor kk = repeat(tk, 2, {2, 5, 4}), vv = repeat(tv, 2, {2, 5, 4}), mm = repeat(tm, 3, {3, 5});
  std::vector<double> want;
  for (int b = 0; b < 2; ++b) {
    auto rows = naiveAttention(tq, kk, vv, &mm, b, 3, 5, 4, 0.5, false);
    want.insert(want.end(), rows.begin(), rows.end());
  }
  expectNear(out[0], want, 1e-13);
}
