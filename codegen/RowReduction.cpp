// The row_reduction template: one kernel for a body of pointwise prologue
// ops, reductions or normalizations over one block of axes (reduce_sum/max/
// min/mean, layer_norm, rms_norm, softmax) and pointwise epilogue ops, with
// any number of results.
//
// The body becomes a program over the view [outer, reduced, inner] of the
// first reduction's input (RowReductionProgram.cpp): every value is full,
// per-row, per-column or scalar against it (an operand that broadcasts
// otherwise is refused: the runtime then runs the body op by op), and a
// normalization becomes the reductions of its formula, statistics in f32.
// The schedule (RowReductionSchedule.cpp) picks, for trailing reductions
// (the row path), a group of threads a row: rows of up to 32 elements a
// thread on at most 32 threads run a warp (or less) a row with shuffle
// reductions, several rows a block (softmax rows of 128 vectors or more
// run a block a row instead); longer rows a block of 128 to 1024
// threads a row, up to 64 elements a thread, reducing through shared
// memory and shuffles. The row is loaded once, with 16-byte vector
// accesses when its length allows, into registers; each later pass over it
// (a layer_norm has three: mean, variance, output) works on the registers,
// and the results are stored with vector stores. Rows too long for
// registers re-read the row from memory in every pass. Reductions over
// inner axes (the column path) run a thread per (outer, inner) position,
// looping over the reduced extent, coalesced across inner positions.
//
// Kernel arguments, in order: one const pointer per kernel operand, one
// pointer per result, then `long long num_rows`, the product of the outer
// dims (its value set when static; the launch is set then too). Only the
// reduced and inner extents must be static: one kernel serves every batch.
// RowReductionSweep.cpp writes what runs inside one row.
//
// Limits: vector access needs f32/f16/bf16 operands and results (others go
// element by element); a row of up to 2^31 - 1 elements; the column path
// does one thread's loop per position, so few positions with a long
// reduced extent run slowly. NVRTC time grows with the unrolled elements a
// thread (Note [Row reduction unrolling] in RowReductionSchedule.cpp).
#include "codegen/RowReduction.h"

#include "codegen/PointwiseMath.h"
#include "codegen/RowReductionView.h"
#include "codegen/RowReductionWriter.h"
#include "ir/Assert.h"

#include <algorithm>

namespace fusec {

namespace rowred {

using namespace codegen;

std::vector<KernelArg> kernelArgs(const Op &kernel, const Program &prog) {
  Namer names;
  std::vector<KernelArg> args;
  for (unsigned j = 0; j < kernel.numOperands(); ++j)
    args.push_back({KernelArg::Kind::Input, names.fresh("in_", kernel.operand(j)->name()), j, 0,
                    std::nullopt});
  for (unsigned j = 0; j < kernel.numResults(); ++j)
    args.push_back({KernelArg::Kind::Output, names.fresh("out_", kernel.result(j)->name()), j, 0,
                    std::nullopt});
  args.push_back({KernelArg::Kind::NumRows, "num_rows", 0, 0, prog.view.outer});
  return args;
}

void Writer::declareParams() {
  out.args = kernelArgs(kernel, prog);
  for (const KernelArg &a : out.args) {
    if (a.kind == KernelArg::Kind::NumRows) {
      params.push_back("long long " + a.name);
      continue;
    }
    bool isInput = a.kind == KernelArg::Kind::Input;
    DType t = (isInput ? kernel.operand(a.index) : kernel.result(a.index))->type().dtype;
    params.push_back(std::string(isInput ? "const " : "") + std::string(storageType(t)) +
                     " *__restrict__ " + a.name);
    (isInput ? inNames : outNames).push_back(a.name);
  }
}

void Writer::writeRowLoop(std::ostream &os) {
  std::string inner = std::to_string(prog.view.inner) + "LL";
  std::string rows = std::to_string(sched.rowsPerBlock);
  if (sched.mode == Mode::Column) {
    os << "  const long long num_positions = num_rows * " << inner << ";\n"
       << "  const long long step = (long long)gridDim.x * blockDim.x;\n"
       << "  for (long long pos = (long long)blockIdx.x * blockDim.x + threadIdx.x; "
          "pos < num_positions; pos += step) {\n"
       << "    const long long row = pos / " << inner << ";\n"
       << "    const long long inner = pos % " << inner << ";\n";
  } else if (sched.rowsPerBlock == 1) {
    os << "  const int lane = threadIdx.x;\n"
       << "  for (long long row = blockIdx.x; row < num_rows; row += gridDim.x) {\n";
  } else {
    os << "  const int lane = threadIdx.x;\n"
       << "  for (long long first = (long long)blockIdx.x * " << rows
       << "; first < num_rows; first += (long long)gridDim.x * " << rows << ") {\n"
       << "    const long long row_id = first + threadIdx.y;\n"
       << "    const bool live = row_id < num_rows;\n"
       << "    const long long row = live ? row_id : num_rows - 1;\n";
  }
  writeRowSetup(os);
  for (unsigned level = 0; level <= prog.maxLevel; ++level) {
    writeRowScope(level, os);
    if (sched.sweep[level])
      writeSweep(level, os);
  }
  os << "  }\n";
}

// Static rows: one block per group of rows (per 256 positions on the
// column path), at most 2^31 - 1 blocks; the kernel loops over the rest.
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

std::string Writer::comment() const {
  return "// " + out.name + ": row_reduction kernel over " + describe(prog.view) +
         "\n// fuses: " + prog.fused + "\n// schedule: " + describeSchedule(sched) + "\n";
}

GeneratedKernel Writer::run() {
  declareParams();
  for (const Node &n : prog.nodes)
    if (isHoisted(n))
      hoisted += "  const " + cType(n) + " " + n.name + " = " + rowValue(n) + ";\n";
  std::ostringstream loop, src;
  writeRowLoop(loop);
  src << tablesText() << comment() << "extern \"C\" __global__ void __launch_bounds__("
      << sched.blockThreads() << (sched.minBlocks ? ", " + std::to_string(sched.minBlocks) : "")
      << ") " << out.name << "(";
  for (size_t p = 0; p < params.size(); ++p)
    src << (p ? ",\n    " : "\n    ") << params[p];
  src << ") {\n" << shared << hoisted << loop.str() << "}\n";
  out.source = src.str();
  out.launch = launchOf(prog, sched);
  out.facts.schedule = describeSchedule(sched);
  return std::move(out);
}

} // namespace rowred

std::optional<GeneratedKernel> emitRowReductionKernel(const Op &kernel, const std::string &entry,
                                                      Diagnostics &diags) {
  FUSEC_ASSERT(kernel.kind() == OpKind::Kernel && kernel.body(), "not a kernel op");
  FUSEC_ASSERT(kernel.getString("template") == "row_reduction", "not a row_reduction kernel");
  std::optional<rowred::Program> prog = rowred::buildProgram(kernel, entry, diags);
  if (!prog)
    return std::nullopt;
  rowred::Schedule sched = rowred::chooseSchedule(*prog);
  return rowred::Writer(kernel, *prog, sched, entry).run();
}

} // namespace fusec
