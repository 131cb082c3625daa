// The graph generator's frame: decisions, dims and shapes, leaves (inputs
// and constants), picking operands, creating an op under the double type
// check, and the module of graphs. The per-op recipes are in
// GraphGeneratorOps.cpp; see GraphGenerator.h for what is generated.
#include "ir/ShapeInference.h"
#include "ir/Verifier.h"
#include "test/fuzz/GeneratorState.h"

#include <algorithm>
#include <cmath>

namespace fusec::fuzz {

namespace {

// Odd names on purpose: they differ only in characters that a C identifier
// cannot hold, so that generated kernel names and locals must keep them apart.
constexpr std::string_view kValueNames[] = {"y", "y.1", "y_1", "y$1", "a.b", "a_b", "a$b", "x",
                                            "0", "1",   "_",   "$",   ".",   "f32", "out", "in_x"};
constexpr std::string_view kGraphNames[] = {"a.b", "a_b", "a$b", "a", "main", "0", "g_y", "g"};
constexpr std::string_view kDimNames[] = {"n", "batch", "seq", "rows", "d_1", "b1"};
constexpr int64_t kStaticSizes[] = {1, 1, 2, 3, 4, 5, 7, 8, 16};
constexpr DType kDTypes[] = {DType::F32, DType::F32,  DType::F32, DType::F16,
                             DType::F16, DType::BF16, DType::F64, DType::I32,
                             DType::I64, DType::I8,   DType::Bool};
constexpr Layout kLayouts[] = {Layout::None, Layout::None, Layout::NCHW, Layout::NHWC};
constexpr double kConstantValues[] = {0.0, 1.0, -1.0, 0.5, 2.0, -3.25, 1e-3, 100.0, 7.0};
constexpr double kNonZeroValues[] = {1.0, -1.0, 2.0, -3.0, 7.0}; // nonzero in every dtype
/// Largest concrete element count of a value, so that the reference stays fast.
constexpr int64_t kMaxElements = 1 << 14;

bool concreteBroadcast(const std::vector<int64_t> &a, const std::vector<int64_t> &b) {
  for (size_t i = 1; i <= std::min(a.size(), b.size()); ++i) {
    int64_t x = a[a.size() - i], y = b[b.size() - i];
    if (x != y && x != 1 && y != 1)
      return false;
  }
  return true;
}

int64_t numElements(const std::vector<int64_t> &sizes) {
  int64_t n = 1;
  for (int64_t s : sizes)
    n = s > 0 && n > kMaxElements / s ? kMaxElements + 1 : n * s;
  return n;
}

std::vector<int64_t> sizesOf(const ShapePick &shape) {
  std::vector<int64_t> sizes;
  for (const DimPick &d : shape)
    sizes.push_back(d.size);
  return sizes;
}

} // namespace

DType Generator::anyDType() { return oneOf(kDTypes); }
DType Generator::dtypeFor(Want want) {
  DType t = anyDType();
  return accepts(want, t) ? t : DType::F32;
}

DimPick Generator::freshDim() {
  unsigned kind = unsigned(range(0, 9));
  if (kind < 5 || (kind < 8 && namedDims.empty())) {
    int64_t n = chance(2) ? 0 : oneOf(kStaticSizes);
    return {Dim::fixed(n), n};
  }
  if (kind < 8) {
    const auto &[name, size] = oneOf(namedDims);
    return {Dim::named(name), size};
  }
  return {Dim::anonymous(), anonSize};
}

ShapePick Generator::freshShape(size_t minRank, size_t maxRank) {
  ShapePick shape;
  size_t rank = size_t(range(int64_t(minRank), int64_t(maxRank)));
  for (size_t i = 0; i < rank; ++i) {
    DimPick d = freshDim();
    // Keep the element count small: the reference runs every graph twice.
    if (numElements(sizesOf(shape)) * std::max<int64_t>(d.size, 1) > 2048)
      d = {Dim::fixed(1), 1};
    shape.push_back(d);
  }
  return shape;
}

DimPick Generator::agreeingDim(const Dim &d, int64_t size) {
  std::vector<DimPick> options;
  if (!d.isAnonymous())
    options.push_back({d, size});
  else
    options.push_back({Dim::fixed(size), size});
  if (size == anonSize)
    options.push_back({Dim::anonymous(), size});
  if (d.isAnonymous())
    for (const auto &[name, n] : namedDims)
      if (n == size)
        options.push_back({Dim::named(name), size});
  return oneOf(options);
}

ShapePick Generator::partnerShape(const Item &x) {
  ShapePick shape;
  size_t drop = chance(30) ? size_t(range(0, int64_t(x.rank()))) : 0;
  if (drop == 0 && x.rank() < 4 && chance(10))
    shape.push_back(freshDim());
  for (size_t i = drop; i < x.rank(); ++i) {
    if (x.dim(i).isStaticValue(1) && chance(30))
      shape.push_back(freshDim()); // the partner widens x's 1
    else if (chance(25))
      shape.push_back({Dim::fixed(1), 1});
    else
      shape.push_back(agreeingDim(x.dim(i), x.sizes[i]));
  }
  return shape;
}

std::string Generator::valueName() {
  if (plainNames || chance(50))
    return graph->uniqueName();
  return graph->uniqueName(oneOf(kValueNames));
}

Item *Generator::constant(DType dtype, const std::vector<int64_t> &sizes, bool nonZero) {
  int64_t n = numElements(sizes);
  if (n > kMaxElements)
    return nullptr;
  auto value = [&] { return nonZero ? oneOf(kNonZeroValues) : oneOf(kConstantValues); };
  std::vector<double> values(size_t(n), value());
  if (n <= 64 && chance(60))
    for (double &v : values)
      v = value();
  if (isFloat(dtype) && n > 0 && chance(3))
    values[0] = chance(50) ? NAN : INFINITY;
  Value *v = Builder(*graph, diags).constant(dtype, sizes, values);
  if (!v)
    return nullptr;
  v->setName(valueName());
  items->push_back({v, sizes});
  return &items->back();
}

Item *Generator::indexConstant(DType dtype, const std::vector<int64_t> &sizes, int64_t extent) {
  int64_t n = numElements(sizes);
  if (n > kMaxElements || extent <= 0)
    return nullptr;
  std::vector<double> values;
  for (int64_t i = 0; i < n; ++i)
    values.push_back(double(range(-extent, extent - 1)));
  Value *v = Builder(*graph, diags).constant(dtype, sizes, values);
  if (!v)
    return nullptr;
  v->setName(valueName());
  items->push_back({v, sizes});
  return &items->back();
}

Item *Generator::leaf(DType dtype, const ShapePick &shape, Layout layout) {
  std::vector<int64_t> sizes = sizesOf(shape);
  bool isStatic =
      std::all_of(shape.begin(), shape.end(), [](const DimPick &d) { return d.dim.isStatic(); });
  if (inBody || (isStatic && chance(30)))
    return isStatic ? constant(dtype, sizes) : nullptr;
  Shape dims;
  for (const DimPick &d : shape)
    dims.push_back(d.dim);
  TensorType type{dtype, std::move(dims), shape.size() == 4 ? layout : Layout::None};
  for (const DimPick &d : shape)
    if (!d.dim.isStatic())
      boundNames.insert(d.dim.symbol);
  Value *v = graph->addInput(valueName(), std::move(type));
  inputShapes->push_back(sizes);
  items->push_back({v, std::move(sizes)});
  return &items->back();
}

Item *Generator::pick(const std::function<bool(const Item &)> &fits,
                      const std::function<Item *()> &make) {
  std::vector<Item *> candidates;
  for (Item &item : *items)
    if (fits(item))
      candidates.push_back(&item);
  if (candidates.empty() || chance(20))
    return make();
  return oneOf(candidates);
}

Item *Generator::operand(Want want, size_t minRank, size_t maxRank) {
  return pick(
      [&](const Item &x) {
        return accepts(want, x.dtype()) && x.rank() >= minRank && x.rank() <= maxRank;
      },
      [&] { return leaf(dtypeFor(want), freshShape(minRank, maxRank), oneOf(kLayouts)); });
}

Item *Generator::partner(const Item &x, DType dtype) {
  Layout tag = x.value->type().layout;
  return pick(
      [&](const Item &y) {
        Layout other = y.value->type().layout;
        return y.dtype() == dtype &&
               (tag == other || tag == Layout::None || other == Layout::None) &&
               broadcastShapes(x.value->type().shape, y.value->type().shape) &&
               concreteBroadcast(x.sizes, y.sizes);
      },
      [&] { return leaf(dtype, partnerShape(x)); });
}

Item *Generator::make(OpKind kind, const std::vector<Item *> &operands, AttrList attrs,
                      const AttrList &concreteAttrs) {
  std::vector<Value *> values;
  std::vector<TensorType> concreteTypes;
  for (Item *x : operands) {
    if (!x)
      return nullptr;
    values.push_back(x->value);
    concreteTypes.push_back({x->dtype(), staticShape(x->sizes), x->value->type().layout});
  }
  Op *op = Builder(*graph, diags).createOp(kind, values, std::move(attrs));
  diags.clear();
  if (!op)
    return nullptr;
  AttrList concrete = op->attrs();
  for (const NamedAttr &a : concreteAttrs)
    for (NamedAttr &c : concrete)
      if (c.name == a.name)
        c.value = a.value;
  Diagnostics scratch;
  std::vector<TensorType> results;
  bool fits = inferResultTypes(kind, concreteTypes, concrete, Loc{}, scratch, results);
  for (const TensorType &t : results)
    fits &= numElements(staticSizes(t.shape)) <= kMaxElements;
  if (!fits) {
    graph->erase(op);
    return nullptr;
  }
  size_t first = items->size();
  for (unsigned i = 0; i < op->numResults(); ++i) {
    op->result(i)->setName(valueName());
    items->push_back({op->result(i), staticSizes(results[i].shape)});
  }
  return &(*items)[first];
}

namespace {

/// The values of the graph to return: every op result nothing uses (so
/// that no op is dead), sometimes an input or a repeat; never none.
std::vector<Value *> chooseOutputs(Generator &gen, std::deque<Item> &items) {
  std::vector<Value *> outputs;
  for (Item &x : items)
    if (!x.value->isGraphInput() && !x.value->hasUses())
      outputs.push_back(x.value);
  for (Item &x : items)
    if (outputs.size() < 8 && gen.chance(5))
      outputs.push_back(x.value);
  if (outputs.empty() && !items.empty())
    outputs.push_back(items.back().value);
  return outputs;
}

} // namespace

void Generator::addOps(size_t count) {
  // Once the bytes run out every decision would be the first choice (a
  // constant): the graph ends there. Tries that fail are bounded.
  for (size_t tries = 0, limit = 8 * count + 8; count > 0 && tries < limit; ++tries) {
    if (data.remaining_bytes() == 0)
      return;
    count -= addOp(oneOf(allOps()).kind);
  }
}

bool Generator::addKernel() {
  if (inBody || items->empty())
    return false;
  std::vector<Item *> operands;
  for (int64_t i = range(1, 3); i > 0; --i)
    operands.push_back(&oneOf(*items));
  auto body = std::make_unique<Graph>("body");
  std::deque<Item> bodyItems;
  for (Item *x : operands)
    bodyItems.push_back(
        {body->addInput(body->uniqueName(oneOf(kValueNames)), x->value->type()), x->sizes});
  Graph *outer = graph;
  std::deque<Item> *outerItems = items;
  graph = body.get(), items = &bodyItems, inBody = true;
  addOps(size_t(range(1, 4)));
  std::vector<Value *> outputs = chooseOutputs(*this, bodyItems);
  body->setOutputs(outputs);
  graph = outer, items = outerItems, inBody = false;

  std::vector<Value *> values;
  for (Item *x : operands)
    values.push_back(x->value);
  std::vector<TensorType> types;
  for (Value *v : outputs)
    types.push_back(v->type());
  constexpr std::string_view kTemplates[] = {"pointwise", "row_reduction", "gemm", "attention"};
  AttrList attrs{{"template", std::string(oneOf(kTemplates))}};
  Op *op = graph->createOp(OpKind::Kernel, values, types, std::move(attrs));
  op->setBody(std::move(body));
  for (unsigned i = 0; i < op->numResults(); ++i) {
    op->result(i)->setName(valueName());
    auto it = std::find_if(bodyItems.begin(), bodyItems.end(),
                           [&](const Item &x) { return x.value == outputs[i]; });
    items->push_back({op->result(i), it->sizes});
  }
  return true;
}

GeneratedModule Generator::run() {
  GeneratedModule out;
  out.module = std::make_unique<Module>();
  out.precision = chance(10)   ? PrecisionChoice::FP16
                  : chance(10) ? PrecisionChoice::BF16
                               : PrecisionChoice::FP32;
  out.seed = data.ConsumeIntegral<uint8_t>();
  // Mostly one graph: more graphs cost time and add only cross-graph names.
  size_t numGraphs = limits.big || !chance(30) ? 1 : size_t(range(2, limits.maxGraphs));
  for (size_t gi = 0; gi < numGraphs; ++gi) {
    std::string name(oneOf(kGraphNames));
    for (const auto &g : out.module->graphs)
      if (g->name() == name)
        name += "." + std::to_string(gi);
    auto g = std::make_unique<Graph>(name);
    std::deque<Item> graphItems;
    out.dims.emplace_back();
    out.inputShapes.emplace_back();
    graph = g.get(), items = &graphItems, inputShapes = &out.inputShapes.back();
    namedDims.clear();
    boundNames.clear();
    for (int64_t n = range(0, 3); n > 0; --n) {
      std::string dim(oneOf(kDimNames));
      if (std::none_of(namedDims.begin(), namedDims.end(), [&](auto &d) { return d.first == dim; }))
        namedDims.push_back({dim, range(1, 6)});
    }
    anonSize = range(1, 6);
    if (!limits.big)
      addOps(size_t(range(1, limits.maxOpsPerGraph)));
    else if (chance(50))
      addBigChain(size_t(range(1000, 6000)));
    else
      addBigConcat(size_t(range(1000, 6000)));
    if (graphItems.empty())
      leaf(anyDType(), freshShape(0, 3));
    g->setOutputs(chooseOutputs(*this, graphItems));
    for (const auto &[dim, size] : namedDims)
      out.dims.back()[dim] = size;
    out.dims.back()["?"] = anonSize;
    out.module->graphs.push_back(std::move(g));
  }
  return out;
}

GeneratedModule generateModule(FuzzedDataProvider &data, const GeneratorLimits &limits) {
  return Generator(data, limits).run();
}

} // namespace fusec::fuzz
