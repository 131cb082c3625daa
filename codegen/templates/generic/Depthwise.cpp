// The kernel of a depthwise conv2d in NHWC (one input channel a group, one output channel a
// channel): a memory-bound stencil, vectorized along the channels.
//
// Note [Depthwise convolution]
// A depthwise convolution does KH·KW multiply-adds an output element; its time should be the
// bytes of its input and output (N32 C384 56² f16: 154 MB, 347 M FMAs). The generic window kernel
// reads every tap element by element and every weight once per output element; a kernel that
// loads and widens KH·KW vectors an output pixel is bound by issuing them (f16 3x3: 72 FMAs, 72
// conversions and 36 moves a pixel of 8 channels ran at 52% of the copy bandwidth on the H200).
// Here a thread owns V consecutive channels (8 bytes of them where C allows) of a run of P
// consecutive output pixels of one row:
// - it loads its channels' weights once — in OHWI with one input channel a group, channels c to
//   c + V - 1 are V·KH·KW consecutive elements, KH·KW vector loads — and keeps them, in the
//   accumulator dtype, in registers (V·KH·KW <= 72, which bounds V for 5x5 and 7x7 filters);
// - for each filter row it loads the (P - 1)·sw + (KW - 1)·dw + 1 input columns the run's
//   windows cover, a vector each (zeros outside the input), widens each once, and accumulates
//   every pixel's taps of that row from them: a column is loaded and widened once, not once a
//   tap that reads it (3x3, stride 1, P = 8: 10 columns for 24 taps);
// - then the bias, and a vector store a pixel.
// Thread i of the grid takes channel vector i mod (C/V) of run i / (C/V): the threads of a run
// read and write its pixels' channels contiguously, and every thread has work. Where the vectors
// are whole warps (C/V a multiple of 32), a block's eight warps take the same 32 vectors of one
// run in eight consecutive output rows instead: the input rows their windows share are read
// while the block's other warps still hold them in L1, not once for each output row from L2
// (N32 C384 56² f16 on the H200: 63.8 -> 60.0 us, 70% -> 74% of the copy bandwidth on its
// bytes). P is 8, halved while the columns a row (times V) would pass 64 registers or the sums
// (P·V) 32.
#include "codegen/templates/generic/Kernel.h"

namespace fusec::generic {

namespace {

constexpr int64_t kRegisterTaps = 72;    // the most weights a thread keeps (V · KH · KW)
constexpr int64_t kRegisterColumns = 64; // the most widened input elements of a filter row
constexpr int64_t kRegisterSums = 32;    // the most sums (P · V)
constexpr int64_t kWarp = 32;

/// The widest vector of a depthwise conv's channels: a power of two of at most 8 bytes that
/// divides C and keeps V · KH · KW weights within kRegisterTaps.
int64_t vectorWidth(const Op &op) {
  Sizes x = sizesOf(*op.operand(0)), w = sizesOf(*op.operand(1));
  int64_t channels = x[3], taps = w[1] * w[2];
  int64_t bytes = dtypeSize(op.operand(0)->type().dtype);
  int64_t v = std::max<int64_t>(8 / bytes, 1);
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
  int64_t outH = y[1], outW = y[2];
  int64_t v = vectorWidth(op), vectors = channels / v;
  auto columnsOf = [&](int64_t p) { return (p - 1) * strides[1] + (kw - 1) * dilations[1] + 1; };
  int64_t run = 8; // P
  while (run > 1 && (columnsOf(run) * v > kRegisterColumns || run * v > kRegisterSums))
    run /= 2;
  int64_t columns = columnsOf(run), runsPerRow = (outW + run - 1) / run;
  // A warp's 32 channel vectors and a block's 8 output rows (where C has whole warps of vectors).
  int64_t rowsTogether = vectors % kWarp == 0 ? kBlock / kWarp : 1;
  int64_t lanes = rowsTogether > 1 ? kWarp : vectors;
  int64_t rowGroups = (outH + rowsTogether - 1) / rowsTogether;
  int64_t items = y[0] * rowGroups * rowsTogether * runsPerRow * vectors;
  DType xt = op.operand(0)->type().dtype, wt = op.operand(1)->type().dtype;
  DType yt = op.result()->type().dtype;
  ValueId zero = f.index(0);

  // The run of pixels ow0 .. ow0 + P - 1 of output row oh of image n, channel vector `vector`.
  auto pixelRun = [&](ValueId vector, ValueId ow0, ValueId oh, ValueId n) {
    ValueId c = f.arith(IndexOp::Mul, vector, v, "c");
    // The weights of channels c .. c + V - 1, weights[l * taps + t] for channel c + l, tap t.
    ValueId raw = b.localArray(kir::storageType(wt), unsigned(v * taps), "wraw");
    ValueId weights = b.localArray(f.acc, unsigned(v * taps), "wacc");
    ValueId first = f.arith(IndexOp::Mul, c, taps);
    f.count(taps, "t", -1, [&](ValueId t) {
      ValueId slot = f.arith(IndexOp::Mul, t, v);
      b.store(raw, slot, b.load(f.in(1), b.add(first, slot), unsigned(v)), unsigned(v));
    });
    f.count(v * taps, "k", -1,
            [&](ValueId k) { b.store(weights, k, f.toAcc(wt, b.load(raw, k, 1, ""))); });
    // The sums, sums[p * V + l] for pixel ow0 + p, channel c + l, from the bias.
    ValueId sums = b.localArray(f.acc, unsigned(run * v), "acc");
    bool biased = op.numOperands() > 2;
    DType bt = biased ? op.operand(2)->type().dtype : xt;
    ValueId rawBias = kir::kNoValue;
    if (biased) {
      rawBias = b.localArray(kir::storageType(bt), unsigned(v), "braw");
      b.store(rawBias, zero, b.load(f.in(2), c, unsigned(v)), unsigned(v));
    }
    f.count(v, "l", -1, [&](ValueId l) {
      ValueId start = biased ? f.toAcc(bt, b.load(rawBias, l, 1, "")) : f.constant(0.0);
      f.count(run, "p", -1,
              [&](ValueId p) { b.store(sums, b.add(f.arith(IndexOp::Mul, p, v), l), start); });
    });
    // The windows' first input row and column, and the offset of the (possibly outside) element
    // at that row and column: row r and column j of the run's inputs are a constant offset on.
    ValueId ih0 = f.arith(IndexOp::Sub, f.arith(IndexOp::Mul, oh, strides[0]), pads[0], "ih0");
    ValueId iw0 = f.arith(IndexOp::Sub, f.arith(IndexOp::Mul, ow0, strides[1]), pads[1], "iw0");
    ValueId imageRow = b.add(f.arith(IndexOp::Mul, n, height), ih0);
    ValueId at = b.add(f.arith(IndexOp::Mul, imageRow, width), iw0);
    ValueId corner = b.add(f.arith(IndexOp::Mul, at, channels), c, "corner");
    // Whether `origin` + k lies inside [0, size).
    auto inside = [&](ValueId origin, ValueId k, int64_t size) {
      ValueId in = b.add(origin, k);
      ValueId fromStart = b.less(f.index(-1), in);
      ValueId beforeEnd = b.less(in, f.index(size));
      return f.both(fromStart, beforeEnd);
    };
    ValueId xs = b.localArray(kir::storageType(xt), unsigned(v), "xv");
    ValueId row = b.localArray(f.acc, unsigned(columns * v), "xrow");
    ValueId zeroX = b.narrow(xt, b.literal(kir::computeType(xt), 0.0, ""));
    f.count(kh, "r", -1, [&](ValueId r) {
      ValueId down = f.arith(IndexOp::Mul, r, dilations[0]);
      ValueId rowInside = inside(ih0, down, height);
      ValueId rowStart = f.arith(IndexOp::Mul, down, width * channels);
      // The row's columns, loaded and widened once.
      f.count(columns, "j", -1, [&](ValueId j) {
        ValueId colInside = inside(iw0, j, width);
        b.ifThenElse(
            f.both(rowInside, colInside),
            [&] {
              ValueId across = f.arith(IndexOp::Mul, j, channels);
              ValueId from = b.add(b.add(corner, rowStart), across, "from");
              b.store(xs, zero, b.load(f.in(0), from, unsigned(v)), unsigned(v));
            },
            [&] { f.count(v, "l", -1, [&](ValueId l) { b.store(xs, l, zeroX); }); });
        ValueId slot = f.arith(IndexOp::Mul, j, v);
        f.count(v, "l", -1, [&](ValueId l) {
          ValueId widened = f.toAcc(xt, b.load(xs, l, 1, ""), "x");
          b.store(row, b.add(slot, l), widened);
        });
      });
      // Every pixel's taps of this filter row.
      f.count(run, "p", -1, [&](ValueId p) {
        f.count(kw, "s", -1, [&](ValueId s) {
          ValueId along = f.arith(IndexOp::Mul, p, strides[1]);
          ValueId column = b.add(along, f.arith(IndexOp::Mul, s, dilations[1]));
          ValueId tap = b.add(f.arith(IndexOp::Mul, r, kw), s, "tap");
          f.count(v, "l", -1, [&](ValueId l) {
            ValueId xl = b.load(row, b.add(f.arith(IndexOp::Mul, column, v), l), 1);
            ValueId wl = b.load(weights, b.add(f.arith(IndexOp::Mul, l, taps), tap), 1);
            f.element(sums, b.add(f.arith(IndexOp::Mul, p, v), l)).addProduct(xl, wl);
          });
        });
      });
    });
    ValueId ys = b.localArray(kir::storageType(yt), unsigned(v), "yv");
    ValueId pixel0 = b.add(f.arith(IndexOp::Mul, b.add(f.arith(IndexOp::Mul, n, outH), oh), outW),
                           ow0, "pixel0");
    f.count(run, "p", -1, [&](ValueId p) {
      ValueId ow = b.add(ow0, p, "ow");
      b.ifThenElse(b.less(ow, f.index(outW)), [&] {
        f.count(v, "l", -1, [&](ValueId l) {
          ValueId sum = b.load(sums, b.add(f.arith(IndexOp::Mul, p, v), l), 1);
          b.store(ys, l, f.fromAcc(sum));
        });
        ValueId to = b.add(f.arith(IndexOp::Mul, b.add(pixel0, p), channels), c, "to");
        b.store(f.out(), to, b.load(ys, zero, unsigned(v)), unsigned(v));
      });
    });
  };

  f.forEachElement(items, [&](ValueId i) {
    // i: channel vector (its low part: a lane), output row within the group, the vector's high
    // part, run, row group, image.
    ValueId low = f.arith(IndexOp::Rem, i, lanes, rowsTogether > 1 ? "lane" : "vector");
    ValueId byRow = f.arith(IndexOp::Div, i, lanes);
    ValueId rowIn = f.arith(IndexOp::Rem, byRow, rowsTogether);
    ValueId highs = f.arith(IndexOp::Div, byRow, rowsTogether);
    ValueId high = f.arith(IndexOp::Rem, highs, vectors / lanes);
    ValueId vector = b.add(f.arith(IndexOp::Mul, high, lanes), low, "vector");
    ValueId runs = f.arith(IndexOp::Div, highs, vectors / lanes);
    ValueId ow0 = f.arith(IndexOp::Mul, f.arith(IndexOp::Rem, runs, runsPerRow), run, "ow0");
    ValueId rest = f.arith(IndexOp::Div, runs, runsPerRow);
    ValueId group = f.arith(IndexOp::Rem, rest, rowGroups);
    ValueId oh = b.add(f.arith(IndexOp::Mul, group, rowsTogether), rowIn, "oh");
    ValueId n = f.arith(IndexOp::Div, rest, rowGroups, "n");
    if (outH % rowsTogether == 0)
      return pixelRun(vector, ow0, oh, n);
    b.ifThenElse(b.less(oh, f.index(outH)), [&] { pixelRun(vector, ow0, oh, n); });
  });

  auto count = [](int64_t n, const char *what) {
    return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
  };
  std::string note = "depthwise, NHWC: a thread " + count(v, "channel") + " of a run of " +
                     count(run, "pixel") + ", its " + std::to_string(kh) + "x" +
                     std::to_string(kw) + " weights in registers, " + count(columns, "column") +
                     " a filter row";
  return f.finish(note, blocksFor(items));
}

} // namespace fusec::generic
