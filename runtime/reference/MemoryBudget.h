// The host memory a run may take: tensors are reserved against a budget
// before they are allocated, so that a graph or an input too large for the
// machine is refused with its sizes named, never ended by bad_alloc or the
// kernel's OOM killer.
//
// Note [Memory budget]
// `fusec run` makes one budget (--memory-budget, default the memory this
// machine has available) and charges it with every input it creates or reads,
// every tensor the CPU reference executor holds (released at each value's
// last use) and every output a GPU run copies back. Device memory is the
// driver's to refuse: a failed allocation is reported with what it was for.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/Types.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fusec {

/// The memory this machine has available now (Linux's MemAvailable: free
/// memory and what the page cache can give back), else its physical memory.
uint64_t availableMemoryBytes();

class MemoryBudget {
public:
  explicit MemoryBudget(uint64_t limit = availableMemoryBytes()) : limitBytes(limit) {}

  /// Reserves the tensor of `what` (dtype and shape) or reports, at `loc`,
  /// "<what> of type f32[1000000000] needs 4000000000 bytes; with 12000000000 in
  /// use that is more than the memory budget of 16000000000 bytes" (or the
  /// one-tensor limit of Tensor.h) and returns false.
  bool reserve(DType dtype, const std::vector<int64_t> &shape, const std::string &what, Loc loc,
               Diagnostics &diags);
  /// Reserves `bytes` already known to fit one tensor; false after reporting.
  bool reserveBytes(uint64_t bytes, const std::string &what, Loc loc, Diagnostics &diags);
  void release(uint64_t bytes) { used -= std::min(used, bytes); }

  uint64_t limit() const { return limitBytes; }
  uint64_t remaining() const { return limitBytes - std::min(limitBytes, used); }

private:
  uint64_t limitBytes;
  uint64_t used = 0;
};

} // namespace fusec
