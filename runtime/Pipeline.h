// The optimization every GPU path runs before code generation: the default
// pass pipeline with constant folding by the CPU reference executor.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/Graph.h"
#include "passes/PassManager.h"

namespace fusec {

/// Runs the default pipeline on every graph of `m`, autocasting to
/// `precision`. False after reporting an error.
bool optimizeModule(Module &m, PrecisionChoice precision, Diagnostics &diags,
                    LayoutChoice layout = LayoutChoice::Auto);

} // namespace fusec
