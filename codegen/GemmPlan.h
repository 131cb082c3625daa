// Internal to the gemm template (codegen/Gemm*.cpp): what the analysis of a
// gemm kernel's body finds (GemmAnalysis.cpp, GemmShapes.cpp) and what the
// kernel writers (GemmTensorCore.cpp, GemmSimt.cpp) and the epilogue writer
// (GemmEpilogue.cpp) read. A body is: cast prologues on the operands, one or
// more matmul/linear "anchors" sharing their A operand (one chain each), and
// per chain the pointwise epilogue ops over its result. Every extent is a C
// expression: a literal, or a `long long` parameter for a named dim.
#pragma once

#include "codegen/GeneratedKernel.h"
#include "ir/Diagnostics.h"
#include "ir/Graph.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace fusec::codegen::gemm {

/// Where a contraction operand (or linear's bias) comes from: kernel input
/// `input`, stored as `stored`, then cast through `casts` (the prologue).
struct Source {
  unsigned input = 0;
  DType stored = DType::F32;
  std::vector<DType> casts;

  /// The dtype the contraction sees.
  DType type() const { return casts.empty() ? stored : casts.back(); }
  bool operator==(const Source &o) const = default;
};

/// A matrix operand as laid out in memory, per batch: `outer` rows of
/// `inner` contiguous elements. A is M x K (kMajor) or K x M; B is N x K
/// (kMajor: transposed, or linear's weight) or K x N.
struct Matrix {
  std::vector<Source> sources; ///< one per chain (A: the same for every chain)
  bool kMajor = true;
  std::string outer;       ///< C expression
  int64_t inner = 0;       ///< always static
  std::string batchOffset; ///< elements to the matrix of batch `z`, "0" when none
  bool async = false;      ///< tensor cores, copied by cp.async (no cast, inner % 8 == 0)
};

/// One matmul/linear and the epilogue over its result.
struct Chain {
  const Op *anchor = nullptr;
  std::optional<Source> bias;    ///< linear's third operand
  std::vector<const Op *> ops;   ///< epilogue ops it evaluates, in body order
  std::vector<unsigned> results; ///< kernel results it stores
};

/// Tile shape of the tensor-core kernel, or of the SIMT kernel (warps 0).
struct TileConfig {
  int bm = 128, bn = 128, bk = 32;
  int warpsM = 2, warpsN = 4; ///< tensor cores: warp grid over the block tile
  int stages = 4;             ///< tensor cores: shared-memory pipeline depth
  int groupM = 8;             ///< tile rows visited together (L2 reuse)
  int tm = 8, tn = 8;         ///< SIMT: outputs a thread computes, per axis
  int threads() const { return warpsM ? 32 * warpsM * warpsN : (bm / tm) * (bn / tn); }
};

/// Everything the writers need about one gemm kernel.
struct Plan {
  const Op *kernel = nullptr;
  const Graph *body = nullptr;
  std::string entry;
  std::vector<Chain> chains;
  Matrix a, b;
  DType operand = DType::F32; ///< the contraction's operand dtype
  DType result = DType::F32;  ///< the anchors' result dtype
  DType acc = DType::F32;     ///< F32 or F64
  bool tensorCores = false;   ///< f16/bf16 operands: mma.sync; else SIMT in `acc`
  std::set<const Op *> prologue;
  std::vector<std::string> dims; ///< the result shape, C expressions
  std::string rows;              ///< all rows of the result (batches x m)
  std::string m;                 ///< rows of one product
  std::string batches;           ///< products ("1LL" when the batch folds into m)
  int64_t n = 0, k = 0;
  bool staticShapes = true;
  TileConfig tile;
  std::vector<std::string> params;  ///< the signature, in order
  std::vector<std::string> inputs;  ///< C name of each kernel operand
  std::vector<std::string> outputs; ///< C name of each kernel result
  std::vector<KernelArg> args;
};

/// analyzeGemm, then the tiles (the kernel's `config` attribute, or the
/// defaults of Gemm.cpp): everything either back end renders.
bool planGemm(const Op &kernel, const std::string &entry, Plan &plan, Diagnostics &diags);

/// Fills `plan` from `kernel`'s body: anchors, sources, chains, shapes,
/// parameters. Reports every problem at its op and returns false.
bool analyzeGemm(const Op &kernel, const std::string &entry, Plan &plan, Diagnostics &diags);

/// The shapes of `plan` (anchors and sources known): extents, folding of
/// the batch into the rows, batch offsets, Dim parameters. False after an
/// error at the first anchor (symbolic dims the template cannot take).
bool analyzeShapes(Plan &plan, Diagnostics &diags);

/// "4096LL": a C literal of an extent.
std::string lit(int64_t v);
/// The product of C extents, its literal factors folded into one.
std::string productOf(const std::vector<std::string> &exprs);
/// `x`, of computeType(src.stored), converted through the prologue casts;
/// with `dropLast`, the last cast (to an f16/bf16 the caller rounds to
/// anyway) is left out when that changes nothing.
std::string castChain(const Source &src, const std::string &x, bool dropLast = false);

/// The epilogue device functions of every chain.
std::string epilogueFunctions(const Plan &plan);
/// A loop (each line starting with `indent`) over the block's bm x bn
/// output tile, four columns a thread, that reads the accumulators from the
/// shared array `tileC` (row stride `ldc`) and runs each element's chain
/// epilogue, storing the results inside the output; needs tid, m0, n0, z,
/// rowsM, chain.
std::string epilogueLoop(const Plan &plan, int ldc, const std::string &indent);

/// Statements computing rowsM, tilesM, tilesN and numTiles.
std::string tilePrelude(const Plan &plan, const std::string &indent);
/// Statements that decode `tile` (a long long) into chain, z, m0 and n0,
/// and set pointers `a` and `b` to the batch's matrices.
std::string tileDecode(const Plan &plan, const std::string &indent);
/// One block of plan.tile.threads() per tile (at most 2^31 - 1 blocks)
/// with `sharedBytes` of dynamic shared memory; nullopt for symbolic rows.
std::optional<LaunchConfig> staticLaunch(const Plan &plan, int sharedBytes);
/// The C type of the tile loop's index: int when the static tile count
/// fits one, else long long (symbolic rows or more than 2^31 - 1 tiles).
std::string tileIndexType(const Plan &plan);
/// "// fuses: ..." and the shape line of the kernel's leading comment.
std::string kernelComment(const Plan &plan, const std::string &how);

/// Per-tile declarations of the operand loaders (source pointers, bounds).
std::string loaderTileSetup(const Plan &plan, const std::string &indent);
/// Declarations of the registers `ra`, `rb` of operands staged through them.
std::string loaderRegisters(const Plan &plan, const std::string &indent);
/// Statements that start loading the tiles of K step `kt` into the
/// shared-memory stage at address `stage`: cp.async copies, or fetches
/// into registers.
std::string loaderIssue(const Plan &plan, const std::string &stage, const std::string &kt,
                        const std::string &indent);
/// Statements that move the fetched registers into the stage.
std::string loaderStage(const Plan &plan, const std::string &stage, const std::string &indent);

/// The tensor-core kernel (f16/bf16 operands), launch set when static.
std::string tensorCoreKernel(const Plan &plan, std::optional<LaunchConfig> &launch);
/// The schedule of a tensor-core or SIMT plan in words ("tile 128x128x32, ..."),
/// for the kernel's comment and its facts.
std::string tensorCoreSchedule(const Plan &plan);
std::string simtSchedule(const Plan &plan);
/// The SIMT kernel (f32/f64 accumulation), launch set when static.
std::string simtKernel(const Plan &plan, std::optional<LaunchConfig> &launch);

} // namespace fusec::codegen::gemm
