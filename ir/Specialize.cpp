// Shape specialization (see Specialize.h). The algorithm is a forward walk:
// inputs get their actual shapes, then every op in order gets the result
// types its inference function gives for its now static operand types; a
// kernel op first specializes its body the same way from its operands. A
// result that is still symbolic after that (a dim no input binds) is an
// error at its op.
#include "ir/Specialize.h"

#include "ir/Verifier.h"

#include <algorithm>

namespace fusec {

bool bindShape(const TensorType &type, const std::vector<int64_t> &shape, const std::string &what,
               DimBindings &bindings, std::string &problem) {
  for (size_t d = 0; d < shape.size(); ++d) {
    const Dim &dim = type.shape[d];
    if (dim.isAnonymous())
      continue;
    if (dim.isStatic() && dim.size != shape[d]) {
      problem = what + " dim " + std::to_string(d) + " is " + std::to_string(shape[d]) +
                " but its type says " + std::to_string(dim.size);
      return false;
    }
    if (dim.isStatic())
      continue;
    auto [it, inserted] = bindings.emplace(dim.symbol, shape[d]);
    if (!inserted && it->second != shape[d]) {
      problem = what + " dim " + std::to_string(d) + " is " + std::to_string(shape[d]) + " but '" +
                dim.symbol + "' is already " + std::to_string(it->second);
      return false;
    }
  }
  return true;
}

namespace {

/// `shape` with bound names replaced by their sizes; for a reshape, `?`
/// becomes the -1 it infers, or 1 when the operand holds no elements (no
/// size to infer: the reference reads it as 1), and broadcast resolves its
/// `?` from the operand.
Shape bindShapeAttr(const Shape &shape, const DimBindings &bindings, bool reshape, bool empty) {
  Shape out;
  for (const Dim &d : shape) {
    auto it = bindings.find(d.symbol);
    if (d.isAnonymous() && reshape)
      out.push_back(Dim::fixed(empty ? 1 : -1));
    else if (!d.isStatic() && it != bindings.end())
      out.push_back(Dim::fixed(it->second));
    else
      out.push_back(d);
  }
  return out;
}

/// A broadcast's `?` target dim keeps its operand's dim, a size-1 one too
/// (as the reference runs it): once the operand is static, so is the target
/// (shape inference alone leaves `?` over a 1 as `?`).
void keepOperandDims(Op &op) {
  Shape target = op.getShape("shape");
  const Shape &from = op.operand(0)->type().shape;
  size_t lead = target.size() - std::min(target.size(), from.size());
  for (size_t i = lead; i < target.size(); ++i)
    if (target[i].isAnonymous() && from[i - lead].isStatic())
      target[i] = from[i - lead];
  op.setAttr("shape", Attribute(std::move(target)));
}

bool specializeBody(Graph &g, const DimBindings &bindings, Diagnostics &diags);

bool specializeOp(Op &op, const DimBindings &bindings, Diagnostics &diags) {
  if (const Attribute *shape = op.attrIfPresent("shape"))
    op.setAttr("shape", Attribute(bindShapeAttr(
                            shape->get<Shape>(), bindings, op.kind() == OpKind::Reshape,
                            staticNumElements(op.operand(0)->type().shape) == int64_t(0))));
  if (op.kind() == OpKind::Broadcast)
    keepOperandDims(op);
  std::vector<TensorType> operandTypes;
  for (const Value *v : op.operands())
    operandTypes.push_back(v->type());
  if (Graph *body = op.body()) {
    for (unsigned i = 0; i < body->numInputs(); ++i)
      body->input(i)->setType(operandTypes[i]);
    if (!specializeBody(*body, bindings, diags))
      return false;
  }
  std::vector<TensorType> results;
  if (!inferResultTypes(op.kind(), operandTypes, op.attrs(), op.loc(), diags, results, op.body()))
    return false;
  for (unsigned i = 0; i < op.numResults(); ++i) {
    if (!isStatic(results[i].shape)) {
      diags.error(op.loc(), "'" + std::string(op.name()) + "' result '%" + op.result(i)->name() +
                                "' of type " + results[i].str() + " has a dim that no input binds");
      return false;
    }
    op.result(i)->setType(results[i]);
  }
  return true;
}

bool specializeBody(Graph &g, const DimBindings &bindings, Diagnostics &diags) {
  for (const auto &op : g.ops())
    if (!specializeOp(*op, bindings, diags))
      return false;
  return true;
}

} // namespace

std::unique_ptr<Graph> specializeShapes(const Graph &g,
                                        const std::vector<std::vector<int64_t>> &inputShapes,
                                        DimBindings &bindings, Diagnostics &diags) {
  if (inputShapes.size() != g.numInputs()) {
    diags.error(g.loc(), "graph '@" + g.name() + "' takes " + std::to_string(g.numInputs()) +
                             " inputs, got " + std::to_string(inputShapes.size()));
    return nullptr;
  }
  std::unique_ptr<Graph> copy = g.clone();
  for (unsigned i = 0; i < g.numInputs(); ++i) {
    const TensorType &type = g.input(i)->type();
    TensorType actual{type.dtype, staticShape(inputShapes[i]), type.layout};
    std::string what = "input '%" + g.input(i)->name() + "' of type " + type.str(), problem;
    if (inputShapes[i].size() != type.rank()) {
      diags.error(g.loc(), what + " was given " + actual.str());
      return nullptr;
    }
    if (!bindShape(type, inputShapes[i], what + " given " + actual.str() + ":", bindings,
                   problem)) {
      diags.error(g.loc(), problem);
      return nullptr;
    }
    copy->input(i)->setType(actual);
  }
  if (!specializeBody(*copy, bindings, diags))
    return nullptr;
  return copy;
}

} // namespace fusec
