// Index math every template builds in kir: the coordinates of a flat index in a row-major space,
// and strided offsets over them.
#pragma once

#include "codegen/kir/Kir.h"

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

namespace fusec::templates {

/// The strides (in elements) of a row-major tensor of `shape`.
std::vector<int64_t> contiguousStrides(const std::vector<int64_t> &shape);

/// The strides of a tensor of `shape` laid out with `strides` and reshaped to `to` without moving
/// an element (NumPy's rule: each run of dims the reshape regroups is contiguous in itself; dims of
/// size 1 take no part); nullopt when it cannot be.
std::optional<std::vector<int64_t>> reshapedStrides(const std::vector<int64_t> &shape,
                                                    const std::vector<int64_t> &strides,
                                                    const std::vector<int64_t> &to);

/// The coordinates of `flat` in a row-major space of `rank` axes, at least along the axes in
/// `needed`: peeled off from the last axis down to the first needed one, `extent(a)` giving axis
/// a's size (asked only for the axes divided by). Empty when nothing is needed.
std::map<unsigned, kir::ValueId> coordinates(kir::Builder &b, kir::ValueId flat, unsigned rank,
                                             const std::set<unsigned> &needed,
                                             const std::function<kir::ValueId(unsigned)> &extent);

/// The sum of coordinate * stride over `terms` (axis, stride) in order, plus `base` when given; a
/// stride that is the constant 1 multiplies nothing. The constant 0 for no terms and no base.
kir::ValueId stridedOffset(kir::Builder &b, const std::map<unsigned, kir::ValueId> &coords,
                           const std::vector<std::pair<unsigned, kir::ValueId>> &terms,
                           kir::ValueId base = kir::kNoValue);

/// The step (blocks * threads) and this thread's first index of a grid-stride loop, built in that
/// order: the order the CUDA writers had (ptxas scheduled the other one slower, bench/RESULTS.md
/// 2026-11-26).
std::pair<kir::ValueId, kir::ValueId> gridStride(kir::Builder &b);

/// for (i = first; i < count; i += step) body(i), as gridStride says.
void gridStrideLoop(kir::Builder &b, kir::ValueId count,
                    const std::function<void(kir::ValueId i)> &body);

} // namespace fusec::templates
