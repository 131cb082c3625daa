// The tensor-core gemm kernel (f16/bf16 operands, f32 accumulators).
//
// A block computes a bm x bn output tile with warpsM x warpsN warps, each
// owning a (bm/warpsM) x (bn/warpsN) warp tile of m16n8 accumulators. K
// goes by bk-wide steps through a `stages`-deep ring of shared-memory
// stages: the tiles of steps kt+1 .. kt+stages-1 are in flight (cp.async
// groups, or registers; GemmLoad.cpp) while step kt is multiplied; one
// __syncthreads per step guards the ring. Per k16 slice a warp loads its A
// fragments with ldmatrix.x4 (.trans when A is stored K x M) and its B
// fragments two n8 tiles per ldmatrix.x4 (.trans when B is stored K x N),
// then issues mma.sync m16n8k16 for every (m16, n8) pair. Tails of M, N
// and K read zeros (zero-filled copies, guarded loads) and the epilogue
// stores only the elements inside the result. The accumulators then go
// through shared memory (reusing the stages) to the epilogue loop
// (GemmEpilogue.cpp). Not done here: wgmma/TMA (sm_90a), split-K, a
// persistent grid.
#include "codegen/GemmPlan.h"

#include <algorithm>
#include <sstream>

namespace fusec::codegen::gemm {

namespace {

struct Geometry {
  int threads, wm, wn, mi, ni, aBytes, stageBytes, kTiles;
  int ldc; // row stride of the accumulator tile: 8 words of padding keep stores conflict-free
};

Geometry geometry(const Plan &plan) {
  const TileConfig &t = plan.tile;
  Geometry g;
  g.threads = t.threads();
  g.wm = t.bm / t.warpsM;
  g.wn = t.bn / t.warpsN;
  g.mi = g.wm / 16;
  g.ni = g.wn / 8;
  g.aBytes = t.bm * t.bk * 2;
  g.stageBytes = g.aBytes + t.bn * t.bk * 2;
  g.kTiles = int((plan.k + t.bk - 1) / t.bk);
  g.ldc = t.bn + 8;
  return g;
}

/// The pipeline's stages, or the accumulator tile when it is larger.
int sharedBytes(const Plan &plan, const Geometry &g) {
  return std::max(plan.tile.stages * g.stageBytes, plan.tile.bm * g.ldc * 4);
}

// Note [Fragment addresses]
// A lane's ldmatrix address for k16 slice kk and m16 block mi (or n16 pair
// nj) is its address for kk = mi = 0 with the chunk index XORed by 2 * mi
// (or 2 * kk, when the slices run along the chunks) and the rows moved by
// a constant: the swizzle XORs only the low three chunk bits with the row's
// low three bits, which the slice and block steps (multiples of 8 rows, 2
// chunks) leave alone, and the steps never carry into the swizzled bits.
// So each lane computes one offset per operand (aLane, bLane) and every
// fragment address is `stage + (lane offset ^ constant) + constant`: few
// registers live across the main loop.

/// One lane's byte offset of A's (or B's) first fragment in a stage.
std::string laneOffset(const Plan &plan, bool isA) {
  const TileConfig &t = plan.tile;
  const Matrix &x = isA ? plan.a : plan.b;
  std::string warp = isA ? "warpRow" : "warpCol";
  std::string chunks = std::to_string(x.kMajor ? t.bk / 8 : (isA ? t.bm : t.bn) / 8);
  if (isA && x.kMajor)
    return "16 * fusec_swizzle(warpRow + (lane & 15), lane >> 4, " + chunks + ")";
  if (isA)
    return "16 * fusec_swizzle((lane & 7) + (lane >> 4) * 8, warpRow / 8 + ((lane >> 3) & 1), " +
           chunks + ")";
  if (x.kMajor)
    return "16 * fusec_swizzle(warpCol + (lane & 7) + (lane >> 4) * 8, (lane >> 3) & 1, " + chunks +
           ")";
  return "16 * fusec_swizzle((lane & 7) + ((lane >> 3) & 1) * 8, warpCol / 8 + (lane >> 4), " +
         chunks + ")";
}

/// `stage + (lane ^ xored * 32) + stepped * stepBytes` (Note [Fragment addresses]).
std::string fragmentAddress(const std::string &base, const std::string &lane,
                            const std::string &xored, const std::string &stepped, int stepBytes) {
  return base + " + (" + lane + " ^ " + xored + " * 32) + " + stepped + " * " +
         std::to_string(stepBytes);
}

std::string fragmentA(const Plan &plan, const std::string &in) {
  const TileConfig &t = plan.tile;
  std::string regs = ", fa[mi][0], fa[mi][1], fa[mi][2], fa[mi][3]);\n";
  if (plan.a.kMajor) // 16 rows of bk / 8 chunks a block
    return in + "fusec_ldmatrix_x4(" +
           fragmentAddress("stage", "aLane", "kk", "mi", 16 * t.bk * 2) + regs;
  return in + "fusec_ldmatrix_x4_trans(" +
         fragmentAddress("stage", "aLane", "mi", "kk", 16 * t.bm * 2) + regs;
}

std::string fragmentB(const Plan &plan, const Geometry &g, const std::string &in) {
  const TileConfig &t = plan.tile;
  std::string regs = ", fb[2 * nj][0], fb[2 * nj][1], fb[2 * nj + 1][0], fb[2 * nj + 1][1]);\n";
  std::string base = "stage + " + std::to_string(g.aBytes);
  if (plan.b.kMajor)
    return in + "fusec_ldmatrix_x4(" + fragmentAddress(base, "bLane", "kk", "nj", 16 * t.bk * 2) +
           regs;
  return in + "fusec_ldmatrix_x4_trans(" +
         fragmentAddress(base, "bLane", "nj", "kk", 16 * t.bn * 2) + regs;
}

/// The math of one stage: bk/16 slices of ldmatrix + mma.
std::string stageMath(const Plan &plan, const Geometry &g, const std::string &in) {
  std::string mma = plan.operand == DType::BF16 ? "fusec_mma_bf16" : "fusec_mma_f16";
  std::ostringstream s;
  s << in << "#pragma unroll\n"
    << in << "for (int kk = 0; kk < " << plan.tile.bk / 16 << "; ++kk) {\n"
    << in << "  unsigned fa[" << g.mi << "][4];\n"
    << in << "  unsigned fb[" << g.ni << "][2];\n"
    << in << "  #pragma unroll\n"
    << in << "  for (int mi = 0; mi < " << g.mi << "; ++mi)\n"
    << fragmentA(plan, in + "    ") << in << "  #pragma unroll\n"
    << in << "  for (int nj = 0; nj < " << g.ni / 2 << "; ++nj)\n"
    << fragmentB(plan, g, in + "    ") << in << "  #pragma unroll\n"
    << in << "  for (int mi = 0; mi < " << g.mi << "; ++mi)\n"
    << in << "    #pragma unroll\n"
    << in << "    for (int ni = 0; ni < " << g.ni << "; ++ni)\n"
    << in << "      " << mma << "(acc[mi][ni], fa[mi], fb[ni]);\n"
    << in << "}\n";
  return s.str();
}

// Registers fetched at step kt are stored into their stage at the top of
// step kt + 1, after a whole step of math has hidden the loads' latency:
// the tile fetched last is K step kt + stages - 2, whose stage was last
// read at step kt - 2 (stages >= 3).
std::string mainLoop(const Plan &plan, const Geometry &g) {
  int stages = plan.tile.stages;
  std::string in = "    ", in2 = in + "  ", in3 = in2 + "  ", kt = std::to_string(g.kTiles);
  std::string stageBytes = std::to_string(g.stageBytes);
  std::string staged = loaderStage(plan, "stage", in3);
  std::ostringstream s;
  s << in << "// the first " << stages - 1 << " K steps in flight\n"
    << in << "#pragma unroll 1\n"
    << in << "for (int kt = 0; kt < " << stages - 1 << "; ++kt) {\n"
    << in2 << "if (kt < " << kt << ") {\n"
    << in3 << "const unsigned stage = smemBase + kt * " << stageBytes << ";\n"
    << loaderIssue(plan, "stage", "kt", in3);
  if (!staged.empty())
    s << in3 << "if (kt < " << stages - 2 << ") {\n"
      << loaderStage(plan, "stage", in3 + "  ") << in3 << "}\n";
  s << in2 << "}\n"
    << in2 << "fusec_cp_async_commit();\n"
    << in << "}\n"
    << in << "#pragma unroll 1\n"
    << in << "for (int kt = 0; kt < " << kt << "; ++kt) {\n"
    << in2 << "fusec_cp_async_wait(" << stages - 2 << ");\n"
    << in2 << "__syncthreads();\n";
  if (!staged.empty())
    s << in2 << "if (kt + " << stages - 2 << " < " << kt << ") {\n"
      << in3 << "const unsigned stage = smemBase + (kt + " << stages - 2 << ") % " << stages
      << " * " << stageBytes << ";\n"
      << staged << in2 << "}\n";
  s << in2 << "const int next = kt + " << stages - 1 << ";\n"
    << in2 << "if (next < " << kt << ") {\n";
  if (plan.a.async || plan.b.async)
    s << in3 << "const unsigned stage = smemBase + next % " << stages << " * " << stageBytes
      << ";\n";
  s << loaderIssue(plan, "stage", "next", in3) << in2 << "}\n"
    << in2 << "fusec_cp_async_commit();\n"
    << in2 << "const unsigned stage = smemBase + kt % " << stages << " * " << stageBytes << ";\n"
    << stageMath(plan, g, in2) << in << "}\n"
    << in << "fusec_cp_async_wait(0);\n"
    << in << "__syncthreads(); // the accumulator tile reuses the stages\n";
  return s.str();
}

/// Accumulators through shared memory (reusing the stages) into the epilogue.
std::string epilogue(const Plan &plan, const Geometry &g) {
  std::string in = "    ";
  std::ostringstream s;
  s << in << "float *const tileC = (float *)smem; // " << plan.tile.bm << " x " << g.ldc
    << " accumulators\n"
    << in << "#pragma unroll\n"
    << in << "for (int mi = 0; mi < " << g.mi << "; ++mi)\n"
    << in << "  #pragma unroll\n"
    << in << "  for (int ni = 0; ni < " << g.ni << "; ++ni)\n"
    << in << "    #pragma unroll\n"
    << in << "    for (int h = 0; h < 2; ++h)\n"
    << in << "      fusec_st_shared_f32x2(tileC + (warpRow + mi * 16 + h * 8 + (lane >> 2)) * "
    << g.ldc
    << " + warpCol + ni * 8 + 2 * (lane & 3), acc[mi][ni][2 * h], acc[mi][ni][2 * h + 1]);\n"
    << in << "__syncthreads();\n"
    << epilogueLoop(plan, g.ldc, in) << in << "__syncthreads(); // the next tile reuses tileC\n";
  return s.str();
}

} // namespace

std::string tensorCoreSchedule(const Plan &plan) {
  const TileConfig &t = plan.tile;
  Geometry g = geometry(plan);
  std::ostringstream how;
  how << "tensor cores (mma.sync m16n8k16 " << dtypeName(plan.operand) << ", f32 accumulate); tile "
      << t.bm << "x" << t.bn << "x" << t.bk << ", " << t.warpsM * t.warpsN << " warps of " << g.wm
      << "x" << g.wn << ", " << t.stages << " stages; A "
      << (plan.a.async ? "cp.async" : "registers") << ", B "
      << (plan.b.async ? "cp.async" : "registers");
  return how.str();
}

std::string tensorCoreKernel(const Plan &plan, std::optional<LaunchConfig> &launch) {
  const TileConfig &t = plan.tile;
  Geometry g = geometry(plan);
  std::ostringstream s;
  s << epilogueFunctions(plan) << kernelComment(plan, tensorCoreSchedule(plan))
    << "extern \"C\" __global__ void __launch_bounds__(" << g.threads << ", 1) " << plan.entry
    << "(";
  for (size_t p = 0; p < plan.params.size(); ++p)
    s << (p ? ",\n    " : "\n    ") << plan.params[p];
  s << ") {\n"
    << "  extern __shared__ __align__(128) unsigned char smem[];\n"
    << "  const unsigned smemBase = fusec_smem_u32(smem);\n"
    << "  const int tid = threadIdx.x;\n"
    << "  const int lane = tid & 31;\n"
    << "  const int warpRow = (tid >> 5) / " << t.warpsN << " * " << g.wm << ";\n"
    << "  const int warpCol = (tid >> 5) % " << t.warpsN << " * " << g.wn << ";\n"
    << "  const unsigned aLane = " << laneOffset(plan, true) << "; // Note [Fragment addresses]\n"
    << "  const unsigned bLane = " << laneOffset(plan, false) << ";\n"
    << tilePrelude(plan, "  ") << loaderRegisters(plan, "  ") << "  for (" << tileIndexType(plan)
    << " tile = blockIdx.x; tile < numTiles; tile += gridDim.x) {\n"
    << tileDecode(plan, "    ") << loaderTileSetup(plan, "    ") << "    float acc[" << g.mi << "]["
    << g.ni << "][4];\n"
    << "    #pragma unroll\n"
    << "    for (int mi = 0; mi < " << g.mi << "; ++mi)\n"
    << "      #pragma unroll\n"
    << "      for (int ni = 0; ni < " << g.ni << "; ++ni)\n"
    << "        acc[mi][ni][0] = acc[mi][ni][1] = acc[mi][ni][2] = acc[mi][ni][3] = 0.0f;\n"
    << mainLoop(plan, g) << epilogue(plan, g) << "  }\n}\n";
  launch = staticLaunch(plan, sharedBytes(plan, g));
  return s.str();
}

} // namespace fusec::codegen::gemm
