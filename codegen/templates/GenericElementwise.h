// The generic kernels of the elementwise ops (every pointwise op and
// batch_norm) and of the movement ops, built in kir: one thread per output
// element. The generic kernels of the other ops are in codegen/Generic*.cpp.
#pragma once

#include "codegen/templates/Template.h"
#include "ir/Graph.h"

#include <string>

namespace fusec::codegen {

/// Whether `op` (a plain op) has its generic kernel here.
bool isGenericElementwise(const Op &op);

/// The generic kernel of `op` (isGenericElementwise, static shapes: the
/// caller checks them with checkGenericOp), entry point `entry`.
KirKernel buildGenericElementwise(const Op &op, const std::string &entry);

} // namespace fusec::codegen
