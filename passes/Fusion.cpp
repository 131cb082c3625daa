// fusion: not written yet (placeholder so the registry builds; running it is an error).
#include "passes/PassManager.h"

namespace fusec {

bool runFusion(Graph &g, const PassOptions &, Diagnostics &diags) {
  diags.error(g.loc(), "pass 'fusion' is not implemented yet");
  return false;
}

} // namespace fusec
