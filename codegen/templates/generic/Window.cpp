// Generic kernels of conv2d and pooling, one thread per output element in
// the op's layout (NCHW, or NHWC for an {nhwc} input).
//
// conv2d: the sum of x · w over the taps whose input position
// o · stride - pad + k · dilation lies inside the input and over the input
// channels of the output channel's group, then the bias. Weights are OIHW
// for NCHW input and OHWI for NHWC input. Pooling: the window clipped to the
// input; max propagates NaN and padding never wins it; avg divides by the
// window's size with count_include_pad, else by the elements it covers.
#include "codegen/templates/generic/Kernel.h"

namespace fusec::generic {

namespace {

/// One spatial axis of a window: the input's extent, the window's, its
/// stride, dilation and leading pad.
struct Axis {
  int64_t size, window, stride, dilation, pad;
};

/// Where axis `a` of an NCHW (OIHW) shape is in an NHWC (OHWI) one.
constexpr unsigned kNhwc[] = {0, 3, 1, 2};

class WindowBuilder : Frame {
public:
  WindowBuilder(const Op &op, const std::string &entry)
      : Frame(op, entry), nhwc(op.operand(0)->type().layout == Layout::NHWC) {
    auto dim = [&](const Sizes &s, unsigned a) { return s[nhwc ? kNhwc[a] : a]; };
    Sizes x = sizesOf(*op.operand(0)), kernel, strides, dilations = {1, 1};
    if (op.kind() == OpKind::Conv2d) {
      Sizes wt = sizesOf(*op.operand(1));
      cg = dim(wt, 1);
      kernel = {dim(wt, 2), dim(wt, 3)};
      strides = op.getInts("strides");
      dilations = op.getInts("dilations");
    } else {
      kernel = op.getInts("kernel");
      const Attribute *st = op.attrIfPresent("strides");
      strides = st ? st->get<Sizes>() : kernel;
    }
    const Sizes &pads = op.getInts("pads");
    channels = dim(x, 1);
    outChannels = dim(sizesOf(*op.result()), 1);
    rows = {dim(x, 2), kernel[0], strides[0], dilations[0], pads[0]};
    cols = {dim(x, 3), kernel[1], strides[1], dilations[1], pads[1]};
  }

  KirKernel run() {
    int64_t numel = product(sizesOf(*op.result()));
    forEachElement(numel, [&](ValueId i) {
      outputCoordinates(i);
      if (op.kind() == OpKind::Conv2d)
        conv(i);
      else
        pool(i);
    });
    std::string note = "one thread per output element, ";
    if (op.kind() == OpKind::Conv2d)
      note += std::string(nhwc ? "NHWC input, OHWI weight" : "NCHW input, OIHW weight") +
              ", groups of " + std::to_string(cg) + " input channels";
    else
      note += std::string(nhwc ? "NHWC" : "NCHW") + ", window " + std::to_string(rows.window) +
              "x" + std::to_string(cols.window);
    return finish(note, blocksFor(numel));
  }

private:
  /// n, the output channel and the plane position of output element `i`.
  void outputCoordinates(ValueId i) {
    Sizes y = sizesOf(*op.result());
    auto coords = coordinates(b, i, 4, {0, 1, 2, 3}, [&](unsigned a) { return index(y[a]); });
    auto axis = [&](unsigned a, const char *name) {
      ValueId v = coords.at(nhwc ? kNhwc[a] : a);
      b.rename(v, name);
      return v;
    };
    n = axis(0, "n");
    oc = axis(1, "oc");
    oh = axis(2, "oh");
    ow = axis(3, "ow");
  }

  /// The offset of input element (n, channel, ih, iw).
  ValueId inputAt(ValueId channel, ValueId ih, ValueId iw) {
    int64_t h = rows.size, w = cols.size;
    if (nhwc)
      return muladd(muladd(muladd(n, h, ih), w, iw), channels, channel);
    return muladd(muladd(muladd(n, channels, channel), h, ih), w, iw);
  }

  /// (a * x + y) as index math.
  ValueId muladd(ValueId a, int64_t x, ValueId y) {
    ValueId scaled = arith(IndexOp::Mul, a, x);
    return b.add(scaled, y);
  }

  /// The input position of the window's first tap at output `position`.
  ValueId start(ValueId position, const Axis &axis) {
    ValueId scaled = arith(IndexOp::Mul, position, axis.stride);
    return arith(IndexOp::Sub, scaled, axis.pad);
  }

  /// body(k, at) for each tap k of `axis` at output `position` whose input
  /// position `at` lies inside the input.
  void taps(ValueId position, const Axis &axis, const std::string &loopName,
            const std::string &name, const std::function<void(ValueId, ValueId)> &body) {
    count(axis.window, loopName, 0, [&](ValueId k) {
      ValueId first = start(position, axis);
      ValueId at = b.add(first, arith(IndexOp::Mul, k, axis.dilation), name);
      ValueId above = b.less(index(-1), at);
      ValueId below = b.less(at, index(axis.size));
      b.ifThenElse(both(above, below), [&] { body(k, at); });
    });
  }

  void conv(ValueId i) {
    int64_t kh = rows.window, kw = cols.window;
    int64_t perGroup = outChannels / op.getInt("groups");
    ValueId groupBase = kir::kNoValue; // the group's first input channel
    if (perGroup != outChannels)
      groupBase = arith(IndexOp::Mul, arith(IndexOp::Div, oc, perGroup), cg, "channel0");
    Var sum = var(constant(0.0), "acc");
    taps(oh, rows, "kh", "ih", [&](ValueId r, ValueId ih) {
      taps(ow, cols, "kw", "iw", [&](ValueId s, ValueId iw) {
        count(cg, "c", 0, [&](ValueId c) {
          ValueId channel = groupBase == kir::kNoValue ? c : b.add(groupBase, c);
          ValueId weightAt = nhwc ? muladd(muladd(muladd(oc, kh, r), kw, s), cg, c)
                                  : muladd(muladd(muladd(oc, cg, c), kh, r), kw, s);
          ValueId x = loadAcc(0, inputAt(channel, ih, iw), "x");
          ValueId w = loadAcc(1, weightAt, "w");
          sum.addProduct(x, w);
        });
      });
    });
    ValueId y = sum.get("y");
    if (op.numOperands() > 2)
      y = math(OpKind::Add, {y, loadAcc(2, oc, "bias")}, "y");
    storeAcc(i, y);
  }

  void pool(ValueId i) {
    bool isMax = op.kind() == OpKind::MaxPool2d;
    // The window along `axis` at output `position`, clipped to the input: [lo, hi).
    auto clip = [&](ValueId position, const Axis &axis, const std::string &name) {
      ValueId first = start(position, axis);
      ValueId zero = index(0);
      ValueId lo = b.math({OpKind::Max, DType::I64, DType::I64}, {first, zero}, name + "Lo");
      ValueId end = arith(IndexOp::Add, first, axis.window);
      ValueId size = index(axis.size);
      ValueId hi = b.math({OpKind::Min, DType::I64, DType::I64}, {end, size}, name + "Hi");
      return std::pair(lo, hi);
    };
    auto [hLo, hHi] = clip(oh, rows, "h");
    auto [wLo, wHi] = clip(ow, cols, "w");
    Var total = var(isMax ? lowest() : constant(0.0), "acc");
    ValueId one = index(1);
    b.forLoop(hLo, hHi, one, "ih", 0, [&](ValueId ih) {
      b.forLoop(wLo, wHi, one, "iw", 0, [&](ValueId iw) {
        ValueId x = loadAcc(0, inputAt(oc, ih, iw), "x");
        total.combine(isMax ? OpKind::Max : OpKind::Add, x);
      });
    });
    ValueId y = total.get("y");
    if (!isMax) {
      ValueId covered;
      if (op.getBool("count_include_pad")) {
        covered = constant(double(rows.window * cols.window), "count");
      } else {
        ValueId height = b.arith(IndexOp::Sub, hHi, hLo);
        ValueId width = b.arith(IndexOp::Sub, wHi, wLo);
        covered = b.math({OpKind::Cast, DType::I64, acc}, {b.mul(height, width)}, "count");
      }
      y = math(OpKind::Div, {y, covered}, "y");
    }
    storeAcc(i, y);
  }

  // The geometry in NCHW terms, whatever the layout: input and output
  // channels, input channels a group (conv2d), the spatial axes.
  bool nhwc;
  int64_t channels = 0, outChannels = 0, cg = 0;
  Axis rows{}, cols{};
  ValueId n = kir::kNoValue, oc = kir::kNoValue, oh = kir::kNoValue, ow = kir::kNoValue;
};

} // namespace

KirKernel buildWindow(const Op &op, const std::string &entry) {
  return WindowBuilder(op, entry).run();
}

} // namespace fusec::generic
