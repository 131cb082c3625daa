// The row_reduction plan: the body of a `kernel` op as a small dataflow program over one view of
// the anchor's input (Program.cpp), and the schedule that runs it (Schedule.cpp). RowReduction.cpp
// builds the kernel in kir from both.
#pragma once

#include "codegen/kir/Kir.h"
#include "ir/Diagnostics.h"
#include "ir/Graph.h"

#include <optional>
#include <string>
#include <vector>

namespace fusec::rowred {

/// The axis groups of the view [outer, reduced, inner] of the anchor's input; a node's mask has a
/// group's bit when its value varies along it.
enum GroupBit : unsigned { Outer = 1, Reduced = 2, Inner = 4 };

/// The anchor's input seen as [outer, reduced, inner]: axes [begin, end) are reduced. The reduced
/// and inner extents are static; outer may not be.
struct View {
  Shape shape;
  DType dtype = DType::F32;
  unsigned begin = 0, end = 0;
  int64_t reduced = 1, inner = 1;
  std::optional<int64_t> outer = {};

  bool isRowPath() const { return end == shape.size(); }
};

enum class NodeKind { Load, Table, Splat, Expr, Reduce };

/// What an Expr node computes (its kir: exprValue in RowReduction.cpp); N is the row length.
enum class ExprKind {
  Math,          ///< `math` over args (a pointwise op of the body, or -, *)
  Convert,       ///< args[0], an accumulator, in the node's type
  Mean,          ///< args[0] / N
  Rstd,          ///< 1 / sqrt(args[0] / N + epsilon)
  Normalize,     ///< layer_norm of (x, mean, rstd[, gamma[, beta]]): (x - mean) * rstd ...
  RmsNormalize,  ///< rms_norm of (x, rstd[, gamma[, beta]]): x * rstd ...
  ExpDifference, ///< exp(args[0] - args[1]) to the precision of `dtype` (softmax)
  Reciprocal,    ///< 1 / args[0]
};

/// One value of the program: an operand element, a constant, an expression over other nodes, or a
/// reduction over the reduced group.
struct Node {
  NodeKind kind = NodeKind::Expr;
  unsigned mask = 0;  ///< GroupBits along which the value varies
  unsigned level = 0; ///< reductions on its longest dependence chain
  /// The value's type in registers, as the dtype whose compute type it is: F32 (f32/f16/bf16 math),
  /// F64, I32, I64, I8 or Bool; a Reduce node's is its accumulator's (F32, F64 or I64).
  DType type = DType::F32;
  std::string name = {};  ///< the kir name hint of the value
  std::string table = {}; ///< Table: the name of the kir table (unique in the module, not `name`)
  std::vector<unsigned> args = {};
  ExprKind expr = ExprKind::Math; ///< Expr: what it computes
  kir::MathOp math = {};          ///< Expr Math
  double epsilon = 0;             ///< Expr Rstd: layer_norm's epsilon
  unsigned input = 0;             ///< Load: the kernel operand, indexed by the groups in `mask`
  DType dtype = DType::F32;       ///< Load, Table: the element's; ExpDifference: the result's
  const DenseData *constant = nullptr; ///< Splat (element 0), Table: the const op's value
  OpKind reduce = OpKind::Add;         ///< Reduce: how args[0] combines (Add, Mul, Max or Min)
  bool held = false;                   ///< schedule: kept in registers from its sweep to later ones

  bool isElementwise() const { return mask & Reduced; }
};

/// A kernel result: node `node` stored to result `result`, whose shape spans the groups in `mask`
/// (per element when it has Reduced).
struct Store {
  unsigned node = 0, result = 0;
  DType dtype = DType::F32;
  unsigned mask = 0;
};

struct Program {
  View view;
  std::vector<Node> nodes; ///< in dependence order
  std::vector<Store> stores;
  std::string fused; ///< the body's op names, for the kernel's comment
  unsigned maxLevel = 0;
};

/// Builds the program of `kernel`'s body (kernel entry name `entry`, which prefixes table names).
/// Reports each op it cannot take, and returns nullopt, on an op no row reduction holds, anchors
/// over different rows, an operand that is not full, per-row, per-column or scalar against the
/// view, a symbolic reduced or inner extent, or max/min of an empty extent.
std::optional<Program> buildProgram(const Op &kernel, const std::string &entry, Diagnostics &diags);

/// "f16[4,1024] reduced over axes [1, 2)", for messages.
std::string describe(const View &view);

/// How the rows are mapped onto threads.
enum class Mode {
  Registers, ///< a row in registers: 1-32 threads a row (warp) or a block a row
  Loop,      ///< a block a row that re-reads the row from memory every sweep
  Column,    ///< a thread per (outer, inner) position, looping over the reduced extent
};

struct Schedule {
  Mode mode = Mode::Registers;
  unsigned vec = 1; ///< elements per vector access (the row holds reduced / vec vectors)
  unsigned threads =
      1; ///< threads a row: a power of two <= 32 (1 on the column path), or a multiple of 32
  unsigned rowsPerBlock = 1;
  unsigned vectors = 1;    ///< Registers: vectors a thread; Loop: unroll factor
  std::vector<bool> sweep; ///< per level: whether a pass over the row runs at it
  unsigned heldFloats = 0; ///< 4-byte registers a thread holds across sweeps
  unsigned minBlocks = 0;  ///< blocks an SM for __launch_bounds__; 0: no bound

  unsigned blockThreads() const { return threads * rowsPerBlock; }
};

/// Chooses the schedule of `prog` and marks its held nodes.
Schedule chooseSchedule(Program &prog);

/// The schedule in words ("32 thread(s) a row, ..."), for the kernel's comment and its facts.
std::string describeSchedule(const Schedule &sched);

/// The sweep that evaluates an elementwise node at `level`, and each root: a reduction runs in the
/// sweep of its input's level.
unsigned sweepOf(const Program &prog, unsigned node);

} // namespace fusec::rowred
