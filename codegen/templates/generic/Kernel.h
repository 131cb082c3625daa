// Internal to the generic kernels (templates/Generic*.cpp): the numeric plan
// of each op family (static sizes and strides, thread layouts) and the frame
// every generic kernel is built in (its parameters, accumulator math, group
// reductions through shared memory). Every builder here sees static shapes
// only (Generic.cpp checks), so sizes and strides are plain integers that
// become kir constants.
#pragma once

#include "codegen/templates/Index.h"
#include "codegen/templates/Template.h"
#include "ir/Graph.h"

#include <optional>
#include <string>
#include <vector>

namespace fusec::generic {

using codegen::coordinates;
using codegen::gridStrideLoop;
using codegen::KirKernel;
using codegen::stridedOffset;
using kir::ValueId;
using Sizes = std::vector<int64_t>;

/// Threads per block of every generic kernel.
inline constexpr int64_t kBlock = 256;

/// The sizes of a value whose shape is static.
Sizes sizesOf(const Value &v);
/// Product of sizes[begin, end).
int64_t product(const Sizes &sizes, size_t begin = 0, size_t end = SIZE_MAX);
/// Row-major element strides.
Sizes contiguousStrides(const Sizes &shape);
/// Strides that read `shape` as broadcast to `target` (right-aligned, 0
/// along broadcast axes and along axes the operand lacks).
Sizes broadcastStrides(const Sizes &shape, const Sizes &target);
/// Blocks of kBlock threads for one thread per item.
inline int64_t blocksFor(int64_t items) { return (items + kBlock - 1) / kBlock; }

/// The dtype a reduction or contraction accumulates in: F64 for f64 (or an
/// `acc` of f64), I64 for integers, else F32.
DType accDType(DType t, std::optional<DType> acc = std::nullopt);
/// The `acc` attribute of a contraction or conv2d, if set.
std::optional<DType> accAttr(const Op &op);

/// The geometry of conv2d and pooling in NCHW terms, whatever the layout.
struct Window {
  int64_t n, c, h, w; // input
  int64_t o, oh, ow;  // output channels and plane
  int64_t kh, kw, sh, sw, dh, dw, pt, pl;
  bool nhwc;
};
Window windowOf(const Op &op);

/// One (batched) product C = A · B of M×K by K×N matrices: a matmul, or
/// linear's x (leading dims as rows) times wᵀ.
struct MatMulShape {
  int64_t m, n, k;
  bool ta, tb;    // A stored K×M, B stored N×K
  Sizes batch;    // the output's leading dims
  Sizes aStrides; // per batch dim, in elements (0 where A broadcasts)
  Sizes bStrides;
  bool bias = false; // linear's third operand
};
MatMulShape matMulShapeOf(const Op &op);

/// Register arrays of the attention kernel are used up to this many
/// elements per lane.
inline constexpr int64_t kMaxRegisterRow = 256;

/// The extents of attention (q [..., Sq, D], k [..., Sk, D], v [..., Sk,
/// Dv]) and how its kernel maps a query row onto lanes: `pieces` lanes split
/// the depths, `splits` sets of them the keys (GenericContraction.cpp); with
/// Dv > kMaxRegisterRow (not perRow) a group owns one output element.
struct AttentionShape {
  int64_t sq = 0, sk = 0, d = 0, dv = 0;
  bool perRow = true;
  int64_t pieces = 1, splits = 1;
};
AttentionShape attentionShapeOf(const Op &op);

/// A reduction's input axes split into kept and reduced ones (sizes and
/// strides), and whether the last axis is reduced.
struct ReduceShape {
  Sizes keptDims, keptStrides, redDims, redStrides;
  bool lastReduced = false;
};
ReduceShape splitAxes(const Op &op);

/// The rows a layer_norm, rms_norm or softmax normalizes: count, length,
/// and the element stride within a row (1, or the product of the dims after
/// a softmax's axis).
struct Rows {
  int64_t count, length, inner;
};
Rows rowsOf(const Op &op);

/// How a block of kBlock threads reduces `groups` lines at a time, each with
/// `lanes` threads (powers of two). With `lanesInner` a line's lanes are
/// adjacent threads, which read neighbouring elements when a line's
/// elements are contiguous; otherwise the groups are adjacent threads, which
/// read neighbouring lines (a column reduction).
struct GroupLayout {
  int64_t groups, lanes;
  bool lanesInner;

  /// Lanes for `lines` lines of `length` elements: enough to cover a line,
  /// at most a block; when a line's elements are not contiguous, at least
  /// min(32, lines) groups, so that a warp still reads neighbouring lines.
  static GroupLayout choose(int64_t lines, int64_t length, bool elementsContiguous);
  /// Blocks for `lines` lines: one tile of `groups` lines per block.
  int64_t tiles(int64_t lines) const { return (lines + groups - 1) / groups; }
};

/// A generic kernel under construction: its kir kernel and builder, one
/// read-only pointer per operand and one per result (named for the IR
/// values), and the math of its accumulator dtype `acc` (F32, F64 or I64;
/// integers wrap, max and min propagate NaN as the pointwise ops do).
class Frame {
  kir::Kernel k; // first: the builder refers to it

public:
  Frame(const Op &op, const std::string &entry, DType acc = DType::F32);

  kir::Builder b;
  const Op &op;
  const DType acc;

  ValueId in(unsigned i) const { return inputs[i]; }
  ValueId out() const { return output; }
  ValueId index(int64_t v) { return b.index(v); }
  /// `op` of `a` and the constant `c` (so that a call builds one thing).
  ValueId arith(kir::IndexOp op, ValueId a, int64_t c, const std::string &name = "") {
    ValueId constant = index(c);
    return b.arith(op, a, constant, name);
  }
  /// for (i = start; i < end; i += step) body(i); unroll: 0 none, -1 full.
  void loop(ValueId start, int64_t end, int64_t step, const std::string &name, int unroll,
            const std::function<void(ValueId)> &body) {
    ValueId last = index(end);
    ValueId stride = index(step);
    b.forLoop(start, last, stride, name, unroll, body);
  }
  /// for (i = 0; i < end; ++i) body(i).
  void count(int64_t end, const std::string &name, int unroll,
             const std::function<void(ValueId)> &body) {
    loop(index(0), end, 1, name, unroll, body);
  }
  /// p && q, for predicates.
  ValueId both(ValueId p, ValueId q) {
    return b.math({OpKind::Where, DType::Bool, DType::Bool}, {p, q, p}, "");
  }

  /// Element `at` of operand `i`, in its compute type.
  ValueId load(unsigned i, ValueId at, const std::string &name = "");
  /// Element `at` of operand `i` converted to the accumulator dtype.
  ValueId loadAcc(unsigned i, ValueId at, const std::string &name = "");
  /// `v`, a value of dtype `t` in its compute type, converted to the
  /// accumulator dtype.
  ValueId toAcc(DType t, ValueId v);
  /// `v` (accumulator dtype) stored as element `at` of the result.
  void storeAcc(ValueId at, ValueId v);
  /// A constant of the accumulator dtype (integers: rounded toward 0).
  ValueId constant(double v, const std::string &name = "");
  /// The accumulator's lowest value: -inf, or INT64_MIN.
  ValueId lowest();
  /// `kind` (an op of Ops.def: add, mul, max, ...) over accumulator values.
  ValueId math(OpKind kind, std::vector<ValueId> args, const std::string &name = "");
  /// A comparison `kind` (lt, gt, eq, ...) of accumulator values.
  ValueId compare(OpKind kind, ValueId a, ValueId c);

  /// `base` + Σ c_k · strides[k] over the coordinates c of `flat` in the
  /// row-major space `dims` (axes of size 1 or stride 0 add nothing).
  ValueId offsetOf(ValueId flat, const Sizes &dims, const Sizes &strides,
                   ValueId base = kir::kNoValue);

  /// A register variable of the accumulator dtype holding `init` (a local
  /// array of one element, which both back ends keep in a register).
  struct Var {
    Frame &f;
    ValueId slot;
    ValueId get(const std::string &name = "") { return f.b.load(slot, f.index(0), 1, name); }
    void set(ValueId v) { f.b.store(slot, f.index(0), v); }
  };
  Var var(ValueId init, const std::string &name);

  /// Declares the shared scratch array of groupReduce (kBlock slots), in
  /// the block where it is called (the kernel's body).
  void scratchArray();
  /// The group's combined `v` (`kind`: add, max or min), which every thread
  /// of the group gets, through the shared scratch array: lane
  /// l of group g sits at g · groupStride + l · laneStride, and a tree of
  /// halving steps keeps the lower lane's value on the left of `kind`, so a
  /// NaN-propagating max stays so. Every thread of the block must reach it.
  ValueId groupReduce(ValueId v, OpKind kind, const GroupLayout &layout, ValueId group,
                      ValueId lane);
  /// This thread's group and lane in `layout`.
  std::pair<ValueId, ValueId> groupAndLane(const GroupLayout &layout);
  /// for (tile = blockIdx.x; tile < tiles; tile += gridDim.x) body(tile): a
  /// block-uniform loop, so that its body may synchronize the block.
  void tileLoop(int64_t tiles, const std::function<void(ValueId)> &body);

  /// The kernel, launched as `blocks` blocks of kBlock threads (capped at
  /// 2^31 - 1; 0 launches nothing); its comment names the op, its types and
  /// `note`, the schedule.
  KirKernel finish(const std::string &note, int64_t blocks);

private:
  std::vector<KernelArg> args;
  std::vector<ValueId> inputs;
  ValueId output = kir::kNoValue;
  ValueId scratch = kir::kNoValue;
};

// The builders, one per op family, for static shapes.
KirKernel buildElementwise(const Op &op,
                           const std::string &entry);             // pointwise, batch_norm, movement
KirKernel buildReduction(const Op &op, const std::string &entry); // reduce_*
KirKernel buildNormalization(const Op &op,
                             const std::string &entry);        // layer_norm, rms_norm, softmax
KirKernel buildMatMul(const Op &op, const std::string &entry); // matmul, linear
KirKernel buildAttention(const Op &op, const std::string &entry);
KirKernel buildWindow(const Op &op, const std::string &entry); // conv2d, max_pool2d, avg_pool2d

} // namespace fusec::generic
