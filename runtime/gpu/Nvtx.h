// NVTX ranges, for Nsight Systems and Nsight Compute (`ncu --nvtx`): fusec
// names each kernel launch, each run of a program and each NVRTC compile
// in the domain "fusec". Without a profiler attached a range costs a
// few nanoseconds; builds without CUDA's nvtx3 headers get no ranges.
#pragma once

#include <string>

namespace fusec::nvtx {

/// A push/pop range on the calling thread for the scope of the object.
class Range {
public:
  explicit Range(const std::string &name);
  ~Range();
  Range(const Range &) = delete;
  Range &operator=(const Range &) = delete;
};

} // namespace fusec::nvtx
