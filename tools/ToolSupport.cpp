// Shared command-line tool helpers.
#include "tools/ToolSupport.h"

#include "frontend/ModelFile.h"
#include "include/fusec/fusec.h"
#include "ir/FileIO.h"
#include "ir/TextFormat.h"
#include "runtime/reference/Reference.h"

#include "llvm/Config/llvm-config.h"
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
      diags.error(Loc{},
                  "--dim " + name + " needs a decimal size from 0 to 2^63-1, got '" + value + "'");
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

void installVersionPrinter(const char *tool, void (*more)(llvm::raw_ostream &)) {
  static const char *name = tool;
  static void (*printMore)(llvm::raw_ostream &) = more;
  llvm::cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << name << " (fusec " << version() << ")\n  LLVM " << LLVM_VERSION_STRING
       << ", linked in\n";
    if (printMore)
      printMore(os);
  });
}

bool parseCommandLine(int argc, char **argv, const char *overview) {
  std::string errors;
  llvm::raw_string_ostream os(errors);
  bool ok = llvm::cl::ParseCommandLineOptions(argc, argv, overview, &os);
  os.flush();
  // LLVM's hint names the tool's help; a subcommand's own lists its options.
  std::string tool = argv[0];
  if (argc > 1 && argv[1][0] != '-') {
    for (llvm::cl::SubCommand *sub : llvm::cl::getRegisteredSubcommands())
      if (sub->getName() == argv[1]) {
        std::string from = "'" + tool + " --help'", to = "'" + tool + " " + argv[1] + " --help'";
        for (size_t at = errors.find(from); at != std::string::npos;
             at = errors.find(from, at + to.size()))
          errors.replace(at, from.size(), to);
      }
  }
  llvm::errs() << errors;
  return ok;
}

bool sameFile(const std::string &a, const std::string &b) {
  llvm::sys::fs::UniqueID ia, ib;
  if (llvm::sys::fs::getUniqueID(a, ia) || llvm::sys::fs::getUniqueID(b, ib))
    return false;
  return ia == ib;
}

} // namespace fusec
