// fusec-opt: the lit driver. Parses a .fir file (or a model file), verifies
// it, runs the requested passes and prints the result as text.
//
// Exit codes: 0 success, 1 bad input (diagnostics on stderr), 2 bad usage.
#include "frontend/ModelFile.h"
#include "ir/TextFormat.h"
#include "ir/Verifier.h"
#include "passes/PassManager.h"
#include "tools/ToolSupport.h"

#include "llvm/Support/CommandLine.h"

#include <iostream>

using namespace fusec;
namespace cl = llvm::cl;

static cl::OptionCategory category("fusec-opt options");
static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input .fir or model file>"),
                                      cl::init("-"), cl::cat(category));
static cl::opt<std::string> outputFile("o", cl::desc("Output file (default: stdout)"),
                                       cl::value_desc("file"), cl::init("-"), cl::cat(category));
static cl::opt<std::string> passes("passes", cl::desc("Comma-separated passes to run, in order"),
                                   cl::value_desc("p1,p2,..."), cl::cat(category));
static cl::opt<bool> verifyEach("verify-each", cl::desc("Verify the graph after every pass"),
                                cl::cat(category));
static cl::opt<bool> listPasses("list-passes", cl::desc("List the registered passes and exit"),
                                cl::cat(category));

int main(int argc, char **argv) {
  cl::HideUnrelatedOptions(category);
  if (!cl::ParseCommandLineOptions(argc, argv,
                                   "fusec-opt: parse, verify, transform and print fusec IR\n",
                                   &llvm::errs()))
    return kExitUsage;
  if (listPasses) {
    for (const PassInfo &p : allPasses())
      std::cout << p.name << "  " << p.summary << "\n";
    return kExitOk;
  }

  Diagnostics diags;
  std::vector<const PassInfo *> pipeline;
  if (!parsePipeline(passes, pipeline, diags))
    return reportAndExit(diags, kExitUsage);

  std::unique_ptr<Module> module = loadInput(inputFile, diags);
  if (!module)
    return reportAndExit(diags, kExitUserError);
  PipelineOptions opts;
  opts.verifyEach = verifyEach;
  if (!runPipeline(*module, pipeline, opts, diags))
    return reportAndExit(diags, kExitUserError);
  if (!writeTextOutput(outputFile, [&](std::ostream &os) { printModule(*module, os); }, diags))
    return reportAndExit(diags, kExitUserError);
  return reportAndExit(diags, kExitOk); // warnings, if any
}
