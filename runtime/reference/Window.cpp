// Reference kernels of the windowed ops: conv2d, max_pool2d, avg_pool2d.
//
// Both layouts run the same loops: an NHWC input (and its OHWI weight) is
// permuted to NCHW (OIHW) doubles first and the result permuted back, so the
// two layouts give bit-identical results. A convolution output plane is a
// double accumulator to which each (input channel, kh, kw) tap adds a
// scaled, shifted input plane — for every output element the taps are summed
// in the naive order c, kh, kw, then the bias is added. Rows and columns
// whose input position falls in the padding are skipped by computing the
// valid output range of each tap, not by testing every element.
//
// Pooling: padding never wins a max and counts toward an average only with
// count_include_pad; a window that lies wholly in the padding gives -inf
// (max) or NaN (average without padding), the values of the formulas.
#include "ir/Assert.h"
#include "runtime/reference/Ops.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace fusec::ref {

namespace {

/// The geometry of one spatial plane: sizes, kernel, output, and per axis
/// the stride, dilation and leading pad.
struct Window {
  int64_t h, w, kh, kw, oh, ow;
  int64_t sh, sw, dh, dw, pt, pl;
};

const Sizes kToNCHW = {0, 3, 1, 2}, kToNHWC = {0, 2, 3, 1};

bool isNHWC(const OpContext &ctx) { return ctx.op.operand(0)->type().layout == Layout::NHWC; }

Sizes permuted(const Sizes &s, const Sizes &perm) {
  Sizes out;
  for (int64_t p : perm)
    out.push_back(s[size_t(p)]);
  return out;
}

/// A rank-4 tensor's elements as NCHW (or OIHW) doubles.
std::vector<double> canonical(const Tensor &t, bool nhwc) {
  return nhwc ? permuteDoubles(t.toDoubles(), t.shape, kToNCHW) : t.toDoubles();
}

/// Stores NCHW doubles of shape `nchw` in the op's layout.
Tensor fromCanonical(DType dtype, const std::vector<double> &v, const Sizes &nchw, bool nhwc) {
  if (!nhwc)
    return Tensor::fromDoubles(dtype, nchw, v);
  return Tensor::fromDoubles(dtype, permuted(nchw, kToNHWC), permuteDoubles(v, nchw, kToNHWC));
}

/// Fills the output sizes; false after an error when a window does not fit.
bool outputSizes(const OpContext &ctx, Window &win, const Sizes &pads, const Sizes &xs) {
  int64_t spanH = win.h + pads[0] + pads[2] - win.dh * (win.kh - 1) - 1;
  int64_t spanW = win.w + pads[1] + pads[3] - win.dw * (win.kw - 1) - 1;
  if (spanH < 0 || spanW < 0)
    return ctx.error("'" + std::string(ctx.op.name()) + "' window " + std::to_string(win.kh) + "x" +
                     std::to_string(win.kw) + " does not fit the padded input " + sizesStr(xs));
  win.oh = spanH / win.sh + 1;
  win.ow = spanW / win.sw + 1;
  return true;
}

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// [lo, hi): the outputs o whose input o·stride + offset lies in [0, size).
std::pair<int64_t, int64_t> validRange(int64_t outSize, int64_t stride, int64_t offset,
                                       int64_t size) {
  int64_t lo = offset >= 0 ? 0 : ceilDiv(-offset, stride);
  int64_t hi = size > offset ? std::min(outSize, ceilDiv(size - offset, stride)) : 0;
  return {std::min(lo, hi), hi};
}

/// out += wv · x shifted by tap (kh, kw), over one output plane.
void addTap(const Window &win, const double *x, double wv, int64_t kh, int64_t kw, double *out) {
  int64_t offH = kh * win.dh - win.pt, offW = kw * win.dw - win.pl;
  auto [rowLo, rowHi] = validRange(win.oh, win.sh, offH, win.h);
  auto [colLo, colHi] = validRange(win.ow, win.sw, offW, win.w);
  for (int64_t oh = rowLo; oh < rowHi; ++oh) {
    const double *xrow = x + (oh * win.sh + offH) * win.w;
    double *orow = out + oh * win.ow;
    for (int64_t ow = colLo; ow < colHi; ++ow)
      orow[ow] += wv * xrow[ow * win.sw + offW];
  }
}

/// One output plane: Σ over the group's channels and the kernel taps, then
/// the bias (when there is one: adding 0 would turn -0 into +0).
void convPlane(const Window &win, const double *x, const double *w, int64_t channels,
               const double *bias, double *out) {
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t kh = 0; kh < win.kh; ++kh)
      for (int64_t kw = 0; kw < win.kw; ++kw)
        addTap(win, x + c * win.h * win.w, w[(c * win.kh + kh) * win.kw + kw], kh, kw, out);
  for (int64_t i = 0; bias && i < win.oh * win.ow; ++i)
    out[i] += *bias;
}

/// max that propagates NaN.
double nanMax(double acc, double v) { return std::isnan(acc) || v <= acc ? acc : v; }

double poolWindow(const Window &win, const double *x, int64_t oh, int64_t ow, bool isMax,
                  bool countPad) {
  int64_t h0 = oh * win.sh - win.pt, w0 = ow * win.sw - win.pl;
  int64_t hLo = std::max<int64_t>(h0, 0), hHi = std::min(h0 + win.kh, win.h);
  int64_t wLo = std::max<int64_t>(w0, 0), wHi = std::min(w0 + win.kw, win.w);
  double acc = isMax ? -std::numeric_limits<double>::infinity() : 0.0;
  for (int64_t ih = hLo; ih < hHi; ++ih) {
    for (int64_t iw = wLo; iw < wHi; ++iw) {
      double v = x[ih * win.w + iw];
      acc = isMax ? nanMax(acc, v) : acc + v;
    }
  }
  if (isMax)
    return acc;
  int64_t count = countPad ? win.kh * win.kw
                           : std::max<int64_t>(hHi - hLo, 0) * std::max<int64_t>(wHi - wLo, 0);
  return acc / double(count);
}

} // namespace

bool runConv2d(const OpContext &ctx, Tensor &out) {
  bool nhwc = isNHWC(ctx);
  const Tensor &x = ctx.in(0), &w = ctx.in(1);
  Sizes xs = nhwc ? permuted(x.shape, kToNCHW) : x.shape;
  Sizes ws = nhwc ? permuted(w.shape, kToNCHW) : w.shape;
  int64_t groups = ctx.op.getInt("groups");
  int64_t outChannels = ws[0], groupChannels = ws[1];
  if (groupChannels * groups != xs[1] || outChannels % groups != 0)
    return ctx.error("'conv2d' operands " + operandTypes(ctx) + " do not agree on channels with " +
                     "groups = " + std::to_string(groups));
  if (ctx.numOperands() > 2 && ctx.in(2).shape != Sizes{outChannels})
    return ctx.error("'conv2d' bias of " + operandTypes(ctx) + " is not [" +
                     std::to_string(outChannels) + "]");
  const Sizes &st = ctx.op.getInts("strides"), &pads = ctx.op.getInts("pads"),
              &dil = ctx.op.getInts("dilations");
  Window win{xs[2], xs[3], ws[2], ws[3], 0, 0, st[0], st[1], dil[0], dil[1], pads[0], pads[1]};
  if (!outputSizes(ctx, win, pads, xs))
    return false;

  std::vector<double> xd = canonical(x, nhwc), wd = canonical(w, nhwc), bias;
  if (ctx.numOperands() > 2)
    bias = ctx.in(2).toDoubles();
  int64_t plane = win.oh * win.ow, perGroup = outChannels / groups;
  std::vector<double> od(size_t(xs[0] * outChannels * plane));
  for (int64_t n = 0; n < xs[0]; ++n) {
    for (int64_t o = 0; o < outChannels; ++o) {
      double *dst = od.data() + (n * outChannels + o) * plane;
      const double *src = xd.data() + (n * xs[1] + o / perGroup * groupChannels) * win.h * win.w;
      convPlane(win, src, wd.data() + o * groupChannels * win.kh * win.kw, groupChannels,
                bias.empty() ? nullptr : &bias[size_t(o)], dst);
    }
  }
  out = fromCanonical(x.dtype, od, {xs[0], outChannels, win.oh, win.ow}, nhwc);
  return true;
}

bool runPool2d(const OpContext &ctx, Tensor &out) {
  bool nhwc = isNHWC(ctx), isMax = ctx.op.kind() == OpKind::MaxPool2d;
  bool countPad = !isMax && ctx.op.getBool("count_include_pad");
  const Tensor &x = ctx.in(0);
  Sizes xs = nhwc ? permuted(x.shape, kToNCHW) : x.shape;
  const Sizes &kernel = ctx.op.getInts("kernel"), &pads = ctx.op.getInts("pads");
  const Attribute *stridesAttr = ctx.op.attrIfPresent("strides");
  const Sizes &st = stridesAttr ? stridesAttr->get<Sizes>() : kernel;
  Window win{xs[2], xs[3], kernel[0], kernel[1], 0, 0, st[0], st[1], 1, 1, pads[0], pads[1]};
  if (!outputSizes(ctx, win, pads, xs))
    return false;

  std::vector<double> xd = canonical(x, nhwc);
  int64_t planes = xs[0] * xs[1];
  std::vector<double> od(size_t(planes * win.oh * win.ow));
  for (int64_t p = 0; p < planes; ++p) {
    const double *src = xd.data() + p * win.h * win.w;
    double *dst = od.data() + p * win.oh * win.ow;
    for (int64_t oh = 0; oh < win.oh; ++oh)
      for (int64_t ow = 0; ow < win.ow; ++ow)
        dst[oh * win.ow + ow] = poolWindow(win, src, oh, ow, isMax, countPad);
  }
  out = fromCanonical(x.dtype, od, {xs[0], xs[1], win.oh, win.ow}, nhwc);
  return true;
}

} // namespace fusec::ref
