// Inference for contractions (matmul, linear, attention) and windowed ops
// (conv2d, max_pool2d, avg_pool2d), per docs/ir.md.
//
// Contractions produce untagged results; windowed ops read the input's tag
// (NCHW unless {nhwc}) and give the result the same tag. A spatial output dim
// is ⌊(in + padBefore + padAfter − dilation·(kernel − 1) − 1)/stride⌋ + 1,
// computed in 128 bits so that no attribute value can overflow it, and `?`
// when the input or kernel extent is symbolic. Dtypes: contractions and
// windowed ops reject bool; attention and avg_pool2d need a float.
#include "ir/ShapeInferenceUtil.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace fusec {

//===--- Contractions -------------------------------------------------------===//

static bool requireInnerDimsAgree(const Infer &in, const TensorType &a, const Dim &ka,
                                  const TensorType &b, const Dim &kb) {
  if (dimsAgree(ka, kb))
    return true;
  return in.fail("inner dims of " + a.str() + " and " + b.str() + " differ (" + ka.str() + " vs " +
                 kb.str() + ")");
}

// The leading (batch) dims of a matrix operand: all but the last two.
static Shape batchDims(const TensorType &t) { return Shape(t.shape.begin(), t.shape.end() - 2); }

bool inferMatMul(const InferContext &ctx, std::vector<TensorType> &results, const ErrorFn &error) {
  Infer in(ctx, results, error);
  const TensorType &a = in.operand(0), &b = in.operand(1);
  if (!requireOneDType(in, in.operands()) || !requireNumeric(in, in.operands()))
    return false;
  if (a.rank() < 2 || b.rank() < 2)
    return in.fail("needs operands of rank >= 2, got " + typeList(in.operands()));
  size_t ra = a.rank(), rb = b.rank();
  bool ta = ctx.getBool("transpose_a"), tb = ctx.getBool("transpose_b");
  const Dim &m = a.shape[ta ? ra - 1 : ra - 2], &ka = a.shape[ta ? ra - 2 : ra - 1];
  const Dim &kb = b.shape[tb ? rb - 1 : rb - 2], &n = b.shape[tb ? rb - 2 : rb - 1];
  if (!requireInnerDimsAgree(in, a, ka, b, kb))
    return false;
  std::optional<Shape> shape = broadcastShapes(batchDims(a), batchDims(b));
  if (!shape)
    return in.fail("batch dims of " + typeList(in.operands()) + " do not broadcast");
  shape->push_back(m);
  shape->push_back(n);
  return in.produce(TensorType{a.dtype, std::move(*shape), Layout::None});
}

// linear(x, w, b?): x [..., in], w [out, in], b [out] -> [..., out].
bool inferLinear(const InferContext &ctx, std::vector<TensorType> &results, const ErrorFn &error) {
  Infer in(ctx, results, error);
  const TensorType &x = in.operand(0), &w = in.operand(1);
  if (!requireOneDType(in, in.operands()) || !requireNumeric(in, in.operands()))
    return false;
  if (x.rank() < 1 || w.rank() != 2)
    return in.fail("needs an input of rank >= 1 and a rank-2 weight, got " + x.str() + " and " +
                   w.str());
  if (!requireInnerDimsAgree(in, x, x.shape.back(), w, w.shape[1]))
    return false;
  Shape out{w.shape[0]};
  if (in.numOperands() == 3 &&
      !requireParamShape(in, "bias", in.operand(2), out, "output features", w))
    return false;
  Shape shape = x.shape;
  shape.back() = w.shape[0];
  return in.produce(TensorType{x.dtype, std::move(shape), Layout::None});
}

// attention(q, k, v, mask?): q [..., Sq, D], k [..., Sk, D], v [..., Sk, Dv]
// -> [..., Sq, Dv]; the mask (any float dtype) broadcasts to [..., Sq, Sk].
bool inferAttention(const InferContext &ctx, std::vector<TensorType> &results,
                    const ErrorFn &error) {
  Infer in(ctx, results, error);
  const TensorType &q = in.operand(0), &k = in.operand(1), &v = in.operand(2);
  std::span<const TensorType> qkv = in.operands().first(3);
  // The mask may be of any float dtype: it is added to the scores in the
  // accumulation precision, so an f32 mask on bf16 q/k/v keeps its values.
  if (!requireOneDType(in, qkv) || !requireFloat(in, in.operands()))
    return false;
  if (const Attribute *scale = ctx.attrIfPresent("scale");
      scale && !std::isfinite(scale->get<double>())) {
    std::ostringstream os;
    os << scale->get<double>();
    return in.fail("scale must be a finite number, got " + os.str());
  }
  if (q.rank() < 2 || k.rank() < 2 || v.rank() < 2)
    return in.fail("needs q, k and v of rank >= 2, got " + typeList(qkv));
  const Dim &sq = q.shape.end()[-2], &sk = k.shape.end()[-2];
  if (!dimsAgree(q.shape.back(), k.shape.back()))
    return in.fail("head dims of q " + q.str() + " and k " + k.str() + " differ (" +
                   q.shape.back().str() + " vs " + k.shape.back().str() + ")");
  if (!dimsAgree(sk, v.shape.end()[-2]))
    return in.fail("key lengths of k " + k.str() + " and v " + v.str() + " differ (" + sk.str() +
                   " vs " + v.shape.end()[-2].str() + ")");
  std::optional<Shape> batch = broadcastShapes(batchDims(q), batchDims(k));
  if (batch)
    batch = broadcastShapes(*batch, batchDims(v));
  if (!batch)
    return in.fail("batch dims of " + typeList(qkv) + " do not broadcast");
  Shape scores = *batch;
  scores.push_back(sq);
  scores.push_back(sk);
  if (in.numOperands() == 4 && !broadcastTo(in.operand(3).shape, scores))
    return in.fail("mask " + in.operand(3).str() + " does not broadcast to " + shapeStr(scores));
  Shape shape = std::move(*batch);
  shape.push_back(sq);
  shape.push_back(v.shape.back());
  return in.produce(TensorType{q.dtype, std::move(shape), Layout::None});
}

//===--- Windowed ops -------------------------------------------------------===//

namespace {
/// The validated window attributes of a conv or pool.
struct Window {
  std::vector<int64_t> strides, pads, dilations{1, 1};
};
} // namespace

// An ints attribute of `n` values, each at least `min` (0 or 1).
static bool requireWindowAttr(const Infer &in, std::string_view name, const std::vector<int64_t> &v,
                              size_t n, int64_t min) {
  std::string attr = "attribute '" + std::string(name) + "' must ";
  if (v.size() != n)
    return in.fail(attr + "have " + std::to_string(n) + " values, got " + intList(v));
  for (int64_t x : v)
    if (x < min)
      return in.fail(attr + "be " + (min > 0 ? "positive" : "non-negative") + ", got " +
                     intList(v));
  return true;
}

// Reads and checks strides (defaulting to `defaultStrides` when absent), pads
// and, when the op has them, dilations.
static std::optional<Window> readWindow(const Infer &in,
                                        const std::vector<int64_t> &defaultStrides) {
  const Attribute *strides = in.ctx.attrIfPresent("strides");
  Window win{strides ? strides->get<std::vector<int64_t>>() : defaultStrides,
             in.ctx.getInts("pads")};
  if (in.ctx.kind == OpKind::Conv2d)
    win.dilations = in.ctx.getInts("dilations");
  if (!requireWindowAttr(in, "strides", win.strides, 2, 1) ||
      !requireWindowAttr(in, "pads", win.pads, 4, 0) ||
      !requireWindowAttr(in, "dilations", win.dilations, 2, 1))
    return std::nullopt;
  return win;
}

// One spatial output dim (see the file comment). `context` names the
// operands for the message.
static std::optional<Dim> windowOutput(const Infer &in, const Window &win, unsigned i,
                                       const Dim &size, const Dim &kernel,
                                       const std::string &context) {
  if (!size.isStatic() || !kernel.isStatic())
    return Dim::anonymous();
  __int128 stride = win.strides[i];
  __int128 num = __int128(size.size) + win.pads[i] + win.pads[i + 2] -
                 __int128(win.dilations[i]) * (__int128(kernel.size) - 1) - 1;
  __int128 out = (num >= 0 ? num / stride : -((-num + stride - 1) / stride)) + 1;
  std::string what = std::string("output ") + (i == 0 ? "height" : "width");
  if (out < 1) {
    int64_t shown = int64_t(std::max(out, __int128(std::numeric_limits<int64_t>::min())));
    in.fail(what + " " + std::to_string(shown) + " is not positive for " + context);
    return std::nullopt;
  }
  if (out > std::numeric_limits<int64_t>::max()) {
    in.fail(what + " overflows for " + context);
    return std::nullopt;
  }
  return Dim::fixed(int64_t(out));
}

// The result of a windowed op on x: batch, `channels` and the spatial output
// dims, placed by x's layout, with x's tag.
static bool produceWindowed(Infer &in, const Window &win, const Dim &channels, const Dim &kh,
                            const Dim &kw, const std::string &context) {
  const TensorType &x = in.operand(0);
  bool nhwc = x.layout == Layout::NHWC;
  std::optional<Dim> oh = windowOutput(in, win, 0, x.shape[nhwc ? 1 : 2], kh, context);
  std::optional<Dim> ow =
      oh ? windowOutput(in, win, 1, x.shape[nhwc ? 2 : 3], kw, context) : std::nullopt;
  if (!ow)
    return false;
  Shape shape =
      nhwc ? Shape{x.shape[0], *oh, *ow, channels} : Shape{x.shape[0], channels, *oh, *ow};
  return in.produce(TensorType{x.dtype, std::move(shape), x.layout});
}

// groups divides a static channel count.
static bool requireGroupsDivide(const Infer &in, int64_t groups, const Dim &channels,
                                std::string_view what, const TensorType &of) {
  if (!channels.isStatic() || channels.size % groups == 0)
    return true;
  return in.fail("groups = " + std::to_string(groups) + " does not divide the " + channels.str() +
                 " " + std::string(what) + " channels of " + of.str());
}

// x [N,C,H,W] with w [O,C/groups,KH,KW], or x [N,H,W,C]{nhwc} with w
// [O,KH,KW,C/groups]; the per-group channel count is checked when known.
static bool checkConvChannels(const Infer &in, const TensorType &x, const TensorType &w,
                              int64_t groups) {
  bool nhwc = x.layout == Layout::NHWC;
  const Dim &c = x.shape[nhwc ? 3 : 1], &wc = w.shape[nhwc ? 3 : 1];
  if (groups < 1)
    return in.fail("attribute 'groups' must be positive, got " + std::to_string(groups));
  if (!requireGroupsDivide(in, groups, c, "input", x) ||
      !requireGroupsDivide(in, groups, w.shape[0], "output", w))
    return false;
  Dim perGroup = c.isStatic() ? Dim::fixed(c.size / groups) : groups == 1 ? c : Dim::anonymous();
  if (dimsAgree(wc, perGroup))
    return true;
  return in.fail("weight " + w.str() + " has " + wc.str() + " input channels per group, expected " +
                 perGroup.str() + " for input " + x.str() +
                 " and groups = " + std::to_string(groups));
}

bool inferConv2d(const InferContext &ctx, std::vector<TensorType> &results, const ErrorFn &error) {
  Infer in(ctx, results, error);
  const TensorType &x = in.operand(0), &w = in.operand(1);
  if (!requireOneDType(in, in.operands()) || !requireNumeric(in, in.operands()))
    return false;
  if (x.rank() != 4 || w.rank() != 4)
    return in.fail("needs a rank-4 input and weight, got " + x.str() + " and " + w.str());
  std::optional<Window> win = readWindow(in, {1, 1});
  if (!win || !checkConvChannels(in, x, w, ctx.getInt("groups")))
    return false;
  bool nhwc = x.layout == Layout::NHWC;
  const Dim &kh = w.shape[nhwc ? 1 : 2], &kw = w.shape[nhwc ? 2 : 3];
  if (kh.isStaticValue(0) || kw.isStaticValue(0))
    return in.fail("weight " + w.str() + " has an empty kernel");
  Shape out{w.shape[0]};
  if (in.numOperands() == 3 &&
      !requireParamShape(in, "bias", in.operand(2), out, "output channels", w))
    return false;
  return produceWindowed(in, *win, w.shape[0], kh, kw,
                         "input " + x.str() + " and weight " + w.str());
}

bool inferPool2d(const InferContext &ctx, std::vector<TensorType> &results, const ErrorFn &error) {
  Infer in(ctx, results, error);
  const TensorType &x = in.operand(0);
  bool ok = ctx.kind == OpKind::AvgPool2d ? requireFloat(in, in.operands())
                                          : requireNumeric(in, in.operands());
  if (!ok)
    return false;
  if (x.rank() != 4)
    return in.fail("needs a rank-4 input, got " + x.str());
  const std::vector<int64_t> &kernel = ctx.getInts("kernel");
  if (!requireWindowAttr(in, "kernel", kernel, 2, 1))
    return false;
  std::optional<Window> win = readWindow(in, kernel);
  if (!win)
    return false;
  // pads [top, left, bottom, right]: a pad as large as the kernel would make
  // windows that hold only padding (no max, no mean); PyTorch refuses them too.
  for (size_t i = 0; i < 4; ++i)
    if (win->pads[i] >= kernel[i % 2])
      return in.fail("pads " + intList(win->pads) + " must be smaller than the kernel " +
                     intList(kernel));
  const Dim &channels = x.shape[x.layout == Layout::NHWC ? 3 : 1];
  return produceWindowed(in, *win, channels, Dim::fixed(kernel[0]), Dim::fixed(kernel[1]),
                         "input " + x.str() + " and kernel " + intList(kernel));
}

} // namespace fusec
