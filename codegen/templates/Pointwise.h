// The pointwise template: a `kernel` op whose body holds only pointwise ops (and constants), built
// in kir as one grid-stride loop over the flattened output that writes every result.
#pragma once

#include "codegen/templates/Template.h"
#include "ir/Diagnostics.h"
#include "ir/Graph.h"

#include <optional>
#include <string>

namespace fusec::templates {

/// `kernel` (template "pointwise") in kir, its entry point `entry`. Reports an error at the
/// offending op, and returns nullopt, when the body holds an op the template cannot run or results
/// of different shapes.
std::optional<KirKernel> buildPointwise(const Op &kernel, const std::string &entry,
                                        Diagnostics &diags);

} // namespace fusec::templates
