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

GeneratedKernel renderKir(templates::KirKernel k, Backend backend) {
  std::vector<std::string> errors = kir::verify(k.kernel);
  FUSEC_ASSERT(errors.empty(),
               ("kernel " + k.kernel.name + " is invalid kir: " + errors.front()).c_str());
  std::string source = backend == Backend::Llvm ? llvmir::render(k.kernel) : cuda::render(k.kernel);
  GeneratedKernel out{k.kernel.name, std::move(source), std::move(k.args), k.launch,
                      k.scratchBytes, backend};
  out.facts.schedule = std::move(k.schedule);
  out.kir = std::make_shared<const kir::Kernel>(std::move(k.kernel));
  return out;
}

/// The kir kernels of `op`'s template (a kernel op) or generic kernel, in launch order; none when
/// it refuses.
std::vector<templates::KirKernel> build(const Op &op, const std::string &entry,
                                        const templates::PhaseNamer &phaseName,
                                        std::string_view target, Diagnostics &diags) {
  auto one = [](std::optional<templates::KirKernel> k) {
    std::vector<templates::KirKernel> phases;
    if (k)
      phases.push_back(std::move(*k));
    return phases;
  };
  if (op.kind() != OpKind::Kernel)
    return one(generic::buildGeneric(op, entry, diags));
  const std::string &name = op.getString("template");
  switch (*lookupKernelTemplate(name)) {
  case KernelTemplate::Pointwise:
    return one(templates::buildPointwise(op, entry, diags));
  case KernelTemplate::RowReduction:
    return one(rowred::buildRowReduction(op, entry, diags));
  case KernelTemplate::Gemm:
    return one(gemm::buildGemm(op, entry, diags));
  case KernelTemplate::Attention:
    return attention::buildAttention(op, entry, phaseName, target, diags);
  }
  FUSEC_ASSERT(false, "unknown kernel template");
}

} // namespace

std::vector<GeneratedKernel> emitKernels(const Op &op, const std::string &entry, EntryNamer &names,
                                         Diagnostics &diags, Backend backend,
                                         std::string_view target) {
  std::vector<std::string> phaseNames;
  auto phaseName = [&](std::string_view phase) {
    return phaseNames.emplace_back(names.phase(entry, phase));
  };
  std::vector<templates::KirKernel> built = build(op, entry, phaseName, target, diags);
  if (built.empty())
    for (const std::string &name : phaseNames)
      names.release(name);
  std::vector<GeneratedKernel> kernels;
  for (templates::KirKernel &k : built) {
    kernels.push_back(renderKir(std::move(k), backend));
    // The schedule is the template's; the rest is what the op computes.
    KernelFacts &f = kernels.back().facts;
    f.generic = op.kind() != OpKind::Kernel;
    f.templateName = f.generic ? std::string(op.name()) : op.getString("template");
    f.fuses = fusedOpNames(op);
    // A later phase works on what the first left in the scratch: the op's bytes and FLOPs are
    // the first's.
    if (kernels.size() == 1) {
      f.bytes = mustMoveBytes(op);
      f.flops = contractionFlops(op);
    }
  }
  return kernels;
}

} // namespace fusec
