// Helpers shared by the fusec and fusec-opt command-line tools: exit codes,
// reading input from a file or stdin, writing output, printing diagnostics.
#pragma once

#include "include/fusec/backend.h"
#include "ir/Diagnostics.h"
#include "ir/Graph.h"
#include "passes/PassManager.h"
#include "runtime/reference/Reference.h"

#include "llvm/Support/CommandLine.h"

#include <functional>
#include <memory>
#include <ostream>
#include <string>

namespace fusec {

enum ExitCode { kExitOk = 0, kExitUserError = 1, kExitUsage = 2 };

/// Prints the diagnostics to stderr and returns `code`.
int reportAndExit(const Diagnostics &diags, int code);

/// Loads a .fir or model file ("-" reads .fir text from stdin).
std::unique_ptr<Module> loadInput(const std::string &path, Diagnostics &diags);

/// Writes through `emit` to `path` ("-" is stdout), atomically for files.
bool writeTextOutput(const std::string &path, const std::function<void(std::ostream &)> &emit,
                     Diagnostics &diags);

/// Splits "NAME=VALUE" of flag --`flag`; a usage error for anything else.
bool splitAssignment(llvm::StringRef arg, const char *flag, std::string &name, std::string &value,
                     Diagnostics &diags);

/// Parses --dim=NAME=SIZE values into `dims`; a usage error for bad ones.
bool parseDimFlags(const std::vector<std::string> &values, DimBindings &dims, Diagnostics &diags);

/// A seeded random input (randomInput) of `v`'s type, its symbolic dims
/// taken from `dims`, reserved against `memory` before it is made; an
/// error naming the missing --dim, or the sizes beyond the budget, otherwise.
bool randomInputWithDims(const Value &v, const DimBindings &dims, uint64_t inputSeed,
                         MemoryBudget &memory, Tensor &out, Diagnostics &diags);

/// True when `a` and `b` name the same existing file.
bool sameFile(const std::string &a, const std::string &b);

/// The values of every tool's --precision option.
inline llvm::cl::ValuesClass precisionValues() {
  return llvm::cl::values(clEnumValN(PrecisionChoice::FP32, "fp32", "no autocast"),
                          clEnumValN(PrecisionChoice::FP16, "fp16", "fp16 with fp32 accumulation"),
                          clEnumValN(PrecisionChoice::BF16, "bf16", "bf16 with fp32 accumulation"));
}

/// The values of every tool's --layout option.
inline llvm::cl::ValuesClass layoutValues() {
  return llvm::cl::values(clEnumValN(LayoutChoice::Auto, "auto", "NHWC where a conv chain gains"),
                          clEnumValN(LayoutChoice::NCHW, "nchw", "channels first"),
                          clEnumValN(LayoutChoice::NHWC, "nhwc", "channels last"));
}

/// The values of every tool's --backend option.
inline llvm::cl::ValuesClass backendValues() {
  return llvm::cl::values(
      clEnumValN(Backend::Nvrtc, "nvrtc", "CUDA C++ through NVRTC"),
      clEnumValN(Backend::Llvm, "llvm", "LLVM IR through LLVM's NVPTX back end"));
}

/// Makes --version print fusec's version and the LLVM it links, then what
/// `more` prints (fusec: the NVRTC and CUDA driver it finds), instead of
/// LLVM's version alone.
void installVersionPrinter(const char *tool, void (*more)(llvm::raw_ostream &) = nullptr);

/// Parses the command line like cl::ParseCommandLineOptions, but an error's
/// hint names the subcommand's help ("Try: 'fusec compile --help'") when
/// one was given. False after printing the errors.
bool parseCommandLine(int argc, char **argv, const char *overview);

/// An llvm::cl enum parser whose error for a bad value lists the valid ones:
/// "for the --layout option: 'nhw' is not valid (valid: auto, nchw, nhwc)".
template <typename T> class ChoiceParser : public llvm::cl::parser<T> {
public:
  using llvm::cl::parser<T>::parser;
  bool parse(llvm::cl::Option &o, llvm::StringRef name, llvm::StringRef arg, T &value) {
    std::string valid;
    for (unsigned i = 0, e = this->getNumOptions(); i != e; ++i) {
      if (arg == this->getOption(i))
        return llvm::cl::parser<T>::parse(o, name, arg, value);
      valid += (i ? ", " : "") + std::string(this->getOption(i));
    }
    return o.error("'" + arg + "' is not valid (valid: " + valid + ")");
  }
};

} // namespace fusec
