// Host-tensor runs of a GpuProgram (see GpuHost.h).
#include "runtime/gpu/GpuHost.h"

namespace fusec {

DeviceBuffers::~DeviceBuffers() {
  for (gpu::DevicePtr p : ptrs)
    gpu::release(p);
}

bool DeviceBuffers::add(size_t bytes, Diagnostics &diags, const std::string &what) {
  std::optional<gpu::DevicePtr> p = gpu::allocate(bytes, diags, what);
  if (p)
    ptrs.push_back(*p);
  return p.has_value();
}

bool prepareBuffers(const GpuProgram &p, const std::vector<Tensor> &inputs, DeviceBuffers &in,
                    DeviceBuffers &out, Diagnostics &diags) {
  const Graph &g = p.graph();
  for (unsigned i = 0; i < inputs.size(); ++i) {
    const Tensor &t = inputs[i];
    const TensorType &type = g.input(i)->type();
    if (t.dtype != type.dtype || t.shape != staticSizes(type.shape)) {
      diags.error(g.loc(), "input '%" + g.input(i)->name() + "' of type " + type.str() +
                               " was given " + t.typeStr());
      return false;
    }
    if (!in.add(t.bytes.size(), diags, "input '%" + g.input(i)->name() + "'") ||
        !gpu::copyToDevice(in.pointers().back(), t.bytes.data(), t.bytes.size(), diags))
      return false;
  }
  for (const Value *v : g.outputs()) {
    size_t bytes = Tensor(v->type().dtype, staticSizes(v->type().shape)).bytes.size();
    if (!out.add(bytes, diags, "output '%" + v->name() + "'") ||
        !gpu::fill(out.pointers().back(), 0xff, bytes, diags))
      return false;
  }
  return true;
}

bool downloadOutputs(const GpuProgram &p, const DeviceBuffers &out, std::vector<Tensor> &outputs,
                     Diagnostics &diags) {
  const Graph &g = p.graph();
  outputs.clear();
  for (unsigned j = 0; j < g.outputs().size(); ++j) {
    const Value &v = *g.outputs()[j];
    Tensor t(v.type().dtype, staticSizes(v.type().shape));
    if (!gpu::copyToHost(t.bytes.data(), out.pointers()[j], t.bytes.size(), diags))
      return false;
    outputs.push_back(std::move(t));
  }
  return true;
}

bool runOnHostTensors(GpuProgram &p, const std::vector<Tensor> &inputs,
                      std::vector<Tensor> &outputs, Diagnostics &diags) {
  DeviceBuffers in, out;
  std::optional<gpu::Stream> stream = gpu::createStream(diags);
  if (!stream)
    return false;
  bool ok = prepareBuffers(p, inputs, in, out, diags) &&
            p.enqueue(in.pointers(), out.pointers(), *stream, diags) &&
            gpu::synchronize(*stream, diags) && downloadOutputs(p, out, outputs, diags);
  gpu::destroyStream(*stream);
  return ok;
}

} // namespace fusec
