// Analysis of a gemm kernel's body (see GemmPlan.h): finds the anchors
// (matmul/linear ops sharing their A operand), traces each of their
// operands back through its cast prologue to a kernel input, sorts the
// remaining ops into per-anchor epilogue chains, and gives every kernel
// operand and result its C name. Each problem is reported at its op:
// anchors that are not siblings, an operand computed by something other
// than casts, integer contractions, an epilogue op that is not pointwise,
// reads a prologue value, mixes two chains or computes in another shape,
// and results no chain computes.
#include "codegen/templates/gemm/Plan.h"
#include "ir/Assert.h"

#include <algorithm>

namespace fusec::gemm {

namespace {

std::string quoted(const Op &op) { return "'" + std::string(op.name()) + "'"; }

std::string operandTypes(const Op &op) {
  std::string s;
  for (const Value *v : op.operands())
    s += (s.empty() ? "" : ", ") + v->type().str();
  return s;
}

/// `base`, or `base_N` when taken; recorded as taken.
std::string uniqueName(std::set<std::string> &used, const std::string &base) {
  std::string name = base;
  for (unsigned n = 1; !used.insert(name).second; ++n)
    name = base + "_" + std::to_string(n);
  return name;
}

bool isAnchor(const Op &op) { return op.kind() == OpKind::MatMul || op.kind() == OpKind::Linear; }

class Analyzer {
public:
  Analyzer(const Op &kernel, Plan &plan, Diagnostics &diags)
      : kernel(kernel), body(*kernel.body()), plan(plan), diags(diags) {}

  bool run();

private:
  bool findAnchors();
  bool checkSibling(const Op &anchor) const;
  std::optional<Source> traceSource(const Value *v, const Op &reader);
  bool findSources();
  bool checkDType();
  bool classifyEpilogue();
  bool checkEpilogueOperand(const Op &op, const Value *v) const;
  bool assignResults();
  void collectChainOps(Chain &chain) const;

  const Op &kernel;
  const Graph &body;
  Plan &plan;
  Diagnostics &diags;
  std::map<const Value *, int> chainOf; // -1: reads no accumulator
};

bool Analyzer::findAnchors() {
  for (const auto &op : body.ops())
    if (isAnchor(*op))
      plan.chains.push_back(Chain{op.get(), std::nullopt, {}, {}});
  if (plan.chains.empty()) {
    diags.error(kernel.loc(),
                "gemm kernel '%" + kernel.result(0)->name() + "' holds no matmul or linear");
    return false;
  }
  bool ok = true;
  for (const Chain &c : plan.chains)
    ok &= checkSibling(*c.anchor);
  return ok;
}

// A grouped gemm runs its anchors as one problem: the same A, kind,
// attributes and types.
bool Analyzer::checkSibling(const Op &anchor) const {
  const Op &first = *plan.chains.front().anchor;
  bool same = anchor.kind() == first.kind() && anchor.operand(0) == first.operand(0) &&
              anchor.numOperands() == first.numOperands() &&
              anchor.result()->type() == first.result()->type();
  for (unsigned i = 1; same && i < anchor.numOperands(); ++i)
    same = anchor.operand(i)->type() == first.operand(i)->type();
  for (const char *name : {"transpose_a", "transpose_b", "acc"}) {
    const Attribute *x = anchor.attrIfPresent(name), *y = first.attrIfPresent(name);
    same = same && (x ? y && *x == *y : !y);
  }
  if (same)
    return true;
  diags.error(anchor.loc(), quoted(anchor) + " of " + operandTypes(anchor) + " does not share " +
                                "its A operand, attributes and types with " + quoted(first) +
                                " of " + operandTypes(first) +
                                " (a grouped gemm needs them equal)");
  return false;
}

// The operand is a kernel input, seen through a chain of casts.
std::optional<Source> Analyzer::traceSource(const Value *v, const Op &reader) {
  Source src;
  while (const Op *def = v->definingOp()) {
    if (def->kind() != OpKind::Cast) {
      diags.error(def->loc(), quoted(*def) + " computes an operand of " + quoted(reader) +
                                  "; the gemm template loads operands through casts only");
      return std::nullopt;
    }
    plan.prologue.insert(def);
    src.casts.insert(src.casts.begin(), def->getDType("to"));
    v = def->operand(0);
  }
  src.input = v->index();
  src.stored = v->type().dtype;
  bool floats = isFloat(src.stored);
  for (DType t : src.casts)
    floats = floats && isFloat(t);
  if (floats)
    return src;
  diags.error(reader.loc(), quoted(reader) + " of " + operandTypes(reader) +
                                ": the gemm template loads float operands only (" +
                                std::string(dtypeName(src.stored)) + " input)");
  return std::nullopt;
}

bool Analyzer::findSources() {
  bool ok = true;
  for (Chain &c : plan.chains) {
    std::optional<Source> a = traceSource(c.anchor->operand(0), *c.anchor);
    std::optional<Source> b = traceSource(c.anchor->operand(1), *c.anchor);
    if (c.anchor->numOperands() > 2)
      c.bias = traceSource(c.anchor->operand(2), *c.anchor);
    ok = ok && a && b && (c.anchor->numOperands() < 3 || c.bias);
    if (!ok)
      continue;
    plan.a.sources = {*a};
    plan.b.sources.push_back(*b);
  }
  if (!ok)
    return false;
  const Source &b0 = plan.b.sources.front();
  for (size_t g = 1; g < plan.chains.size(); ++g) {
    const Source &bg = plan.b.sources[g];
    if (bg.stored == b0.stored && bg.casts == b0.casts)
      continue;
    const Op &anchor = *plan.chains[g].anchor;
    diags.error(anchor.loc(), quoted(anchor) + ": its B operand is loaded differently from the "
                                               "first anchor's (another dtype or prologue)");
    return false;
  }
  return true;
}

bool Analyzer::checkDType() {
  const Op &anchor = *plan.chains.front().anchor;
  plan.operand = anchor.operand(0)->type().dtype;
  plan.result = anchor.result()->type().dtype;
  const Attribute *acc = anchor.attrIfPresent("acc");
  std::optional<DType> accType = acc ? std::optional<DType>(acc->get<DType>()) : std::nullopt;
  if (!isFloat(plan.operand) || (accType && !isFloat(*accType))) {
    diags.error(anchor.loc(), quoted(anchor) + " of " + operandTypes(anchor) +
                                  ": the gemm template runs float contractions only");
    return false;
  }
  bool wide = plan.operand == DType::F64 || accType == DType::F64;
  plan.acc = wide ? DType::F64 : DType::F32;
  plan.tensorCores = !wide && isNarrowFloat(plan.operand);
  return true;
}

bool Analyzer::checkEpilogueOperand(const Op &op, const Value *v) const {
  if (plan.prologue.count(v->definingOp())) {
    diags.error(op.loc(), quoted(op) + " reads %" + v->name() +
                              ", a value of the prologue; a gemm epilogue sees its output only");
    return false;
  }
  const Shape &space = plan.chains.front().anchor->result()->type().shape;
  const Shape &s = v->type().shape;
  bool fits = s.size() <= space.size();
  for (size_t i = 0; fits && i < s.size(); ++i)
    fits = s[i] == space[space.size() - s.size() + i] || s[i].isStaticValue(1);
  if (fits)
    return true;
  diags.error(op.loc(), quoted(op) + " reads %" + v->name() + " of type " + v->type().str() +
                            ", which does not broadcast to the gemm output " + shapeStr(space));
  return false;
}

// Every op that is neither an anchor nor in a prologue is a pointwise op or
// a constant of the epilogue, over the anchors' shape, reading at most one
// accumulator chain.
bool Analyzer::classifyEpilogue() {
  for (size_t g = 0; g < plan.chains.size(); ++g)
    chainOf[plan.chains[g].anchor->result()] = int(g);
  const Shape &space = plan.chains.front().anchor->result()->type().shape;
  bool ok = true;
  for (const auto &op : body.ops()) {
    if (isAnchor(*op) || plan.prologue.count(op.get()) || op->kind() == OpKind::Const)
      continue;
    if (op->info().cls != OpClass::Pointwise || op->result()->type().shape != space) {
      diags.error(op->loc(), quoted(*op) + " of type " + op->result()->type().str() +
                                 " cannot be fused into the epilogue of a gemm over " +
                                 shapeStr(space));
      ok = false;
      continue;
    }
    int chain = -1;
    for (const Value *v : op->operands()) {
      ok &= checkEpilogueOperand(*op, v);
      auto it = chainOf.find(v);
      int c = it == chainOf.end() ? -1 : it->second;
      if (c >= 0 && chain >= 0 && c != chain) {
        diags.error(op->loc(), quoted(*op) + " reads the results of two contractions of one "
                                             "grouped gemm");
        ok = false;
      }
      chain = std::max(chain, c);
    }
    chainOf[op->result()] = chain;
  }
  return ok;
}

bool Analyzer::assignResults() {
  bool ok = true;
  for (unsigned j = 0; j < body.outputs().size(); ++j) {
    const Value *v = body.outputs()[j];
    const Op *def = v->definingOp();
    auto it = chainOf.find(v);
    if (!def || it == chainOf.end()) {
      diags.error(kernel.loc(), "gemm kernel result %" + kernel.result(j)->name() +
                                    " is not computed by a contraction or its epilogue");
      ok = false;
      continue;
    }
    plan.chains[std::max(it->second, 0)].results.push_back(j);
  }
  return ok;
}

// The epilogue ops a chain's results need, in body order.
void Analyzer::collectChainOps(Chain &chain) const {
  std::set<const Op *> needed;
  std::vector<const Value *> work;
  for (unsigned j : chain.results)
    work.push_back(body.outputs()[j]);
  while (!work.empty()) {
    const Op *def = work.back()->definingOp();
    work.pop_back();
    if (!def || isAnchor(*def) || !needed.insert(def).second)
      continue;
    for (const Value *v : def->operands())
      work.push_back(v);
  }
  for (const auto &op : body.ops())
    if (needed.count(op.get()))
      chain.ops.push_back(op.get());
}

bool Analyzer::run() {
  if (!findAnchors() || !checkDType() || !findSources() || !classifyEpilogue() || !assignResults())
    return false;
  for (Chain &c : plan.chains)
    collectChainOps(c);
  std::set<std::string> used;
  for (unsigned j = 0; j < kernel.numOperands(); ++j)
    plan.inputs.push_back(uniqueName(used, "in_" + cIdentifier(kernel.operand(j)->name())));
  for (unsigned j = 0; j < kernel.numResults(); ++j)
    plan.outputs.push_back(uniqueName(used, "out_" + cIdentifier(kernel.result(j)->name())));
  return true;
}

} // namespace

bool analyzeGemm(const Op &kernel, const std::string &entry, Plan &plan, Diagnostics &diags) {
  plan.kernel = &kernel;
  plan.body = kernel.body();
  plan.entry = entry;
  return Analyzer(kernel, plan, diags).run() && analyzeShapes(plan, diags);
}

} // namespace fusec::gemm
