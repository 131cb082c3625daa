// Internal to the generic kernels: static sizes and strides, and the frame
// every generic kernel is built in (its parameters, accumulator math,
// offsets, loops, the launch). Every builder sees static shapes only (buildGeneric checks), so
// sizes and strides are plain integers that become kir constants.
#pragma once

#include "codegen/templates/Index.h"
#include "codegen/templates/Template.h"
#include "ir/Graph.h"

#include <cmath>
#include <string>
#include <vector>

namespace fusec::generic {

using kir::IndexOp;
using kir::ValueId;
using templates::coordinates;
using templates::gridStrideLoop;
using templates::KirKernel;
using templates::stridedOffset;
using Sizes = std::vector<int64_t>;

/// Threads per block of every generic kernel.
inline constexpr int64_t kBlock = 256;

/// The sizes of a value whose shape is static.
inline Sizes sizesOf(const Value &v) { return staticSizes(v.type().shape); }
/// Product of sizes[begin, end).
int64_t product(const Sizes &sizes, size_t begin = 0, size_t end = SIZE_MAX);
using templates::contiguousStrides;
/// Strides that read `shape` as broadcast to `target` (right-aligned, 0
/// along broadcast axes and along axes the operand lacks).
Sizes broadcastStrides(const Sizes &shape, const Sizes &target);
/// Whether `strides` over `dims` read the element at the flat index itself.
bool isRowMajor(const Sizes &dims, const Sizes &strides);
/// The axes `strides` over `dims` move along (size above 1, stride not 0).
std::vector<unsigned> movingAxes(const Sizes &dims, const Sizes &strides);
/// Blocks of kBlock threads for one thread per item.
inline int64_t blocksFor(int64_t items) { return (items + kBlock - 1) / kBlock; }

/// A generic kernel under construction: its kir kernel and builder, one
/// read-only pointer per operand and one per result (named for the IR
/// values), and the math of its accumulator dtype `acc`: F64 for f64 (or an
/// `acc` attribute of f64), I64 for integers (wrapping), else F32, by the
/// result's dtype (top_k's: its operand's, the values it compares); max and
/// min propagate NaN as the pointwise ops do.
class Frame {
  kir::Kernel k; // first: the builder refers to it

public:
  Frame(const Op &op, const std::string &entry);

  kir::Builder b;
  const Op &op;
  const DType acc;

  ValueId in(unsigned i) const { return params[i]; }
  ValueId out() const { return params[op.numOperands()]; }
  ValueId index(int64_t v) { return b.index(v); }
  /// `op` of `a` and the constant `c` (so that a call builds one thing).
  ValueId arith(IndexOp op, ValueId a, int64_t c, const std::string &name = "") {
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

  /// Element `at` of operand `i` converted to the accumulator dtype.
  ValueId loadAcc(unsigned i, ValueId at, const std::string &name = "");
  /// `x`, an element of dtype `t` as memory holds it, converted to the accumulator dtype.
  ValueId toAcc(DType t, ValueId x, const std::string &name = "");
  /// `v` (accumulator dtype) converted to the result's dtype as memory holds it.
  ValueId fromAcc(ValueId v);
  /// `v` (accumulator dtype) stored as element `at` of the result.
  void storeAcc(ValueId at, ValueId v);
  /// A constant of the accumulator dtype (integers: rounded toward 0).
  ValueId constant(double v, const std::string &name = "") { return b.literal(acc, v, name); }
  /// The accumulator's lowest value: -inf, or INT64_MIN.
  ValueId lowest() { return constant(-HUGE_VAL, "lowest"); }
  /// `kind` (an op of Ops.def: add, mul, max, ...) over accumulator values.
  ValueId math(OpKind kind, std::vector<ValueId> args, const std::string &name = "") {
    return b.math({kind, acc, acc}, args, name);
  }
  /// A comparison `kind` (lt, gt, eq, ...) of accumulator values.
  ValueId compare(OpKind kind, ValueId a, ValueId c) {
    return b.math({kind, acc, DType::Bool}, {a, c}, "");
  }

  /// The terms (axis, stride constant) of a strided offset over `dims`.
  std::vector<std::pair<unsigned, ValueId>> terms(const Sizes &dims, const Sizes &strides);
  /// `base` + Σ c_k · strides[k] over the coordinates c of `flat` in the
  /// row-major space `dims` (axes of size 1 or stride 0 add nothing).
  ValueId offsetOf(ValueId flat, const Sizes &dims, const Sizes &strides,
                   ValueId base = kir::kNoValue);

  /// Element `at` of a register or shared array of the accumulator dtype.
  struct Var {
    Frame &f;
    ValueId array, at;
    ValueId get(const std::string &name = "") { return f.b.load(array, at, 1, name); }
    void set(ValueId v) { f.b.store(array, at, v); }
    /// The element becomes `kind`(element, x).
    void combine(OpKind kind, ValueId x) {
      ValueId old = get();
      set(f.math(kind, {old, x}));
    }
    /// The element becomes element + x · y.
    void addProduct(ValueId x, ValueId y) {
      ValueId old = get();
      ValueId product = f.math(OpKind::Mul, {x, y});
      set(f.math(OpKind::Add, {old, product}));
    }
  };
  /// A register variable holding `init`: a local array of one element,
  /// which both back ends keep in a register.
  Var var(ValueId init, const std::string &name);
  Var element(ValueId array, ValueId at) { return {*this, array, at}; }

  /// body(i) for each of `numel` output elements i, over a grid-stride loop.
  void forEachElement(int64_t numel, const std::function<void(ValueId i)> &body);
  /// for (tile = blockIdx.x; tile < tiles; tile += gridDim.x) body(tile): a
  /// block-uniform loop, so that its body may synchronize the block.
  void tileLoop(int64_t tiles, const std::function<void(ValueId)> &body);

  /// The kernel, launched as `blocks` blocks of kBlock threads (capped at
  /// 2^31 - 1; 0 launches nothing); its comment names the op, its types and
  /// `note`, the schedule.
  KirKernel finish(const std::string &note, int64_t blocks);

private:
  std::vector<KernelArg> args;
  std::vector<ValueId> params; // one per entry of args
};

// The builders, one per op family, for static shapes: pointwise ops,
// batch_norm and movement ops (a transpose that moves the last axis tiled); reduce_*; layer_norm,
// rms_norm and softmax; matmul and linear; attention; conv2d (a depthwise one vectorized) and
// pooling.
KirKernel buildElementwise(const Op &op, const std::string &entry);
/// Whether `op` is a transpose of static shapes that moves the input's last axis (after merging
/// axes that move together): buildTiledTranspose's (Note [Tiled transpose]).
bool isTiledTranspose(const Op &op);
KirKernel buildTiledTranspose(const Op &op, const std::string &entry);
KirKernel buildReduction(const Op &op, const std::string &entry);
KirKernel buildNormalization(const Op &op, const std::string &entry);
KirKernel buildMatMul(const Op &op, const std::string &entry);
KirKernel buildAttention(const Op &op, const std::string &entry);
KirKernel buildWindow(const Op &op, const std::string &entry);
/// Whether `op` is a depthwise conv2d (a group a channel, one output channel each) of static
/// shapes over an NHWC input: buildDepthwise's (Note [Depthwise convolution]).
bool isDepthwise(const Op &op);
KirKernel buildDepthwise(const Op &op, const std::string &entry);
/// cumsum: a thread per line along the axis, summing serially (Scan.cpp).
KirKernel buildScan(const Op &op, const std::string &entry);
/// top_k: a block per line, k passes of a block-wide arg-reduction (TopK.cpp).
KirKernel buildTopK(const Op &op, const std::string &entry);

} // namespace fusec::generic
