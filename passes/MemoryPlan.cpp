// memory-plan: not written yet (placeholder so the registry builds; running it is an error).
#include "passes/PassManager.h"

namespace fusec {

bool runMemoryPlan(Graph &g, const PassOptions &, Diagnostics &diags) {
  diags.error(g.loc(), "pass 'memory-plan' is not implemented yet");
  return false;
}

} // namespace fusec
