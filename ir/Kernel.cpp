// The kernel templates' spellings, and how messages name launched ops (ir/Kernel.h).
#include "ir/Kernel.h"

#include "ir/Graph.h"

#include <array>

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

std::string describeLaunchedOp(const Op &op) {
  const std::string &result = op.result(0)->name();
  if (op.kind() == OpKind::Kernel)
    return "kernel '%" + result + "' (template " + op.getString("template") + ")";
  return "'" + std::string(op.name()) + "' '%" + result + "'";
}

} // namespace fusec
