// The pointwise code template: renders a `kernel` op whose body holds only
// pointwise ops (and constants) into one self-contained CUDA C++ kernel, a
// grid-stride loop over the flattened output that writes every result.
#pragma once

#include "codegen/GeneratedKernel.h"
#include "ir/Diagnostics.h"
#include "ir/Graph.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fusec {

/// Renders `kernel` (template "pointwise") into CUDA C++. Reports an error at
/// the offending op, and returns nullopt, when the body holds an op the
/// template cannot run or results of different shapes.
std::optional<GeneratedKernel> emitPointwiseKernel(const Op &kernel, const std::string &entry,
                                                   Diagnostics &diags);

} // namespace fusec
