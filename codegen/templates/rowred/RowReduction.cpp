// The row_reduction template's kir builder: one kernel for a body of pointwise prologue ops,
// reductions or normalizations over one block of axes (reduce_sum/max/min/mean/prod, layer_norm,
// rms_norm, softmax) and pointwise epilogue ops, with any number of results. The body is a program
// over the view [outer, reduced, inner] of the first reduction's input (Program.cpp), run as its
// schedule says (Schedule.cpp); docs/codegen-row-reduction.md gives the algorithm and measurements.
//
// On the row path a row is loaded once, by vectors, into registers (local arrays indexed by fully
// unrolled loops, which both back ends promote) that every later pass over it works on; the column
// path runs a thread per (outer, inner) position, looping over the reduced extent.
//
// Kernel arguments, in order: one read-only pointer per kernel operand, one pointer per result,
// then `num_rows`, the product of the outer dims (its value set when static; the launch is set then
// too). Only the reduced and inner extents must be static: one kernel serves every batch.
//
// Note [Rows past the last]
// When a block runs several rows, its last rows may lie past the tensor: they compute on the last
// row (`row` is clamped) and only their stores are guarded. A guard around every vector let LLVM
// carry the held values through the guards' merges and compute on them there, keeping the row in
// registers twice (LayerNorm+GeLU f16 rows of 1024: 96 registers and a spill on sm_90a, 16% slower
// than NVRTC's; unguarded, 56 registers). A row past the last takes part in its own group's
// shuffles only, so it changes no live row. (Skipping a whole warp-row past the last instead, one
// guard around the row: LLVM's strength reduction then kept a 64-bit pointer per access across the
// row loop, and f16 rows of 1024 spilled on sm_90a.)
//
// Limits: vector access needs f32/f16/bf16 operands and results (others go element by element); a
// row of up to 2^31 - 1 elements; the column path does one thread's loop per position, so few
// positions with a long reduced extent run slowly. NVRTC time grows with the unrolled elements a
// thread (Note [Row reduction unrolling] in Schedule.cpp).
#include "codegen/templates/rowred/RowReduction.h"

#include "codegen/templates/Index.h"
#include "codegen/templates/rowred/Plan.h"
#include "ir/Assert.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace fusec::rowred {

namespace {

using kir::kNoValue;
using kir::ValueId;

/// "v_x" -> "x": the IR-derived part of a node's name.
std::string stem(const std::string &name) {
  return name.rfind("v_", 0) == 0 ? name.substr(2) : name;
}

// Static rows: one block per group of rows (per 256 positions on the column path), at most 2^31 - 1
// blocks; the kernel loops over the rest.
std::optional<LaunchConfig> launchOf(const Program &prog, const Schedule &sched) {
  if (!prog.view.outer)
    return std::nullopt;
  int64_t work = *prog.view.outer, perBlock = sched.rowsPerBlock;
  if (sched.mode == Mode::Column)
    work *= prog.view.inner;
  LaunchConfig launch;
  launch.grid[0] = unsigned(std::clamp<int64_t>((work + perBlock - 1) / perBlock, 1, 0x7fffffff));
  launch.block[0] = sched.mode == Mode::Column ? sched.blockThreads() : sched.threads;
  launch.block[1] = sched.mode == Mode::Column ? 1 : sched.rowsPerBlock;
  return launch;
}

/// One element of a pass: its place in the current vector, the first element of that vector, the
/// register slot of the thread's vector, and the values evaluated for it so far.
struct Element {
  unsigned sweep = 0;
  ValueId col = kNoValue, vectorCol = kNoValue, w = kNoValue, slotBase = kNoValue;
  ValueId slot = kNoValue;
  std::map<unsigned, ValueId> values = {};
};

class KernelBuilder {
public:
  KernelBuilder(const Op &kernel, const Program &prog, const Schedule &sched)
      : kernel(kernel), prog(prog), sched(sched), b(k), value(prog.nodes.size(), kNoValue) {}

  templates::KirKernel run(const std::string &entry) {
    k.name = entry;
    k.comment = {entry + ": row_reduction kernel over " + describe(prog.view),
                 "fuses: " + prog.fused, "schedule: " + describeSchedule(sched)};
    k.maxThreads = sched.blockThreads();
    k.minBlocks = sched.minBlocks;
    declareParams();
    for (unsigned i = 0; i < prog.nodes.size(); ++i) {
      const Node &n = prog.nodes[i];
      if (n.kind == NodeKind::Table)
        tables[i] = b.table(n.table, *n.constant);
      if (n.kind == NodeKind::Reduce && sched.threads > 32)
        scratch[i] = b.sharedArray(n.type, 32, "red_" + stem(n.name), dtypeSize(n.type));
    }
    for (unsigned i = 0; i < prog.nodes.size(); ++i)
      if (isHoisted(prog.nodes[i]))
        value[i] = rowValue(i);
    loopOverRows();
    return {std::move(k), args, launchOf(prog, sched), describeSchedule(sched)};
  }

private:
  bool isHoisted(const Node &n) const {
    return n.mask == 0 && n.level == 0 && n.kind != NodeKind::Reduce;
  }
  /// Whether node `i` is a reduction taking in its elements in sweep `s`.
  bool reducesIn(unsigned i, unsigned s) const {
    return prog.nodes[i].kind == NodeKind::Reduce && sweepOf(prog, i) == s;
  }
  /// Whether `st` stores an element at a time, in sweep `s`.
  bool storesIn(const Store &st, unsigned s) const {
    return (st.mask & Reduced) && prog.nodes[st.node].level == s;
  }
  unsigned outArg(const Store &st) const { return kernel.numOperands() + st.result; }
  ValueId cast(DType from, DType to, ValueId x, const std::string &name = "") {
    return from == to ? x : b.math({OpKind::Cast, from, to}, {x}, name);
  }

  // The kernel's arguments, in the order above, and their kir parameters.
  void declareParams() {
    Namer names;
    for (unsigned j = 0; j < kernel.numOperands(); ++j)
      args.push_back(
          {KernelArg::Kind::Input, names.fresh("in_", kernel.operand(j)->name()), j, 0, {}});
    for (unsigned j = 0; j < kernel.numResults(); ++j)
      args.push_back(
          {KernelArg::Kind::Output, names.fresh("out_", kernel.result(j)->name()), j, 0, {}});
    args.push_back({KernelArg::Kind::NumRows, "num_rows", 0, 0, prog.view.outer});
    params = templates::declareParams(b, kernel, args);
    numRows = params.back();
  }

  // Row path: a block a row, or rows of `threads` lanes a block (tid.y the row in the block,
  // clamped: Note [Rows past the last]); column path: a grid-stride loop over positions.
  void loopOverRows() {
    if (sched.mode == Mode::Column) {
      ValueId extent = b.index(prog.view.inner);
      ValueId positions = b.mul(numRows, extent, "num_positions");
      return templates::gridStrideLoop(b, positions, [&](ValueId pos) {
        row = b.arith(kir::IndexOp::Div, pos, extent, "row");
        inner = b.arith(kir::IndexOp::Rem, pos, extent, "inner");
        rowBody();
      });
    }
    lane = b.special(kir::Special::TidX);
    ValueId block = b.special(kir::Special::CtaidX), blocks = b.special(kir::Special::NctaidX);
    if (sched.rowsPerBlock == 1)
      return b.forLoop(block, numRows, blocks, "row", 0, [&](ValueId r) {
        row = r;
        rowBody();
      });
    ValueId rows = b.index(sched.rowsPerBlock);
    ValueId start = b.mul(block, rows);
    ValueId step = b.mul(blocks, rows);
    b.forLoop(start, numRows, step, "first", 0, [&](ValueId first) {
      ValueId rowId = b.add(first, b.special(kir::Special::TidY), "row_id");
      live = b.arith(kir::IndexOp::Lt, rowId, numRows, "live");
      ValueId last = b.arith(kir::IndexOp::Sub, numRows, b.index(1));
      row = b.math({OpKind::Min, DType::I64, DType::I64}, {rowId, last}, "row");
      rowBody();
    });
  }

  // A row: its held slots, then level by level its per-row values and the pass at the level.
  void rowBody() {
    rowIndices.clear();
    for (unsigned i = 0; i < prog.nodes.size(); ++i) {
      const Node &n = prog.nodes[i];
      if (n.held)
        held[i] =
            b.localArray(kir::storageType(n.type), sched.vectors * sched.vec, "h_" + stem(n.name));
      if (n.kind == NodeKind::Load || n.kind == NodeKind::Table)
        rowIndex(n.mask);
    }
    for (const Store &s : prog.stores)
      rowIndex(s.mask);
    for (unsigned level = 0; level <= prog.maxLevel; ++level) {
      rowScope(level);
      if (sched.sweep[level])
        sweep(level);
    }
  }

  // The per-row values of `level`, and the per-row results among them, stored once, by the row's
  // first thread.
  void rowScope(unsigned level) {
    for (unsigned i = 0; i < prog.nodes.size(); ++i) {
      const Node &n = prog.nodes[i];
      if (!n.isElementwise() && !isHoisted(n) && n.kind != NodeKind::Reduce && n.level == level)
        value[i] = rowValue(i);
    }
    ValueId first = kNoValue;
    for (const Store &s : prog.stores) {
      if ((s.mask & Reduced) || prog.nodes[s.node].level != level)
        continue;
      if (first == kNoValue && sched.threads > 1)
        first = b.less(lane, b.index(1));
      ValueId index = rowIndex(s.mask);
      ValueId y = b.narrow(s.dtype, value[s.node]);
      ValueId out = params[outArg(s)];
      guarded(live, [&] { guarded(first, [&] { b.store(out, index, y); }); });
    }
  }

  // A value constant along the reduced axes, in the row's scope.
  ValueId rowValue(unsigned i) {
    std::vector<ValueId> a;
    for (unsigned arg : prog.nodes[i].args)
      a.push_back(value[arg]);
    return compute(i, a, nullptr);
  }

  // Pass `s` over the row: its reductions' accumulators start at their identity (0, 1, or -inf and
  // +inf: the least and greatest i64), take in every element, and combine across the row's threads.
  void sweep(unsigned s) {
    for (unsigned i = 0; i < prog.nodes.size(); ++i) {
      const Node &n = prog.nodes[i];
      if (!reducesIn(i, s))
        continue;
      acc[i] = b.localArray(n.type, 1, n.name);
      bool isMax = n.reduce == OpKind::Max;
      double identity = n.reduce == OpKind::Add   ? 0
                        : n.reduce == OpKind::Mul ? 1
                        : isMax                   ? -INFINITY
                                                  : INFINITY;
      ValueId init = b.literal(n.type, identity, n.name);
      b.store(acc[i], b.index(0), init);
    }
    passLoop([&](ValueId q, ValueId slotBase) { vectorBody(s, q, slotBase); });
    for (unsigned i = 0; i < prog.nodes.size(); ++i) {
      const Node &n = prog.nodes[i];
      if (!reducesIn(i, s))
        continue;
      ValueId v = b.load(acc[i], b.index(0), 1, n.name);
      if (sched.threads > 1)
        v = sched.threads <= 32 ? warpReduce(n, v, sched.threads) : blockReduce(i, v);
      value[i] = v;
    }
  }

  // The thread's vectors of the row, as `vector(q, slotBase)`: q the vector (of the row), slotBase
  // its first register slot (register path only).
  void passLoop(const std::function<void(ValueId, ValueId)> &vector) {
    ValueId zero = b.index(0), one = b.index(1);
    ValueId numVectors = b.index(prog.view.reduced / sched.vec);
    if (sched.mode == Mode::Column) // unrolled 4 times, as long rows of f32 softmax spilled less
      return b.forLoop(zero, numVectors, one, "col", 4, [&](ValueId q) { vector(q, kNoValue); });
    ValueId threads = b.index(sched.threads);
    if (sched.mode == Mode::Loop)
      return b.forLoop(lane, numVectors, threads, "q", 4, [&](ValueId q) { vector(q, kNoValue); });
    bool overrun = int64_t(sched.vectors) * sched.threads != prog.view.reduced / sched.vec;
    auto thread = [&](ValueId v) {
      bool first = b.constantOf(v) == 0;
      ValueId q = sched.threads == 1 ? v : first ? lane : b.add(b.mul(v, threads), lane, "q");
      ValueId slotBase = sched.vec == 1 || first ? v : b.mul(v, b.index(sched.vec));
      guarded(overrun ? b.less(q, numVectors) : kNoValue, [&] { vector(q, slotBase); });
    };
    if (sched.vectors == 1)
      return thread(zero);
    b.forLoop(zero, b.index(sched.vectors), one, "v", -1, thread);
  }

  // One vector of the row: its operands' loads, each of its elements, its results' stores.
  void vectorBody(unsigned s, ValueId q, ValueId slotBase) {
    Element e{.sweep = s, .vectorCol = q, .slotBase = slotBase};
    if (sched.vec == 1) {
      e.col = q;
      e.slot = slotBase;
      return elementBody(e);
    }
    std::set<unsigned> needed;
    for (unsigned i = 0; i < prog.nodes.size(); ++i) {
      const Node &n = prog.nodes[i];
      if (reducesIn(i, s) || (n.held && n.level == s))
        collect(n.kind == NodeKind::Reduce ? n.args[0] : i, s, needed);
    }
    for (const Store &st : prog.stores)
      if (storesIn(st, s))
        collect(st.node, s, needed);
    e.vectorCol = b.mul(q, b.index(sched.vec), "col");
    for (unsigned i : needed) {
      const Node &n = prog.nodes[i];
      if (n.kind != NodeKind::Load || (n.held && n.level < s))
        continue;
      ValueId stored = b.localArray(kir::storageType(n.dtype), sched.vec, "x_" + stem(n.name));
      ValueId at = offsetInRow(n.mask, e.vectorCol);
      ValueId x = b.load(params[n.input], at, sched.vec);
      b.store(stored, b.index(0), x, sched.vec);
      vectorIn[i] = isNarrowFloat(n.dtype) ? convertPairs(n.dtype, stored, true) : stored;
    }
    for (unsigned j = 0; j < prog.stores.size(); ++j) {
      const Store &st = prog.stores[j];
      DType t = isNarrowFloat(st.dtype) ? DType::F32 : kir::storageType(st.dtype);
      if (storesIn(st, s))
        vectorOut[j] = b.localArray(t, sched.vec, "y_" + stem(args[outArg(st)].name));
    }
    ValueId one = b.index(1);
    ValueId vec = b.index(sched.vec);
    ValueId zero = b.index(0);
    b.forLoop(zero, vec, one, "w", -1, [&](ValueId w) {
      Element element = e;
      element.w = w;
      elementBody(element);
    });
    for (unsigned j = 0; j < prog.stores.size(); ++j) {
      const Store &st = prog.stores[j];
      if (!storesIn(st, s))
        continue;
      ValueId at = offsetInRow(st.mask, e.vectorCol);
      ValueId packed =
          isNarrowFloat(st.dtype) ? convertPairs(st.dtype, vectorOut[j], false) : vectorOut[j];
      ValueId y = b.load(packed, b.index(0), sched.vec);
      ValueId out = params[outArg(st)];
      guarded(live, [&] { b.store(out, at, y, sched.vec); });
    }
  }

  /// Node `i` and what it reads in the element body of sweep `s`.
  void collect(unsigned i, unsigned s, std::set<unsigned> &needed) const {
    const Node &n = prog.nodes[i];
    if (!n.isElementwise() || !needed.insert(i).second || (n.held && n.level < s))
      return;
    for (unsigned a : n.args)
      collect(a, s, needed);
  }

  // An element: the reductions of the sweep take it in, held values are kept, results of the sweep
  // stored (vector path: into the vector's array).
  void elementBody(Element &e) {
    for (unsigned i = 0; i < prog.nodes.size(); ++i) {
      const Node &n = prog.nodes[i];
      if (reducesIn(i, e.sweep)) {
        ValueId x = need(n.args[0], e);
        x = cast(prog.nodes[n.args[0]].type, n.type, x);
        ValueId zero = b.index(0);
        ValueId sum = b.load(acc[i], zero, 1, n.name);
        b.store(acc[i], zero, combineValues(n, sum, x));
      } else if (n.held && n.level == e.sweep) {
        need(i, e);
      }
    }
    for (unsigned j = 0; j < prog.stores.size(); ++j) {
      const Store &st = prog.stores[j];
      if (!storesIn(st, e.sweep))
        continue;
      ValueId x = need(st.node, e);
      // A narrow float vector is narrowed in pairs, by convertPairs.
      ValueId y = sched.vec > 1 && isNarrowFloat(st.dtype) ? x : b.narrow(st.dtype, x);
      if (sched.vec > 1) {
        b.store(vectorOut[j], e.w, y);
        continue;
      }
      ValueId at = offsetInRow(st.mask, elementIndex(st.mask, e));
      ValueId out = params[outArg(st)];
      guarded(live, [&] { b.store(out, at, y); });
    }
  }

  // Node `i` for element `e`, after what it reads: a value of an earlier sweep from its register
  // slot, else computed (and kept when held).
  ValueId need(unsigned i, Element &e) {
    const Node &n = prog.nodes[i];
    if (!n.isElementwise())
      return value[i];
    if (auto it = e.values.find(i); it != e.values.end())
      return it->second;
    if (n.held && e.slot == kNoValue)
      e.slot = sched.vec == 1 ? e.slotBase : b.add(e.slotBase, e.w, "slot");
    ValueId v;
    if (n.held && n.level < e.sweep) {
      bool wide = kir::storageType(n.type) == n.type;
      ValueId x = b.load(held[i], e.slot, 1, wide ? n.name : "");
      v = b.widen(n.type, x, n.name);
    } else {
      std::vector<ValueId> a;
      for (unsigned arg : n.args)
        a.push_back(need(arg, e));
      v = compute(i, a, &e);
      if (n.held)
        b.store(held[i], e.slot, b.narrow(n.type, v));
    }
    return e.values[i] = v;
  }

  // Node `i` over the values `a` of its args: for element `e`, or in the row's scope when null.
  ValueId compute(unsigned i, const std::vector<ValueId> &a, Element *e) {
    const Node &n = prog.nodes[i];
    FUSEC_ASSERT(n.kind != NodeKind::Reduce, "a reduction is not computed from its input");
    if (n.kind == NodeKind::Expr)
      return exprValue(n, a);
    if (n.kind == NodeKind::Splat)
      return b.literal(*n.constant, n.name);
    if (!e)
      return loadLeaf(i, rowIndex(n.mask));
    if (n.kind == NodeKind::Load && sched.vec > 1) {
      // A narrow float was widened in pairs, by convertPairs.
      bool widened = isNarrowFloat(n.dtype);
      std::string name = widened || kir::storageType(n.dtype) == n.type ? n.name : "";
      ValueId x = b.load(vectorIn[i], e->w, 1, name);
      return widened ? x : b.widen(n.dtype, x, n.name);
    }
    return loadLeaf(i, offsetInRow(n.mask, elementIndex(n.mask, *e)));
  }

  ValueId exprValue(const Node &n, const std::vector<ValueId> &a) {
    DType t = n.type;
    double rowLength = double(prog.view.reduced);
    auto math = [&](OpKind kind, std::vector<ValueId> operands, const std::string &name = "") {
      return b.math({kind, t, t}, operands, name);
    };
    switch (n.expr) {
    case ExprKind::Math:
      return b.math(n.math, a, n.name);
    case ExprKind::Convert:
      return cast(prog.nodes[n.args[0]].type, t, a[0], n.name);
    case ExprKind::Mean: { // an integer mean: the wrapped sum, divided as an integer
      ValueId sum = cast(prog.nodes[n.args[0]].type, t, a[0]);
      return math(OpKind::Div, {sum, b.literal(t, rowLength, "")}, n.name);
    }
    case ExprKind::Rstd: { // 1 / sqrt(sum / N + epsilon)
      ValueId variance = math(OpKind::Div, {a[0], b.literal(t, rowLength, "")});
      ValueId shifted = math(OpKind::Add, {variance, b.literal(t, n.epsilon, "")});
      ValueId deviation = math(OpKind::Sqrt, {shifted});
      return math(OpKind::Div, {b.literal(t, 1, ""), deviation}, n.name);
    }
    case ExprKind::Normalize:
    case ExprKind::RmsNormalize: {
      bool isRms = n.expr == ExprKind::RmsNormalize;
      size_t p = isRms ? 2 : 3; // gamma and beta follow
      ValueId x = isRms ? a[0] : math(OpKind::Sub, {a[0], a[1]});
      ValueId y = math(OpKind::Mul, {x, a[p - 1]}, a.size() > p ? "" : n.name);
      if (a.size() > p)
        y = math(OpKind::Mul, {y, a[p]}, a.size() > p + 1 ? "" : n.name);
      return a.size() > p + 1 ? math(OpKind::Add, {y, a[p + 1]}, n.name) : y;
    }
    case ExprKind::ExpDifference: { // exp to the precision of the result's dtype
      ValueId d = math(OpKind::Sub, {a[0], a[1]});
      return b.math({OpKind::Exp, n.dtype, n.dtype}, {d}, n.name);
    }
    case ExprKind::Reciprocal:
      return math(OpKind::Div, {b.literal(t, 1, ""), a[0]}, n.name);
    }
    FUSEC_ASSERT(false, "unknown expression kind");
  }

  // Load or table node `i` at `at`, widened to its compute type.
  ValueId loadLeaf(unsigned i, ValueId at) {
    const Node &n = prog.nodes[i];
    if (n.kind == NodeKind::Table) {
      ValueId table = b.tableAddress(tables.at(i));
      return b.load(table, at, 1, n.name);
    }
    // A load that needs no widening carries the value's name.
    std::string name = kir::storageType(n.dtype) == kir::computeType(n.dtype) ? n.name : "";
    ValueId x = b.load(params[n.input], at, 1, name);
    return b.widen(n.dtype, x, n.name);
  }

  // The offset of the row's first element in an operand spanning `mask`.
  ValueId rowIndex(unsigned mask) {
    if (!(mask & (Outer | Inner)))
      return b.index(0);
    if (auto it = rowIndices.find(mask); it != rowIndices.end())
      return it->second;
    ValueId index = kNoValue;
    if (mask & Outer) {
      int64_t stride =
          ((mask & Reduced) ? prog.view.reduced : 1) * ((mask & Inner) ? prog.view.inner : 1);
      index = stride == 1 ? row : b.mul(row, b.index(stride));
    }
    if (mask & Inner)
      index = index == kNoValue ? inner : b.add(index, inner);
    return rowIndices[mask] = index;
  }

  /// rowIndex(mask) + `offset`.
  ValueId offsetInRow(unsigned mask, ValueId offset) {
    ValueId first = rowIndex(mask);
    return b.constantOf(first) == 0 ? offset : b.add(first, offset);
  }

  /// The element's offset from its row's first (`mask` has Reduced): the column, times the inner
  /// extent on the column path.
  ValueId elementIndex(unsigned mask, Element &e) {
    if (e.col == kNoValue)
      e.col = b.add(e.vectorCol, e.w, "col");
    if (!(mask & Inner) || prog.view.inner == 1)
      return e.col;
    return b.mul(e.col, b.index(prog.view.inner));
  }

  // The vector `values` of f16 or bf16 elements widened to f32 (`widen`), or of f32 elements
  // narrowed to `t`, two at a time: a 32-bit word a pair (a bf16 pair widens in two instructions,
  // an f32 pair narrows in one cvt.rn.f16x2.f32, where element by element takes twice as many).
  ValueId convertPairs(DType t, ValueId values, bool widen) {
    std::string name = k.values[values].name + (widen ? "_f32" : "_" + std::string(dtypeName(t)));
    ValueId converted = b.localArray(widen ? DType::F32 : t, sched.vec, name);
    ValueId two = b.index(2);
    ValueId vec = b.index(sched.vec);
    ValueId zero = b.index(0);
    b.forLoop(zero, vec, two, "p", -1, [&](ValueId p) {
      ValueId pair = b.load(values, p, 2);
      ValueId c = widen ? b.widen(t, pair, "") : b.narrow(t, pair);
      b.store(converted, p, c, 2);
    });
    return converted;
  }

  // `build` under `cond`, unless that is kNoValue. Stores run under `live`: rows past the last
  // store nothing (Note [Rows past the last]).
  void guarded(ValueId cond, const std::function<void()> &build) {
    if (cond == kNoValue)
      return build();
    b.ifThenElse(cond, build);
  }

  ValueId combineValues(const Node &n, ValueId a, ValueId c) {
    return b.math({n.reduce, n.type, n.type}, {a, c}, "");
  }

  // Xor shuffles: every lane of each group of `width` gets the group's total.
  ValueId warpReduce(const Node &n, ValueId v, unsigned width) {
    for (unsigned offset = width >> 1; offset > 0; offset >>= 1) {
      ValueId other = b.shuffle(kir::ShuffleMode::Xor, v, b.index(offset), 32);
      v = combineValues(n, v, other);
    }
    return v;
  }

  // Each warp's total through 32 shared slots. Up to 8 warps every thread combines the partials
  // itself (broadcast reads, in one order, so every thread gets the same total): fewer instructions
  // than a second round of shuffles; more warps (16 or 32) shuffle the slots within groups of as
  // many lanes. The slots are aligned to their element only: read as one vector, their four aligned
  // registers spilled the LayerNorm+GeLU f16 8192 block (96 registers) on sm_90a.
  ValueId blockReduce(unsigned i, ValueId v) {
    const Node &n = prog.nodes[i];
    unsigned warps = sched.threads / 32;
    v = warpReduce(n, v, 32);
    ValueId warpSize = b.index(32);
    ValueId laneInWarp = b.arith(kir::IndexOp::Rem, lane, warpSize, "lane_in_warp");
    ValueId warp = b.arith(kir::IndexOp::Div, lane, warpSize, "warp");
    ValueId first = b.less(laneInWarp, b.index(1));
    b.ifThenElse(first, [&] { b.store(scratch[i], warp, v); });
    b.barrier();
    if (warps <= 8) {
      v = b.load(scratch[i], b.index(0));
      for (unsigned w = 1; w < warps; ++w) {
        ValueId partial = b.load(scratch[i], b.index(w));
        v = combineValues(n, v, partial);
      }
    } else {
      ValueId slot =
          warps == 32 ? laneInWarp : b.arith(kir::IndexOp::Rem, laneInWarp, b.index(warps));
      v = warpReduce(n, b.load(scratch[i], slot), warps);
    }
    // Scratch written again before another barrier needs one after the reads; with two or more
    // reductions a row, the barrier of each one orders that.
    auto isReduce = [](const Node &x) { return x.kind == NodeKind::Reduce; };
    if (std::count_if(prog.nodes.begin(), prog.nodes.end(), isReduce) == 1)
      b.barrier();
    return v;
  }

  const Op &kernel;
  const Program &prog;
  const Schedule &sched;
  kir::Kernel k;
  kir::Builder b;
  std::vector<KernelArg> args;
  std::vector<ValueId> params; // by KernelArg index
  ValueId numRows = kNoValue, lane = kNoValue, live = kNoValue;
  ValueId row = kNoValue, inner = kNoValue;
  std::map<unsigned, ValueId> rowIndices; // by mask, in the row's scope
  std::vector<ValueId> value;             // hoisted, per-row and reduced nodes
  // By node (by store for vectorOut):
  std::map<unsigned, ValueId> held;      // held nodes: their slots (a local array a row)
  std::map<unsigned, ValueId> acc;       // reductions: the accumulator (a local array of one)
  std::map<unsigned, ValueId> scratch;   // block reductions: 32 shared slots
  std::map<unsigned, ValueId> vectorIn;  // loads: the current vector's elements (a local array)
  std::map<unsigned, ValueId> vectorOut; // elementwise stores: the current vector's elements
  std::map<unsigned, unsigned> tables;   // table nodes: their kir table
};

} // namespace

std::optional<templates::KirKernel> buildRowReduction(const Op &kernel, const std::string &entry,
                                                      Diagnostics &diags) {
  FUSEC_ASSERT(kernel.kind() == OpKind::Kernel && kernel.body(), "not a kernel op");
  FUSEC_ASSERT(kernel.getString("template") == "row_reduction", "not a row_reduction kernel");
  std::optional<Program> prog = buildProgram(kernel, entry, diags);
  if (!prog)
    return std::nullopt;
  Schedule sched = chooseSchedule(*prog);
  return KernelBuilder(kernel, *prog, sched).run(entry);
}

} // namespace fusec::rowred
