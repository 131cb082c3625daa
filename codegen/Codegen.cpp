// Dispatch from an op to the emitter of its kernel template.
#include "codegen/Codegen.h"

#include "codegen/Gemm.h"
#include "codegen/Generic.h"
#include "codegen/LlvmCodegen.h"
#include "codegen/Pointwise.h"
#include "codegen/RowReduction.h"
#include "ir/Assert.h"
#include "ir/Cost.h"
#include "ir/Kernel.h"

namespace fusec {

namespace {

std::optional<GeneratedKernel> render(const Op &op, const std::string &entry, Diagnostics &diags,
                                      Backend backend) {
  bool isKernel = op.kind() == OpKind::Kernel;
  const std::string &name = isKernel ? op.getString("template") : std::string();
  if (isKernel && *lookupKernelTemplate(name) == KernelTemplate::Attention) {
    diags.error(op.loc(), "kernel '%" + op.result(0)->name() + "': template '" + name +
                              "' has no code generator yet");
    return std::nullopt;
  }
  if (backend == Backend::Llvm)
    return emitKernelLlvm(op, entry, diags);
  if (!isKernel)
    return emitGenericKernel(op, entry, diags);
  switch (*lookupKernelTemplate(name)) {
  case KernelTemplate::Pointwise:
    return emitPointwiseKernel(op, entry, diags);
  case KernelTemplate::RowReduction:
    return emitRowReductionKernel(op, entry, diags);
  case KernelTemplate::Gemm:
    return emitGemmKernel(op, entry, diags);
  case KernelTemplate::Attention:
    break;
  }
  FUSEC_ASSERT(false, "the attention template is refused above");
}

} // namespace

std::optional<GeneratedKernel> emitKernel(const Op &op, const std::string &entry,
                                          Diagnostics &diags, Backend backend) {
  std::optional<GeneratedKernel> k = render(op, entry, diags, backend);
  if (k)
    k->facts = {op.kind() == OpKind::Kernel ? op.getString("template") : std::string(op.name()),
                fusedOpNames(op), mustMoveBytes(op), contractionFlops(op)};
  return k;
}

} // namespace fusec
