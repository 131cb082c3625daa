// Diagnostics: collection and clang-style printing with a source caret.
#include "ir/Diagnostics.h"

#include <algorithm>
#include <sstream>

namespace fusec {

std::string Loc::str() const {
  std::string where = file.empty() ? "<unknown>" : file;
  if (line > 0)
    return where + ":" + std::to_string(line) + ":" + std::to_string(col);
  if (node >= 0) {
    where += ": node " + std::to_string(node);
    if (!nodeName.empty())
      where += " ('" + nodeName + "')";
  }
  return where;
}

void Diagnostics::add(Severity s, const Loc &loc, std::string message) {
  if (s == Severity::Error)
    ++errors;
  diags.push_back({s, loc, std::move(message)});
}

void Diagnostics::append(const Diagnostics &other) {
  for (const Diagnostic &d : other.all())
    add(d.severity, d.loc, d.message);
}

void Diagnostics::clear() {
  diags.clear();
  errors = 0;
}

void Diagnostics::addSource(const std::string &file, std::string text) {
  sources[file] = std::move(text);
}

namespace {
std::string_view severityName(Severity s) {
  switch (s) {
  case Severity::Error:
    return "error";
  case Severity::Warning:
    return "warning";
  case Severity::Note:
    return "note";
  }
  return "error";
}

/// The 1-based line `line` of `text`, or empty if there is no such line.
std::string_view sourceLine(std::string_view text, unsigned line) {
  size_t begin = 0;
  for (unsigned l = 1; l < line; ++l) {
    begin = text.find('\n', begin);
    if (begin == std::string_view::npos)
      return {};
    ++begin;
  }
  size_t end = text.find('\n', begin);
  return text.substr(begin, end == std::string_view::npos ? text.size() - begin : end - begin);
}
/// Prints the source line and a caret under column `col` (0-based). A long
/// line is cut to a window around the caret, marked with "...".
void printCaretLine(std::ostream &os, std::string_view text, size_t col) {
  constexpr size_t kWindow = 60;
  size_t begin = col > kWindow ? col - kWindow : 0;
  size_t end = std::min(text.size(), col + kWindow);
  std::string_view prefix = begin > 0 ? "..." : "";
  os << prefix << text.substr(begin, end - begin) << (end < text.size() ? "..." : "") << "\n";
  os << std::string(prefix.size(), ' ');
  for (size_t i = begin; i < col; ++i)
    os << (text[i] == '\t' ? '\t' : ' ');
  os << "^\n";
}
} // namespace

std::string Diagnostics::str() const {
  std::ostringstream os;
  print(os);
  return os.str();
}

void Diagnostics::print(std::ostream &os) const {
  for (const Diagnostic &d : diags) {
    if (d.loc.known())
      os << d.loc.str() << ": ";
    os << severityName(d.severity) << ": " << d.message << "\n";
    auto it = sources.find(d.loc.file);
    if (it == sources.end() || d.loc.line == 0)
      continue;
    std::string_view text = sourceLine(it->second, d.loc.line);
    if (text.empty() || d.loc.col == 0 || d.loc.col > text.size() + 1)
      continue;
    printCaretLine(os, text, d.loc.col - 1);
  }
}

} // namespace fusec
