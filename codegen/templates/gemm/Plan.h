// Internal to the gemm template: the plan of a gemm kernel, from the analysis of its body
// (Analysis.cpp) and the choice of tiles (Tiles.cpp); all that the kir builder (Gemm.cpp) reads.
// A body is: cast prologues on the operands, one or more matmul/linear "anchors" sharing their A
// operand (one chain each), and per chain the pointwise epilogue ops over its result. Every
// extent is a number, or the product of one and the parameters carrying named dims.
#pragma once

#include "codegen/GeneratedKernel.h"
#include "ir/Diagnostics.h"
#include "ir/Graph.h"

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace fusec::gemm {

/// Where a contraction operand (or linear's bias) comes from: kernel input `input`, stored as
/// `stored`, then cast through `casts` (the prologue).
struct Source {
  unsigned input = 0;
  DType stored = DType::F32;
  std::vector<DType> casts;

  /// The dtype the contraction sees.
  DType type() const { return casts.empty() ? stored : casts.back(); }
};

/// A size: `factor` times the named dims that kernel arguments `dims` (indices into Plan::args,
/// each a KernelArg::Dim) carry; static when there are none.
struct Extent {
  int64_t factor = 1;
  std::vector<unsigned> dims;

  bool isStatic() const { return dims.empty(); }
  Extent operator*(const Extent &o) const {
    Extent e{factor * o.factor, dims};
    e.dims.insert(e.dims.end(), o.dims.begin(), o.dims.end());
    return e;
  }
};

/// One term of a matrix's offset for batch z: (z / outer % size) * stride elements (size 0: no
/// modulo).
struct BatchTerm {
  int64_t outer = 1, size = 0, stride = 0;
};

/// conv2d's A operand (Note [Implicit gemm] in Gemm.cpp): the im2col view of an NHWC input, row m
/// the output pixel (image, oh, ow), column k = (i * kw + j) * c + channel for filter tap (i, j);
/// never formed.
struct Window {
  int64_t h = 0, w = 0, c = 0; ///< the input's height, width and channels
  int64_t kh = 1, kw = 1;      ///< the filter's height and width
  int64_t oh = 0, ow = 0;      ///< the output's height and width
  int64_t strideH = 1, strideW = 1, padTop = 0, padLeft = 0, dilationH = 1, dilationW = 1;
};

/// A matrix operand as laid out in memory, per batch: `outer` rows of `inner` contiguous
/// elements. A is M x K (kMajor) or K x M; B is N x K (kMajor: transposed, or linear's weight)
/// or K x N.
struct Matrix {
  std::vector<Source> sources; ///< one per chain (A: the same for every chain)
  bool kMajor = true;
  Extent outer;
  int64_t inner = 0;                  ///< always static
  std::vector<BatchTerm> batchOffset; ///< elements to the matrix of batch `z`; none: 0
  bool async = false; ///< tensor cores, copied by cp.async (no cast, rows of whole chunks)
  /// A of a conv2d: gathered from the input through the window; `inner` is then K.
  std::optional<Window> window;

  /// Whether 8 elements along K (or along the contiguous dim) are one 16-byte chunk in memory:
  /// the rows, or a gathered A's channels, are a multiple of 8.
  bool wholeChunks() const { return (window ? window->c : inner) % 8 == 0; }
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
  int specialized = 1;        ///< sm_90a: the warp-specialized wgmma schedule where it applies
  int splitK = 1;             ///< wgmma: blocks a tile's K steps are split over
  /// wgmma: the producer warpgroup's three other warps run the epilogue while the consumers go
  /// on with the next tile (Note [Epilogue warps]).
  int epilogueWarps = 0;
  /// wgmma: each tile's epilogue runs from its products rounded to their 2-byte dtype under the
  /// next tile's K steps: 1 kept in registers, in slices between the first K steps (Note
  /// [Overlapped epilogue]); 2 staged in shared memory, a few vectors a thread under each K step
  /// (Note [Staged epilogue]).
  int overlap = 0;
  /// overlap: the slices asked for (`slices=N`: each a power of two columns wide), 0 for the
  /// default (a quarter of the tile, at most 128 bytes of the widest result; setSlices).
  int slicesAsked = 0;
  /// overlap: the columns of one slice of a tile's epilogue, and the bytes of one slice of the
  /// results in shared memory, which TMA stores copy out (Note [Overlapped epilogue]); 0 bytes
  /// where the results are stored from the registers.
  int sliceColumns = 0, sliceBytes = 0;
  /// Set from Plan::paired: a tile holds both products of a paired gemm, chain 0's columns in its
  /// first half, chain 1's same columns in its second.
  bool paired = false;
  /// wgmma: the blocks of a cluster (1 or 2), which take vertically neighbouring tiles and load
  /// their common B tile once between them (Note [Clustered tiles] in Gemm.cpp).
  int cluster = 1;
  /// wgmma, a conv2d of stride 1: tiles of bm / 64 pieces of 8 x 8 output pixels, A loaded as
  /// each piece's input rows with their halo, a box a filter column (Note [Halo tiles] in
  /// Gemm.cpp); else A by TMA's im2col mode.
  int halo = 0;
  /// The result columns a tile covers.
  int outN() const { return paired ? bn / 2 : bn; }
  int threads() const { return warpsM ? 32 * warpsM * warpsN : (bm / tm) * (bn / tn); }
  /// wgmma: the epilogue reads the output tile from shared memory (beside the stages, row stride
  /// columns + 8): the f32 accumulators, a 256-wide tile 32 columns at a time; for the epilogue
  /// warps the whole tile of products rounded to their 2-byte dtype.
  /// Paired, a 256-wide tile's 16 result columns at a time (their 16 of each product).
  /// With the overlapped epilogue, the slices in flight to the TMA stores (kSliceBuffers); staged,
  /// the whole tile of rounded products.
  int outputColumns() const { return bn <= 128 || epilogueWarps ? bn : 32; }
  int outputBytes() const {
    if (overlap == 2)
      return bm * bn * 2;
    if (overlap)
      return kSliceBuffers * sliceBytes;
    return bm * (outputColumns() + 8) * (epilogueWarps ? 2 : 4);
  }
  /// overlap: the epilogue slices of a tile.
  int slices() const { return sliceColumns ? bn / sliceColumns : 0; }
  /// overlap: the shared-memory buffers the slices alternate between, so that a TMA store may
  /// still read one while the next is written (Note [Overlapped epilogue]).
  static constexpr int kSliceBuffers = 2;
  /// wgmma: blocks an SM runs at once. A 64-row tile (decode) has one consumer warpgroup and
  /// two blocks share the SM: twice the loads in flight for the weights it streams.
  int blocksPerSM() const { return bm == 64 ? 2 : 1; }
};

/// Note [Halo tiles] in Gemm.cpp: how halo tiles of `bm` rows cover a stride-1 conv2d's output of
/// `m` rows (images x oh x ow): each consumer warpgroup's 64 rows one piece of 8 x 8 output
/// pixels, the pieces of a tile consecutive in the images' row-major order of pieces.
struct HaloTiles {
  static constexpr int64_t kSide = 8; ///< a piece's rows and columns (a row: one core matrix)
  int64_t boxRows = 0;                ///< input rows a piece's box: its own and the filter's reach
  int64_t across = 0, down = 0, images = 0; ///< pieces along a row, down an image; images
  int64_t pieces = 0;                       ///< pieces of all images
  int64_t perTile = 1;                      ///< pieces a tile, bm / 64
  bool whole = false;                       ///< every tile lies wholly inside the output

  HaloTiles(const Window &w, int64_t m, int bm);
  int64_t count() const { return (pieces + perTile - 1) / perTile; }
  /// A piece's box in shared memory.
  int64_t boxBytes() const { return kSide * boxRows * 128; }
};

/// Everything the builder needs about one gemm kernel.
struct Plan {
  const Op *kernel = nullptr;
  const Graph *body = nullptr;
  std::string entry;
  std::vector<Chain> chains;
  /// Note [Paired gemm]: two chains whose epilogue combines them elementwise (SwiGLU's
  /// silu(x Wg) * (x Wu)) run as one product of both B's columns side by side in each tile;
  /// `joint` then evaluates every epilogue op of an element from both products and stores every
  /// result (its anchor is null).
  bool paired = false;
  Chain joint;
  /// The chains one tile may belong to (a grouped gemm's), or 1: one chain, or paired (every
  /// tile holds both products).
  int64_t tileChains() const { return paired ? 1 : int64_t(chains.size()); }
  Matrix a, b;
  DType operand = DType::F32; ///< the contraction's operand dtype
  DType acc = DType::F32;     ///< F32 or F64
  bool tensorCores = false;   ///< f16/bf16 operands: mma.sync; else SIMT in `acc`
  bool wgmma = false;         ///< sm_90a's warp-specialized schedule (TMA, mbarriers, wgmma)
  std::set<const Op *> prologue;
  std::set<unsigned> planar; ///< results a conv2d stores NCHW (Note [Planar results] in Gemm.cpp)
  std::vector<Extent> dims;  ///< the result shape
  Extent m;                  ///< rows of one product, the one extent that may be symbolic
  int64_t batches = 1;       ///< products (1 when the batch folds into m)
  int64_t n = 0, k = 0;
  TileConfig tile;
  std::vector<KernelArg> args; ///< inputs, outputs, then the named dims

  /// Split K (wgmma): the scratch holds each unit's f32 partial tile, then an i32 counter a tile.
  int64_t outputTiles() const; // tileCount(*this, tile) of the static rows split K needs
  int64_t partsBytes() const { return outputTiles() * tile.splitK * tile.bm * tile.bn * 4; }
  int64_t scratchBytes() const { return tile.splitK > 1 ? partsBytes() + outputTiles() * 4 : 0; }
  /// The warp-specialized schedule's K steps a tile (halo tiles: a step a 64-channel panel and
  /// filter column), and the bytes of a stage's A and of its A and B (halo tiles: B's tile for
  /// each filter row).
  int64_t kSteps(const TileConfig &t) const;
  /// How halo tiles `t` cover the result (Note [Halo tiles] in Gemm.cpp): a conv2d's only.
  HaloTiles haloTiles(const TileConfig &t) const { return HaloTiles(*a.window, m.factor, t.bm); }
  int aStageBytes(const TileConfig &t) const;
  int stageBytes(const TileConfig &t) const;
  /// The overlapped epilogue of tiles `t`: the bytes of kernel results [0, r) in a slice buffer,
  /// each result's part after those before it (r = the results' count: the whole slice).
  int sliceOffset(const TileConfig &t, unsigned r) const;
};

/// Fills `plan` but for its tiles from `kernel`'s body: anchors, sources, chains, shapes,
/// parameters. Reports every problem at its op and returns false.
bool analyzeGemm(const Op &kernel, const std::string &entry, Plan &plan, Diagnostics &diags);

/// Then the schedule and its tiles: on sm_90a (`target`) the warp-specialized one where it
/// applies (one product of static rows, A K-major, both operands copied as stored, no
/// `specialized=0` in the config), with the tensor maps of A and of each chain's B and, for a
/// split K, the scratch appended to the arguments; else mma.sync or SIMT. The kernel's `config`
/// attribute goes over the defaults of Tiles.cpp; false, with an error at the kernel, for a
/// malformed or unfit config.
bool chooseTiles(Plan &plan, std::string_view target, Diagnostics &diags);

/// Output tiles of the whole problem for tiles `t` (chains x batches x tile rows x tile
/// columns), or nullopt for symbolic rows.
std::optional<int64_t> tileCount(const Plan &plan, const TileConfig &t);

/// "f16[4,8], f16[8,2]": the types of `op`'s operands, for messages and comments.
std::string operandTypes(const Op &op);

} // namespace fusec::gemm
