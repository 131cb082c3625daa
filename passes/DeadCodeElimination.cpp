// dce: erases ops none of whose results are used, in one backward sweep.
//
// Walking the ops in reverse visits every user before its producers, so one
// sweep removes whole dead chains. Graph inputs are never removed (they are
// the function's signature); ops have no side effects, so any unused op may go.
#include "passes/PassManager.h"

namespace fusec {

bool runDeadCodeElimination(Graph &g, const PassOptions &, Diagnostics &) {
  std::vector<Op *> ops = g.opsSnapshot();
  for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
    if (!(*it)->hasUses())
      g.erase(*it);
  }
  return true;
}

} // namespace fusec
