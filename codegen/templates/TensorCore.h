// Shared-memory tiles for the tensor cores, as the gemm and attention templates lay them out: rows
// of 16-byte chunks, chunk c of row r stored at c ^ (a few low bits of r), so that the 8 row
// addresses an ldmatrix reads fall in 8 distinct 4-bank groups, and so do a cp.async's stores.
// And the ring of stages the warp-specialized schedules (sm_90a) fill and drain on mbarriers.
#pragma once

#include "codegen/kir/Kir.h"

#include <utility>

namespace fusec::templates {

/// The byte offset of chunk `chunk` of row `row` (both i32) in a swizzled tile of `chunks` chunks a
/// row (a power of two >= 2): chunk ^ (row & 7) from 8 chunks up, chunk ^ ((row >> 1) & 3) for 4,
/// chunk ^ ((row >> 2) & 1) for 2. A step of 16 rows or of 2 chunks commutes with it (Note
/// [Fragment addresses] in gemm/Gemm.cpp).
inline kir::ValueId swizzledChunk(kir::Builder &b, kir::ValueId row, kir::ValueId chunk,
                                  int chunks) {
  using kir::IndexOp;
  auto i32 = [&](int64_t v) { return b.constant(DType::I32, v); };
  kir::ValueId s;
  if (chunks >= 8) {
    s = b.arith(IndexOp::And, row, i32(7));
  } else { // 4 chunks: (row >> 1) & 3; 2 chunks: (row >> 2) & 1
    kir::ValueId mask = i32(chunks == 4 ? 3 : 1);
    kir::ValueId shifted = b.arith(IndexOp::Shr, row, i32(chunks == 4 ? 1 : 2));
    s = b.arith(IndexOp::And, shifted, mask);
  }
  kir::ValueId x = b.arith(IndexOp::Xor, chunk, s);
  kir::ValueId at = b.add(b.mul(row, i32(chunks)), x);
  return b.mul(at, i32(16));
}

/// The parity (i32) of the phase of an mbarrier at its use number `n` (i64), used once a phase.
inline kir::ValueId phaseParity(kir::Builder &b, kir::ValueId n) {
  kir::ValueId bit = b.arith(kir::IndexOp::And, n, b.index(1));
  return b.convert(DType::I32, bit, "parity");
}

/// A ring of `stages` shared-memory stages, each with its mbarriers, that producer and consumers
/// go through in the same order, each counting its uses: the slot (i64) of use number `n` (i64)
/// and the parity (i32) of its barriers' phase then.
inline std::pair<kir::ValueId, kir::ValueId> ringSlot(kir::Builder &b, kir::ValueId n,
                                                      int64_t stages) {
  kir::ValueId slot = b.arith(kir::IndexOp::Rem, n, b.index(stages), "slot");
  kir::ValueId lap = b.arith(kir::IndexOp::Div, n, b.index(stages));
  return {slot, phaseParity(b, lap)};
}

} // namespace fusec::templates
