// Analysis of a gemm kernel's body (Plan.h): the anchors (matmul/linear ops sharing their A
// operand), each operand traced back through its cast prologue to a kernel input, the other ops
// sorted into per-anchor epilogue chains, the kernel's parameters, the shapes. Each problem is
// reported at its op (docs/codegen-gemm.md lists them).
//
// Shapes. When B has no batch of its own (linear, or a matmul whose B has only size-1 leading
// dims) and A is not transposed, the batch L folds into the rows: one M' x K by K x N product
// with M' = prod(L) * M, so small per-batch M does not waste tiles. Otherwise the product runs
// once per batch index z, each operand's matrix found by its own strides over L (0 where it
// broadcasts). Only M' of an unbatched product may be symbolic, and only in named dims (i64
// parameters): an operand's `?` may be 1 at run time and broadcast, which the kernel's indexing
// does not know.
#include "codegen/templates/gemm/Plan.h"
#include "ir/Assert.h"
#include "ir/Kernel.h"

#include <algorithm>
#include <map>

namespace fusec::gemm {

std::string operandTypes(const Op &op) {
  std::string s;
  for (const Value *v : op.operands())
    s += (s.empty() ? "" : ", ") + v->type().str();
  return s;
}

namespace {

using ChainOf = std::map<const Value *, int>; // -1: reads no accumulator

std::string quoted(const Op &op) { return "'" + std::string(op.name()) + "'"; }
/// "'matmul' of f16[4,8], f16[8,2]"
std::string described(const Op &op) { return quoted(op) + " of " + operandTypes(op); }

/// Reports `message` at `loc`; false.
bool fail(Diagnostics &diags, const Loc &loc, const std::string &message) {
  diags.error(loc, message);
  return false;
}

bool isAnchor(const Op &op) {
  return op.kind() == OpKind::MatMul || op.kind() == OpKind::Linear || op.kind() == OpKind::Conv2d;
}

/// The anchors' result shape, which every epilogue op computes in.
const Shape &outputShape(const Plan &plan) {
  return plan.chains.front().anchor->result()->type().shape;
}

// A grouped gemm runs its anchors as one problem: the same A, kind, attributes and types.
bool checkSibling(const Op &anchor, const Op &first, Diagnostics &diags) {
  bool same = anchor.kind() == first.kind() && anchor.operand(0) == first.operand(0) &&
              anchor.numOperands() == first.numOperands() &&
              anchor.result()->type() == first.result()->type();
  for (unsigned i = 1; same && i < anchor.numOperands(); ++i)
    same = anchor.operand(i)->type() == first.operand(i)->type();
  for (const AttrSpec &spec : anchor.info().attrs) {
    const Attribute *x = anchor.attrIfPresent(spec.name), *y = first.attrIfPresent(spec.name);
    same = same && (x ? y && *x == *y : !y);
  }
  return same || fail(diags, anchor.loc(),
                      described(anchor) + " does not share its A operand, attributes and types " +
                          "with " + described(first) + " (a grouped gemm needs them equal)");
}

bool findAnchors(Plan &plan, Diagnostics &diags) {
  for (const auto &op : plan.body->ops())
    if (isAnchor(*op))
      plan.chains.push_back(Chain{op.get(), std::nullopt, {}, {}});
  if (plan.chains.empty())
    return fail(diags, plan.kernel->loc(),
                "gemm kernel '%" + plan.kernel->result(0)->name() +
                    "' holds no matmul, linear or conv2d");
  bool ok = true;
  for (const Chain &c : plan.chains)
    ok &= checkSibling(*c.anchor, *plan.chains.front().anchor, diags);
  return ok;
}

bool checkDType(Plan &plan, Diagnostics &diags) {
  const Op &anchor = *plan.chains.front().anchor;
  plan.operand = anchor.operand(0)->type().dtype;
  const Attribute *acc = anchor.attrIfPresent("acc");
  std::optional<DType> accType = acc ? std::optional<DType>(acc->get<DType>()) : std::nullopt;
  if (!isFloat(plan.operand) || (accType && !isFloat(*accType)))
    return fail(diags, anchor.loc(),
                described(anchor) + ": the gemm template runs float contractions only");
  bool wide = plan.operand == DType::F64 || accType == DType::F64;
  plan.acc = wide ? DType::F64 : DType::F32;
  plan.tensorCores = !wide && isNarrowFloat(plan.operand);
  return true;
}

// The operand is a kernel input, seen through a chain of casts.
std::optional<Source> traceSource(const Value *v, const Op &reader, Plan &plan,
                                  Diagnostics &diags) {
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
  if (isFloat(src.stored) && std::all_of(src.casts.begin(), src.casts.end(), isFloat))
    return src;
  diags.error(reader.loc(), described(reader) + ": the gemm template loads float operands only (" +
                                std::string(dtypeName(src.stored)) + " input)");
  return std::nullopt;
}

bool findSources(Plan &plan, Diagnostics &diags) {
  bool ok = true;
  for (Chain &c : plan.chains) {
    std::optional<Source> a = traceSource(c.anchor->operand(0), *c.anchor, plan, diags);
    std::optional<Source> b = traceSource(c.anchor->operand(1), *c.anchor, plan, diags);
    if (c.anchor->numOperands() > 2)
      c.bias = traceSource(c.anchor->operand(2), *c.anchor, plan, diags);
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
    if (plan.b.sources[g].stored == b0.stored && plan.b.sources[g].casts == b0.casts)
      continue;
    const Op &anchor = *plan.chains[g].anchor;
    return fail(diags, anchor.loc(),
                quoted(anchor) + ": its B operand is loaded differently from the first anchor's "
                                 "(another dtype or prologue)");
  }
  return true;
}

bool checkEpilogueOperand(const Plan &plan, const Op &op, const Value *v, Diagnostics &diags) {
  if (plan.prologue.count(v->definingOp()))
    return fail(diags, op.loc(),
                quoted(op) + " reads %" + v->name() +
                    ", a value of the prologue; a gemm epilogue sees its output only");
  const Shape &space = outputShape(plan);
  const Shape &s = v->type().shape;
  bool fits = s.size() <= space.size();
  for (size_t i = 0; fits && i < s.size(); ++i)
    fits = s[i] == space[space.size() - s.size() + i] || s[i].isStaticValue(1);
  return fits || fail(diags, op.loc(),
                      quoted(op) + " reads %" + v->name() + " of type " + v->type().str() +
                          ", which does not broadcast to the gemm output " + shapeStr(space));
}

/// Whether `op` can be evaluated element by element in an epilogue: a pointwise op, or a
/// batch_norm whose channels are the last axis (its parameters then broadcast along the rows).
bool isEpilogueOp(const Op &op) {
  return op.info().cls == OpClass::Pointwise ||
         (op.kind() == OpKind::BatchNorm && op.operand(0)->type().layout == Layout::NHWC);
}

/// Whether `transpose`, a planar store (Note [Planar results] in Gemm.cpp), can be the layout of a
/// result: of a conv2d's one chain over the output's shape, and read by no op.
bool checkPlanar(const Plan &plan, const Op &transpose, ChainOf &chainOf, Diagnostics &diags) {
  const Value *x = transpose.operand(0);
  auto it = chainOf.find(x);
  bool ok = plan.chains.size() == 1 && plan.chains.front().anchor->kind() == OpKind::Conv2d &&
            it != chainOf.end() && it->second >= 0 && x->type().shape == outputShape(plan);
  for (const Use &u : transpose.result()->uses())
    ok = ok && !u.user;
  if (!ok)
    return fail(diags, transpose.loc(),
                quoted(transpose) + " of %" + x->name() +
                    " stores a result NCHW only after a convolution's epilogue, and is read by no "
                    "op of the kernel");
  chainOf[transpose.result()] = it->second;
  return true;
}

/// chainOf's mark of a value computed from both chains of a paired gemm.
constexpr int kJoint = 1 << 20;

// Every op that is neither an anchor nor in a prologue is a pointwise op or a constant of the
// epilogue, over the anchors' shape, reading at most one accumulator chain, or both of two (the
// gemm is then paired, Note [Paired gemm]).
bool classifyEpilogue(Plan &plan, ChainOf &chainOf, Diagnostics &diags) {
  for (size_t g = 0; g < plan.chains.size(); ++g)
    chainOf[plan.chains[g].anchor->result()] = int(g);
  const Shape &space = outputShape(plan);
  bool ok = true;
  for (const auto &op : plan.body->ops()) {
    if (isAnchor(*op) || plan.prologue.count(op.get()) || op->kind() == OpKind::Const)
      continue;
    if (isPlanarStore(*op)) {
      ok &= checkPlanar(plan, *op, chainOf, diags);
      continue;
    }
    if (!isEpilogueOp(*op) || op->result()->type().shape != space) {
      diags.error(op->loc(), quoted(*op) + " of type " + op->result()->type().str() +
                                 " cannot be fused into the epilogue of a gemm over " +
                                 shapeStr(space));
      ok = false;
      continue;
    }
    int chain = -1;
    for (const Value *v : op->operands()) {
      ok &= checkEpilogueOperand(plan, *op, v, diags);
      auto it = chainOf.find(v);
      int c = it == chainOf.end() ? -1 : it->second;
      if (c >= 0 && chain >= 0 && c != chain) {
        if (plan.chains.size() == 2) {
          plan.paired = true;
          c = kJoint;
        } else {
          diags.error(op->loc(), quoted(*op) + " reads the results of two of the " +
                                     std::to_string(plan.chains.size()) +
                                     " contractions of one grouped gemm (two can be paired)");
          ok = false;
        }
      }
      chain = std::max(chain, c);
    }
    chainOf[op->result()] = chain;
  }
  return ok;
}

bool assignResults(Plan &plan, const ChainOf &chainOf, Diagnostics &diags) {
  bool ok = true;
  for (unsigned j = 0; j < plan.body->outputs().size(); ++j) {
    const Value *v = plan.body->outputs()[j];
    auto it = chainOf.find(v);
    if (!v->definingOp() || it == chainOf.end()) {
      diags.error(plan.kernel->loc(), "gemm kernel result %" + plan.kernel->result(j)->name() +
                                          " is not computed by a contraction or its epilogue");
      ok = false;
      continue;
    }
    if (isPlanarStore(*v->definingOp()))
      plan.planar.insert(j);
    if (plan.paired)
      plan.joint.results.push_back(j);
    else
      plan.chains[std::max(it->second, 0)].results.push_back(j);
  }
  return ok;
}

// The epilogue ops a chain's results need, in body order.
void collectChainOps(const Graph &body, Chain &chain) {
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

// The pointers come first in plan.args, the dims' arguments after them. Whether every dim is
// static.
bool declareDims(Plan &plan) {
  const Shape &space = outputShape(plan);
  std::map<std::string, unsigned> byName;
  bool isStatic = true;
  for (unsigned k = 0; k < space.size(); ++k) {
    const Dim &d = space[k];
    if (d.isStatic()) {
      plan.dims.push_back({d.size, {}});
      continue;
    }
    isStatic = false;
    auto [it, fresh] = byName.emplace(d.symbol, unsigned(plan.args.size()));
    plan.dims.push_back({1, {it->second}});
    if (fresh && !d.isAnonymous())
      plan.args.push_back(
          {KernelArg::Kind::Dim, "dim_" + cIdentifier(d.symbol), 0, k, std::nullopt});
  }
  return isStatic;
}

bool checkSymbolic(const Plan &plan, bool folded, Diagnostics &diags) {
  const Op &anchor = *plan.chains.front().anchor;
  bool ok = folded && outputShape(plan).back().isStatic();
  for (const Dim &d : outputShape(plan))
    ok = ok && !d.isAnonymous();
  for (const Value *v : anchor.operands())
    for (const Dim &d : v->type().shape)
      ok = ok && !d.isAnonymous();
  return (ok && anchor.operand(0)->type().shape.back().isStatic()) ||
         fail(diags, anchor.loc(),
              described(anchor) + ": the gemm template needs static shapes, except named dims " +
                  "among the rows of an unbatched product");
}

/// The terms of the elements from the first matrix of `operand` to the one batch `z` reads.
std::vector<BatchTerm> batchOffset(const Shape &space, const Shape &operand,
                                   int64_t matrixElements) {
  size_t batchRank = space.size() - 2, own = operand.size() - 2;
  std::vector<BatchTerm> terms;
  int64_t stride = matrixElements, outer = 1;
  for (size_t k = batchRank; k-- > 0;) {
    int64_t size = space[k].size;
    size_t j = k + own - batchRank; // operand axis, when k >= batchRank - own
    if (k + own >= batchRank && operand[j].size != 1) {
      terms.push_back({outer, k > 0 ? size : 0, stride});
      stride *= size;
    }
    outer *= size;
  }
  return terms;
}

/// The operands' chunk copies: cp.async for tensor-core operands read as stored in whole chunks.
void chooseCopies(Plan &plan) {
  for (Matrix *x : {&plan.a, &plan.b})
    x->async = plan.tensorCores && x->sources.front().casts.empty() && x->wholeChunks();
}

// conv2d as the implicit gemm of Note [Implicit gemm] (Gemm.cpp): an NHWC input [n, h, w, c], an
// OHWI filter [o, kh, kw, c] (B, K-major: linear's weight with K = kh * kw * c) and one group; the
// rows are the output pixels, the batch folded into them.
bool analyzeConv(Plan &plan, Diagnostics &diags) {
  bool isStatic = declareDims(plan);
  const Op &anchor = *plan.chains.front().anchor;
  const TensorType &x = anchor.operand(0)->type(), &w = anchor.operand(1)->type();
  if (std::string problem = implicitGemmProblem(anchor); !problem.empty())
    return fail(diags, anchor.loc(), described(anchor) + ": " + problem);
  if (!isStatic && !checkSymbolic(plan, true, diags))
    return false;
  const Shape &space = outputShape(plan);
  const std::vector<int64_t> &strides = anchor.getInts("strides"), &pads = anchor.getInts("pads"),
                             &dilations = anchor.getInts("dilations");
  Window win;
  win.h = x.shape[1].size;
  win.w = x.shape[2].size;
  win.c = x.shape[3].size;
  win.kh = w.shape[1].size;
  win.kw = w.shape[2].size;
  win.oh = space[1].size;
  win.ow = space[2].size;
  win.strideH = strides[0];
  win.strideW = strides[1];
  win.padTop = pads[0];
  win.padLeft = pads[1];
  win.dilationH = dilations[0];
  win.dilationW = dilations[1];
  plan.n = w.shape[0].size;
  plan.k = win.kh * win.kw * win.c;
  plan.m = plan.dims[0] * plan.dims[1] * plan.dims[2];
  plan.a.kMajor = plan.b.kMajor = true;
  plan.a.outer = plan.m;
  plan.a.inner = plan.b.inner = plan.k;
  plan.a.window = win;
  plan.b.outer = {plan.n, {}};
  chooseCopies(plan);
  return true;
}

bool analyzeShapes(Plan &plan, Diagnostics &diags) {
  const Op &anchor = *plan.chains.front().anchor;
  if (anchor.kind() == OpKind::Conv2d)
    return analyzeConv(plan, diags);
  bool isStatic = declareDims(plan);
  const Shape &space = outputShape(plan);
  bool linear = anchor.kind() == OpKind::Linear;
  bool ta = !linear && anchor.getBool("transpose_a");
  bool tb = linear || anchor.getBool("transpose_b");
  const Shape &sa = anchor.operand(0)->type().shape, &sb = anchor.operand(1)->type().shape;
  bool folded = !ta;
  for (size_t i = 0; !linear && i + 2 < sb.size(); ++i)
    folded = folded && sb[i].isStaticValue(1);
  // A static result does not make the contraction static: linear(x: [k], w: [2, k]) is [2].
  for (const Value *v : anchor.operands())
    for (const Dim &d : v->type().shape)
      isStatic = isStatic && d.isStatic();
  if (!isStatic && !checkSymbolic(plan, folded, diags))
    return false;
  plan.n = space.back().size;
  plan.k = (ta ? sa[sa.size() - 2] : sa.back()).size;
  Extent rows;
  for (size_t d = 0; d + 1 < plan.dims.size(); ++d)
    rows = rows * plan.dims[d];
  bool batched = !folded && space.size() > 2;
  plan.m = batched ? plan.dims[space.size() - 2] : rows;
  plan.batches = 1; // static when batched (checkSymbolic); rows / m would divide by an empty m
  for (size_t d = 0; batched && d + 2 < space.size(); ++d)
    plan.batches *= plan.dims[d].factor;
  int64_t m = ta || batched ? space[space.size() - 2].size : 0; // static then
  plan.a.kMajor = !ta;
  plan.a.outer = ta ? Extent{plan.k, {}} : plan.m;
  plan.a.inner = ta ? m : plan.k;
  plan.b.kMajor = tb;
  plan.b.outer = {tb ? plan.n : plan.k, {}};
  plan.b.inner = tb ? plan.k : plan.n;
  if (batched) {
    plan.a.batchOffset = batchOffset(space, sa, m * plan.k);
    plan.b.batchOffset = batchOffset(space, sb, plan.n * plan.k);
  }
  chooseCopies(plan);
  return true;
}

} // namespace

bool analyzeGemm(const Op &kernel, const std::string &entry, Plan &plan, Diagnostics &diags) {
  FUSEC_ASSERT(kernel.kind() == OpKind::Kernel && kernel.body(), "not a kernel op");
  FUSEC_ASSERT(kernel.getString("template") == "gemm", "not a gemm kernel");
  plan.kernel = &kernel;
  plan.body = kernel.body();
  plan.entry = entry;
  ChainOf chainOf;
  if (!findAnchors(plan, diags) || !checkDType(plan, diags) || !findSources(plan, diags) ||
      !classifyEpilogue(plan, chainOf, diags) || !assignResults(plan, chainOf, diags))
    return false;
  for (Chain &c : plan.chains)
    collectChainOps(*plan.body, c);
  if (plan.paired)
    collectChainOps(*plan.body, plan.joint);
  Namer names;
  for (unsigned j = 0; j < kernel.numOperands(); ++j)
    plan.args.push_back({KernelArg::Kind::Input, names.fresh("in_", kernel.operand(j)->name()), j,
                         0, std::nullopt});
  for (unsigned j = 0; j < kernel.numResults(); ++j)
    plan.args.push_back({KernelArg::Kind::Output, names.fresh("out_", kernel.result(j)->name()), j,
                         0, std::nullopt});
  return analyzeShapes(plan, diags);
}

} // namespace fusec::gemm
