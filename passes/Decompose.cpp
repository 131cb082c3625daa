// decompose: not written yet (placeholder so the registry builds; running it is an error).
#include "passes/PassManager.h"

namespace fusec {

bool runDecompose(Graph &g, const PassOptions &, Diagnostics &diags) {
  diags.error(g.loc(), "pass 'decompose' is not implemented yet");
  return false;
}

} // namespace fusec
