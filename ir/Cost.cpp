#include "ir/Cost.h"

#include "ir/Graph.h"

#include <algorithm>
#include <vector>

namespace fusec {

namespace {

uint64_t product(const Shape &s, size_t begin, size_t end) {
  uint64_t n = 1;
  for (size_t i = begin; i < end; ++i)
    n *= uint64_t(s[i].size);
  return n;
}

uint64_t valueBytes(const Value &v) {
  const Shape &s = v.type().shape;
  return isStatic(s) ? product(s, 0, s.size()) * dtypeSize(v.type().dtype) : 0;
}

/// One non-kernel op's FLOPs; its shapes are static.
uint64_t primitiveFlops(const Op &op) {
  const Shape &out = op.result(0)->type().shape;
  switch (op.kind()) {
  case OpKind::MatMul: {
    const Shape &a = op.operand(0)->type().shape;
    uint64_t k = uint64_t(a[op.getBool("transpose_a") ? a.size() - 2 : a.size() - 1].size);
    return 2 * product(out, 0, out.size()) * k;
  }
  case OpKind::Linear:
    return 2 * product(out, 0, out.size()) * uint64_t(op.operand(0)->type().shape.back().size);
  case OpKind::Attention: {
    const Shape &q = op.operand(0)->type().shape;
    uint64_t sk = uint64_t(op.operand(1)->type().shape.end()[-2].size);
    uint64_t flops = 2 * product(out, 0, out.size() - 1) * sk * uint64_t(q.back().size) +
                     2 * product(out, 0, out.size()) * sk;
    return op.getBool("causal") ? flops / 2 : flops;
  }
  case OpKind::Conv2d: {
    const Shape &w = op.operand(1)->type().shape; // OIHW or OHWI: all but O multiply
    return 2 * product(out, 0, out.size()) * product(w, 1, w.size());
  }
  default:
    return 0;
  }
}

} // namespace

uint64_t mustMoveBytes(const Op &op) {
  uint64_t bytes = 0;
  std::vector<const Value *> seen;
  for (const Value *v : op.operands())
    if (std::find(seen.begin(), seen.end(), v) == seen.end()) {
      seen.push_back(v);
      bytes += valueBytes(*v);
    }
  for (unsigned i = 0; i < op.numResults(); ++i)
    bytes += valueBytes(*op.result(i));
  return bytes;
}

uint64_t contractionFlops(const Op &op) {
  if (const Graph *body = op.body()) {
    uint64_t flops = 0;
    for (const auto &inner : body->ops())
      flops += contractionFlops(*inner);
    return flops;
  }
  return op.hasStaticShapes() ? primitiveFlops(op) : 0;
}

std::string fusedOpNames(const Op &op) {
  const Graph *body = op.body();
  if (!body)
    return std::string(op.name());
  auto join = [&](bool casts) {
    std::string names;
    for (const auto &inner : body->ops())
      if (inner->kind() != OpKind::Const && (casts || inner->kind() != OpKind::Cast))
        names += (names.empty() ? "" : "+") + std::string(inner->name());
    return names;
  };
  std::string names = join(false);
  if (names.empty())
    names = join(true); // a kernel of casts only
  return names.empty() ? "(copies only)" : names;
}

} // namespace fusec
