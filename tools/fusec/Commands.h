// The subcommands of `fusec`. Each lives in its own file with its options
// (registered on its llvm::cl::SubCommand) and a function that runs it.
#pragma once

#include "runtime/CompilePipeline.h"

#include "llvm/Support/CommandLine.h"

#include <string>

namespace fusec {

extern llvm::cl::SubCommand convertCommand;
extern llvm::cl::SubCommand importCommand;
extern llvm::cl::SubCommand runCommand;
extern llvm::cl::SubCommand compileCommand;
extern llvm::cl::SubCommand benchCommand;
extern llvm::cl::OptionCategory toolCategory;

/// --print-after=STAGE|PASS and --time-stages (runtime/CompilePipeline.h)
/// of a subcommand that compiles: one instance per subcommand, defined after
/// it in the same file (llvm::cl registers an option with its subcommand
/// when the option is constructed).
struct StageFlags {
  StageFlags(llvm::cl::SubCommand &sub, llvm::cl::OptionCategory &category);
  llvm::cl::list<std::string> printAfter;
  llvm::cl::opt<bool> time;

  /// The trace the flags ask for.
  StageTrace trace() const;
};

int runConvert();
int runImport();
int runRun();
int runCompile();
int runBench();

} // namespace fusec
