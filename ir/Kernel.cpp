// The kernel templates' spellings, and how messages name launched ops (ir/Kernel.h).
#include "ir/Kernel.h"

#include "ir/Graph.h"
#include "ir/TextFormat.h"

#include <array>
#include <map>
#include <sstream>

namespace fusec {

namespace {
constexpr std::array<std::pair<KernelTemplate, std::string_view>, 4> kTemplates{{
    {KernelTemplate::Pointwise, "pointwise"},
    {KernelTemplate::RowReduction, "row_reduction"},
    {KernelTemplate::Gemm, "gemm"},
    {KernelTemplate::Attention, "attention"},
}};
} // namespace

std::string_view kernelTemplateName(KernelTemplate t) {
  for (const auto &[tmpl, name] : kTemplates)
    if (tmpl == t)
      return name;
  return "";
}

std::optional<KernelTemplate> lookupKernelTemplate(std::string_view name) {
  for (const auto &[tmpl, spelling] : kTemplates)
    if (spelling == name)
      return tmpl;
  return std::nullopt;
}

std::string kernelTemplateNames() {
  std::string out;
  for (size_t i = 0; i < kTemplates.size(); ++i) {
    out += i == 0 ? "" : i + 1 == kTemplates.size() ? " or " : ", ";
    out += "\"" + std::string(kTemplates[i].second) + "\"";
  }
  return out;
}

std::string implicitGemmProblem(const Op &conv) {
  const TensorType &x = conv.operand(0)->type(), &w = conv.operand(1)->type();
  if (x.layout != Layout::NHWC || conv.getInt("groups") != 1)
    return "the gemm template runs NHWC convolutions of one group";
  for (const Dim &d : {x.shape[1], x.shape[2], x.shape[3], w.shape[0], w.shape[1], w.shape[2]})
    if (!d.isStatic())
      return "the gemm template needs static sizes but for the batch";
  return "";
}

bool isPlanarStore(const Op &op) {
  return op.kind() == OpKind::Transpose && op.operand(0)->type().rank() == 4 &&
         op.getInts("perm") == std::vector<int64_t>{0, 3, 1, 2};
}

std::string describeLaunchedOp(const Op &op) {
  const std::string &result = op.result(0)->name();
  if (op.kind() == OpKind::Kernel)
    return "kernel '%" + result + "' (template " + op.getString("template") + ")";
  return "'" + std::string(op.name()) + "' '%" + result + "'";
}

namespace {

void printTypes(std::ostream &os, const std::vector<const Value *> &values) {
  for (size_t i = 0; i < values.size(); ++i)
    os << (i ? ", " : "") << values[i]->type().str();
}

} // namespace

std::string kernelSignature(const Op &kernel) {
  std::ostringstream os;
  std::vector<const Value *> ins(kernel.operands().begin(), kernel.operands().end()), outs;
  for (unsigned r = 0; r < kernel.numResults(); ++r)
    outs.push_back(kernel.result(r));
  os << "kernel " << kernel.getString("template") << " (";
  printTypes(os, ins);
  os << ") -> (";
  printTypes(os, outs);
  os << ")\n";
  const Graph &body = *kernel.body();
  std::map<const Value *, unsigned> number; // body values by position
  for (const Value *v : body.inputs())
    number.emplace(v, unsigned(number.size()));
  for (const auto &op : body.ops()) {
    os << "  " << op->name() << "(";
    for (unsigned i = 0; i < op->numOperands(); ++i)
      os << (i ? ", " : "") << "%" << number.at(op->operand(i));
    os << ") {";
    for (const NamedAttr &a : op->attrs()) {
      os << " " << a.name << "=";
      if (a.value.kind() != AttrKind::Dense) {
        os << toString(a.value);
        continue;
      }
      const DenseData &d = *a.value.get<DenseRef>();
      os << "dense<" << dtypeName(d.dtype);
      for (int64_t e : d.shape)
        os << " " << e;
      os << ">";
    }
    os << " } -> (";
    for (unsigned r = 0; r < op->numResults(); ++r) {
      number.emplace(op->result(r), unsigned(number.size()));
      os << (r ? ", " : "") << op->result(r)->type().str();
    }
    os << ")\n";
  }
  os << "  return";
  for (const Value *v : body.outputs())
    os << " %" << number.at(v);
  os << "\n";
  return os.str();
}

} // namespace fusec
