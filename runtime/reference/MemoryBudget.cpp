// Host memory budgets (see MemoryBudget.h).
#include "runtime/reference/MemoryBudget.h"

#include "runtime/reference/Tensor.h"

#include <fstream>
#include <unistd.h>

namespace fusec {

uint64_t availableMemoryBytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  uint64_t kib;
  while (meminfo >> key >> kib)
    if (key == "MemAvailable:")
      return kib << 10;
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  return pages > 0 && size > 0 ? uint64_t(pages) * uint64_t(size) : uint64_t(1) << 34;
}

bool MemoryBudget::reserve(DType dtype, const std::vector<int64_t> &shape, const std::string &what,
                           Loc loc, Diagnostics &diags) {
  if (std::string problem = allocationProblem(dtype, shape); !problem.empty()) {
    diags.error(loc, what + " of type " + problem);
    return false;
  }
  return reserveBytes(*tensorBytes(dtype, shape), what + " of type " + tensorTypeStr(dtype, shape),
                      loc, diags);
}

bool MemoryBudget::reserveBytes(uint64_t bytes, const std::string &what, Loc loc,
                                Diagnostics &diags) {
  if (bytes <= remaining()) {
    used += bytes;
    return true;
  }
  diags.error(loc, what + " needs " + std::to_string(bytes) + " bytes; with " +
                       std::to_string(used) + " in use that is more than the memory budget of " +
                       std::to_string(limitBytes) + " bytes");
  return false;
}

} // namespace fusec
