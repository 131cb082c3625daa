// graphToDot (see Dot.h). Node ids are numbers given in order (inputs, then
// ops, a kernel's body ops in place of the kernel); a value maps to the
// node that produces it: a kernel's result to the body op that produces
// the body's output, a body input to the producer of the kernel's operand.
#include "ir/Dot.h"

#include <map>
#include <sstream>

namespace fusec {

namespace {

/// `s` quoted for DOT.
std::string quoted(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

class DotWriter {
public:
  std::string run(const Graph &g);

private:
  std::string node() { return "n" + std::to_string(next++); }
  void edge(const Value *v, const std::string &to, const std::string &indent = "  ") {
    os << indent << producer.at(v) << " -> " << to << " [label=" << quoted(v->type().str())
       << "];\n";
  }
  void op(const Op &op, const std::string &indent);
  void kernel(const Op &k, unsigned index);

  std::ostringstream os;
  std::map<const Value *, std::string> producer;
  unsigned next = 0;
};

void DotWriter::op(const Op &o, const std::string &indent) {
  std::string id = node();
  os << indent << id << " [label=" << quoted(std::string(o.name()) + " %" + o.result(0)->name())
     << "];\n";
  for (const Value *v : o.operands())
    edge(v, id, indent);
  for (unsigned j = 0; j < o.numResults(); ++j)
    producer[o.result(j)] = id;
}

void DotWriter::kernel(const Op &k, unsigned index) {
  const Graph &body = *k.body();
  for (unsigned j = 0; j < body.numInputs(); ++j)
    producer[body.input(j)] = producer.at(k.operand(j));
  os << "  subgraph cluster_" << index << " {\n    label="
     << quoted("kernel %" + k.result(0)->name() + ": " + k.getString("template"))
     << ";\n    style=rounded;\n";
  for (const auto &o : body.ops())
    op(*o, "    ");
  os << "  }\n";
  for (unsigned j = 0; j < k.numResults(); ++j)
    producer[k.result(j)] = producer.at(body.outputs()[j]);
}

std::string DotWriter::run(const Graph &g) {
  os << "digraph " << quoted(g.name()) << " {\n  node [shape=box, fontname=\"monospace\"];\n";
  for (const Value *v : g.inputs()) {
    std::string id = node();
    producer[v] = id;
    os << "  " << id << " [label=" << quoted("%" + v->name()) << ", shape=ellipse];\n";
  }
  unsigned clusters = 0;
  for (const auto &o : g.ops()) {
    if (o->kind() == OpKind::Kernel)
      kernel(*o, clusters++);
    else
      op(*o, "  ");
  }
  for (size_t j = 0; j < g.outputs().size(); ++j) {
    std::string id = node();
    os << "  " << id << " [label=" << quoted("return " + std::to_string(j)) << ", shape=ellipse];\n";
    edge(g.outputs()[j], id);
  }
  os << "}\n";
  return os.str();
}

} // namespace

std::string graphToDot(const Graph &g) { return DotWriter().run(g); }

} // namespace fusec
