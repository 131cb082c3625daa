// Shape specialization: binds a graph's symbolic dims to the sizes of actual
// inputs and gives every value a static type. The GPU runtime generates code
// for a specialized copy, so every kernel template sees static shapes and
// bakes sizes into its code (one specialization per input shape, cached).
#pragma once

#include "ir/Diagnostics.h"
#include "ir/Graph.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace fusec {

/// Symbol name -> size, from binding a graph's input types to actual shapes.
using DimBindings = std::map<std::string, int64_t>;

/// Binds or checks the symbolic dims of `type` against `shape` (of the same
/// rank). `what` names the value in the message left in `problem` when a
/// static dim differs or a named dim is already bound to another size.
bool bindShape(const TensorType &type, const std::vector<int64_t> &shape, const std::string &what,
               DimBindings &bindings, std::string &problem);

/// A copy of `g` whose every type (kernel bodies included) is static: the
/// inputs take `inputShapes` (checked against their types, named dims bound
/// into `bindings`), named dims in `shape` attributes become their sizes (a
/// reshape's `?` becomes the -1 it infers), and each op's results are
/// inferred again from its operands. Returns null after reporting an error
/// at the graph (an input that does not fit its type) or at an op (shapes
/// that do not agree once known).
std::unique_ptr<Graph> specializeShapes(const Graph &g,
                                        const std::vector<std::vector<int64_t>> &inputShapes,
                                        DimBindings &bindings, Diagnostics &diags);

} // namespace fusec
