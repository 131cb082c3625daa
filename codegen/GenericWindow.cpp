// Generic kernels of the windowed ops, one thread per output element in the
// op's layout (NCHW, or NHWC for an {nhwc} input), so that consecutive
// threads write consecutive elements.
//
// conv2d: the thread sums, over the taps (kh, kw) whose input position
// oh·stride − pad + kh·dilation lies inside the input and over the input
// channels of its output channel's group, x · w in the accumulation type
// (f32 for f32/f16/bf16 or `acc`, double for f64, wrapping int64 for
// integers), then adds the bias. Weights are OIHW for NCHW input and OHWI
// for NHWC input. Pooling: the window clipped to the input; max propagates
// NaN and padding never wins it; avg divides by the window's size with
// count_include_pad, else by the number of input elements it covers.
#include "codegen/GenericSupport.h"
#include "codegen/PointwiseMath.h"

#include <sstream>

namespace fusec::codegen::generic {

Window windowOf(const Op &op) {
  Sizes x = sizesOf(*op.operand(0)), y = sizesOf(*op.result());
  bool nhwc = op.operand(0)->type().layout == Layout::NHWC;
  Window win{};
  win.nhwc = nhwc;
  win.n = x[0];
  win.c = x[nhwc ? 3 : 1];
  win.h = x[nhwc ? 1 : 2];
  win.w = x[nhwc ? 2 : 3];
  win.o = y[nhwc ? 3 : 1];
  win.oh = y[nhwc ? 1 : 2];
  win.ow = y[nhwc ? 2 : 3];
  const Sizes &pads = op.getInts("pads");
  win.pt = pads[0];
  win.pl = pads[1];
  if (op.kind() == OpKind::Conv2d) {
    Sizes wt = sizesOf(*op.operand(1));
    win.kh = wt[nhwc ? 1 : 2];
    win.kw = wt[nhwc ? 2 : 3];
    const Sizes &st = op.getInts("strides"), &dil = op.getInts("dilations");
    win.sh = st[0], win.sw = st[1], win.dh = dil[0], win.dw = dil[1];
    return win;
  }
  const Sizes &kernel = op.getInts("kernel");
  const Attribute *strides = op.attrIfPresent("strides");
  const Sizes &st = strides ? strides->get<Sizes>() : kernel;
  win.kh = kernel[0], win.kw = kernel[1], win.sh = st[0], win.sw = st[1], win.dh = 1, win.dw = 1;
  return win;
}

namespace {

/// Declarations of n, the output channel `oc` and the plane position from
/// the flat output index i.
std::string outputCoordinates(const Window &win) {
  std::vector<std::pair<std::string, int64_t>> axes = {
      {"n", win.n}, {"oc", win.o}, {"oh", win.oh}, {"ow", win.ow}};
  if (win.nhwc)
    axes = {{"n", win.n}, {"oh", win.oh}, {"ow", win.ow}, {"oc", win.o}};
  std::string code = "    long long rem = i;\n";
  for (size_t a = axes.size(); a-- > 1;)
    code += "    const long long " + axes[a].first + " = rem % " + lit(axes[a].second) +
            ";\n    rem /= " + lit(axes[a].second) + ";\n";
  return code + "    const long long n = rem;\n";
}

/// The offset of input element (n, channel, ih, iw).
std::string inputAt(const Window &win, const std::string &channel) {
  if (win.nhwc)
    return "((n * " + lit(win.h) + " + ih) * " + lit(win.w) + " + iw) * " + lit(win.c) + " + " +
           channel;
  return "((n * " + lit(win.c) + " + " + channel + ") * " + lit(win.h) + " + ih) * " + lit(win.w) +
         " + iw";
}

constexpr std::string_view kConvLoop = R"(    $T acc = $ZERO;
    for (long long kh = 0; kh < $KH; ++kh) {
      const long long ih = oh * $SH - $PT + kh * $DH;
      if (ih < 0 || ih >= $H)
        continue;
      for (long long kw = 0; kw < $KW; ++kw) {
        const long long iw = ow * $SW - $PL + kw * $DW;
        if (iw < 0 || iw >= $W)
          continue;
        for (long long c = 0; c < $CG; ++c)
          acc = $FMA;
      }
    }
    $OUT[i] = $STORE;
)";

GeneratedKernel emitConv(KernelBuilder &k, const Window &win) {
  const Op &op = k.op();
  DType t = op.result()->type().dtype, acc = accDType(t, accAttr(op));
  int64_t cg = sizesOf(*op.operand(1))[win.nhwc ? 3 : 1], perGroup = win.o / op.getInt("groups");
  std::string channel =
      perGroup == win.o ? "c" : "oc / " + lit(perGroup) + " * " + lit(cg) + " + c";
  std::string weightAt =
      win.nhwc
          ? "((oc * " + lit(win.kh) + " + kh) * " + lit(win.kw) + " + kw) * " + lit(cg) + " + c"
          : "((oc * " + lit(cg) + " + c) * " + lit(win.kh) + " + kh) * " + lit(win.kw) + " + kw";
  DType xt = op.operand(0)->type().dtype, wt = op.operand(1)->type().dtype;
  std::string tap =
      mulExpr(acc, loadExpr(xt, k.in(0), inputAt(win, channel)), loadExpr(wt, k.in(1), weightAt));
  std::string result = "acc";
  if (op.numOperands() > 2)
    result = addExpr(acc, result, loadExpr(op.operand(2)->type().dtype, k.in(2), "oc"));
  std::string loop = fill(kConvLoop, {{"T", std::string(accType(acc))},
                                      {"ZERO", zeroLiteral(acc)},
                                      {"KH", lit(win.kh)},
                                      {"KW", lit(win.kw)},
                                      {"SH", lit(win.sh)},
                                      {"SW", lit(win.sw)},
                                      {"DH", lit(win.dh)},
                                      {"DW", lit(win.dw)},
                                      {"PT", lit(win.pt)},
                                      {"PL", lit(win.pl)},
                                      {"H", lit(win.h)},
                                      {"W", lit(win.w)},
                                      {"CG", lit(cg)},
                                      {"FMA", addExpr(acc, "acc", tap)},
                                      {"OUT", k.out()},
                                      {"STORE", storeFromAcc(t, acc, result)}});
  int64_t numel = product(sizesOf(*op.result()));
  std::string note = std::string("one thread per output element, ") +
                     (win.nhwc ? "NHWC input, OHWI weight" : "NCHW input, OIHW weight") +
                     ", groups of " + std::to_string(cg) + " input channels";
  return k.finish({note}, gridStrideLoop(numel, outputCoordinates(win) + loop), blocksFor(numel));
}

constexpr std::string_view kPoolLoop = R"(    const long long h0 = oh * $SH - $PT;
    const long long w0 = ow * $SW - $PL;
    const long long hLo = h0 > 0 ? h0 : 0;
    const long long hHi = h0 + $KH < $H ? h0 + $KH : $H;
    const long long wLo = w0 > 0 ? w0 : 0;
    const long long wHi = w0 + $KW < $W ? w0 + $KW : $W;
    $T acc = $INIT;
    for (long long ih = hLo; ih < hHi; ++ih) {
      for (long long iw = wLo; iw < wHi; ++iw) {
        const $T x = $LOAD;
        acc = $COMBINE;
      }
    }
    $OUT[i] = $STORE;
)";

GeneratedKernel emitPool(KernelBuilder &k, const Window &win) {
  const Op &op = k.op();
  bool isMax = op.kind() == OpKind::MaxPool2d;
  DType t = op.result()->type().dtype, acc = accDType(t);
  std::string x = loadExpr(t, k.in(0), inputAt(win, "oc"));
  std::string result = "acc";
  if (!isMax && op.getBool("count_include_pad"))
    result += " / " + floatLiteral(acc, double(win.kh * win.kw));
  else if (!isMax)
    result += " / (" + std::string(accType(acc)) + ")((hHi - hLo) * (wHi - wLo))";
  std::string loop =
      fill(kPoolLoop, {{"SH", lit(win.sh)},
                       {"SW", lit(win.sw)},
                       {"PT", lit(win.pt)},
                       {"PL", lit(win.pl)},
                       {"KH", lit(win.kh)},
                       {"KW", lit(win.kw)},
                       {"H", lit(win.h)},
                       {"W", lit(win.w)},
                       {"T", std::string(accType(acc))},
                       {"INIT", isMax ? lowestLiteral(acc) : zeroLiteral(acc)},
                       {"LOAD", x},
                       {"COMBINE", isMax ? maxExpr(acc, "acc", "x") : addExpr(acc, "acc", "x")},
                       {"OUT", k.out()},
                       {"STORE", storeFromAcc(t, acc, result)}});
  int64_t numel = product(sizesOf(*op.result()));
  std::string note = std::string("one thread per output element, ") + (win.nhwc ? "NHWC" : "NCHW") +
                     ", window " + std::to_string(win.kh) + "x" + std::to_string(win.kw);
  return k.finish({note}, gridStrideLoop(numel, outputCoordinates(win) + loop), blocksFor(numel));
}

} // namespace

GeneratedKernel emitWindow(KernelBuilder &k) {
  Window win = windowOf(k.op());
  return k.op().kind() == OpKind::Conv2d ? emitConv(k, win) : emitPool(k, win);
}

} // namespace fusec::codegen::generic
