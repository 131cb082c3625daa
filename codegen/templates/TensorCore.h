// Shared-memory tiles for the tensor cores, as the gemm and attention templates lay them out: rows
// of 16-byte chunks, chunk c of row r stored at c ^ (a few low bits of r), so that the 8 row
// addresses an ldmatrix reads fall in 8 distinct 4-bank groups, and so do a cp.async's stores.
#pragma once

#include "codegen/kir/Kir.h"

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

} // namespace fusec::templates
