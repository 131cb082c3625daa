// The row_reduction schedule (Plan.h): how rows map onto threads, the vector width, and which
// values stay in registers; the table in docs/codegen-row-reduction.md gives the thresholds.
//
// Sweeps: a program of level L runs up to L + 1 passes over each row; pass s evaluates the
// elementwise nodes of level s, feeds the reductions whose input has level s, and stores the
// results of level s.
//
// Held values: on the register path an elementwise node that varies with the row and is read by a
// later pass is kept in a register array from its own pass on (the row is read from memory once);
// everything else is recomputed, which is cheap (a layer_norm holds its input alone; gamma and beta
// are reloaded, from L1). The register budget counts the held values live across one pass boundary.
//
// Row path: the vector width is the widest power of two, at most 16 bytes of the narrowest element
// type, that divides the row (f32, f16 and bf16 only). A row that fits a warp or less runs a group
// a row, several rows a 128-thread block; longer ones a block a row; rows too long for registers
// re-read the row in every pass. Column path: a thread per position.
#include "codegen/templates/rowred/Plan.h"
#include "ir/Assert.h"

#include <algorithm>
#include <optional>

namespace fusec::rowred {

namespace {

unsigned regsOf(const Node &n) { return n.type == DType::F64 || n.type == DType::I64 ? 2 : 1; }

/// Marks the held nodes; returns the registers live across the worst pass boundary per element a
/// thread owns.
unsigned markHeld(Program &prog) {
  std::vector<unsigned> last; // the last level an elementwise node reads each at
  for (const Node &n : prog.nodes)
    last.push_back(n.level);
  for (const Node &c : prog.nodes)
    if (c.kind == NodeKind::Expr && c.isElementwise())
      for (unsigned a : c.args)
        last[a] = std::max(last[a], c.level);
  std::vector<unsigned> live(prog.maxLevel + 1, 0);
  for (unsigned i = 0; i < prog.nodes.size(); ++i) {
    Node &n = prog.nodes[i];
    // Per-column values are reloaded (from L1) rather than held.
    bool perRow = n.mask & (Outer | Inner);
    n.held = n.isElementwise() && perRow && last[i] > n.level;
    for (unsigned s = n.level; n.held && s < last[i]; ++s)
      live[s] += regsOf(n);
  }
  return *std::max_element(live.begin(), live.end());
}

unsigned vectorWidth(const Program &prog) {
  unsigned width = 16;
  auto narrow = [&](DType t) {
    if (t != DType::F32 && t != DType::F16 && t != DType::BF16)
      width = 1;
    width = std::min(width, 16 / dtypeSize(t));
  };
  for (const Node &n : prog.nodes)
    if (n.kind == NodeKind::Load && n.isElementwise())
      narrow(n.dtype);
  for (const Store &s : prog.stores)
    if (s.mask & Reduced)
      narrow(s.dtype);
  while (width > 1 && prog.view.reduced % width != 0)
    width /= 2;
  return width;
}

// Note [Row reduction unrolling]
// A thread's elements are fully unrolled so that its row stays in registers: code size, and NVRTC
// time, grow with them. On an H100 (LayerNorm + GeLU f16 8192 x 8192, bf16 16384 x 4096, f16 16384
// x 1024) 64 elements a thread on 128 threads ran at 93% of copy bandwidth, 32 on 256 at 86-88%, 16
// on 512 at 74%, 8 on 1024 at 40% (fewer threads a row: fewer barriers, more rows in flight). NVRTC
// takes about 400 ms for 64 elements and 230 ms for 32, once per shape: the kernel cache keeps it.
//
// Short rows (f16 16384 x 1024, a warp a row, 4 rows a block): 8 or 16 rows a block, half-warp
// rows, 8 blocks an SM, a capped grid and streaming loads or stores were all 1-35% slower. A block
// of 128 a row ran softmax 10% faster, but LN+GeLU 11% and reduce_sum 49% slower (why was not
// found): only softmax-shaped programs (a max feeding a later reduction) take it. Timed as do_bench
// times (2026-11-22), softmax f16 runs a block a row in 28.3 us, a warp a row in 27.6 us and a copy
// of its bytes in 27.4-27.7 us: the block stays.
//
// 64 floats a thread on a block of 128 ask for 5 blocks an SM (at most 102 registers):
// LayerNorm+GeLU f16 8192 x 8192 took 127 registers and ran at 86% of copy bandwidth unbounded, 96
// registers and 90% bounded.

/// Whether a max reduction feeds a reduction of a later sweep (softmax).
bool maxThenReduce(const Program &prog) {
  std::optional<unsigned> maxSweep;
  for (unsigned i = 0; i < prog.nodes.size(); ++i) {
    const Node &n = prog.nodes[i];
    if (n.kind != NodeKind::Reduce)
      continue;
    if (maxSweep && sweepOf(prog, i) > *maxSweep)
      return true;
    if (n.reduce == OpKind::Max && !maxSweep)
      maxSweep = sweepOf(prog, i);
  }
  return false;
}

/// A register schedule for rows of `q` vectors and `held` registers an element, or false. A
/// softmax-shaped program whose row fills a warp with 4 or more vectors a lane runs a block of 128
/// a row instead (see the Note).
bool fitRegisters(Schedule &s, int64_t q, unsigned held, bool softmaxLike) {
  unsigned group = 1; // the power of two of threads that holds q vectors, at most 32
  while (group < 32 && group < q)
    group *= 2;
  // (threads a row, most held registers a thread): a group of a warp at most a row, 128 threads a
  // block, else a block a row (1024-thread blocks get at most 64 registers a thread).
  std::vector<std::pair<unsigned, unsigned>> fits = {{128, 64}, {256, 64}, {512, 32}, {1024, 16}};
  if (!softmaxLike || q < 128)
    fits.insert(fits.begin(), {group, 32});
  for (auto [t, budget] : fits) {
    int64_t perThread = std::max<int64_t>(1, (q + t - 1) / t);
    if (perThread * s.vec * held > budget)
      continue;
    s.threads = t;
    s.vectors = unsigned(perThread);
    s.rowsPerBlock = t <= 32 ? 128 / t : 1;
    return true;
  }
  return false;
}

} // namespace

unsigned sweepOf(const Program &prog, unsigned node) {
  const Node &n = prog.nodes[node];
  return n.kind == NodeKind::Reduce ? prog.nodes[n.args[0]].level : n.level;
}

Schedule chooseSchedule(Program &prog) {
  Schedule s;
  if (!prog.view.isRowPath()) {
    s.mode = Mode::Column;
    s.rowsPerBlock = 256;
  } else {
    s.vec = vectorWidth(prog);
    unsigned held = markHeld(prog);
    if (fitRegisters(s, prog.view.reduced / s.vec, std::max(held, 1u), maxThenReduce(prog))) {
      s.heldFloats = held * s.vectors * s.vec;
      if (s.threads == 128 && s.heldFloats > 32) // see the Note
        s.minBlocks = 5;
    } else {
      s.mode = Mode::Loop;
      s.threads = 256;
      for (Node &n : prog.nodes)
        n.held = false;
    }
  }
  s.sweep.assign(prog.maxLevel + 1, false);
  for (unsigned i = 0; i < prog.nodes.size(); ++i)
    if (prog.nodes[i].kind == NodeKind::Reduce || prog.nodes[i].held)
      s.sweep[sweepOf(prog, i)] = true;
  for (const Store &st : prog.stores)
    if (st.mask & Reduced)
      s.sweep[prog.nodes[st.node].level] = true;
  return s;
}

std::string describeSchedule(const Schedule &sched) {
  std::string passes = std::to_string(std::count(sched.sweep.begin(), sched.sweep.end(), true));
  switch (sched.mode) {
  case Mode::Registers:
    return std::to_string(sched.threads) + " thread(s) a row, " +
           std::to_string(sched.rowsPerBlock) + " row(s) a block, " +
           std::to_string(sched.vectors) + " vector(s) of " + std::to_string(sched.vec) +
           " a thread; " + passes + " pass(es) over a row read once, " +
           std::to_string(sched.heldFloats) + " register(s) held";
  case Mode::Loop:
    return std::to_string(sched.threads) + " threads a row, vectors of " +
           std::to_string(sched.vec) + "; " + passes + " pass(es), each reading the row";
  case Mode::Column:
    return "a thread per (outer, inner) position, " + passes + " pass(es) over the reduced extent";
  }
  FUSEC_ASSERT(false, "unknown mode");
}

} // namespace fusec::rowred
