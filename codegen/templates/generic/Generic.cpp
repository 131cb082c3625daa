// The generic kernels' entry point: refuses constants and symbolic shapes,
// then dispatches the op by class to its family's builder (Kernel.h). The
// fallback that makes every verified graph run, correct first; the
// templates are the fast paths.
#include "codegen/templates/generic/Generic.h"

#include "codegen/templates/generic/Kernel.h"
#include "ir/Assert.h"

namespace fusec::generic {

std::optional<KirKernel> buildGeneric(const Op &op, const std::string &entry, Diagnostics &diags) {
  FUSEC_ASSERT(op.kind() != OpKind::Kernel, "kernel ops go to their template's builder");
  std::string quoted = "'" + std::string(op.name()) + "'";
  if (op.kind() == OpKind::Const) {
    diags.error(op.loc(), quoted + " has no generic kernel: constants are uploaded, not computed");
    return std::nullopt;
  }
  if (!op.hasStaticShapes()) {
    diags.error(op.loc(), quoted + " needs static shapes for its generic kernel");
    return std::nullopt;
  }
  switch (op.info().cls) {
  case OpClass::Pointwise:
  case OpClass::Movement:
    return buildElementwise(op, entry);
  case OpClass::Reduction:
    return buildReduction(op, entry);
  case OpClass::Normalization:
    return op.kind() == OpKind::BatchNorm ? buildElementwise(op, entry)
                                          : buildNormalization(op, entry);
  case OpClass::Contraction:
    return op.kind() == OpKind::Attention ? buildAttention(op, entry) : buildMatMul(op, entry);
  case OpClass::Window:
    return buildWindow(op, entry);
  case OpClass::Structure:
    break;
  }
  FUSEC_ASSERT(false, "structure ops have no generic kernel (refused above)");
}

} // namespace fusec::generic
