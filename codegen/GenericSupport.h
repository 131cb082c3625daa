// Internal to the generic emitter (codegen/Generic*.cpp): static sizes and
// strides, index arithmetic and accumulator math rendered as C text, the
// thread layout of group reductions, and the kernel under construction.
// Every emitter here sees static shapes only (Generic.cpp checks), so sizes
// and strides are plain integers that become literals.
#pragma once

#include "codegen/GeneratedKernel.h"
#include "ir/Graph.h"

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace fusec::codegen::generic {

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
/// "12LL".
std::string lit(int64_t v);
/// "a + b", leaving out a term that is "0".
std::string sum(const std::string &a, const std::string &b);
/// The smallest power of two >= n, clamped to [lo, hi] (powers of two).
int64_t pow2Clamp(int64_t n, int64_t lo, int64_t hi);
/// Blocks of kBlock threads for one thread per item.
inline int64_t blocksFor(int64_t items) { return (items + kBlock - 1) / kBlock; }

/// The dtype a reduction or contraction accumulates in: F64 for f64 (or an
/// `acc` of f64), I64 for integers, else F32.
DType accDType(DType t, std::optional<DType> acc = std::nullopt);
/// The `acc` attribute of a contraction or conv2d, if set.
std::optional<DType> accAttr(const Op &op);
/// The C type of an accumulator dtype: float, double or long long.
std::string_view accType(DType acc);
/// `x`, a value of accumulator dtype `acc`, as the storage type of `t`.
std::string storeFromAcc(DType t, DType acc, const std::string &x);
/// Literals of an accumulator dtype: 0, the lowest and the highest value.
std::string zeroLiteral(DType acc);
std::string lowestLiteral(DType acc);
std::string highestLiteral(DType acc);
/// a + b, a * b (wrapping for I64), and max/min propagating NaN, in `acc`.
std::string addExpr(DType acc, const std::string &a, const std::string &b);
std::string mulExpr(DType acc, const std::string &a, const std::string &b);
std::string maxExpr(DType acc, const std::string &a, const std::string &b);
std::string minExpr(DType acc, const std::string &a, const std::string &b);
/// A float literal of acc's type (F32 or F64).
std::string floatLiteral(DType acc, double v);

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
/// the depths, `splits` sets of them the keys (GenericAttention.cpp); with
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

/// A row-major index space of static dims whose coordinates are C
/// variables `<prefix>0`, `<prefix>1`, ...: offset() renders a strided sum
/// and records the coordinates it needs; split() then declares exactly those.
class IndexSpace {
public:
  IndexSpace(Sizes dims, std::string prefix) : dims(std::move(dims)), prefix(std::move(prefix)) {}

  /// "base + c0 * 12LL + c2" over the axes of size > 1 with a nonzero stride;
  /// "0" when nothing is left.
  std::string offset(const Sizes &strides, int64_t base = 0);
  /// offset(), or `flat` when the strides are the space's own row-major ones
  /// (the element at the same flat index).
  std::string offsetOr(const std::string &flat, const Sizes &strides, int64_t base = 0);
  /// The name of coordinate `k`, recorded as needed.
  std::string coord(size_t k);
  /// Declarations (each line starting with `indent`) of the needed
  /// coordinates of the flat index `flat`.
  std::string split(const std::string &flat, const std::string &indent) const;
  const Sizes &sizes() const { return dims; }

private:
  Sizes dims;
  std::string prefix;
  std::set<size_t> needed;
};

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
  /// Declares `group` (the line within the tile) and `lane`, 2 spaces in.
  std::string declare() const;
  /// The group's combined value of `value` (every thread gets it), through
  /// the block's `red` scratch; `combine` is a C lambda. Every thread of the
  /// block must reach it.
  std::string reduce(const std::string &value, const std::string &combine) const;
  /// Blocks for `lines` lines: one tile of `groups` lines per block.
  int64_t tiles(int64_t lines) const { return (lines + groups - 1) / groups; }
};

/// `text` with every `$name` (letters, digits, `_`) replaced by its value in
/// `values`; a name without a value is a bug. Kernel skeletons are written
/// as such templates so that they read like the code they produce.
std::string fill(std::string_view text,
                 const std::vector<std::pair<std::string, std::string>> &values);

/// A C lambda combining two values of `acc` with the expression `expr(a, b)`.
std::string lambda(DType acc, std::string (*expr)(DType, const std::string &, const std::string &));

/// The kernel being built: its name, parameters (one pointer per operand,
/// then one per result) and, at the end, its source and launch.
class KernelBuilder {
public:
  KernelBuilder(const Op &op, const std::string &entry);

  const Op &op() const { return theOp; }
  /// The kernel's parameters: one pointer per operand, then one per result.
  const std::vector<KernelArg> &args() const { return kernel.args; }
  /// The parameter names of operand `i` and result `i`.
  const std::string &in(unsigned i) const { return inputs[i]; }
  const std::string &out(unsigned i = 0) const { return outputs[i]; }
  /// The kernel: a comment naming the op, its types and `notes`, the
  /// signature, then `body`; launched as `blocks` blocks of kBlock threads
  /// (capped at 2^31 - 1; 0 launches nothing).
  GeneratedKernel finish(const std::vector<std::string> &notes, const std::string &body,
                         int64_t blocks);

private:
  const Op &theOp;
  GeneratedKernel kernel;
  std::vector<std::string> inputs, outputs, params;
};

/// The launch of `blocks` blocks of kBlock threads (capped at 2^31 - 1; 0
/// launches nothing).
LaunchConfig genericLaunch(int64_t blocks);

/// for (i = thread; i < count; i += all threads) { body }: `body` is
/// statements indented by 4 spaces.
std::string gridStrideLoop(int64_t count, const std::string &body);
/// for (tile = blockIdx.x; tile < tiles; tile += gridDim.x) { body }: a
/// block-uniform loop, so that its body may synchronize the block.
std::string tileLoop(int64_t tiles, const std::string &body);

// The emitters, one per op family (Generic*.cpp), for static shapes.
GeneratedKernel emitReduction(KernelBuilder &k);        // reduce_*
GeneratedKernel emitRowNormalization(KernelBuilder &k); // layer_norm, rms_norm, softmax
GeneratedKernel emitMatMul(KernelBuilder &k);           // matmul, linear
GeneratedKernel emitAttention(KernelBuilder &k);
GeneratedKernel emitWindow(KernelBuilder &k); // conv2d, max_pool2d, avg_pool2d

} // namespace fusec::codegen::generic
