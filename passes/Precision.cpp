// precision: not written yet (placeholder so the registry builds; running it is an error).
#include "passes/PassManager.h"

namespace fusec {

bool runPrecision(Graph &g, const PassOptions &, Diagnostics &diags) {
  diags.error(g.loc(), "pass 'precision' is not implemented yet");
  return false;
}

} // namespace fusec
