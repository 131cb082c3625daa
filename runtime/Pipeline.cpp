// The default pipeline for the GPU paths (see Pipeline.h).
#include "runtime/Pipeline.h"

#include "runtime/ConstantFolder.h"

namespace fusec {

bool optimizeModule(Module &m, PrecisionChoice precision, Diagnostics &diags,
                    LayoutChoice layout) {
  std::vector<const PassInfo *> pipeline;
  if (!parsePipeline("default", pipeline, diags))
    return false;
  PassOptions opts;
  opts.precision = precision;
  opts.layout = layout;
  opts.foldConstant = makeReferenceFolder();
  return runPipeline(m, pipeline, opts, {}, diags);
}

} // namespace fusec
