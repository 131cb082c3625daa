// Naming of generated kernels, shared by every template.
#include "codegen/GeneratedKernel.h"

#include "ir/Graph.h"

#include <cctype>

namespace fusec {

std::string cIdentifier(std::string_view s) {
  std::string out;
  for (char c : s)
    out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out;
}

std::string EntryNamer::operator()(const Op &kernel, std::string_view graphName) {
  std::string result = kernel.numResults() ? kernel.result(0)->name() : "kernel";
  return names.fresh("fusec_" + cIdentifier(graphName) + "_", result);
}

uint64_t kernelParamBytes(const std::vector<KernelArg> &args) {
  uint64_t bytes = 0;
  for (const KernelArg &a : args)
    bytes = a.kind == KernelArg::Kind::TensorMap ? (bytes + 63) / 64 * 64 + 128 : bytes + 8;
  return bytes;
}

const char *backendName(Backend b) { return b == Backend::Nvrtc ? "nvrtc" : "llvm"; }

} // namespace fusec
