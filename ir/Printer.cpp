// The printer of the .fir text form. Output is canonical: one op per line,
// attributes in the order of the op's signature (then any the signature does
// not know, in stored order), every result type written, floats in their
// shortest exact form. Parsing printed text and printing it again gives the
// same bytes; the lit tests under test/lit/roundtrip check that. A kernel's
// body follows its result types: `{`, a `body(%arg: type, ...):` line, the
// body's ops and return indented one step further, `}`.
//
// Dense data is printed as a splat when every element has the same bits, as
// a list when it has at most kMaxListElements elements and no NaN, and as
// little-endian hex otherwise (exact for any bits, NaN payloads included).
// Data held as a splat (Note [Splat constants] in ir/Attribute.h) whose
// element is a NaN with a payload prints as hex of that one element, which
// the parser reads back as a splat: no splat is ever printed in full.
#include "ir/Assert.h"
#include "ir/TextFormat.h"
#include "ir/TextLiterals.h"

#include <sstream>

namespace fusec {

namespace {

constexpr size_t kMaxListElements = 16;

// A NaN other than the one the literal `nan` reads as cannot be a splat.
bool printsAsSplat(const DenseData &d) {
  if (d.numElements() == 0)
    return false;
  uint64_t first = elementBits(d, 0);
  if (isNaNBits(d.dtype, first) && first != canonicalNaNBits(d.dtype))
    return false;
  return d.isSplat();
}

bool hasNaN(const DenseData &d) {
  for (size_t i = 0, n = d.numElements(); i < n; ++i)
    if (isNaNBits(d.dtype, elementBits(d, i)))
      return true;
  return false;
}

std::string formatDense(const DenseData &d) {
  size_t n = d.numElements();
  if (printsAsSplat(d))
    return "dense<" + formatElement(d, 0) + ">";
  if (!d.isSplatForm() && n <= kMaxListElements && !hasNaN(d)) {
    std::string out = "dense<[";
    for (size_t i = 0; i < n; ++i)
      out += (i ? ", " : "") + formatElement(d, i);
    return out + "]>";
  }
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out = "dense<\"0x";
  out.reserve(out.size() + 2 * d.storedBytes().size() + 2);
  for (uint8_t b : d.storedBytes()) { // a splat's one element
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out + "\">";
}

template <typename T, typename F> std::string joinList(const std::vector<T> &items, F format) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i)
    out += (i ? ", " : "") + format(items[i]);
  return out + "]";
}

void printAttrs(const Op &op, std::ostream &os) {
  std::vector<const NamedAttr *> ordered;
  for (const AttrSpec &spec : op.info().attrs)
    for (const NamedAttr &a : op.attrs())
      if (a.name == spec.name)
        ordered.push_back(&a);
  for (const NamedAttr &a : op.attrs())
    if (!op.info().findAttr(a.name))
      ordered.push_back(&a);
  if (ordered.empty())
    return;
  os << " {";
  for (size_t i = 0; i < ordered.size(); ++i)
    os << (i ? ", " : "") << ordered[i]->name << " = " << toString(ordered[i]->value);
  os << "}";
}

void printValueList(const std::vector<Value *> &values, std::ostream &os) {
  for (size_t i = 0; i < values.size(); ++i)
    os << (i ? ", %" : "%") << values[i]->name();
}

void printOp(const Op &op, std::ostream &os, const std::string &indent);

// A kernel's body: its arguments on a `body(...)` line level with the kernel,
// its ops and return indented one step further.
void printBody(const Graph &body, std::ostream &os, const std::string &indent) {
  os << " {\n" << indent << "body(";
  for (unsigned i = 0; i < body.numInputs(); ++i)
    os << (i ? ", %" : "%") << body.input(i)->name() << ": " << body.input(i)->type().str();
  os << "):\n";
  for (const auto &op : body.ops())
    printOp(*op, os, indent + "  ");
  os << indent << "  return ";
  printValueList(body.outputs(), os);
  os << "\n" << indent << "}";
}

void printOp(const Op &op, std::ostream &os, const std::string &indent) {
  os << indent;
  for (unsigned i = 0; i < op.numResults(); ++i)
    os << (i ? ", %" : "%") << op.result(i)->name();
  os << " = " << op.name() << "(";
  printValueList(op.operands(), os);
  os << ")";
  printAttrs(op, os);
  for (unsigned i = 0; i < op.numResults(); ++i)
    os << (i ? ", " : " : ") << op.result(i)->type().str();
  if (op.body())
    printBody(*op.body(), os, indent);
  os << "\n";
}

} // namespace

std::string toString(const Attribute &a) {
  switch (a.kind()) {
  case AttrKind::Int:
    return std::to_string(a.get<int64_t>());
  case AttrKind::Float:
    return formatDouble(a.get<double>());
  case AttrKind::String:
    return quoteString(a.get<std::string>());
  case AttrKind::Bool:
    return a.get<bool>() ? "true" : "false";
  case AttrKind::Ints:
    return joinList(a.get<std::vector<int64_t>>(), [](int64_t v) { return std::to_string(v); });
  case AttrKind::DType:
    return std::string(dtypeName(a.get<DType>()));
  case AttrKind::Shape:
    return joinList(a.get<Shape>(), [](const Dim &d) { return d.str(); });
  case AttrKind::Dense:
    FUSEC_ASSERT(a.get<DenseRef>(), "dense attribute without data");
    return formatDense(*a.get<DenseRef>());
  }
  return "";
}

void printGraph(const Graph &g, std::ostream &os) {
  os << "func @" << g.name() << "(";
  for (unsigned i = 0; i < g.numInputs(); ++i)
    os << (i ? ", %" : "%") << g.input(i)->name() << ": " << g.input(i)->type().str();
  os << ") -> ";
  const std::vector<Value *> &outs = g.outputs();
  if (outs.size() == 1) {
    os << outs[0]->type().str();
  } else {
    os << "(";
    for (size_t i = 0; i < outs.size(); ++i)
      os << (i ? ", " : "") << outs[i]->type().str();
    os << ")";
  }
  os << " {\n";
  for (const auto &op : g.ops())
    printOp(*op, os, "  ");
  os << "  return";
  for (size_t i = 0; i < outs.size(); ++i)
    os << (i ? ", %" : " %") << outs[i]->name();
  os << "\n}\n";
}

void printModule(const Module &m, std::ostream &os) {
  for (size_t i = 0; i < m.graphs.size(); ++i) {
    if (i)
      os << "\n";
    printGraph(*m.graphs[i], os);
  }
}

std::string toString(const Graph &g) {
  std::ostringstream os;
  printGraph(g, os);
  return os.str();
}

} // namespace fusec
