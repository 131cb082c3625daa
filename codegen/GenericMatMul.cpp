// Generic kernels of matmul and linear: the classic shared-memory tiling.
// A block computes one 16x16 tile of one output matrix, one thread per
// output element; for each step of 16 along K it stages a 16x16 tile of A
// and of B in shared memory (converted to the accumulator type, zero past
// the edges) and adds their product into its accumulator. Each tile load
// is coalesced whatever the transposes: a thread reads the element whose
// fastest-moving index in memory follows threadIdx.x, and stores it at its
// place in the tile. Leading (batch) dims broadcast: the batch index is
// split into coordinates and each operand's matrix is found by its own
// strides (0 along broadcast dims). linear is x · wᵀ (+ b): A = x with its
// leading dims as rows, B = w read transposed, the bias added to the
// accumulator. Accumulation: f32 for f32/f16/bf16 (or `acc`), double for
// f64, wrapping int64 for integers.
#include "codegen/GenericSupport.h"
#include "codegen/PointwiseMath.h"

namespace fusec::codegen::generic {

namespace {

constexpr int64_t kTile = 16;

Sizes leading(const Sizes &s) { return Sizes(s.begin(), s.end() - 2); }

/// Per batch dim, the element stride of an operand's matrices.
Sizes matrixStrides(const Sizes &operand, const Sizes &batch, int64_t matrixSize) {
  Sizes strides = broadcastStrides(leading(operand), batch);
  for (int64_t &s : strides)
    s *= matrixSize;
  return strides;
}

} // namespace

MatMulShape matMulShapeOf(const Op &op) {
  Sizes a = sizesOf(*op.operand(0)), b = sizesOf(*op.operand(1)), out = sizesOf(*op.result());
  if (op.kind() == OpKind::Linear) // rows of x times wᵀ; no batch
    return {product(a, 0, a.size() - 1), b[0], b[1], false, true, {}, {}, {}, op.numOperands() > 2};
  MatMulShape p{out.end()[-2],
                out.end()[-1],
                0,
                op.getBool("transpose_a"),
                op.getBool("transpose_b"),
                leading(out),
                {},
                {}};
  p.k = p.ta ? a.end()[-2] : a.end()[-1];
  p.aStrides = matrixStrides(a, p.batch, p.m * p.k);
  p.bStrides = matrixStrides(b, p.batch, p.k * p.n);
  return p;
}

namespace {

constexpr std::string_view kMatMulKernel = R"(  __shared__ $T tileA[16][17];
  __shared__ $T tileB[16][17];
  const int tx = threadIdx.x % 16;
  const int ty = threadIdx.x / 16;
  for (long long tile = blockIdx.x; tile < $TILES; tile += gridDim.x) {
    const long long n0 = tile % $TILES_N * 16;
    const long long m0 = tile / $TILES_N % $TILES_M * 16;
    const long long batch = tile / $TILES_MN;
$SPLIT    const long long aBase = $A_BASE;
    const long long bBase = $B_BASE;
    $T acc = $ZERO;
    for (long long k0 = 0; k0 < $K; k0 += 16) {
      const long long am = m0 + $A_ROW;
      const long long ak = k0 + $A_COL;
      tileA[$A_ROW][$A_COL] = am < $M && ak < $K ? $LOAD_A : $ZERO;
      const long long bk = k0 + $B_ROW;
      const long long bn = n0 + $B_COL;
      tileB[$B_ROW][$B_COL] = bk < $K && bn < $N ? $LOAD_B : $ZERO;
      __syncthreads();
      for (int kk = 0; kk < 16; ++kk)
        acc = $FMA;
      __syncthreads();
    }
    const long long m = m0 + ty;
    const long long n = n0 + tx;
    if (m < $M && n < $N)
      $OUT[batch * $MN + m * $N + n] = $STORE;
  }
)";

} // namespace

GeneratedKernel emitMatMul(KernelBuilder &k) {
  const Op &op = k.op();
  MatMulShape p = matMulShapeOf(op);
  DType t = op.result()->type().dtype, acc = accDType(t, accAttr(op));
  IndexSpace batch(p.batch, "b");
  std::string aBase = batch.offset(p.aStrides), bBase = batch.offset(p.bStrides);
  int64_t tilesM = (p.m + kTile - 1) / kTile, tilesN = (p.n + kTile - 1) / kTile;
  int64_t tiles = product(p.batch) * tilesM * tilesN;
  DType ta = op.operand(0)->type().dtype, tb = op.operand(1)->type().dtype;
  std::string result = "acc";
  if (p.bias)
    result = addExpr(acc, result, loadExpr(op.operand(2)->type().dtype, k.in(2), "n"));
  std::string body = fill(
      kMatMulKernel, {{"T", std::string(accType(acc))},
                      {"TILES", lit(tiles)},
                      {"TILES_N", lit(tilesN)},
                      {"TILES_M", lit(tilesM)},
                      {"TILES_MN", lit(tilesM * tilesN)},
                      {"SPLIT", batch.split("batch", "    ")},
                      {"A_BASE", aBase},
                      {"B_BASE", bBase},
                      {"ZERO", zeroLiteral(acc)},
                      {"K", lit(p.k)},
                      {"M", lit(p.m)},
                      {"N", lit(p.n)},
                      {"MN", lit(p.m * p.n)},
                      {"A_ROW", p.ta ? "tx" : "ty"},
                      {"A_COL", p.ta ? "ty" : "tx"},
                      {"B_ROW", p.tb ? "tx" : "ty"},
                      {"B_COL", p.tb ? "ty" : "tx"},
                      {"LOAD_A", loadExpr(ta, k.in(0),
                                          p.ta ? "aBase + ak * " + lit(p.m) + " + am"
                                               : "aBase + am * " + lit(p.k) + " + ak")},
                      {"LOAD_B", loadExpr(tb, k.in(1),
                                          p.tb ? "bBase + bn * " + lit(p.k) + " + bk"
                                               : "bBase + bk * " + lit(p.n) + " + bn")},
                      {"FMA", addExpr(acc, "acc", mulExpr(acc, "tileA[ty][kk]", "tileB[kk][tx]"))},
                      {"OUT", k.out()},
                      {"STORE", storeFromAcc(t, acc, result)}});
  std::string note = "16x16 output tiles, one thread per element; A" +
                     std::string(p.ta ? "^T" : "") + " * B" + (p.tb ? "^T" : "") +
                     ", M = " + std::to_string(p.m) + ", N = " + std::to_string(p.n) +
                     ", K = " + std::to_string(p.k);
  return k.finish({note}, body, tiles);
}

} // namespace fusec::codegen::generic
