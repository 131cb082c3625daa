// Device time of work enqueued on a stream, measured the way
// triton.testing.do_bench measures PyTorch, so that fusec and the peers it is
// compared with are timed alike (Note [Timing like do_bench] in
// DeviceTimer.cpp).
#pragma once

#include "ir/Diagnostics.h"
#include "runtime/gpu/CudaDriver.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <memory>
#include <optional>

namespace fusec {

class DeviceTimer {
public:
  /// Allocates the buffer that flushes the L2 cache; nullptr after
  /// reporting an error.
  static std::unique_ptr<DeviceTimer> create(Diagnostics &diags);
  ~DeviceTimer();
  DeviceTimer(const DeviceTimer &) = delete;
  DeviceTimer &operator=(const DeviceTimer &) = delete;

  /// Median milliseconds of `reps` > 0 runs of `enqueue` (which enqueues one
  /// run on `stream` and returns false after reporting an error), after
  /// `warmups` untimed runs.
  std::optional<float> medianMs(gpu::Stream stream, unsigned warmups, unsigned reps,
                                llvm::function_ref<bool()> enqueue, Diagnostics &diags);

private:
  explicit DeviceTimer(gpu::DevicePtr flush) : flush(flush) {}
  gpu::DevicePtr flush;
};

} // namespace fusec
