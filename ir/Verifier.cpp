// The verifier: every check of ir/Verifier.h over a graph built by the parser,
// the builder, a model-file reader or a pass.
//
// It reports every error it finds and carries on: each op is checked for its
// operand count, operands (defined earlier in the same graph), attributes and
// result types; each value for a valid type and a unique name; the graph for
// its outputs. An op's inference runs only when its operands and attributes
// passed, so that one mistake gives one error rather than a cascade. Errors
// are reported at the op's location, graph-level ones at the graph's. A
// kernel's body is verified like a graph, and its type checked only when it
// verified.
#include "ir/Verifier.h"

#include "ir/Assert.h"
#include "ir/ShapeInference.h"

#include <unordered_set>

namespace fusec {

static std::string quoted(OpKind kind) { return "'" + std::string(opInfo(kind).spelling) + "'"; }

// What is wrong with a type, or "" when nothing is. The parser rejects both
// problems in text; the C++ API does not.
static std::string typeProblem(const TensorType &t) {
  for (const Dim &d : t.shape)
    if (d.isStatic() && d.size < 0)
      return "type " + t.str() + " has a negative dim";
  if (t.layout != Layout::None && t.rank() != 4)
    return "type " + t.str() + " has a layout tag but is not rank 4";
  if (isStatic(t.shape) && !staticNumElements(t.shape))
    return "type " + t.str() + " has more elements than a 64-bit count holds";
  return "";
}

// The operand count against the table's [min, max]; max -1 is variadic.
static bool checkOperandCount(OpKind kind, size_t count, const Loc &loc, Diagnostics &diags) {
  const OpInfo &info = opInfo(kind);
  bool tooFew = int64_t(count) < info.minOperands;
  bool tooMany = info.maxOperands >= 0 && int64_t(count) > info.maxOperands;
  if (!tooFew && !tooMany)
    return true;
  std::string want = std::to_string(info.minOperands);
  if (info.maxOperands < 0)
    want = "at least " + want;
  else if (info.maxOperands != info.minOperands)
    want += " to " + std::to_string(info.maxOperands);
  bool singular = info.maxOperands == 1 || (info.maxOperands < 0 && info.minOperands == 1);
  diags.error(loc, quoted(kind) + " takes " + want + (singular ? " operand" : " operands") +
                       ", got " + std::to_string(count));
  return false;
}

// Runs the inference function; operand count and attributes already passed.
static bool runInference(OpKind kind, std::span<const TensorType> operands, const AttrList &attrs,
                         const Graph *body, const Loc &loc, Diagnostics &diags,
                         std::vector<TensorType> &results) {
  results.clear();
  size_t before = diags.errorCount();
  InferContext ctx{kind, operands, attrs, body};
  bool ok = opInfo(kind).infer(ctx, results,
                               [&](std::string message) { diags.error(loc, std::move(message)); });
  FUSEC_ASSERT(ok || diags.errorCount() > before, "inference failed without an error");
  return ok;
}

bool inferResultTypes(OpKind kind, const std::vector<TensorType> &operandTypes,
                      const AttrList &attrs, const Loc &loc, Diagnostics &diags,
                      std::vector<TensorType> &results, const Graph *body) {
  size_t before = diags.errorCount();
  checkOperandCount(kind, operandTypes.size(), loc, diags);
  for (const TensorType &t : operandTypes)
    if (std::string problem = typeProblem(t); !problem.empty())
      diags.error(loc, quoted(kind) + " operand " + problem);
  AttrList checked = attrs;
  checkAttributes(kind, checked, loc, diags);
  if (diags.errorCount() != before)
    return false;
  return runInference(kind, operandTypes, checked, body, loc, diags, results);
}

static std::string attrNames(const OpInfo &info) {
  std::string names;
  for (const AttrSpec &s : info.attrs)
    names += (names.empty() ? "" : ", ") + s.name;
  return names;
}

// What is wrong with attribute i for the op ("" when nothing is); coerces it
// in place to the signature's kind when it can.
static std::string attributeProblem(const OpInfo &info, AttrList &attrs, size_t i) {
  NamedAttr &a = attrs[i];
  const AttrSpec *spec = info.findAttr(a.name);
  // `plan.*` names discardable annotations (memory-plan's offsets): any op, any kind.
  bool annotation = !spec && std::string_view(a.name).starts_with("plan.");
  if (!spec && !annotation && info.attrs.empty())
    return "takes no attributes, got '" + a.name + "'";
  if (!spec && !annotation)
    return "has no attribute '" + a.name + "' (valid: " + attrNames(info) + ")";
  for (size_t j = 0; j < i; ++j)
    if (attrs[j].name == a.name)
      return "attribute '" + a.name + "' is given twice";
  if (annotation)
    return "";
  Attribute coerced = a.value;
  if (!coerced.coerceTo(spec->kind))
    return "attribute '" + a.name + "' must be " + std::string(attrKindName(spec->kind)) +
           ", got " + std::string(attrKindName(a.value.kind()));
  a.value = std::move(coerced);
  return "";
}

bool checkAttributes(OpKind kind, AttrList &attrs, const Loc &loc, Diagnostics &diags) {
  const OpInfo &info = opInfo(kind);
  size_t before = diags.errorCount();
  for (size_t i = 0; i < attrs.size(); ++i)
    if (std::string problem = attributeProblem(info, attrs, i); !problem.empty())
      diags.error(loc, quoted(kind) + " " + problem);
  for (const AttrSpec &spec : info.attrs) {
    if (spec.optional || spec.deflt)
      continue;
    bool present = false;
    for (const NamedAttr &a : attrs)
      present = present || a.name == spec.name;
    if (!present)
      diags.error(loc, quoted(kind) + " is missing required attribute '" + spec.name + "'");
  }
  return diags.errorCount() == before;
}

namespace {

/// Checks one graph, reporting every error and carrying on. `isBody`: the
/// graph is a kernel's body, which may hold no kernel (so nesting, and this
/// recursion, stop at depth one).
class GraphVerifier {
public:
  GraphVerifier(const Graph &g, Diagnostics &diags, bool isBody = false)
      : g(g), diags(diags), isBody(isBody) {}

  void run() {
    for (Value *v : g.inputs())
      define(*v, g.loc(), "input");
    for (const auto &op : g.ops())
      checkOp(*op);
    checkOutputs();
  }

private:
  // Records a value as defined, checking its type and name.
  void define(const Value &v, const Loc &loc, const std::string &what) {
    defined.insert(&v);
    if (std::string problem = typeProblem(v.type()); !problem.empty())
      diags.error(loc, what + " %" + v.name() + " " + problem);
    if (!names.insert(v.name()).second)
      diags.error(loc, "value %" + v.name() + " is defined twice");
  }

  // Operands defined earlier in this graph; false when one is not, or when
  // one's type is invalid (reported where it is defined).
  bool checkOperands(const Op &op) {
    bool ok = true;
    for (unsigned i = 0; i < op.numOperands(); ++i) {
      const Value *v = op.operand(i);
      ok = ok && typeProblem(v->type()).empty();
      if (defined.count(v))
        continue;
      std::string where =
          v->graph() == &g ? "is used before it is defined" : "is defined in another graph";
      diags.error(op.loc(), quoted(op.kind()) + " operand " + std::to_string(i) + " (%" +
                                v->name() + ") " + where);
      ok = false;
    }
    return ok;
  }

  void checkOp(const Op &op) {
    bool ok = checkOperands(op);
    ok = checkOperandCount(op.kind(), op.numOperands(), op.loc(), diags) && ok;
    AttrList attrs = op.attrs();
    ok = checkAttributes(op.kind(), attrs, op.loc(), diags) && ok;
    ok = checkStoredKinds(op) && ok;
    bool typesOk = true;
    for (unsigned i = 0; i < op.numResults(); ++i) {
      typesOk = typeProblem(op.result(i)->type()).empty() && typesOk;
      define(*op.result(i), op.loc(), quoted(op.kind()) + " result");
    }
    if (checkBody(op) && ok && typesOk)
      checkResultTypes(op, attrs);
  }

  // Text, model files and the builder coerce literals (int → float) before an
  // op exists; an op built or edited directly must hold the declared kind,
  // since the accessors (Op::getFloat, ...) read exactly that kind.
  bool checkStoredKinds(const Op &op) {
    bool ok = true;
    for (const NamedAttr &a : op.attrs()) {
      const AttrSpec *spec = op.info().findAttr(a.name);
      if (!spec || a.value.kind() == spec->kind)
        continue;
      diags.error(op.loc(), quoted(op.kind()) + " attribute '" + a.name + "' is stored as " +
                                std::string(attrKindName(a.value.kind())) + ", not " +
                                std::string(attrKindName(spec->kind)));
      ok = false;
    }
    return ok;
  }

  // A kernel has a body without kernels, verified as a graph; no other op
  // has one. The body's match with the operands and results is checked by
  // inference (inferKernel) and checkResultTypes.
  bool checkBody(const Op &op) {
    bool isKernel = op.kind() == OpKind::Kernel;
    if (isKernel && isBody) {
      diags.error(op.loc(), "'kernel' cannot be nested in another kernel's body");
      return false;
    }
    if (!op.body()) {
      if (isKernel)
        diags.error(op.loc(), "'kernel' has no body");
      return !isKernel;
    }
    if (!isKernel) {
      diags.error(op.loc(), quoted(op.kind()) + " cannot have a body");
      return false;
    }
    size_t before = diags.errorCount();
    GraphVerifier(*op.body(), diags, true).run();
    return diags.errorCount() == before;
  }

  void checkResultTypes(const Op &op, const AttrList &attrs) {
    std::vector<TensorType> operandTypes, inferred;
    for (Value *v : op.operands())
      operandTypes.push_back(v->type());
    if (!runInference(op.kind(), operandTypes, attrs, op.body(), op.loc(), diags, inferred))
      return;
    std::string name = quoted(op.kind());
    if (op.numResults() != inferred.size()) {
      diags.error(op.loc(), name + " has " + std::to_string(op.numResults()) +
                                " results, expected " + std::to_string(inferred.size()));
      return;
    }
    for (unsigned i = 0; i < op.numResults(); ++i) {
      TensorType declared = op.result(i)->type();
      if (op.kind() == OpKind::Const)
        declared.layout = Layout::None; // a constant may carry any valid tag
      if (declared != inferred[i])
        diags.error(op.loc(), name + " result type " + op.result(i)->type().str() +
                                  " does not match inferred " + inferred[i].str());
    }
  }

  void checkOutputs() {
    if (g.outputs().empty())
      diags.error(g.loc(), "graph @" + g.name() + " has no outputs");
    for (size_t i = 0; i < g.outputs().size(); ++i) {
      const Value *v = g.outputs()[i];
      if (!defined.count(v))
        diags.error(g.loc(), "graph @" + g.name() + " output " + std::to_string(i) + " (%" +
                                 v->name() + ") is not defined in this graph");
    }
  }

  const Graph &g;
  Diagnostics &diags;
  bool isBody;
  std::unordered_set<const Value *> defined;
  std::unordered_set<std::string> names;
};

} // namespace

bool verify(const Graph &g, Diagnostics &diags) {
  size_t before = diags.errorCount();
  GraphVerifier(g, diags).run();
  return diags.errorCount() == before;
}

bool verify(const Module &m, Diagnostics &diags) {
  size_t before = diags.errorCount();
  if (m.graphs.empty())
    diags.error(Loc{}, "module has no graphs");
  std::unordered_set<std::string> names;
  for (const auto &g : m.graphs) {
    if (!names.insert(g->name()).second)
      diags.error(g->loc(), "graph @" + g->name() + " is defined twice");
    verify(*g, diags);
  }
  return diags.errorCount() == before;
}

} // namespace fusec
