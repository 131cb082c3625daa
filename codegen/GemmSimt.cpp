// The SIMT gemm kernel: contractions that tensor cores do not take (f32
// operands, f64, or an `acc = f64`), accumulated with FMAs in f32 or f64.
//
// A block of (bm/tm) x (bn/tn) threads computes a bm x bn tile; each thread
// owns tm x tn outputs strided by the thread grid (rows ty + i*(bm/tm),
// columns tx + j*(bn/tn)), so that a warp's shared-memory reads are
// conflict-free broadcasts and consecutive addresses. Per bk-wide K step the
// block stages A and B in shared memory as bk x bm and bk x bn arrays of
// the accumulator type (one row of padding against bank conflicts),
// converted through the prologue casts and zero outside the operands; each
// load is coalesced along the operand's contiguous dim whatever the
// transposes. Simple on purpose: no pipelining; f32 tensor-core-free GEMM
// is not the fast path.
#include "codegen/GemmPlan.h"
#include "codegen/PointwiseMath.h"

#include <algorithm>
#include <sstream>

namespace fusec::codegen::gemm {

namespace {

/// Statements that stage one operand's bk-wide K step into `array`.
std::string stageOperand(const Plan &plan, bool isA, const std::string &in) {
  const TileConfig &t = plan.tile;
  const Matrix &x = isA ? plan.a : plan.b;
  const Source &src = x.sources.front();
  int mn = isA ? t.bm : t.bn;
  std::string p = isA ? "a" : "b", mn0 = isA ? "m0" : "n0", extent = isA ? "rowsM" : lit(plan.n);
  int rowLen = x.kMajor ? t.bk : mn; // the tile's extent along the contiguous dim
  std::string kIndex = x.kMajor ? "i % " + std::to_string(rowLen) : "i / " + std::to_string(rowLen);
  std::string mnIndex =
      x.kMajor ? "i / " + std::to_string(rowLen) : "i % " + std::to_string(rowLen);
  std::string outerG = x.kMajor ? "gmn" : "gk", innerG = x.kMajor ? "gk" : "gmn";
  std::string load =
      castChain(src, loadExpr(src.stored, p, outerG + " * " + lit(x.inner) + " + " + innerG));
  std::ostringstream s;
  s << in << "for (int i = tid; i < " << mn * t.bk << "; i += " << t.threads() << ") {\n"
    << in << "  const int kk = " << kIndex << ";\n"
    << in << "  const int mn = " << mnIndex << ";\n"
    << in << "  const long long gk = k0 + kk;\n"
    << in << "  const long long gmn = " << mn0 << " + mn;\n"
    << in << "  s" << p << "[kk][mn] = gk < " << lit(plan.k) << " && gmn < " << extent << " ? ("
    << computeType(plan.acc) << ")(" << load << ") : 0;\n"
    << in << "}\n";
  return s.str();
}

std::string innerProduct(const Plan &plan, const std::string &in) {
  const TileConfig &t = plan.tile;
  std::string type(computeType(plan.acc));
  std::ostringstream s;
  s << in << "#pragma unroll 2\n"
    << in << "for (int kk = 0; kk < " << t.bk << "; ++kk) {\n"
    << in << "  " << type << " av[" << t.tm << "], bv[" << t.tn << "];\n"
    << in << "  #pragma unroll\n"
    << in << "  for (int i = 0; i < " << t.tm << "; ++i)\n"
    << in << "    av[i] = sa[kk][ty + i * " << t.bm / t.tm << "];\n"
    << in << "  #pragma unroll\n"
    << in << "  for (int j = 0; j < " << t.tn << "; ++j)\n"
    << in << "    bv[j] = sb[kk][tx + j * " << t.bn / t.tn << "];\n"
    << in << "  #pragma unroll\n"
    << in << "  for (int i = 0; i < " << t.tm << "; ++i)\n"
    << in << "    #pragma unroll\n"
    << in << "    for (int j = 0; j < " << t.tn << "; ++j)\n"
    << in << "      acc[i][j] += av[i] * bv[j];\n"
    << in << "}\n";
  return s.str();
}

/// Row stride of the accumulator tile: 16 words of padding keep a warp's
/// stores (16 columns of two rows) conflict-free.
int ldc(const Plan &plan) { return plan.tile.bn + 16; }

int sharedBytes(const Plan &plan) {
  const TileConfig &t = plan.tile;
  int elements = std::max(t.bk * (t.bm + 1 + t.bn + 1), t.bm * ldc(plan));
  return elements * (plan.acc == DType::F64 ? 8 : 4);
}

/// Accumulators through shared memory (reusing the staging arrays) into the
/// epilogue.
std::string epilogue(const Plan &plan, const std::string &in) {
  const TileConfig &t = plan.tile;
  std::string type(computeType(plan.acc));
  std::ostringstream s;
  s << in << type << " *const tileC = (" << type << " *)smem; // " << t.bm << " x " << ldc(plan)
    << " accumulators\n"
    << in << "#pragma unroll\n"
    << in << "for (int i = 0; i < " << t.tm << "; ++i)\n"
    << in << "  #pragma unroll\n"
    << in << "  for (int j = 0; j < " << t.tn << "; ++j)\n"
    << in << "    tileC[(ty + i * " << t.bm / t.tm << ") * " << ldc(plan) << " + tx + j * "
    << t.bn / t.tn << "] = acc[i][j];\n"
    << in << "__syncthreads();\n"
    << epilogueLoop(plan, ldc(plan), in) << in
    << "__syncthreads(); // the next tile reuses tileC\n";
  return s.str();
}

} // namespace

std::string simtSchedule(const Plan &plan) {
  const TileConfig &t = plan.tile;
  std::ostringstream how;
  how << "SIMT (" << computeType(plan.acc) << " FMA); tile " << t.bm << "x" << t.bn << "x" << t.bk
      << ", " << t.threads() << " threads of " << t.tm << "x" << t.tn;
  return how.str();
}

std::string simtKernel(const Plan &plan, std::optional<LaunchConfig> &launch) {
  const TileConfig &t = plan.tile;
  std::string type(computeType(plan.acc));
  std::ostringstream s;
  s << epilogueFunctions(plan) << kernelComment(plan, simtSchedule(plan))
    << "extern \"C\" __global__ void __launch_bounds__(" << t.threads() << ") " << plan.entry
    << "(";
  for (size_t p = 0; p < plan.params.size(); ++p)
    s << (p ? ",\n    " : "\n    ") << plan.params[p];
  s << ") {\n"
    << "  extern __shared__ __align__(16) unsigned char smem[];\n"
    << "  " << type << " (*const sa)[" << t.bm + 1 << "] = (" << type << " (*)[" << t.bm + 1
    << "])smem;\n"
    << "  " << type << " (*const sb)[" << t.bn + 1 << "] = (" << type << " (*)[" << t.bn + 1
    << "])(smem + " << t.bk * (t.bm + 1) * (plan.acc == DType::F64 ? 8 : 4) << ");\n"
    << "  const int tid = threadIdx.x;\n"
    << "  const int tx = tid % " << t.bn / t.tn << ";\n"
    << "  const int ty = tid / " << t.bn / t.tn << ";\n"
    << tilePrelude(plan, "  ") << "  for (" << tileIndexType(plan)
    << " tile = blockIdx.x; tile < numTiles; tile += gridDim.x) {\n"
    << tileDecode(plan, "    ") << "    " << type << " acc[" << t.tm << "][" << t.tn << "];\n"
    << "    #pragma unroll\n"
    << "    for (int i = 0; i < " << t.tm << "; ++i)\n"
    << "      #pragma unroll\n"
    << "      for (int j = 0; j < " << t.tn << "; ++j)\n"
    << "        acc[i][j] = 0;\n"
    << "    #pragma unroll 1\n"
    << "    for (long long k0 = 0; k0 < " << lit(plan.k) << "; k0 += " << t.bk << ") {\n"
    << stageOperand(plan, true, "      ") << stageOperand(plan, false, "      ")
    << "      __syncthreads();\n"
    << innerProduct(plan, "      ") << "      __syncthreads();\n"
    << "    }\n"
    << epilogue(plan, "    ") << "  }\n}\n";
  launch = staticLaunch(plan, sharedBytes(plan));
  return s.str();
}

} // namespace fusec::codegen::gemm
