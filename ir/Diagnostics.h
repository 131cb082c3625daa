// User-facing diagnostics: the first of the three error channels (see
// docs/errors.md). Every error carries a location: file:line:col for text,
// the node index and name for model files. Errors are collected, never thrown.
#pragma once

#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace fusec {

struct Loc {
  std::string file;
  unsigned line = 0, col = 0; // 1-based; 0 when the source is not text
  int node = -1;              // node index in a model file, -1 when not
  std::string nodeName;

  static Loc text(std::string file, unsigned line, unsigned col) {
    return Loc{std::move(file), line, col, -1, {}};
  }
  static Loc modelNode(std::string file, int node, std::string name) {
    return Loc{std::move(file), 0, 0, node, std::move(name)};
  }
  bool known() const { return !file.empty() || node >= 0; }
  /// "f.fir:3:8", "m.fb: node 4 ('h1')", "f.fir" or "<unknown>".
  std::string str() const;
};

enum class Severity { Error, Warning, Note };

struct Diagnostic {
  Severity severity;
  Loc loc;
  std::string message;
};

class Diagnostics {
public:
  void error(const Loc &loc, std::string message) { add(Severity::Error, loc, std::move(message)); }
  void warning(const Loc &loc, std::string message) {
    add(Severity::Warning, loc, std::move(message));
  }
  void note(const Loc &loc, std::string message) { add(Severity::Note, loc, std::move(message)); }

  bool hasErrors() const { return errors > 0; }
  size_t errorCount() const { return errors; }
  const std::vector<Diagnostic> &all() const { return diags; }
  void clear();
  /// Adds every diagnostic of `other`, in order, severities kept.
  void append(const Diagnostics &other);

  /// Registers source text so that printed errors show the line and a caret.
  void addSource(const std::string &file, std::string text);

  /// "file:line:col: error: message", then the source line and a caret when
  /// the text is known.
  void print(std::ostream &os) const;
  /// What print writes, as a string.
  std::string str() const;

private:
  void add(Severity s, const Loc &loc, std::string message);

  std::vector<Diagnostic> diags;
  size_t errors = 0;
  std::map<std::string, std::string> sources;
};

} // namespace fusec
