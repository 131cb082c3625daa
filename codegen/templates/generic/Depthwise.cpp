// The kernel of a depthwise conv2d in NHWC (one input channel a group, one output channel a
// channel): a memory-bound stencil, vectorized along the channels.
//
// Note [Depthwise convolution]
// A depthwise convolution does KH·KW multiply-adds an output element; its time is the bytes of
// its input and output (N32 C384 56² f16: 154 MB, 347 M FMAs). The generic window kernel reads
// every tap element by element and every weight once per output element. Here a thread owns V
// consecutive channels (one 16-byte vector of f16, bf16 or f32 where C allows) and P output
// pixels of one row of pixels:
// - it loads its channels' weights once — in OHWI with one input channel a group, channels c to
//   c + V - 1 are V·KH·KW consecutive elements, KH·KW vector loads — and keeps them, in the
//   accumulator dtype, in registers (V·KH·KW <= 72, which bounds V for 5x5 and 7x7 filters);
// - for each pixel it loads, per tap inside the input, one vector of V channels, coalesced across
//   the threads that own the pixel's other channels, and accumulates V sums; then the bias, and
//   one vector store.
// A block's threads are C/V channel vectors (at most 256) by R = 256 / (C/V) pixels, and a block
// covers R·P consecutive output pixels: neighbouring pixels' taps overlap in L1, and the rows
// above and below are other blocks' in L2. A 256-thread block leaves 256 mod (C/V) threads idle.
// P is 8, halved while that leaves fewer than kEnoughBlocks blocks (a small layer wants its
// threads more than it wants fewer weight loads).
#include "codegen/templates/generic/Kernel.h"

namespace fusec::generic {

namespace {

constexpr int64_t kMostPixels = 8;      // P at most: the output pixels a thread computes
constexpr int64_t kEnoughBlocks = 1024; // blocks that fill a GPU several times over
constexpr int64_t kRegisterTaps = 72;   // the most weights a thread keeps (V · KH · KW)

/// The widest vector of a depthwise conv's channels: a power of two of at most 16 bytes that
/// divides C and keeps V · KH · KW weights within kRegisterTaps.
int64_t vectorWidth(const Op &op) {
  Sizes x = sizesOf(*op.operand(0)), w = sizesOf(*op.operand(1));
  int64_t channels = x[3], taps = w[1] * w[2];
  int64_t bytes = dtypeSize(op.operand(0)->type().dtype);
  int64_t v = 16 / bytes;
  while (v > 1 && (channels % v || v * taps > kRegisterTaps))
    v /= 2;
  return v;
}

} // namespace

bool isDepthwise(const Op &op) {
  if (op.kind() != OpKind::Conv2d || !op.hasStaticShapes() ||
      op.operand(0)->type().layout != Layout::NHWC)
    return false;
  int64_t channels = sizesOf(*op.operand(0))[3];
  return op.getInt("groups") == channels && sizesOf(*op.result())[3] == channels &&
         op.operand(0)->type().dtype != DType::Bool;
}

KirKernel buildDepthwise(const Op &op, const std::string &entry) {
  Frame f(op, entry);
  kir::Builder &b = f.b;
  Sizes x = sizesOf(*op.operand(0)), w = sizesOf(*op.operand(1)), y = sizesOf(*op.result());
  const Sizes &strides = op.getInts("strides"), &dilations = op.getInts("dilations"),
              &pads = op.getInts("pads");
  int64_t height = x[1], width = x[2], channels = x[3];
  int64_t kh = w[1], kw = w[2], taps = kh * kw;
  int64_t outH = y[1], outW = y[2], pixels = y[0] * outH * outW;
  int64_t v = vectorWidth(op), vectors = channels / v;
  int64_t perRow = std::min(vectors, kBlock), rows = kBlock / perRow;
  int64_t channelTiles = (vectors + perRow - 1) / perRow;
  auto tilesOf = [&](int64_t p) { return (pixels + rows * p - 1) / (rows * p); };
  int64_t perThread = kMostPixels;
  while (perThread > 1 && channelTiles * tilesOf(perThread) < kEnoughBlocks)
    perThread /= 2;
  int64_t pixelTiles = tilesOf(perThread);
  DType xt = op.operand(0)->type().dtype, wt = op.operand(1)->type().dtype;
  DType yt = op.result()->type().dtype;

  ValueId tid = b.special(kir::Special::TidX);
  ValueId lane = f.arith(IndexOp::Rem, tid, perRow, "lane");
  ValueId row = f.arith(IndexOp::Div, tid, perRow, "row");
  ValueId zero = f.index(0);
  f.tileLoop(channelTiles * pixelTiles, [&](ValueId tile) {
    ValueId channelTile = f.arith(IndexOp::Rem, tile, channelTiles);
    ValueId pixelTile = f.arith(IndexOp::Div, tile, channelTiles);
    ValueId vector = b.add(f.arith(IndexOp::Mul, channelTile, perRow), lane, "vector");
    ValueId rowUsed = b.less(row, f.index(rows));
    ValueId channelsLeft = b.less(vector, f.index(vectors));
    ValueId owns = f.both(rowUsed, channelsLeft);
    b.ifThenElse(owns, [&] {
      ValueId c = f.arith(IndexOp::Mul, vector, v, "c");
      // The weights of channels c .. c + V - 1, weights[l * taps + t] for channel c + l, tap t.
      ValueId raw = b.localArray(kir::storageType(wt), unsigned(v * taps), "wraw");
      ValueId weights = b.localArray(f.acc, unsigned(v * taps), "wacc");
      ValueId first = f.arith(IndexOp::Mul, c, taps);
      f.count(taps, "t", -1, [&](ValueId t) {
        ValueId slot = f.arith(IndexOp::Mul, t, v);
        b.store(raw, slot, b.load(f.in(1), b.add(first, slot), unsigned(v)), unsigned(v));
      });
      f.count(v * taps, "i", -1,
              [&](ValueId i) { b.store(weights, i, f.toAcc(wt, b.load(raw, i, 1, ""))); });
      ValueId bias = kir::kNoValue;
      if (op.numOperands() > 2) {
        ValueId rawBias =
            b.localArray(kir::storageType(op.operand(2)->type().dtype), unsigned(v), "braw");
        b.store(rawBias, zero, b.load(f.in(2), c, unsigned(v)), unsigned(v));
        bias = b.localArray(f.acc, unsigned(v), "bias");
        f.count(v, "l", -1, [&](ValueId l) {
          b.store(bias, l, f.toAcc(op.operand(2)->type().dtype, b.load(rawBias, l, 1, "")));
        });
      }
      ValueId sums = b.localArray(f.acc, unsigned(v), "acc");
      ValueId xs = b.localArray(kir::storageType(xt), unsigned(v * taps), "xv");
      ValueId ys = b.localArray(kir::storageType(yt), unsigned(v), "yv");
      ValueId tileFirst = f.arith(IndexOp::Mul, pixelTile, rows * perThread);
      f.count(perThread, "j", 0, [&](ValueId j) {
        ValueId pixel = b.add(b.add(tileFirst, f.arith(IndexOp::Mul, j, rows)), row, "pixel");
        b.ifThenElse(b.less(pixel, f.index(pixels)), [&] {
          ValueId ow = f.arith(IndexOp::Rem, pixel, outW, "ow");
          ValueId rest = f.arith(IndexOp::Div, pixel, outW);
          ValueId oh = f.arith(IndexOp::Rem, rest, outH, "oh");
          ValueId n = f.arith(IndexOp::Div, rest, outH, "n");
          // The window's corner in the input, and the offset of its (possibly outside) first
          // element: tap (r, s) is r·dh rows and s·dw columns on, a constant offset from it.
          ValueId ih0 =
              f.arith(IndexOp::Sub, f.arith(IndexOp::Mul, oh, strides[0]), pads[0], "ih0");
          ValueId iw0 =
              f.arith(IndexOp::Sub, f.arith(IndexOp::Mul, ow, strides[1]), pads[1], "iw0");
          ValueId imageRow = b.add(f.arith(IndexOp::Mul, n, height), ih0);
          ValueId at = b.add(f.arith(IndexOp::Mul, imageRow, width), iw0);
          ValueId corner = b.add(f.arith(IndexOp::Mul, at, channels), c, "corner");
          // Whether position `first` + k·dilation of an axis of `size` lies inside the input.
          auto inside = [&](ValueId first, ValueId k, int64_t dilation, int64_t size) {
            ValueId in = b.add(first, f.arith(IndexOp::Mul, k, dilation));
            ValueId fromStart = b.less(f.index(-1), in);
            ValueId beforeEnd = b.less(in, f.index(size));
            return f.both(fromStart, beforeEnd);
          };
          // Every tap's vector first (zeros outside the input), so that the loads are in flight
          // together; then the sums.
          ValueId zeroX = b.narrow(xt, b.literal(kir::computeType(xt), 0.0, ""));
          f.count(kh, "r", -1, [&](ValueId r) {
            ValueId rowInside = inside(ih0, r, dilations[0], height);
            ValueId down = f.arith(IndexOp::Mul, r, dilations[0] * width * channels);
            f.count(kw, "s", -1, [&](ValueId s) {
              ValueId colInside = inside(iw0, s, dilations[1], width);
              ValueId t = b.add(f.arith(IndexOp::Mul, r, kw), s, "tap");
              ValueId slot = f.arith(IndexOp::Mul, t, v);
              b.ifThenElse(
                  f.both(rowInside, colInside),
                  [&] {
                    ValueId across = f.arith(IndexOp::Mul, s, dilations[1] * channels);
                    ValueId from = b.add(b.add(corner, down), across, "from");
                    b.store(xs, slot, b.load(f.in(0), from, unsigned(v)), unsigned(v));
                  },
                  [&] {
                    f.count(v, "l", -1, [&](ValueId l) { b.store(xs, b.add(slot, l), zeroX); });
                  });
            });
          });
          f.count(v, "l", -1, [&](ValueId l) {
            Frame::Var sum = f.element(sums, l);
            sum.set(bias == kir::kNoValue ? f.constant(0.0) : b.load(bias, l, 1, ""));
            f.count(taps, "t", -1, [&](ValueId t) {
              ValueId x =
                  f.toAcc(xt, b.load(xs, b.add(f.arith(IndexOp::Mul, t, v), l), 1, ""), "x");
              sum.addProduct(x, b.load(weights, b.add(f.arith(IndexOp::Mul, l, taps), t), 1));
            });
          });
          f.count(v, "l", -1, [&](ValueId l) { b.store(ys, l, f.fromAcc(b.load(sums, l, 1))); });
          ValueId to = b.add(f.arith(IndexOp::Mul, pixel, channels), c, "to");
          b.store(f.out(), to, b.load(ys, zero, unsigned(v)), unsigned(v));
        });
      });
    });
  });
  auto count = [](int64_t n, const char *what) {
    return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
  };
  std::string note = "depthwise, NHWC: a thread " + count(v, "channel") + " by " +
                     count(perThread, "pixel") + ", its " + std::to_string(kh) + "x" +
                     std::to_string(kw) + " weights in registers";
  return f.finish(note, channelTiles * pixelTiles);
}

} // namespace fusec::generic
