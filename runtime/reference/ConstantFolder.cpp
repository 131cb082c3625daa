// The reference-executor constant folder: copies the op into a graph of its
// own, with a `const` per operand, runs it, and hands back the result as
// dense data. Errors from the run are dropped: refusing to fold is always
// correct, and the op reports the same error when the graph runs.
//
// Splats fold to splats (Note [Splat constants] in ir/Attribute.h): a
// pointwise op whose operands each repeat one element computes that one
// element (the reference works element by element, so the value is the
// same bits), and reshape, transpose, slice, broadcast and a concat of equal
// splats only move the one element. Such a result costs one element, so
// `maxElements` does not apply to it (kMaxSplatBytes does, as in the parser).
// Everything else is evaluated in full, and only when neither the result nor
// a splat operand it would expand holds more than `maxElements` elements —
// or, for pointwise and movement ops, when the result holds no more elements
// than the operands (a weight's cast or transpose: growsNothing).
#include "runtime/reference/ConstantFolder.h"

#include "runtime/reference/Reference.h"

#include <algorithm>
#include <memory>

namespace fusec {

namespace {

/// Runs a one-op graph of `op` on constants `operands`, its result typed
/// `type`; null when the reference reports an error.
std::optional<Tensor> run(const Op &op, const std::vector<DenseRef> &operands,
                          const TensorType &type) {
  Graph g("fold");
  std::vector<Value *> consts;
  for (const DenseRef &data : operands) {
    TensorType t{data->dtype, staticShape(data->shape), Layout::None};
    consts.push_back(g.createOp(OpKind::Const, {}, {t}, {{"value", data}})->result());
  }
  Op *copy = g.createOp(op.kind(), consts, {type}, op.attrs(), op.loc());
  if (op.body())
    copy->setBody(op.body()->clone());
  g.setOutputs({copy->result()});
  std::vector<Tensor> outputs;
  Diagnostics ignored;
  if (!runReference(g, {}, outputs, ignored))
    return std::nullopt;
  return std::move(outputs.front());
}

/// Evaluates `op` on `operands` in full; null when the reference reports an error.
DenseRef evaluate(const Op &op, const std::vector<DenseRef> &operands) {
  std::optional<Tensor> t = run(op, operands, op.result()->type());
  if (!t)
    return nullptr;
  return std::make_shared<DenseData>(t->dtype, std::move(t->shape), std::move(t->bytes));
}

/// The one element of `d` as a splat of d's rank with every dim 1.
DenseRef unitSplat(const DenseData &d) {
  const uint8_t *e = d.element(0);
  return std::make_shared<DenseData>(DenseData::makeSplat(
      d.dtype, std::vector<int64_t>(d.shape.size(), 1), {e, e + dtypeSize(d.dtype)}));
}

/// The element that every element of the result repeats, when op keeps
/// splats and every operand is one; see the file comment.
std::optional<std::vector<uint8_t>> splatElement(const Op &op,
                                                 const std::vector<DenseRef> &operands) {
  if (operands.empty())
    return std::nullopt;
  for (const DenseRef &d : operands)
    if (d->numElements() == 0 || !d->isSplat())
      return std::nullopt;
  const DenseData &first = *operands.front();
  std::vector<uint8_t> element(first.element(0), first.element(0) + dtypeSize(first.dtype));
  switch (op.kind()) {
  case OpKind::Reshape:
  case OpKind::Transpose:
  case OpKind::Slice:
  case OpKind::Broadcast:
    return element;
  case OpKind::Concat:
    for (const DenseRef &d : operands)
      if (!std::equal(element.begin(), element.end(), d->element(0)))
        return std::nullopt;
    return element;
  default:
    break;
  }
  if (opInfo(op.kind()).cls != OpClass::Pointwise)
    return std::nullopt;
  std::vector<DenseRef> units;
  for (const DenseRef &d : operands)
    units.push_back(unitSplat(*d));
  TensorType unit = op.result()->type();
  unit.shape = staticShape(std::vector<int64_t>(unit.rank(), 1));
  std::optional<Tensor> t = run(op, units, unit);
  if (!t)
    return std::nullopt;
  return std::move(t->bytes);
}

/// The fold of `op` when it keeps splats (null when it does not, or fails).
DenseRef foldSplat(const Op &op, const std::vector<DenseRef> &operands, uint64_t numElements) {
  DType dtype = op.result()->type().dtype;
  if (numElements > kMaxSplatBytes / dtypeSize(dtype))
    return nullptr;
  std::optional<std::vector<uint8_t>> element = splatElement(op, operands);
  if (!element)
    return nullptr;
  std::vector<int64_t> shape = staticSizes(op.result()->type().shape);
  return std::make_shared<DenseData>(DenseData::makeSplat(dtype, shape, std::move(*element)));
}

/// The most elements a fold that grows nothing may make.
constexpr uint64_t kMaxGrowthFreeElements = uint64_t(1) << 24;

/// Whether folding `op` (pointwise or movement, a few operations an
/// element) into `count` elements holds no more than its operands do.
bool growsNothing(const Op &op, const std::vector<DenseRef> &operands, uint64_t count) {
  OpClass cls = op.info().cls;
  if ((cls != OpClass::Pointwise && cls != OpClass::Movement) || count > kMaxGrowthFreeElements)
    return false;
  uint64_t held = 0;
  for (const DenseRef &d : operands)
    held += d->numStoredElements();
  return count <= held;
}

} // namespace

std::function<DenseRef(const Op &op, const std::vector<DenseRef> &operands)>
makeReferenceFolder(uint64_t maxElements) {
  return [maxElements](const Op &op, const std::vector<DenseRef> &operands) -> DenseRef {
    if (op.numResults() != 1 || op.numOperands() != operands.size())
      return nullptr;
    std::optional<int64_t> count = staticNumElements(op.result()->type().shape);
    if (!count)
      return nullptr;
    if (DenseRef splat = foldSplat(op, operands, uint64_t(*count)))
      return splat;
    if (uint64_t(*count) > maxElements && !growsNothing(op, operands, uint64_t(*count)))
      return nullptr;
    for (const DenseRef &d : operands)
      if (d->isSplatForm() && d->numElements() > maxElements)
        return nullptr; // evaluating would expand it
    return evaluate(op, operands);
  };
}

} // namespace fusec
