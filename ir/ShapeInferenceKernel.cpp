// Inference for `kernel` ops: the results are the body's outputs. The body
// must take one input per operand, of the operand's type; its own ops are
// checked by the verifier, which runs this only once the body verified.
#include "ir/Graph.h"
#include "ir/Kernel.h"
#include "ir/ShapeInferenceUtil.h"

namespace fusec {

bool inferKernel(const InferContext &ctx, std::vector<TensorType> &results, const ErrorFn &error) {
  Infer in(ctx, results, error);
  const std::string &name = ctx.getString("template");
  if (!lookupKernelTemplate(name))
    return in.fail("attribute 'template' must be " + kernelTemplateNames() + ", got \"" + name +
                   "\"");
  const Graph *body = ctx.body;
  if (!body)
    return in.fail("has no body");
  if (body->numInputs() != in.numOperands())
    return in.fail("has " + std::to_string(in.numOperands()) + " operand(s) but its body takes " +
                   std::to_string(body->numInputs()) + " input(s)");
  for (unsigned i = 0; i < body->numInputs(); ++i) {
    const Value *arg = body->input(i);
    if (arg->type() != in.operand(i))
      return in.fail("operand " + std::to_string(i) + " has type " + in.operand(i).str() +
                     " but body input %" + arg->name() + " has type " + arg->type().str());
  }
  for (const Value *v : body->outputs())
    in.produce(v->type());
  return true;
}

} // namespace fusec
