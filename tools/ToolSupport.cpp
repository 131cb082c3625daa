// Shared command-line tool helpers.
#include "tools/ToolSupport.h"

#include "frontend/ModelFile.h"
#include "ir/FileIO.h"
#include "ir/TextFormat.h"
#include "runtime/Reference.h"

#include "llvm/Support/FileSystem.h"

#include <iostream>
#include <sstream>

namespace fusec {

int reportAndExit(const Diagnostics &diags, int code) {
  diags.print(std::cerr);
  return code;
}

std::unique_ptr<Module> loadInput(const std::string &path, Diagnostics &diags) {
  if (path != "-")
    return loadAnyModel(path, diags);
  std::optional<std::string> text = readStdin(diags, kMaxModelFileBytes);
  return text ? parseModule(*text, "<stdin>", diags) : nullptr;
}

bool writeTextOutput(const std::string &path, const std::function<void(std::ostream &)> &emit,
                     Diagnostics &diags) {
  if (path == "-") {
    emit(std::cout);
    std::cout.flush();
    return bool(std::cout);
  }
  std::ostringstream text;
  emit(text);
  return writeFileAtomically(path, text.str(), diags);
}

/// Splits "NAME=VALUE"; reports a usage error for anything else.
bool splitAssignment(llvm::StringRef arg, const char *flag, std::string &name, std::string &value,
                     Diagnostics &diags) {
  auto [n, v] = arg.split('=');
  if (n.empty() || v.empty() || !arg.contains('=')) {
    diags.error(Loc{}, std::string("--") + flag + " expects NAME=VALUE, got '" + arg.str() + "'");
    return false;
  }
  name = n.str();
  value = v.str();
  return true;
}

bool parseDimFlags(const std::vector<std::string> &values, DimBindings &dims, Diagnostics &diags) {
  for (const std::string &arg : values) {
    std::string name, value;
    if (!splitAssignment(arg, "dim", name, value, diags))
      return false;
    int64_t size;
    if (llvm::StringRef(value).getAsInteger(10, size) || size < 0) {
      diags.error(Loc{}, "--dim " + name + " needs a decimal size from 0 to 2^63-1, got '" +
                             value + "'");
      return false;
    }
    dims[name] = size;
  }
  return true;
}

/// A random input of the value's type, its symbolic dims taken from `dims`.
bool randomInputWithDims(const Value &v, const DimBindings &dims, uint64_t inputSeed,
                         MemoryBudget &memory, Tensor &out, Diagnostics &diags) {
  std::vector<int64_t> shape;
  for (const Dim &d : v.type().shape) {
    if (d.isStatic()) {
      shape.push_back(d.size);
      continue;
    }
    auto it = dims.find(d.symbol);
    if (d.isAnonymous() || it == dims.end()) {
      std::string dimFlag = d.isAnonymous() ? "" : "--dim=" + d.symbol + "=SIZE or ";
      diags.error(Loc{}, "input '%" + v.name() + "' of type " + v.type().str() + " needs " +
                             dimFlag + "--input=" + v.name() + "=FILE.npy");
      return false;
    }
    shape.push_back(it->second);
  }
  return memory.reserve(v.type().dtype, shape, "input '%" + v.name() + "'", Loc{}, diags) &&
         randomInput(v, shape, inputSeed, out, diags);
}

bool sameFile(const std::string &a, const std::string &b) {
  llvm::sys::fs::UniqueID ia, ib;
  if (llvm::sys::fs::getUniqueID(a, ia) || llvm::sys::fs::getUniqueID(b, ib))
    return false;
  return ia == ib;
}

} // namespace fusec
