// The reference-executor constant folder: copies the op into a graph of its
// own, with a `const` per operand, runs it, and hands back the result as
// dense data. Errors from the run are dropped: refusing to fold is always
// correct, and the op reports the same error when the graph runs.
#include "runtime/ConstantFolder.h"

#include "runtime/Reference.h"

#include <memory>

namespace fusec {

namespace {

/// Evaluates `op` on `operands`; null when the reference reports an error.
DenseRef evaluate(const Op &op, const std::vector<DenseRef> &operands) {
  Graph g("fold");
  std::vector<Value *> consts;
  for (const DenseRef &data : operands) {
    TensorType type{data->dtype, staticShape(data->shape), Layout::None};
    consts.push_back(g.createOp(OpKind::Const, {}, {type}, {{"value", data}})->result());
  }
  Op *copy = g.createOp(op.kind(), consts, {op.result()->type()}, op.attrs(), op.loc());
  if (op.body())
    copy->setBody(op.body()->clone());
  g.setOutputs({copy->result()});
  std::vector<Tensor> outputs;
  Diagnostics ignored;
  if (!runReference(g, {}, outputs, ignored))
    return nullptr;
  Tensor &t = outputs.front();
  return std::make_shared<DenseData>(DenseData{t.dtype, std::move(t.shape), std::move(t.bytes)});
}

} // namespace

std::function<DenseRef(const Op &op, const std::vector<DenseRef> &operands)>
makeReferenceFolder(uint64_t maxElements) {
  return [maxElements](const Op &op, const std::vector<DenseRef> &operands) -> DenseRef {
    if (op.numResults() != 1 || op.numOperands() != operands.size())
      return nullptr;
    std::optional<int64_t> count = staticNumElements(op.result()->type().shape);
    if (!count || uint64_t(*count) > maxElements)
      return nullptr;
    return evaluate(op, operands);
  };
}

} // namespace fusec
