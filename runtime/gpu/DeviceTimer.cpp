#include "runtime/gpu/DeviceTimer.h"

#include <algorithm>
#include <vector>

namespace fusec {

// Note [Timing like do_bench]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~
// bench/run.py times PyTorch with triton.testing.do_bench, which enqueues,
// for each run, a clear of a 256 MB buffer, an event, the run and an event,
// and reads all events at the end. fusec's runs are timed the same way:
//  - the clear evicts the last run's inputs and outputs from the 50 MB L2,
//    so a run of 32 MB in and out starts as cold as PyTorch's does;
//  - nothing waits between runs, so the device is busy with the clear while
//    the host enqueues the run. Recording an event, launching and waiting
//    for each run in turn instead starts the clock while the host is still
//    submitting the launch: 2-4 us more per run, a tenth of a 30 us kernel.
// The dirty lines the clear leaves in L2 are written back during the run,
// as they are in PyTorch's measurement.
constexpr size_t kFlushBytes = size_t(256) << 20;

std::unique_ptr<DeviceTimer> DeviceTimer::create(Diagnostics &diags) {
  std::optional<gpu::DevicePtr> flush =
      gpu::allocate(kFlushBytes, diags, "the L2 flush buffer of the timer");
  if (!flush)
    return nullptr;
  return std::unique_ptr<DeviceTimer>(new DeviceTimer(*flush));
}

DeviceTimer::~DeviceTimer() { gpu::release(flush); }

std::optional<float> DeviceTimer::medianMs(gpu::Stream stream, unsigned warmups, unsigned reps,
                                           llvm::function_ref<bool()> enqueue, Diagnostics &diags) {
  for (unsigned r = 0; r < warmups; ++r)
    if (!enqueue())
      return std::nullopt;
  std::vector<gpu::Event> events;
  bool ok = true;
  for (unsigned r = 0; ok && r < reps; ++r) {
    std::optional<gpu::Event> start = gpu::createEvent(diags);
    std::optional<gpu::Event> end = start ? gpu::createEvent(diags) : std::nullopt;
    if (start)
      events.push_back(*start);
    if (end)
      events.push_back(*end);
    ok = end && gpu::fill(flush, 0, kFlushBytes, stream, diags) &&
         gpu::recordEvent(*start, stream, diags) && enqueue() &&
         gpu::recordEvent(*end, stream, diags);
  }
  std::vector<float> times;
  for (size_t i = 0; ok && i < events.size(); i += 2) {
    std::optional<float> ms = gpu::elapsedMs(events[i], events[i + 1], diags);
    ok = ms.has_value();
    if (ok)
      times.push_back(*ms);
  }
  for (gpu::Event e : events)
    gpu::destroyEvent(e);
  if (!ok || times.empty())
    return std::nullopt;
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

} // namespace fusec
