// The ONNX import driver: bounds the file, parses it with the ONNX protobuf
// classes, runs ONNX's checker, then reads the main graph into a fusec graph
// — inputs with their dtypes and dims (dim_param names kept symbolic),
// initializers as constants, each node through its op handler (Ops*.cpp),
// outputs — and verifies the result.
//
// Unsupported ops are found before any node is imported and reported in one
// diagnostic per op type, with its count and first node names, so that a
// user learns everything a model lacks at once. Every other error is located
// at its node (index and name).
#include "frontend/onnx/Importer.h"

#include "ir/FileIO.h"
#include "ir/Verifier.h"
#include "onnx/checker.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <map>
#include <set>

namespace fusec {
namespace onnximport {

using onnx::AttributeProto;
using onnx::NodeProto;

/// The opsets of the default domain fusec reads: ONNX 1.12's.
// Opsets before 7 are read where an op means what it means in 7 (legacy
// attributes that change the meaning are refused: checkLegacy).
constexpr int64_t kMinOpset = 1, kMaxOpset = 17;
/// Elements of an integer tensor followed as known values (Note [Values
/// known at import]); larger ones stay plain constants.
constexpr size_t kMaxKnownInts = 1024;
/// Nodes named in the unsupported-op message, per op type.
constexpr size_t kNamedNodes = 3;

SymInt SymInt::ofDim(const Dim &d) {
  if (d.isStatic())
    return of(d.size);
  if (d.isAnonymous())
    return unknownValue();
  return SymInt{1, {d.symbol}, false};
}

std::optional<Dim> SymInt::asDim() const {
  if (unknown)
    return std::nullopt;
  if (names.empty())
    return Dim::fixed(factor);
  if (names.size() == 1 && factor == 1)
    return Dim::named(names.front());
  return std::nullopt;
}

std::string SymInt::str() const {
  if (unknown)
    return "?";
  std::string s = factor == 1 && !names.empty() ? "" : std::to_string(factor);
  for (const std::string &n : names)
    s += (s.empty() ? "" : "*") + n;
  return s;
}

SymInt operator*(const SymInt &a, const SymInt &b) {
  if (a.unknown || b.unknown)
    return SymInt::unknownValue();
  int64_t f;
  if (__builtin_mul_overflow(a.factor, b.factor, &f))
    return SymInt::unknownValue();
  // A product of more names than any shape has is not followed (a chain of
  // squarings would otherwise double it at each step).
  if (a.names.size() + b.names.size() > 16)
    return SymInt::unknownValue();
  SymInt r{f, a.names, false};
  r.names.insert(r.names.end(), b.names.begin(), b.names.end());
  std::sort(r.names.begin(), r.names.end());
  if (f == 0)
    r.names.clear();
  return r;
}

Shape shapeOf(const std::vector<SymInt> &ints) {
  Shape s;
  for (const SymInt &v : ints)
    s.push_back(v.asDim().value_or(Dim::anonymous()));
  return s;
}

Shape reshapeTarget(const std::vector<SymInt> &ints) {
  bool minusOne = false;
  for (const SymInt &v : ints)
    minusOne |= v.isStatic() && v.factor == -1;
  Shape s;
  for (const SymInt &v : ints) {
    if (std::optional<Dim> d = v.asDim()) {
      s.push_back(*d);
    } else if (!minusOne) {
      s.push_back(Dim::fixed(-1));
      minusOne = true;
    } else {
      s.push_back(Dim::anonymous());
    }
  }
  return s;
}

namespace {

/// A fusec value name for an ONNX name: characters fusec names do not allow
/// become '_'.
std::string valueName(std::string_view name) {
  std::string s(name);
  for (char &c : s)
    if (!llvm::isAlnum(c) && c != '_' && c != '.' && c != '$')
      c = '_';
  return s;
}

/// A fusec dim (or graph) name: a value name that does not start with a digit.
std::string identifier(std::string_view name) {
  std::string s = valueName(name);
  if (s.empty() || llvm::isDigit(s[0]))
    s.insert(0, "_");
  return s;
}

// Note [NCHW inputs]
// ONNX's convolutions, pools and batch norms read their input as NCHW. fusec
// knows a rank-4 tensor is NCHW by its {nchw} tag, which the layout pass needs
// to run conv chains in NHWC on the tensor-core kernels (an untagged tensor is
// read as NCHW too, but stays on the generic kernels). Tags flow from graph
// inputs through the ops that keep them (pointwise, convolutions, pools,
// normalizations, concat), so the importer tags the rank-4 inputs from which
// a windowed op's data is computed.

/// The names of the tensors a windowed op's data input is computed from.
std::set<std::string> feedingWindows(const onnx::GraphProto &graph) {
  static const std::set<std::string> kWindowed = {
      "Conv",          "ConvTranspose",     "MaxPool",           "AveragePool",
      "GlobalMaxPool", "GlobalAveragePool", "BatchNormalization"};
  std::map<std::string, const NodeProto *> producer;
  for (const NodeProto &n : graph.node())
    for (const std::string &out : n.output())
      producer[out] = &n;
  std::set<std::string> seen;
  std::vector<std::string> work;
  for (const NodeProto &n : graph.node())
    if (kWindowed.count(n.op_type()) && n.input_size() > 0)
      work.push_back(n.input(0));
  while (!work.empty()) {
    std::string name = std::move(work.back());
    work.pop_back();
    if (name.empty() || !seen.insert(name).second)
      continue;
    if (auto it = producer.find(name); it != producer.end())
      for (const std::string &in : it->second->input())
        work.push_back(in);
  }
  return seen;
}

} // namespace

class Importer {
public:
  Importer(onnx::ModelProto &model, const std::string &file, const OnnxImportOptions &opts,
           Diagnostics &diags)
      : model(model), file(file), diags(diags), source{opts.modelDir, opts.maxDataBytes} {}

  std::unique_ptr<Module> run();

  // For NodeImport.
  const Term &term(const std::string &name) const { return terms.find(name)->second; }
  Value *materialize(const std::string &name, const Loc &loc);
  bool bind(const std::string &name, Term t);
  TensorSource &tensorSource() { return source; }
  Builder &builder() { return *b; }
  Diagnostics &diagnostics() { return diags; }

private:
  bool check();
  bool readOpset();
  bool findUnsupported();
  bool readInitializers();
  bool readInputs();
  bool readNodes();
  bool readOutputs();
  bool checkLegacy(const NodeProto &n, const Loc &loc);
  bool fail(std::string message) {
    diags.error(Loc{file, 0, 0, -1, {}}, std::move(message));
    return false;
  }
  Loc nodeLoc(int index) const;

  onnx::ModelProto &model;
  const std::string &file;
  Diagnostics &diags;
  TensorSource source;
  int64_t opset = 0;
  std::unique_ptr<Graph> graph;
  std::unique_ptr<Builder> b;
  std::map<std::string, Term> terms; // ONNX tensor name -> term
  std::set<std::string> outputNames;
};

// Before opset 7, binary ops broadcast only with `broadcast = 1`, along
// `axis` when given; the right-aligned form is numpy's, the others are
// refused. Dropout's and BatchNormalization's `is_test`/`spatial` and every
// `consumed_inputs` do not change inference results (spatial = 0 does).
bool Importer::checkLegacy(const NodeProto &n, const Loc &loc) {
  for (const AttributeProto &a : n.attribute()) {
    if ((a.name() == "axis" && n.op_type() != "Concat" && n.op_type() != "Softmax" &&
         n.op_type() != "Flatten" && n.op_type() != "Gather" && n.op_type() != "Split" &&
         n.op_type() != "LogSoftmax" && n.op_type() != "Hardmax") ||
        (a.name() == "spatial" && a.i() == 0)) {
      diags.error(loc, n.op_type() + ": the legacy attribute '" + a.name() + "' (opset " +
                           std::to_string(opset) + ") is not supported");
      return false;
    }
  }
  return true;
}

Loc Importer::nodeLoc(int index) const {
  const NodeProto &n = model.graph().node(index);
  std::string name = !n.name().empty() ? n.name() : n.output_size() ? n.output(0) : "";
  if (name.size() > 256)
    name = name.substr(0, 256) + "...";
  return Loc::modelNode(file, index, name);
}

bool Importer::readOpset() {
  for (const onnx::OperatorSetIdProto &o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx")
      opset = o.version();
  if (opset == 0)
    return fail("the model imports no opset of the default ONNX domain");
  if (opset < kMinOpset || opset > kMaxOpset)
    return fail("opset " + std::to_string(opset) + " is not supported (fusec reads opsets " +
                std::to_string(kMinOpset) + " to " + std::to_string(kMaxOpset) + ")");
  return true;
}

bool Importer::findUnsupported() {
  struct Missing {
    size_t count = 0;
    std::vector<std::string> nodes;
    int first = -1;
  };
  std::map<std::string, Missing> missing;
  const onnx::GraphProto &g = model.graph();
  for (int i = 0; i < g.node_size(); ++i) {
    const NodeProto &n = g.node(i);
    bool defaultDomain = n.domain().empty() || n.domain() == "ai.onnx";
    if (defaultDomain && findHandler(n.op_type()))
      continue;
    std::string type = defaultDomain ? n.op_type() : n.domain() + "." + n.op_type();
    Missing &m = missing[type];
    if (m.first < 0)
      m.first = i;
    if (++m.count <= kNamedNodes)
      m.nodes.push_back(nodeLoc(i).nodeName);
  }
  for (const auto &[type, m] : missing) {
    std::string names;
    for (const std::string &n : m.nodes)
      names += (names.empty() ? "'" : ", '") + n + "'";
    diags.error(nodeLoc(m.first), "unsupported op " + type + " (" + std::to_string(m.count) +
                                      (m.count == 1 ? " node: " : " nodes: ") + names +
                                      (m.count > m.nodes.size() ? ", ..." : "") + ")");
  }
  return missing.empty();
}

bool Importer::readInitializers() {
  for (const onnx::TensorProto &t : model.graph().initializer()) {
    std::string error;
    std::optional<DenseData> data = readTensor(t, source, error);
    if (!data)
      return fail("initializer '" + t.name() + "': " + error);
    Term term;
    term.type = TensorType{data->dtype, staticShape(data->shape), Layout::None};
    term.data = std::make_shared<const DenseData>(std::move(*data));
    if (!bind(t.name(), std::move(term)))
      return false;
  }
  return true;
}

bool Importer::readInputs() {
  std::set<std::string> nchw = feedingWindows(model.graph()); // Note [NCHW inputs]
  for (const onnx::ValueInfoProto &in : model.graph().input()) {
    if (terms.count(in.name()))
      continue; // an initializer listed as an input (IR version < 4): a constant here
    const onnx::TypeProto &type = in.type();
    if (!type.has_tensor_type())
      return fail("input '" + in.name() + "' is not a tensor");
    const onnx::TypeProto::Tensor &tt = type.tensor_type();
    std::optional<DType> dtype = dtypeOf(tt.elem_type());
    if (!dtype)
      return fail("input '" + in.name() + "' has element type " + elemTypeName(tt.elem_type()) +
                  ", which fusec does not support");
    if (!tt.has_shape())
      return fail("input '" + in.name() + "' has no shape (its rank must be known)");
    Shape shape;
    for (const onnx::TensorShapeProto::Dimension &d : tt.shape().dim()) {
      if (d.has_dim_value() && d.dim_value() >= 0)
        shape.push_back(Dim::fixed(d.dim_value()));
      else if (d.has_dim_param() && !d.dim_param().empty())
        shape.push_back(Dim::named(identifier(d.dim_param())));
      else if (d.has_dim_value())
        return fail("input '" + in.name() + "' has a negative dim");
      else
        shape.push_back(Dim::anonymous());
    }
    Term term;
    Layout layout = shape.size() == 4 && nchw.count(in.name()) ? Layout::NCHW : Layout::None;
    term.type = TensorType{*dtype, std::move(shape), layout};
    term.value = graph->addInput(graph->uniqueName(valueName(in.name())), term.type);
    if (!bind(in.name(), std::move(term)))
      return false;
  }
  return true;
}

bool Importer::bind(const std::string &name, Term t) {
  if (name.empty())
    return true;
  // Small integer tensors are followed as known values.
  if (t.data && !t.ints && (isInteger(t.data->dtype) || t.data->dtype == DType::Bool) &&
      t.data->shape.size() <= 1 && t.data->numElements() <= kMaxKnownInts) {
    std::vector<SymInt> ints;
    for (size_t i = 0; i < t.data->numElements(); ++i)
      ints.push_back(SymInt::of(integerElement(*t.data, i)));
    t.ints = std::move(ints);
  }
  if (!terms.emplace(name, std::move(t)).second)
    return fail("tensor '" + name + "' is defined twice");
  return true;
}

Value *Importer::materialize(const std::string &name, const Loc &loc) {
  Term &t = terms.find(name)->second;
  if (t.value)
    return t.value;
  b->setLoc(loc);
  if (t.data) {
    t.value = b->constant(t.data);
  } else if (t.ints) {
    std::vector<int64_t> values;
    std::string symbolic;
    for (const SymInt &v : *t.ints) {
      if (!v.isStatic())
        symbolic = v.str();
      values.push_back(v.factor);
    }
    if (!symbolic.empty()) {
      diags.error(loc, "tensor '" + name + "' holds the symbolic size " + symbolic +
                           ", which fusec cannot use as data (only as a shape)");
      return nullptr;
    }
    std::vector<int64_t> shape;
    if (t.type.rank() == 1)
      shape.push_back(int64_t(values.size()));
    t.value = b->constant(
        std::make_shared<const DenseData>(integerData(t.type.dtype, std::move(shape), values)));
  }
  // A graph output's name is left for the output (readOutputs).
  if (t.value && !outputNames.count(name))
    t.value->setName(graph->uniqueName(valueName(name)));
  return t.value;
}

bool Importer::readNodes() {
  const onnx::GraphProto &g = model.graph();
  for (int i = 0; i < g.node_size(); ++i) {
    const NodeProto &n = g.node(i);
    Loc loc = nodeLoc(i);
    for (const std::string &in : n.input())
      if (!in.empty() && !terms.count(in)) {
        diags.error(loc, "input '" + in + "' of " + n.op_type() + " is not defined before it");
        return false;
      }
    if (opset < 7 && !checkLegacy(n, loc))
      return false;
    b->setLoc(loc);
    NodeImport node(*this, n, loc, opset);
    size_t errors = diags.errorCount();
    if (!findHandler(n.op_type())(node)) {
      if (diags.errorCount() == errors)
        diags.error(loc, n.op_type() + " could not be imported");
      return false;
    }
    for (int o = 0; o < n.output_size(); ++o)
      if (!n.output(o).empty() && !terms.count(n.output(o))) {
        diags.error(loc, "output " + std::to_string(o) + " of " + n.op_type() +
                             " is not supported by fusec's import");
        return false;
      }
  }
  return true;
}

bool Importer::readOutputs() {
  std::vector<Value *> outs;
  for (const onnx::ValueInfoProto &out : model.graph().output()) {
    if (!terms.count(out.name()))
      return fail("output '" + out.name() + "' is not computed by the graph");
    Value *v = materialize(out.name(), Loc{file, 0, 0, -1, {}});
    if (!v)
      return false;
    // An output that is an input or another output gets an op of its own,
    // so that each graph output is a value of its own name.
    if (v->isGraphInput() || llvm::is_contained(outs, v) ||
        v->definingOp()->kind() == OpKind::Const) {
      b->setLoc(Loc{file, 0, 0, -1, {}});
      v = b->reshape(v, v->type().shape);
      if (!v)
        return false;
    }
    if (v->name() != valueName(out.name()))
      v->setName(graph->uniqueName(valueName(out.name())));
    outs.push_back(v);
  }
  if (outs.empty())
    return fail("the graph has no outputs");
  graph->setOutputs(outs);
  return true;
}

// ONNX's checker looks for external data files relative to the process's
// folder when it is given a model rather than a path. So each external
// location is first confined to the model's folder (resolveLocation), then
// handed to the checker resolved, and restored after it.
bool Importer::check() {
  std::vector<std::pair<onnx::StringStringEntryProto *, std::string>> given;
  for (onnx::TensorProto &t : *model.mutable_graph()->mutable_initializer()) {
    if (t.data_location() != onnx::TensorProto::EXTERNAL)
      continue;
    for (onnx::StringStringEntryProto &e : *t.mutable_external_data()) {
      if (e.key() != "location")
        continue;
      std::string error, resolved = resolveLocation(e.value(), source.modelDir, error);
      if (resolved.empty()) {
        for (auto &[entry, location] : given)
          entry->set_value(location);
        return fail("initializer '" + t.name() + "': " + error);
      }
      given.emplace_back(&e, e.value());
      e.set_value(resolved);
    }
  }
  bool ok = true;
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception &e) {
    ok = fail(std::string("the ONNX checker refuses the model: ") + e.what());
  }
  for (auto &[entry, location] : given)
    entry->set_value(location);
  return ok;
}

std::unique_ptr<Module> Importer::run() {
  if (!check())
    return nullptr;
  const onnx::GraphProto &g = model.graph();
  graph = std::make_unique<Graph>(identifier(g.name().empty() ? "main" : g.name()));
  graph->setLoc(Loc{file, 0, 0, -1, {}});
  b = std::make_unique<Builder>(*graph, diags);
  for (const onnx::ValueInfoProto &out : g.output())
    outputNames.insert(out.name());
  if (!findUnsupported() || !readOpset() || !readInitializers() || !readInputs() || !readNodes() ||
      !readOutputs())
    return nullptr;
  auto module = std::make_unique<Module>();
  module->graphs.push_back(std::move(graph));
  if (!verify(*module, diags))
    return nullptr;
  return module;
}

// NodeImport -------------------------------------------------------------

NodeImport::NodeImport(Importer &im, const NodeProto &node, Loc loc, int64_t opset)
    : node(node), loc(std::move(loc)), opset(opset), b(im.builder()), im(im) {}

const Term &NodeImport::term(unsigned i) const {
  static const Term absent;
  return has(i) ? im.term(node.input(int(i))) : absent;
}

Value *NodeImport::input(unsigned i) {
  if (!has(i)) {
    fail("input " + std::to_string(i) + " of " + node.op_type() + " is missing");
    return nullptr;
  }
  Value *v = im.materialize(node.input(int(i)), loc);
  b.setLoc(loc);
  return v;
}

std::optional<std::vector<int64_t>> NodeImport::staticInts(unsigned i, std::string_view what) {
  const Term &t = term(i);
  if (!t.ints) {
    fail(std::string(what) + " of " + node.op_type() +
         " must be known when the model is imported (a constant, or computed from shapes)");
    return std::nullopt;
  }
  std::vector<int64_t> out;
  for (const SymInt &v : *t.ints) {
    if (!v.isStatic()) {
      fail(std::string(what) + " of " + node.op_type() + " depends on the symbolic size " +
           v.str() + "; fusec needs it static here");
      return std::nullopt;
    }
    out.push_back(v.factor);
  }
  return out;
}

std::optional<std::vector<double>> NodeImport::staticFloats(unsigned i, std::string_view what) {
  const Term &t = term(i);
  if (t.ints) {
    std::optional<std::vector<int64_t>> ints = staticInts(i, what);
    if (!ints)
      return std::nullopt;
    return std::vector<double>(ints->begin(), ints->end());
  }
  if (!t.data) {
    fail(std::string(what) + " of " + node.op_type() +
         " must be known when the model is imported (a constant)");
    return std::nullopt;
  }
  std::vector<double> out;
  for (size_t k = 0; k < t.data->numElements(); ++k)
    out.push_back(t.data->elementAsDouble(k));
  return out;
}

const AttributeProto *NodeImport::findAttr(std::string_view name) const {
  for (const AttributeProto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

int64_t NodeImport::attrInt(std::string_view name, int64_t fallback) const {
  const AttributeProto *a = findAttr(name);
  return a && a->has_i() ? a->i() : fallback;
}

double NodeImport::attrFloat(std::string_view name, double fallback) const {
  const AttributeProto *a = findAttr(name);
  if (!a || !a->has_f())
    return fallback;
  // The double the exporter meant: an epsilon of 1e-5 stored as the float
  // nearest it reads back as 1e-5, the shortest decimal of that float.
  char digits[32];
  std::to_chars_result r = std::to_chars(digits, digits + sizeof digits, a->f());
  return std::strtod(std::string(digits, r.ptr).c_str(), nullptr);
}

std::string NodeImport::attrString(std::string_view name, std::string fallback) const {
  const AttributeProto *a = findAttr(name);
  return a && a->has_s() ? a->s() : fallback;
}

std::optional<std::vector<int64_t>> NodeImport::attrInts(std::string_view name) const {
  const AttributeProto *a = findAttr(name);
  if (!a)
    return std::nullopt;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

std::optional<std::vector<double>> NodeImport::attrFloats(std::string_view name) const {
  const AttributeProto *a = findAttr(name);
  if (!a)
    return std::nullopt;
  return std::vector<double>(a->floats().begin(), a->floats().end());
}

bool NodeImport::set(unsigned i, Value *v) {
  if (!v)
    return false;
  if (!wants(i))
    return true;
  Term t;
  t.value = v;
  t.type = v->type();
  if (v->definingOp() && v->definingOp()->kind() != OpKind::Const)
    v->setName(v->graph()->uniqueName(valueName(node.output(int(i)))));
  return im.bind(node.output(int(i)), std::move(t));
}

bool NodeImport::alias(unsigned i, unsigned from) {
  if (!wants(i))
    return true;
  if (!has(from))
    return fail("input " + std::to_string(from) + " of " + node.op_type() + " is missing");
  return im.bind(node.output(int(i)), term(from));
}

bool NodeImport::setInts(unsigned i, std::vector<SymInt> ints, DType dtype, bool scalar) {
  if (!wants(i))
    return true;
  Term t;
  t.type.dtype = dtype;
  if (!scalar)
    t.type.shape = {Dim::fixed(int64_t(ints.size()))};
  t.ints = std::move(ints);
  return im.bind(node.output(int(i)), std::move(t));
}

bool NodeImport::setData(unsigned i, DenseData data, bool charged) {
  if (!wants(i))
    return true;
  uint64_t bytes = data.numStoredElements() * dtypeSize(data.dtype);
  TensorSource &src = im.tensorSource();
  if (!charged && bytes > src.budget)
    return fail("constant of " + std::to_string(bytes) + " bytes is over the import's limit");
  if (!charged)
    src.budget -= bytes;
  Term t;
  t.type = TensorType{data.dtype, staticShape(data.shape), Layout::None};
  t.data = std::make_shared<const DenseData>(std::move(data));
  return im.bind(node.output(int(i)), std::move(t));
}

std::optional<DenseData> NodeImport::tensorAttr(const onnx::TensorProto &t, std::string_view what) {
  std::string error;
  std::optional<DenseData> data = readTensor(t, im.tensorSource(), error);
  if (!data)
    fail(std::string(what) + ": " + error);
  return data;
}

bool NodeImport::fail(std::string message) {
  im.diagnostics().error(loc, node.op_type() + ": " + message);
  return false;
}

} // namespace onnximport

std::vector<std::string> onnxSupportedOps() { return onnximport::supportedOps(); }

bool isOnnxPath(const std::string &path) { return llvm::StringRef(path).ends_with(".onnx"); }

std::unique_ptr<Module> importOnnxBuffer(std::span<const uint8_t> bytes, const std::string &file,
                                         const OnnxImportOptions &opts, Diagnostics &diags) {
  if (bytes.size() > kMaxModelFileBytes) {
    diags.error(Loc{file, 0, 0, -1, {}}, "ONNX model of " + std::to_string(bytes.size()) +
                                             " bytes is over protobuf's 2 GiB limit");
    return nullptr;
  }
  onnx::ModelProto model;
  if (!model.ParseFromArray(bytes.data(), int(bytes.size()))) {
    diags.error(Loc{file, 0, 0, -1, {}},
                "not a valid ONNX model: the protobuf bytes do not parse (truncated or damaged)");
    return nullptr;
  }
  return onnximport::Importer(model, file, opts, diags).run();
}

std::unique_ptr<Module> importOnnxFile(const std::string &path, Diagnostics &diags) {
  std::optional<std::vector<uint8_t>> bytes = readFile(path, diags, kMaxModelFileBytes);
  if (!bytes)
    return nullptr;
  OnnxImportOptions opts;
  llvm::SmallString<256> dir(path);
  llvm::sys::path::remove_filename(dir);
  opts.modelDir = dir.empty() ? "." : std::string(dir);
  return importOnnxBuffer(*bytes, path, opts, diags);
}

} // namespace fusec
