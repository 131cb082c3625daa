// Internal to the attention template: the plan of a flash-attention kernel, from the analysis of
// its body (Analysis.cpp); all that the kir builder (Attention.cpp) reads. Every extent is static.
#pragma once

#include "codegen/GeneratedKernel.h"
#include "ir/Diagnostics.h"
#include "ir/Graph.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace fusec::attention {

using Sizes = std::vector<int64_t>;

/// Elements of the largest constant mask the kernel holds as a table.
constexpr size_t kMaxMaskTable = 1 << 16;

/// One operand as the kernel reads it (or the result as it writes it), in place through the
/// reshapes, transposes and slices around the attention: elements between the matrices of
/// consecutive indices of each batch dim (0 where it broadcasts), and between rows and columns of
/// a matrix; the kernel operand it reads and the element its first is.
struct Operand {
  Sizes batch;
  int64_t row = 0, col = 1;
  unsigned input = 0;
  int64_t offset = 0;
};

struct Plan {
  const Op *kernel = nullptr, *attention = nullptr;
  std::string entry;
  DType dtype = DType::F16;
  int64_t sq = 0, sk = 0, d = 0, dv = 0;
  Sizes batch; ///< the output's leading dims
  Operand q, k, v, o, mask;
  bool hasMask = false, causal = false;
  DType maskType = DType::F32;          ///< as the kernel reads it
  const DenseData *maskTable = nullptr; ///< a constant mask, read from a table of f32
  double scale = 1;
  int warps = 4;            ///< a block's warps (on sm_90a: 4 a warpgroup)
  int blocks = 1;           ///< m16 row blocks a warp owns
  int bc = 64;              ///< keys a tile
  int stages = 2;           ///< K/V tiles in flight (shared-memory stages)
  bool wgmma = false;       ///< the GEMMs as one warpgroup's wgmma (sm_90a), not mma.sync
  bool qInRegisters = true; ///< Q's fragments are read from shared memory once, else every tile
  /// Warp-specialized (sm_90a; docs/codegen-attention.md section 5): a producer warpgroup
  /// TMA-loads Q, K and V (tensor-map arguments qMap, kMap, vMap, the last three) for `warps`
  /// / 4 consumer warpgroups that compute, taking turns on the tensor cores.
  bool specialized = false;
  /// Decode (flash-decoding; docs/codegen-attention.md section 6), for a few queries: a block's
  /// rows are the Sq queries of every head that reads its K/V (the batch dims along which K and
  /// V both broadcast, `grouped`), row r query r % Sq of head r / Sq; its warps split each key
  /// tile (warp w keys w·bc/warps on); `splits` blocks share one unit's keys, `splitKeys` each:
  /// when there are several, each writes its part to the scratch and counts itself in the unit's
  /// counter there, and the last to arrive combines the parts (and sets the counter back to 0).
  bool decode = false;
  std::vector<bool> grouped; ///< decode: the batch dims folded into a block's rows
  int64_t group = 1;         ///< decode: heads a block (the product of the grouped dims)
  int splits = 1;            ///< decode: blocks a unit's keys are split across
  int64_t splitKeys = 0;     ///< decode: keys a split (whole tiles)
  std::vector<KernelArg> args;

  int threads() const { return 32 * warps + (specialized ? 128 : 0); }
  int br() const { return decode ? 16 * blocks : 16 * warps * blocks; }
  /// Keys of a tile that one warp multiplies.
  int keysPerWarp() const { return decode ? bc / warps : bc; }
  /// Rows of a unit, the batch index (decode: the group of heads) a query tile belongs to.
  int64_t rows() const { return decode ? group * sq : sq; }
  int64_t units() const { return batchCount() / group; }
  /// Keys some query sees: causal attention is top-left aligned (query i sees keys 0 to i).
  int64_t keys() const { return causal ? std::min(sq, sk) : sk; }
  /// The scratch of a decode with splits: per unit, row and split dv f32 of O and its log-sum
  /// (partsBytes), then an i32 counter per unit.
  int64_t partsBytes() const { return (units() * rows() * splits * (dv + 1) * 4 + 15) / 16 * 16; }
  int64_t scratchBytes() const { return splits > 1 ? partsBytes() + units() * 4 : 0; }
  /// The head dims as the tensor cores step through them (k16 slices of Q·Kᵀ, n16 pairs of P·V):
  /// d and dv rounded up to 16, the columns past them zeros.
  int64_t dk() const { return roundUp16(d); }
  int64_t dvk() const { return roundUp16(dv); }
  /// Elements of a row of the shared Q and K tiles, and of V's: a power of two up to 64 (the
  /// swizzle spans the row), whole 64-element (128-byte) panels above.
  int64_t qkWidth() const { return tileWidth(d); }
  int64_t vWidth() const { return tileWidth(dv); }
  /// Shared memory a block uses: Q's tile and `stages` K/V stages; for decode at least the warps'
  /// states that the epilogue merges (mergeBytes).
  int64_t sharedBytes() const {
    int64_t tiles = 2 * (br() * qkWidth() + stages * bc * (qkWidth() + vWidth()));
    return std::max(tiles, mergeBytes());
  }
  /// Decode: every warp's O (br x dv f32), then its row maxima and sums (br f32 each).
  int64_t mergeBytes() const { return decode ? warps * br() * (dv + 2) * 4 : 0; }
  int64_t batchCount() const {
    int64_t n = 1;
    for (int64_t x : batch)
      n *= x;
    return n;
  }
  int64_t queryTiles() const { return (rows() + br() - 1) / br(); }

private:
  static int64_t roundUp16(int64_t x) { return (x + 15) / 16 * 16; }
  static int64_t tileWidth(int64_t x) { return x <= 32 ? 32 : x <= 64 ? 64 : (x + 63) / 64 * 64; }
};

/// The plan of `kernel` (template "attention"), entry point `entry`, for GPU `target` (Hopper's
/// warpgroup instructions on sm_90a); false after reporting why the template does not take it.
bool analyze(const Op &kernel, const std::string &entry, std::string_view target, Plan &p,
             Diagnostics &diags);

} // namespace fusec::attention
