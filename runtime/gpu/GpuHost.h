// Running a GpuProgram on host tensors: what `fusec run`, `fusec bench` and
// the GPU tests do. Device buffers for the inputs and outputs are allocated
// per call and freed on return.
#pragma once

#include "runtime/gpu/GpuProgram.h"
#include "runtime/reference/Tensor.h"

#include <vector>

namespace fusec {

/// Device buffers, freed on destruction.
class DeviceBuffers {
public:
  DeviceBuffers() = default;
  ~DeviceBuffers();
  DeviceBuffers(const DeviceBuffers &) = delete;
  DeviceBuffers &operator=(const DeviceBuffers &) = delete;

  /// Allocates `bytes` (named `what` in an out-of-memory error).
  bool add(size_t bytes, Diagnostics &diags, const std::string &what);
  const std::vector<gpu::DevicePtr> &pointers() const { return ptrs; }

private:
  std::vector<gpu::DevicePtr> ptrs;
};

/// Allocates and fills device inputs from host tensors, and output buffers
/// for the program's outputs filled with 0xff bytes (NaN in every float
/// dtype, -1 in integers) so that an element no kernel writes shows.
bool prepareBuffers(const GpuProgram &p, const std::vector<Tensor> &inputs, DeviceBuffers &in,
                    DeviceBuffers &out, Diagnostics &diags);

/// Copies the program's outputs back into host tensors of their types.
bool downloadOutputs(const GpuProgram &p, const DeviceBuffers &out, std::vector<Tensor> &outputs,
                     Diagnostics &diags);

/// prepareBuffers, one run on a fresh stream, downloadOutputs.
bool runOnHostTensors(GpuProgram &p, const std::vector<Tensor> &inputs,
                      std::vector<Tensor> &outputs, Diagnostics &diags);

} // namespace fusec
