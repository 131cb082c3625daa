// Generic kernels of the windowed ops, one thread per output element in the
// op's layout (NCHW, or NHWC for an {nhwc} input), so that consecutive
// threads write consecutive elements.
//
// conv2d: the thread sums, over the taps (kh, kw) whose input position
// oh·stride − pad + kh·dilation lies inside the input and over the input
// channels of its output channel's group, x · w in the accumulation type
// (f32 for f32/f16/bf16 or `acc`, f64 for f64, wrapping i64 for integers),
// then adds the bias. Weights are OIHW for NCHW input and OHWI for NHWC
// input. Pooling: the window clipped to the input; max propagates NaN and
// padding never wins it; avg divides by the window's size with
// count_include_pad, else by the number of input elements it covers.
#include "codegen/templates/Index.h"
#include "codegen/templates/generic/Kernel.h"

namespace fusec::generic {

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

class WindowBuilder {
public:
  WindowBuilder(const Op &op, const std::string &entry)
      : f(op, entry, accDType(op.result()->type().dtype, accAttr(op))), b(f.b), op(op),
        win(windowOf(op)) {}

  KirKernel run();

private:
  /// n, the output channel and the plane position of output element `i`.
  void outputCoordinates(ValueId i);
  /// The offset of input element (n, channel, ih, iw).
  ValueId inputAt(ValueId channel, ValueId ih, ValueId iw);
  /// (a * x + y) as index math.
  ValueId muladd(ValueId a, int64_t x, ValueId y) {
    ValueId scaled = f.arith(kir::IndexOp::Mul, a, x);
    return b.add(scaled, y);
  }
  /// position · stride − pad + tap · dilation, and whether it lies in [0, size).
  std::pair<ValueId, ValueId> tap(ValueId position, int64_t stride, int64_t pad, ValueId tap,
                                  int64_t dilation, int64_t size, const std::string &name);
  void conv(ValueId i);
  void pool(ValueId i);

  Frame f;
  kir::Builder &b;
  const Op &op;
  Window win;
  ValueId n = kir::kNoValue, oc = kir::kNoValue, oh = kir::kNoValue, ow = kir::kNoValue;
};

void WindowBuilder::outputCoordinates(ValueId i) {
  struct Axis {
    ValueId *value;
    int64_t size;
    const char *name;
  };
  std::vector<Axis> axes = {
      {&n, win.n, "n"}, {&oc, win.o, "oc"}, {&oh, win.oh, "oh"}, {&ow, win.ow, "ow"}};
  if (win.nhwc)
    axes = {{&n, win.n, "n"}, {&oh, win.oh, "oh"}, {&ow, win.ow, "ow"}, {&oc, win.o, "oc"}};
  auto coords =
      coordinates(b, i, 4, {0, 1, 2, 3}, [&](unsigned a) { return f.index(axes[a].size); });
  for (unsigned a = 0; a < 4; ++a) {
    *axes[a].value = coords.at(a);
    b.rename(coords.at(a), axes[a].name);
  }
}

ValueId WindowBuilder::inputAt(ValueId channel, ValueId ih, ValueId iw) {
  if (win.nhwc)
    return muladd(muladd(muladd(n, win.h, ih), win.w, iw), win.c, channel);
  return muladd(muladd(muladd(n, win.c, channel), win.h, ih), win.w, iw);
}

std::pair<ValueId, ValueId> WindowBuilder::tap(ValueId position, int64_t stride, int64_t pad,
                                               ValueId k, int64_t dilation, int64_t size,
                                               const std::string &name) {
  ValueId scaled = f.arith(kir::IndexOp::Mul, position, stride);
  ValueId start = f.arith(kir::IndexOp::Sub, scaled, pad);
  ValueId at = b.add(start, f.arith(kir::IndexOp::Mul, k, dilation), name);
  ValueId above = b.less(f.index(-1), at);
  ValueId below = b.less(at, f.index(size));
  ValueId inside = b.math({OpKind::Where, DType::Bool, DType::Bool}, {above, below, above}, "");
  return {at, inside};
}

void WindowBuilder::conv(ValueId i) {
  int64_t cg = sizesOf(*op.operand(1))[win.nhwc ? 3 : 1], perGroup = win.o / op.getInt("groups");
  ValueId groupBase = kir::kNoValue; // the group's first input channel
  if (perGroup != win.o)
    groupBase =
        f.arith(kir::IndexOp::Mul, f.arith(kir::IndexOp::Div, oc, perGroup), cg, "channel0");
  Frame::Var acc = f.var(f.constant(0.0), "acc");
  f.count(win.kh, "kh", 0, [&](ValueId kh) {
    auto [ih, rowInside] = tap(oh, win.sh, win.pt, kh, win.dh, win.h, "ih");
    b.ifThenElse(rowInside, [&] {
      f.count(win.kw, "kw", 0, [&](ValueId kw) {
        auto [iw, colInside] = tap(ow, win.sw, win.pl, kw, win.dw, win.w, "iw");
        b.ifThenElse(colInside, [&] {
          f.count(cg, "c", 0, [&](ValueId c) {
            ValueId channel = groupBase == kir::kNoValue ? c : b.add(groupBase, c);
            ValueId weightAt = win.nhwc ? muladd(muladd(muladd(oc, win.kh, kh), win.kw, kw), cg, c)
                                        : muladd(muladd(muladd(oc, cg, c), win.kh, kh), win.kw, kw);
            ValueId x = f.loadAcc(0, inputAt(channel, ih, iw), "x");
            ValueId w = f.loadAcc(1, weightAt, "w");
            ValueId sum = acc.get();
            acc.set(f.math(OpKind::Add, {sum, f.math(OpKind::Mul, {x, w})}));
          });
        });
      });
    });
  });
  ValueId y = acc.get("y");
  if (op.numOperands() > 2)
    y = f.math(OpKind::Add, {y, f.loadAcc(2, oc, "bias")}, "y");
  f.storeAcc(i, y);
}

void WindowBuilder::pool(ValueId i) {
  bool isMax = op.kind() == OpKind::MaxPool2d;
  auto clamp = [&](OpKind kind, ValueId a, ValueId c, const std::string &name) {
    return b.math({kind, DType::I64, DType::I64}, {a, c}, name);
  };
  // The window's rows [h0, h0 + kh) and columns clipped to the input.
  auto clip = [&](ValueId position, int64_t stride, int64_t pad, int64_t extent, int64_t size,
                  const std::string &name) {
    ValueId first = f.arith(kir::IndexOp::Sub, f.arith(kir::IndexOp::Mul, position, stride), pad);
    ValueId lo = clamp(OpKind::Max, first, f.index(0), name + "Lo");
    ValueId end = f.arith(kir::IndexOp::Add, first, extent);
    ValueId hi = clamp(OpKind::Min, end, f.index(size), name + "Hi");
    return std::pair(lo, hi);
  };
  auto [hLo, hHi] = clip(oh, win.sh, win.pt, win.kh, win.h, "h");
  auto [wLo, wHi] = clip(ow, win.sw, win.pl, win.kw, win.w, "w");
  Frame::Var acc = f.var(isMax ? f.lowest() : f.constant(0.0), "acc");
  ValueId one = f.index(1);
  b.forLoop(hLo, hHi, one, "ih", 0, [&](ValueId ih) {
    b.forLoop(wLo, wHi, one, "iw", 0, [&](ValueId iw) {
      ValueId x = f.loadAcc(0, inputAt(oc, ih, iw), "x");
      ValueId sofar = acc.get();
      acc.set(f.math(isMax ? OpKind::Max : OpKind::Add, {sofar, x}));
    });
  });
  ValueId y = acc.get("y");
  if (!isMax) {
    ValueId count;
    if (op.getBool("count_include_pad")) {
      count = f.constant(double(win.kh * win.kw), "count");
    } else {
      ValueId rows = b.arith(kir::IndexOp::Sub, hHi, hLo);
      ValueId cols = b.arith(kir::IndexOp::Sub, wHi, wLo);
      count = b.math({OpKind::Cast, DType::I64, f.acc}, {b.mul(rows, cols)}, "count");
    }
    y = f.math(OpKind::Div, {y, count}, "y");
  }
  f.storeAcc(i, y);
}

KirKernel WindowBuilder::run() {
  int64_t numel = product(sizesOf(*op.result()));
  gridStrideLoop(b, f.index(numel), [&](ValueId i) {
    if (numel == 0) // no element: and a coordinate would divide by a 0 extent
      return;
    outputCoordinates(i);
    if (op.kind() == OpKind::Conv2d)
      conv(i);
    else
      pool(i);
  });
  std::string note = "one thread per output element, ";
  if (op.kind() == OpKind::Conv2d)
    note += std::string(win.nhwc ? "NHWC input, OHWI weight" : "NCHW input, OIHW weight") +
            ", groups of " + std::to_string(sizesOf(*op.operand(1))[win.nhwc ? 3 : 1]) +
            " input channels";
  else
    note += std::string(win.nhwc ? "NHWC" : "NCHW") + ", window " + std::to_string(win.kh) + "x" +
            std::to_string(win.kw);
  return f.finish(note, blocksFor(numel));
}

} // namespace

KirKernel buildWindow(const Op &op, const std::string &entry) {
  return WindowBuilder(op, entry).run();
}

} // namespace fusec::generic
