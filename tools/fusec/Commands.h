// The subcommands of `fusec`. Each lives in its own file with its options
// (registered on its llvm::cl::SubCommand) and a function that runs it.
#pragma once

#include "llvm/Support/CommandLine.h"

namespace fusec {

extern llvm::cl::SubCommand convertCommand;
extern llvm::cl::SubCommand runCommand;
extern llvm::cl::SubCommand compileCommand;
extern llvm::cl::SubCommand benchCommand;
extern llvm::cl::OptionCategory toolCategory;

int runConvert();
int runRun();
int runCompile();
int runBench();

} // namespace fusec
