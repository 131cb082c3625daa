// Matching helpers for the fusion pass's pattern raisers: op kinds of
// operands, splat constants compared in their own dtype, trailing reduction
// axes, and replacing a matched pattern by its composite.
#include "ir/Numerics.h"
#include "ir/TextLiterals.h"
#include "passes/Fusion.h"

#include <algorithm>
#include <cstdlib>
#include <unordered_set>

namespace fusec::fusion {

Op *defOf(const Value *v, OpKind k) {
  Op *def = v->definingOp();
  return def && def->kind() == k ? def : nullptr;
}

std::optional<double> splatValue(const Value *v) {
  const Op *c = defOf(v, OpKind::Const);
  if (!c || !isFloat(v->type().dtype))
    return std::nullopt;
  const DenseData &d = c->getDense("value");
  if (d.numElements() == 0 || !d.isSplat())
    return std::nullopt;
  return d.elementAsDouble(0);
}

double roundTo(DType t, double x) {
  switch (t) {
  case DType::F32:
    return double(doubleToFloat(x));
  case DType::F16:
    return halfToDouble(doubleToHalf(x));
  case DType::BF16:
    return bfloat16ToDouble(doubleToBFloat16(x));
  default:
    return x;
  }
}

bool isSplatOf(const Value *v, double want) {
  std::optional<double> got = splatValue(v);
  return got && *got == roundTo(v->type().dtype, want);
}

double splatAsAttribute(const Value *v) {
  const DenseData &d = v->definingOp()->getDense("value");
  return std::strtod(formatElement(d, 0).c_str(), nullptr);
}

std::optional<unsigned> trailingReductionStart(const Op &reduce) {
  size_t rank = reduce.operand(0)->type().rank();
  std::vector<unsigned> axes;
  for (int64_t a : reduce.getInts("axes"))
    axes.push_back(*normalizeAxis(a, rank));
  if (axes.empty()) // all axes
    for (unsigned a = 0; a < rank; ++a)
      axes.push_back(a);
  std::sort(axes.begin(), axes.end());
  if (axes.empty() || axes.back() + 1 != rank || axes.back() - axes.front() + 1 != axes.size())
    return std::nullopt;
  return axes.front();
}

bool isClosedPattern(const std::vector<Op *> &ops, const Op *root) {
  std::unordered_set<const Op *> inside(ops.begin(), ops.end());
  for (const Op *op : ops) {
    if (op == root)
      continue;
    for (unsigned i = 0; i < op->numResults(); ++i)
      for (const Use &u : op->result(i)->uses())
        if (!u.user || !inside.count(u.user))
          return false;
  }
  return true;
}


std::vector<const Op *> replacePattern(Graph &g, Op *root, Value *replacement,
                                       const std::vector<Op *> &ops) {
  std::string name = root->result()->name();
  root->result()->replaceAllUsesWith(replacement);
  // Erase users before producers: a worklist of ops that may have died,
  // seeded with the pattern and growing by the operands' producers.
  std::vector<Op *> maybeDead(ops.begin(), ops.end());
  std::unordered_set<Op *> erased;
  std::vector<const Op *> order;
  bool progress = true;
  while (progress) {
    progress = false;
    for (size_t i = 0; i < maybeDead.size(); ++i) {
      Op *op = maybeDead[i];
      if (erased.count(op) || op->hasUses())
        continue;
      for (Value *v : op->operands())
        if (Op *def = v->definingOp(); def && !erased.count(def))
          maybeDead.push_back(def);
      g.erase(op);
      erased.insert(op);
      order.push_back(op);
      progress = true;
    }
  }
  replacement->setName(std::move(name));
  return order;
}

} // namespace fusec::fusion
