// Reading one graph of a verified model file into the IR. Every field is
// checked before use: names well-formed, value names unique within the graph
// and defined before use, enums in range, dims >= 0, op spellings in the op
// table, attribute kinds known, constant indices in range. Attributes are
// then checked against the op's signature (and coerced as the text parser
// coerces them); what else needs the op table (arity, result types) is left
// to the IR verifier, which runs on the finished module.
//
// Problems in a node are reported at Loc::modelNode (the node's index in its
// graph and its first result's name); problems elsewhere at the file.
#include "frontend/LoadContext.h"
#include "ir/Verifier.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

namespace fusec::modelfile {
namespace {

using DimVector = flatbuffers::Vector<flatbuffers::Offset<fb::Dim>>;

/// Longest name shown in a node's location (Note [Read budget]: a location
/// is built for every node, before its names are charged).
constexpr size_t kMaxLocName = 256;

class GraphReader {
public:
  GraphReader(LoadContext &ctx, const std::vector<DenseRef> &constants)
      : ctx(ctx), constants(constants) {}

  std::unique_ptr<Graph> read(const fb::Graph &g, unsigned index);

private:
  bool readShape(const DimVector *dims, Shape &shape, const Where &where, bool isType);
  bool readTensor(const fb::Tensor &t, const Where &where, const std::string &what,
                  std::string &name, TensorType &type);
  bool readInputs(const fb::Graph &g, const std::string &label, Graph &graph);
  bool readOperands(const fb::Node &n, const Where &where, std::vector<Value *> &operands);
  bool readResults(const fb::Node &n, const Where &where, std::vector<std::string> &names,
                   std::vector<TensorType> &types);
  // One per member of the AttrValue union.
  bool readMember(const fb::IntAttr &a, const Where &where, Attribute &value);
  bool readMember(const fb::FloatAttr &a, const Where &where, Attribute &value);
  bool readMember(const fb::StringAttr &a, const Where &where, Attribute &value);
  bool readMember(const fb::BoolAttr &a, const Where &where, Attribute &value);
  bool readMember(const fb::IntsAttr &a, const Where &where, Attribute &value);
  bool readMember(const fb::DTypeAttr &a, const Where &where, Attribute &value);
  bool readMember(const fb::ShapeAttr &a, const Where &where, Attribute &value);
  bool readMember(const fb::DenseAttr &a, const Where &where, Attribute &value);
  bool readAttrValue(const fb::Attr &a, const Where &where, Attribute &value);
  bool readAttrs(const fb::Node &n, const Where &where, AttrList &attrs);
  bool readNode(const fb::Node &n, int index, Graph &graph);
  bool readOutputs(const fb::Graph &g, const std::string &label, Graph &graph);

  LoadContext &ctx;
  const std::vector<DenseRef> &constants;
  llvm::StringMap<Value *> values; // null while a node's results are being read
};

/// Reads dims. A type's static dims are sizes (>= 0); a shape attribute's
/// may be anything the op gives a meaning (reshape's -1), which the IR
/// verifier checks.
bool GraphReader::readShape(const DimVector *dims, Shape &shape, const Where &where, bool isType) {
  if (!ctx.take(dims))
    return false;
  for (uint32_t i = 0; i < count(dims); ++i) {
    const fb::Dim &d = *dims->Get(i);
    std::string_view symbol;
    if (!ctx.read(d.symbol(), symbol))
      return false;
    if (symbol.empty() && isType && d.size() < 0)
      return ctx.fail(where, "negative dimension " + std::to_string(d.size()));
    if (symbol.empty()) {
      shape.push_back(Dim::fixed(d.size()));
      continue;
    }
    if (symbol != "?" && !isIdentifier(symbol))
      return ctx.fail(where, "invalid dimension symbol " + quote(symbol));
    if (d.size() != 0)
      return ctx.fail(where, "dimension " + quote(symbol) + " also has a size");
    shape.push_back(symbol == "?" ? Dim::anonymous() : Dim::named(std::string(symbol)));
  }
  return true;
}

/// Reads a named tensor; `what` names it in messages ("input 1", "result 0").
bool GraphReader::readTensor(const fb::Tensor &t, const Where &where, const std::string &what,
                             std::string &name, TensorType &type) {
  std::string_view text;
  if (!ctx.read(t.name(), text))
    return false;
  if (!isValueName(text))
    return ctx.fail(where, what + ": invalid value name " + quote(text));
  name = text;
  if (!values.try_emplace(name, nullptr).second)
    return ctx.fail(where, what + ": duplicate value name " + quote(name));
  Where named{where.loc, where.prefix + what + " ('" + name + "'): "};
  std::optional<DType> dtype = fromSchema(t.dtype());
  if (!dtype)
    return ctx.fail(named, "unknown dtype " + std::to_string(unsigned(t.dtype())));
  std::optional<Layout> layout = fromSchema(t.layout());
  if (!layout)
    return ctx.fail(named, "unknown layout " + std::to_string(unsigned(t.layout())));
  type = TensorType{*dtype, {}, *layout};
  if (!readShape(t.shape(), type.shape, named, /*isType=*/true))
    return false;
  if (*layout != Layout::None && type.rank() != 4)
    return ctx.fail(named, "layout tag {" + std::string(layoutName(*layout)) +
                               "} on a tensor of rank " + std::to_string(type.rank()));
  return true;
}

bool GraphReader::readInputs(const fb::Graph &g, const std::string &label, Graph &graph) {
  if (!ctx.take(g.inputs()))
    return false;
  Where where{ctx.fileLoc(), label};
  for (uint32_t i = 0; i < count(g.inputs()); ++i) {
    std::string name;
    TensorType type;
    if (!readTensor(*g.inputs()->Get(i), where, "input " + std::to_string(i), name, type))
      return false;
    values[name] = graph.addInput(name, std::move(type));
  }
  return true;
}

bool GraphReader::readOperands(const fb::Node &n, const Where &where,
                               std::vector<Value *> &operands) {
  if (!ctx.take(n.inputs()))
    return false;
  for (uint32_t i = 0; i < count(n.inputs()); ++i) {
    std::string_view name;
    if (!ctx.read(n.inputs()->Get(i), name))
      return false;
    auto it = values.find(name);
    if (it == values.end() || !it->second)
      return ctx.fail(where, "operand " + std::to_string(i) + " " + quote(name) +
                                 " is not defined before this node");
    operands.push_back(it->second);
  }
  return true;
}

bool GraphReader::readResults(const fb::Node &n, const Where &where,
                              std::vector<std::string> &names, std::vector<TensorType> &types) {
  if (!ctx.take(n.outputs()))
    return false;
  for (uint32_t i = 0; i < count(n.outputs()); ++i) {
    std::string name;
    TensorType type;
    if (!readTensor(*n.outputs()->Get(i), where, "result " + std::to_string(i), name, type))
      return false;
    names.push_back(std::move(name));
    types.push_back(std::move(type));
  }
  return true;
}

bool GraphReader::readMember(const fb::IntAttr &a, const Where &, Attribute &value) {
  value = Attribute(int64_t(a.value()));
  return true;
}

bool GraphReader::readMember(const fb::FloatAttr &a, const Where &, Attribute &value) {
  value = Attribute(a.value());
  return true;
}

bool GraphReader::readMember(const fb::BoolAttr &a, const Where &, Attribute &value) {
  value = Attribute(a.value());
  return true;
}

bool GraphReader::readMember(const fb::StringAttr &a, const Where &, Attribute &value) {
  std::string_view s;
  if (!ctx.read(a.value(), s))
    return false;
  value = Attribute(std::string(s));
  return true;
}

bool GraphReader::readMember(const fb::IntsAttr &a, const Where &, Attribute &value) {
  if (!ctx.take(a.values()))
    return false;
  std::vector<int64_t> ints;
  if (a.values())
    ints.assign(a.values()->begin(), a.values()->end());
  value = Attribute(std::move(ints));
  return true;
}

bool GraphReader::readMember(const fb::DTypeAttr &a, const Where &where, Attribute &value) {
  std::optional<DType> dtype = fromSchema(a.value());
  if (!dtype)
    return ctx.fail(where, "unknown dtype " + std::to_string(unsigned(a.value())));
  value = Attribute(*dtype);
  return true;
}

bool GraphReader::readMember(const fb::ShapeAttr &a, const Where &where, Attribute &value) {
  Shape shape;
  if (!readShape(a.dims(), shape, where, /*isType=*/false))
    return false;
  value = Attribute(std::move(shape));
  return true;
}

bool GraphReader::readMember(const fb::DenseAttr &a, const Where &where, Attribute &value) {
  if (a.constant() >= constants.size())
    return ctx.fail(where, "constant " + std::to_string(a.constant()) +
                               " does not exist (the file has " + std::to_string(constants.size()) +
                               ")");
  value = Attribute(constants[a.constant()]);
  return true;
}

bool GraphReader::readAttrValue(const fb::Attr &a, const Where &where, Attribute &value) {
  using K = fb::AttrValue;
  if (a.value_type() > K::MAX)
    return ctx.fail(where, "unknown kind " + std::to_string(unsigned(a.value_type())));
  if (a.value_type() == K::NONE || !a.value())
    return ctx.fail(where, "missing value");
  switch (a.value_type()) {
  case K::IntAttr:
    return readMember(*a.value_as_IntAttr(), where, value);
  case K::FloatAttr:
    return readMember(*a.value_as_FloatAttr(), where, value);
  case K::StringAttr:
    return readMember(*a.value_as_StringAttr(), where, value);
  case K::BoolAttr:
    return readMember(*a.value_as_BoolAttr(), where, value);
  case K::IntsAttr:
    return readMember(*a.value_as_IntsAttr(), where, value);
  case K::DTypeAttr:
    return readMember(*a.value_as_DTypeAttr(), where, value);
  case K::ShapeAttr:
    return readMember(*a.value_as_ShapeAttr(), where, value);
  case K::DenseAttr:
    return readMember(*a.value_as_DenseAttr(), where, value);
  case K::NONE:
    break;
  }
  return ctx.fail(where, "missing value");
}

bool GraphReader::readAttrs(const fb::Node &n, const Where &where, AttrList &attrs) {
  if (!ctx.take(n.attrs()))
    return false;
  llvm::StringSet<> seen;
  for (uint32_t i = 0; i < count(n.attrs()); ++i) {
    const fb::Attr &a = *n.attrs()->Get(i);
    std::string_view name;
    if (!ctx.read(a.name(), name))
      return false;
    if (!isIdentifier(name))
      return ctx.fail(where,
                      "attribute " + std::to_string(i) + " has an invalid name " + quote(name));
    if (!seen.insert(name).second)
      return ctx.fail(where, "duplicate attribute " + quote(name));
    Attribute value;
    if (!readAttrValue(a, {where.loc, where.prefix + "attribute " + quote(name) + ": "}, value))
      return false;
    attrs.push_back({std::string(name), std::move(value)});
  }
  return true;
}

/// The name shown in a node's location: its first result's, when sensible.
std::string nodeName(const fb::Node &n) {
  if (count(n.outputs()) == 0)
    return {};
  std::string_view name = n.outputs()->Get(0)->name()->string_view();
  return name.size() <= kMaxLocName && isValueName(name) ? std::string(name) : std::string();
}

bool GraphReader::readNode(const fb::Node &n, int index, Graph &graph) {
  Where where{Loc::modelNode(ctx.file, index, nodeName(n)), {}};
  std::string_view spelling;
  if (!ctx.read(n.op(), spelling))
    return false;
  std::optional<OpKind> kind = lookupOp(spelling);
  if (!kind)
    return ctx.fail(where, "unknown op " + quote(spelling));
  std::vector<Value *> operands;
  std::vector<std::string> names;
  std::vector<TensorType> types;
  AttrList attrs;
  if (!readOperands(n, where, operands) || !readResults(n, where, names, types) ||
      !readAttrs(n, where, attrs))
    return false;
  // As the text parser does: check the attributes against the op's signature
  // and coerce what the signature allows (an int where a float is expected),
  // so that the op holds exactly the kinds its accessors will ask for.
  if (!checkAttributes(*kind, attrs, where.loc, ctx.diagnostics()))
    return false;
  Op *op = graph.createOp(*kind, operands, types, std::move(attrs), where.loc);
  for (unsigned i = 0; i < op->numResults(); ++i) {
    op->result(i)->setName(names[i]);
    values[names[i]] = op->result(i);
  }
  return true;
}

bool GraphReader::readOutputs(const fb::Graph &g, const std::string &label, Graph &graph) {
  if (!ctx.take(g.outputs()))
    return false;
  std::vector<Value *> outputs;
  for (uint32_t i = 0; i < count(g.outputs()); ++i) {
    std::string_view name;
    if (!ctx.read(g.outputs()->Get(i), name))
      return false;
    auto it = values.find(name);
    if (it == values.end())
      return ctx.fail(label + "output " + std::to_string(i) + " " + quote(name) +
                      " is not defined");
    outputs.push_back(it->second);
  }
  graph.setOutputs(outputs);
  return true;
}

std::unique_ptr<Graph> GraphReader::read(const fb::Graph &g, unsigned index) {
  std::string label = "graph " + std::to_string(index) + ": ";
  std::string_view name;
  if (!ctx.read(g.name(), name))
    return nullptr;
  if (!isValueName(name)) {
    ctx.fail(label + "invalid name " + quote(name));
    return nullptr;
  }
  label = "graph " + std::to_string(index) + " ('" + std::string(name) + "'): ";
  auto graph = std::make_unique<Graph>(std::string(name));
  graph->setLoc(ctx.fileLoc());
  if (!readInputs(g, label, *graph) || !ctx.take(g.nodes()))
    return nullptr;
  for (uint32_t i = 0; i < count(g.nodes()); ++i)
    if (!readNode(*g.nodes()->Get(i), int(i), *graph))
      return nullptr;
  if (!readOutputs(g, label, *graph))
    return nullptr;
  return graph;
}

} // namespace

std::unique_ptr<Graph> readGraph(const fb::Graph &g, unsigned index,
                                 const std::vector<DenseRef> &constants, LoadContext &ctx) {
  return GraphReader(ctx, constants).read(g, index);
}

} // namespace fusec::modelfile
