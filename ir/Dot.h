// A graphviz picture of a graph (`fusec compile --emit=dot`): every op a
// node, each kernel op a cluster holding its body's ops (labelled with its
// template), each tensor an edge from its producer to each consumer,
// labelled with its type; graph inputs and outputs as ellipses.
#pragma once

#include "ir/Graph.h"

#include <string>

namespace fusec {

/// `g` in the DOT language, a digraph named for the graph.
std::string graphToDot(const Graph &g);

} // namespace fusec
