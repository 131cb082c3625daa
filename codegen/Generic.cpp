// The generic emitter's entry point: checks that the op's shapes are static
// and dispatches it by op class to the emitter of its family:
//
//   pointwise ops, batch_norm   templates/GenericElementwise.cpp (kir)
//   movement ops                templates/GenericElementwise.cpp (kir)
//   reductions                  GenericReduce.cpp       a group of lanes per output
//   layer_norm/rms_norm/softmax GenericNorm.cpp         a group of lanes per row
//   matmul, linear              GenericMatMul.cpp       16x16 shared-memory tiles
//   attention                   GenericAttention.cpp    one thread per query row
//   conv2d and pooling          GenericWindow.cpp       one thread per element
//
// Each kernel takes only pointers (sizes and strides are literals) and runs
// 256-thread blocks over a grid-stride or tile loop. This is the fallback
// that makes every verified graph run, correct first; the templates are the
// fast paths.
#include "codegen/Generic.h"

#include "codegen/GenericSupport.h"
#include "ir/Assert.h"

namespace fusec {

using namespace codegen::generic;

namespace {

GeneratedKernel emitByClass(KernelBuilder &k) {
  const Op &op = k.op();
  switch (op.info().cls) {
  case OpClass::Reduction:
    return emitReduction(k);
  case OpClass::Normalization:
    return emitRowNormalization(k);
  case OpClass::Contraction:
    return op.kind() == OpKind::Attention ? emitAttention(k) : emitMatMul(k);
  case OpClass::Window:
    return emitWindow(k);
  case OpClass::Pointwise:
  case OpClass::Movement:
  case OpClass::Structure:
    break;
  }
  FUSEC_ASSERT(false, "elementwise and movement ops are built in kir (Codegen.cpp); structure "
                      "ops have no generic kernel");
}

} // namespace

bool checkGenericOp(const Op &op, Diagnostics &diags) {
  FUSEC_ASSERT(op.kind() != OpKind::Kernel, "kernel ops go to their template's emitter");
  std::string quoted = "'" + std::string(op.name()) + "'";
  if (op.kind() == OpKind::Const) {
    diags.error(op.loc(), quoted + " has no generic kernel: constants are uploaded, not computed");
    return false;
  }
  if (!op.hasStaticShapes()) {
    diags.error(op.loc(), quoted + " needs static shapes for its generic kernel");
    return false;
  }
  return true;
}

std::optional<GeneratedKernel> emitGenericKernel(const Op &op, const std::string &entry,
                                                 Diagnostics &diags) {
  if (!checkGenericOp(op, diags))
    return std::nullopt;
  KernelBuilder builder(op, entry);
  return emitByClass(builder);
}

} // namespace fusec
