// fusec-opt: the lit driver. Parses a .fir file (or a model file), verifies
// it, runs the requested passes and prints the result as text.
//
// Exit codes: 0 success, 1 bad input (diagnostics on stderr), 2 bad usage.
#include "ir/TextFormat.h"
#include "passes/PassManager.h"
#include "runtime/reference/ConstantFolder.h"
#include "runtime/reference/Equivalence.h"
#include "tools/ToolSupport.h"

#include "llvm/IR/PrintPasses.h"
#include "llvm/Pass.h"
#include "llvm/Support/CommandLine.h"

#include <iomanip>
#include <iostream>

using namespace fusec;
namespace cl = llvm::cl;

static cl::OptionCategory category("fusec-opt options");
static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input .fir or model file>"),
                                      cl::init("-"), cl::cat(category));
static cl::opt<std::string> outputFile("o", cl::desc("Output file (default: stdout)"),
                                       cl::value_desc("file"), cl::init("-"), cl::cat(category));
static cl::opt<std::string> passes("passes",
                                   cl::desc("Comma-separated passes or pipelines, in order"),
                                   cl::value_desc("p1,p2,..."), cl::cat(category));
static cl::opt<bool> listPasses("list-passes", cl::desc("List the passes and pipelines and exit"),
                                cl::cat(category));
static cl::opt<bool> verifyEach("verify-each", cl::desc("Verify the graph after every pass"),
                                cl::cat(category));
// Note [Flags shared with LLVM]: LLVM registers --print-after-all,
// --print-after and --time-passes itself, and llvm::cl allows one option per
// name. fusec-opt adopts LLVM's (shown in --help with ours) and reads them
// through LLVM's accessors.
static constexpr llvm::StringLiteral kAdoptedLLVMFlags[] = {"print-after-all", "print-after",
                                                            "time-passes"};
static cl::opt<LayoutChoice, false, ChoiceParser<LayoutChoice>>
    layout("layout", cl::desc("Layout for conv/pool chains"), cl::init(LayoutChoice::Auto),
           layoutValues(), cl::cat(category));
static cl::opt<PrecisionChoice, false, ChoiceParser<PrecisionChoice>>
    precision("precision", cl::desc("Autocast precision"), cl::init(PrecisionChoice::FP32),
              precisionValues(), cl::cat(category));
static cl::opt<bool> reportMemoryPlan("report-memory-plan",
                                      cl::desc("Note each graph's arena peak (memory-plan)"),
                                      cl::cat(category));
static cl::opt<bool> explainFusion("explain-fusion",
                                   cl::desc("Say why each unfused producer→consumer edge was "
                                            "left unfused (on stderr)"),
                                   cl::cat(category));
static cl::opt<bool> checkEquivalenceFlag(
    "check-equivalence",
    cl::desc("Run the CPU reference on seeded random inputs before and after the passes and "
             "compare the outputs (exit 1 on a mismatch)"),
    cl::cat(category));
static cl::list<std::string> equivalenceDims("equivalence-dim",
                                             cl::desc("Size of a symbolic dim in the check "
                                                      "(default 3)"),
                                             cl::value_desc("NAME=SIZE"), cl::CommaSeparated,
                                             cl::cat(category));
static cl::opt<uint64_t> equivalenceSeed("equivalence-seed", cl::init(0),
                                         cl::desc("Seed of the check's random inputs"),
                                         cl::cat(category));

namespace {

void printPassList() {
  for (const PassInfo &p : allPasses())
    std::cout << std::left << std::setw(14) << p.name << p.summary << "\n";
  for (const PipelineInfo &p : allPipelines())
    std::cout << std::left << std::setw(14) << p.name << "pipeline: " << p.passes << "\n";
}

bool parseEquivalenceDims(EquivalenceOptions &opts, Diagnostics &diags) {
  opts.seed = equivalenceSeed;
  for (llvm::StringRef arg : equivalenceDims) {
    auto [name, value] = arg.split('=');
    int64_t size;
    if (name.empty() || value.getAsInteger(10, size) || size < 0) {
      diags.error(Loc{}, "--equivalence-dim expects NAME=SIZE, got '" + arg.str() + "'");
      return false;
    }
    opts.dims[name.str()] = size;
  }
  return true;
}

void adoptLLVMFlags() {
  auto &registered = cl::getRegisteredOptions();
  for (llvm::StringRef name : kAdoptedLLVMFlags) {
    auto it = registered.find(name);
    if (it == registered.end())
      continue;
    it->second->setHiddenFlag(cl::NotHidden);
    it->second->addCategory(category);
  }
}

/// --print-after names passes: an unknown name is a usage error, as in
/// --passes (LLVM's flag takes any string).
bool checkPrintAfterNames(Diagnostics &diags) {
  for (const std::string &name : llvm::printAfterPasses()) {
    if (lookupPass(name))
      continue;
    std::string valid;
    for (const PassInfo &p : allPasses())
      valid += (valid.empty() ? "" : ", ") + std::string(p.name);
    diags.error(Loc{},
                "--print-after names unknown pass '" + name + "' (valid passes: " + valid + ")");
  }
  return !diags.hasErrors();
}

PipelineHooks makeHooks(std::vector<std::pair<std::string, double>> &timings) {
  PipelineHooks hooks;
  hooks.verifyEach = verifyEach;
  if (llvm::TimePassesIsEnabled)
    hooks.timings = &timings;
  if (llvm::shouldPrintAfterAll() || !llvm::printAfterPasses().empty())
    hooks.afterPass = [](const PassInfo &p, const Graph &g) {
      if (!llvm::shouldPrintAfterPass(p.name))
        return;
      std::cerr << "// -----// IR after " << p.name << " //----- //\n";
      printGraph(g, std::cerr);
    };
  return hooks;
}

void printTimings(const std::vector<std::pair<std::string, double>> &timings) {
  double total = 0;
  for (const auto &[name, ms] : timings)
    total += ms;
  std::cerr << "===- pass execution timing -===\n";
  for (const auto &[name, ms] : timings)
    std::cerr << std::fixed << std::setprecision(3) << std::setw(10) << ms << " ms  " << name
              << "\n";
  std::cerr << std::setw(10) << total << " ms  total\n";
}

/// Compares every graph of `after` with its counterpart in `before`.
bool checkModules(const Module &before, const Module &after, const EquivalenceOptions &opts,
                  Diagnostics &diags) {
  bool ok = true;
  for (size_t i = 0; i < after.graphs.size(); ++i) {
    EquivalenceResult r = checkEquivalence(*before.graphs[i], *after.graphs[i], opts, diags);
    if (r.equivalent)
      std::cerr << std::defaultfloat << "equivalence: @" << after.graphs[i]->name()
                << " ok (worst error " << r.worstError << ", tolerance " << r.tolerance << ")\n";
    ok &= r.equivalent;
  }
  return ok;
}

std::unique_ptr<Module> cloneModule(const Module &m) {
  auto copy = std::make_unique<Module>();
  for (const auto &g : m.graphs)
    copy->graphs.push_back(g->clone());
  return copy;
}

} // namespace

int main(int argc, char **argv) {
  cl::HideUnrelatedOptions(category);
  adoptLLVMFlags();
  installVersionPrinter("fusec-opt");
  if (!parseCommandLine(argc, argv, "fusec-opt: parse, verify, transform and print fusec IR\n"))
    return kExitUsage;
  if (listPasses) {
    printPassList();
    return kExitOk;
  }

  Diagnostics diags;
  std::vector<const PassInfo *> pipeline;
  EquivalenceOptions equivalence;
  if (!parsePipeline(passes, pipeline, diags) || !checkPrintAfterNames(diags) ||
      !parseEquivalenceDims(equivalence, diags))
    return reportAndExit(diags, kExitUsage);
  std::unique_ptr<Module> module = loadInput(inputFile, diags);
  if (!module)
    return reportAndExit(diags, kExitUserError);
  std::unique_ptr<Module> original = checkEquivalenceFlag ? cloneModule(*module) : nullptr;

  PassOptions opts;
  opts.layout = layout;
  opts.precision = precision;
  opts.explainFusion = explainFusion ? &std::cerr : nullptr;
  opts.reportMemoryPlan = reportMemoryPlan;
  opts.foldConstant = makeReferenceFolder();
  std::vector<std::pair<std::string, double>> timings;
  bool ok = runPipeline(*module, pipeline, opts, makeHooks(timings), diags);
  if (llvm::TimePassesIsEnabled)
    printTimings(timings);
  if (!ok || (original && !checkModules(*original, *module, equivalence, diags)))
    return reportAndExit(diags, kExitUserError);
  if (!writeTextOutput(
          outputFile, [&](std::ostream &os) { printModule(*module, os); }, diags))
    return reportAndExit(diags, kExitUserError);
  return reportAndExit(diags, kExitOk); // notes and warnings, if any
}
