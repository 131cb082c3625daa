// The pointwise template's gathered path: a pointwise kernel whose body also holds movement ops
// (reshape, transpose, slice, concat, broadcast) between its operands and its math, built in kir
// by evaluating each result at the output coordinates (Note [Gathered operands] in Gather.cpp).
#pragma once

#include "codegen/templates/Template.h"
#include "ir/Diagnostics.h"
#include "ir/Graph.h"

#include <optional>
#include <string>

namespace fusec::templates {

/// Whether `kernel`'s body holds a movement op, so that buildPointwise hands it to buildGathered.
bool holdsMovement(const Op &kernel);

/// `kernel` (template "pointwise", a movement op in its body) in kir, its entry point `entry`.
/// Reports an error, and returns nullopt, for a shape that is not static (the kernel is generated
/// once its shapes are bound) or an op the template cannot run.
std::optional<KirKernel> buildGathered(const Op &kernel, const std::string &entry,
                                       Diagnostics &diags);

} // namespace fusec::templates
