// Dispatch from an op to the builder of its kernel template. A template on
// kir (pointwise, row_reduction, and the generic kernels of the elementwise
// and movement ops, so far) builds its kernel once; the kernel is verified and the chosen
// back end renders it (codegen/cuda/, codegen/llvm/). The other templates
// still have an emitter per back end.
#include "codegen/Codegen.h"

#include "codegen/Gemm.h"
#include "codegen/Generic.h"
#include "codegen/LlvmCodegen.h"
#include "codegen/cuda/Render.h"
#include "codegen/llvm/Render.h"
#include "codegen/templates/GenericElementwise.h"
#include "codegen/templates/Pointwise.h"
#include "codegen/templates/RowReduction.h"
#include "ir/Assert.h"
#include "ir/Cost.h"
#include "ir/Kernel.h"

namespace fusec {

namespace {

GeneratedKernel renderKir(codegen::KirKernel k, Backend backend) {
  std::vector<std::string> errors = kir::verify(k.kernel);
  FUSEC_ASSERT(errors.empty(),
               ("kernel " + k.kernel.name + " is invalid kir: " + errors.front()).c_str());
  std::string source = backend == Backend::Llvm ? llvmir::render(k.kernel) : cuda::render(k.kernel);
  GeneratedKernel out{k.kernel.name, std::move(source), std::move(k.args), k.launch, backend};
  out.facts.schedule = std::move(k.schedule);
  out.kir = std::make_shared<const kir::Kernel>(std::move(k.kernel));
  return out;
}

std::optional<GeneratedKernel> render(const Op &op, const std::string &entry, Diagnostics &diags,
                                      Backend backend) {
  bool isKernel = op.kind() == OpKind::Kernel;
  const std::string &name = isKernel ? op.getString("template") : std::string();
  std::optional<KernelTemplate> kind = isKernel ? lookupKernelTemplate(name) : std::nullopt;
  if (kind == KernelTemplate::Attention) {
    diags.error(op.loc(), "kernel '%" + op.result(0)->name() + "': template '" + name +
                              "' has no code generator yet");
    return std::nullopt;
  }
  if (kind == KernelTemplate::Pointwise || kind == KernelTemplate::RowReduction) {
    std::optional<codegen::KirKernel> k = kind == KernelTemplate::Pointwise
                                              ? codegen::buildPointwise(op, entry, diags)
                                              : codegen::buildRowReduction(op, entry, diags);
    return k ? std::optional(renderKir(std::move(*k), backend)) : std::nullopt;
  }
  if (!isKernel && codegen::isGenericElementwise(op)) {
    if (!checkGenericOp(op, diags))
      return std::nullopt;
    return renderKir(codegen::buildGenericElementwise(op, entry), backend);
  }
  if (backend == Backend::Llvm)
    return emitKernelLlvm(op, entry, diags);
  if (!isKernel)
    return emitGenericKernel(op, entry, diags);
  switch (*kind) {
  case KernelTemplate::Gemm:
    return emitGemmKernel(op, entry, diags);
  case KernelTemplate::Pointwise:
  case KernelTemplate::RowReduction:
  case KernelTemplate::Attention:
    break;
  }
  FUSEC_ASSERT(false, "pointwise, row_reduction and attention kernels are taken above");
}

} // namespace

std::optional<GeneratedKernel> emitKernel(const Op &op, const std::string &entry,
                                          Diagnostics &diags, Backend backend) {
  std::optional<GeneratedKernel> k = render(op, entry, diags, backend);
  if (!k)
    return k;
  // The schedule is the template's; the rest is what the op computes.
  KernelFacts &f = k->facts;
  f.templateName = op.kind() == OpKind::Kernel ? op.getString("template") : std::string(op.name());
  f.fuses = fusedOpNames(op);
  f.bytes = mustMoveBytes(op);
  f.flops = contractionFlops(op);
  return k;
}

} // namespace fusec
