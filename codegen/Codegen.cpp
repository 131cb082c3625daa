// Dispatch from an op to the builder of its kernel template, one table: a
// kernel op by its template, any other op to its generic kernel. Every
// template builds its kernel once, in kir; the kernel is verified and the
// chosen back end renders it (codegen/cuda/, codegen/llvm/).
#include "codegen/Codegen.h"

#include "codegen/cuda/Render.h"
#include "codegen/llvm/Render.h"
#include "codegen/templates/Pointwise.h"
#include "codegen/templates/attention/Attention.h"
#include "codegen/templates/gemm/Gemm.h"
#include "codegen/templates/generic/Generic.h"
#include "codegen/templates/rowred/RowReduction.h"
#include "ir/Assert.h"
#include "ir/Cost.h"
#include "ir/Kernel.h"

namespace fusec {

namespace {

// Note [Dependent launch]
// On sm_90 and later a kernel may be launched to start before the kernel before it on the stream
// has ended (programmatic dependent launch). Every generated kernel for such a target is built
// for it: each thread first waits until the kernels before it completed with their writes visible
// (griddepcontrol.wait), before any memory access, so that it reads nothing the one before it
// writes, and writes nothing it reads, too early; the runtime launches it so
// (LaunchConfig::dependent). Waiting on nothing returns at once: a kernel launched plainly runs
// as ever. The kernel before it lets it launch when its blocks exit, so what overlaps is the
// launch and the wait for the writes to land. Measured on the H100 (bench/RESULTS.md,
// 2026-11-28): BERT-base B1 S128 44.3 us a graph replay (45.2 without), B8 S512 172.6 (172.9),
// and direct launches 13% and 6% faster; a trigger at each block's start instead
// (griddepcontrol.launch_dependents) made the graphs slower (B8 S512 178 us), and so did one in
// the gemm's consumers after their last tile's main loop, before its epilogue (H200, 2026-11-28:
// B8 S512 151.4-151.7 us against 149.0-149.8 without; the LLaMA layer the same).
bool dependentLaunches(std::string_view target) {
  return target.starts_with("sm_") && std::atoi(std::string(target.substr(3)).c_str()) >= 90;
}

GeneratedKernel renderKir(templates::KirKernel k, Backend backend, std::string_view target) {
  k.kernel.dependent = dependentLaunches(target);
  if (k.launch)
    k.launch->dependent = k.kernel.dependent;
  std::vector<std::string> errors = kir::verify(k.kernel);
  FUSEC_ASSERT(errors.empty(),
               ("kernel " + k.kernel.name + " is invalid kir: " + errors.front()).c_str());
  std::string source = backend == Backend::Llvm ? llvmir::render(k.kernel) : cuda::render(k.kernel);
  GeneratedKernel out{k.kernel.name, std::move(source), std::move(k.args),
                      k.launch,      k.scratchBytes,    backend};
  out.facts.schedule = std::move(k.schedule);
  out.kir = std::make_shared<const kir::Kernel>(std::move(k.kernel));
  return out;
}

/// The kir kernel of `op`'s template (a kernel op) or generic kernel.
std::optional<templates::KirKernel> build(const Op &op, const std::string &entry,
                                          std::string_view target, Diagnostics &diags) {
  if (op.kind() != OpKind::Kernel)
    return generic::buildGeneric(op, entry, diags);
  const std::string &name = op.getString("template");
  switch (*lookupKernelTemplate(name)) {
  case KernelTemplate::Pointwise:
    return templates::buildPointwise(op, entry, diags);
  case KernelTemplate::RowReduction:
    return rowred::buildRowReduction(op, entry, diags);
  case KernelTemplate::Gemm:
    return gemm::buildGemm(op, entry, target, diags);
  case KernelTemplate::Attention:
    return attention::buildAttention(op, entry, target, diags);
  }
  FUSEC_ASSERT(false, "unknown kernel template");
}

std::optional<GeneratedKernel> render(const Op &op, const std::string &entry, Diagnostics &diags,
                                      Backend backend, std::string_view target) {
  std::optional<templates::KirKernel> k = build(op, entry, target, diags);
  return k ? std::optional(renderKir(std::move(*k), backend, target)) : std::nullopt;
}

} // namespace

std::optional<GeneratedKernel> emitKernel(const Op &op, const std::string &entry,
                                          Diagnostics &diags, Backend backend,
                                          std::string_view target) {
  std::optional<GeneratedKernel> k = render(op, entry, diags, backend, target);
  if (!k)
    return k;
  // The schedule is the template's; the rest is what the op computes.
  KernelFacts &f = k->facts;
  f.generic = op.kind() != OpKind::Kernel;
  f.templateName = f.generic ? std::string(op.name()) : op.getString("template");
  f.fuses = fusedOpNames(op);
  f.bytes = mustMoveBytes(op);
  f.flops = contractionFlops(op);
  return k;
}

std::vector<std::string> tuningCandidates(const Op &op, std::string_view target) {
  if (op.kind() != OpKind::Kernel)
    return {};
  switch (*lookupKernelTemplate(op.getString("template"))) {
  case KernelTemplate::Gemm:
    return gemm::tuningConfigs(op, target);
  case KernelTemplate::Pointwise:
  case KernelTemplate::RowReduction:
  case KernelTemplate::Attention:
    return {};
  }
  FUSEC_ASSERT(false, "unknown kernel template");
}

} // namespace fusec
