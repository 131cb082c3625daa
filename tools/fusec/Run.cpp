// fusec run FILE: runs a graph of a model on the CPU reference executor.
// Inputs come from .npy files (--input=NAME=PATH) or are seeded random
// (--seed); symbolic dims of random inputs are given with --dim=NAME=SIZE.
// Prints one summary line per output; --print-values prints the elements,
// -o DIR writes each output to DIR/NAME.npy.
#include "runtime/Npy.h"
#include "runtime/Reference.h"
#include "tools/ToolSupport.h"
#include "tools/fusec/Commands.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <chrono>
#include <cmath>
#include <iostream>

namespace fusec {

namespace cl = llvm::cl;

cl::SubCommand runCommand("run", "Run a model on the CPU reference executor");

static cl::opt<std::string> input(cl::Positional, cl::Required, cl::desc("<model .fir|.fb>"),
                                  cl::sub(runCommand), cl::cat(toolCategory));
static cl::opt<std::string> graphName("graph", cl::desc("Graph to run (default: the first)"),
                                      cl::sub(runCommand), cl::cat(toolCategory));
static cl::list<std::string> inputFiles("input", cl::desc("Read input NAME from a .npy file"),
                                        cl::value_desc("NAME=PATH"), cl::sub(runCommand),
                                        cl::cat(toolCategory));
static cl::list<std::string> dimValues("dim", cl::desc("Size of a symbolic dim of random inputs"),
                                       cl::value_desc("NAME=SIZE"), cl::CommaSeparated,
                                       cl::sub(runCommand), cl::cat(toolCategory));
static cl::opt<uint64_t> seed("seed", cl::desc("Seed of the random inputs"), cl::init(0),
                              cl::sub(runCommand), cl::cat(toolCategory));
static cl::opt<bool> printValues("print-values", cl::desc("Print the output elements"),
                                 cl::sub(runCommand), cl::cat(toolCategory));
static cl::opt<unsigned> maxValues("max-values", cl::desc("Elements printed per output"),
                                   cl::init(64), cl::sub(runCommand), cl::cat(toolCategory));
static cl::opt<std::string> outDir("o", cl::desc("Write each output to DIR/NAME.npy"),
                                   cl::value_desc("DIR"), cl::sub(runCommand),
                                   cl::cat(toolCategory));

namespace {

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

bool parseDims(DimBindings &dims, Diagnostics &diags) {
  for (const std::string &arg : dimValues) {
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
bool randomInput(const Value &v, const DimBindings &dims, uint64_t inputSeed, Tensor &out,
                 Diagnostics &diags) {
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
  return randomInput(v, shape, inputSeed, out, diags);
}

/// What --input and --dim say; malformed values are usage errors.
struct InputFlags {
  std::map<std::string, std::string> files; // input name → .npy path
  DimBindings dims;
};

bool parseInputFlags(InputFlags &flags, Diagnostics &diags) {
  for (const std::string &arg : inputFiles) {
    std::string name, path;
    if (!splitAssignment(arg, "input", name, path, diags))
      return false;
    flags.files[llvm::StringRef(name).ltrim('%').str()] = path;
  }
  return parseDims(flags.dims, diags);
}

bool gatherInputs(const Graph &g, InputFlags flags, std::vector<Tensor> &inputs,
                  Diagnostics &diags) {
  auto &[files, dims] = flags;
  for (unsigned i = 0; i < g.numInputs(); ++i) {
    const Value &v = *g.input(i);
    Tensor t;
    auto file = files.find(v.name());
    bool ok = file != files.end()
                  ? readNpy(file->second, t, diags, {v.type().dtype == DType::BF16})
                                  : randomInput(v, dims, seed * 1000003 + i, t, diags);
    if (!ok)
      return false;
    if (file != files.end())
      files.erase(file);
    inputs.push_back(std::move(t));
  }
  for (const auto &[name, path] : files)
    diags.error(Loc{}, "graph '@" + g.name() + "' has no input named '%" + name + "'");
  return !diags.hasErrors();
}

void printSummary(const std::string &name, const Tensor &t) {
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  size_t nans = 0, n = t.numElements();
  for (size_t i = 0; i < n; ++i) {
    double x = t.getDouble(i);
    if (std::isnan(x)) {
      ++nans;
      continue;
    }
    lo = std::min(lo, x);
    hi = std::max(hi, x);
    sum += x;
  }
  std::cout << "%" << name << ": " << t.typeStr();
  if (n > nans)
    std::cout << " min=" << lo << " max=" << hi << " mean=" << sum / double(n - nans);
  std::cout << " nan=" << nans << "\n";
}

const Graph *selectGraph(const Module &m, Diagnostics &diags) {
  if (graphName.empty())
    return m.graphs.front().get();
  for (const auto &g : m.graphs)
    if (g->name() == llvm::StringRef(graphName).ltrim('@'))
      return g.get();
  diags.error(Loc{}, "the model has no graph named '@" + graphName + "'");
  return nullptr;
}

bool writeOutputs(const Graph &g, const std::vector<Tensor> &outputs, Diagnostics &diags) {
  if (std::error_code ec = llvm::sys::fs::create_directories(outDir.getValue())) {
    diags.error(Loc{}, "cannot create directory '" + outDir + "': " + ec.message());
    return false;
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    llvm::SmallString<256> path(outDir.getValue());
    llvm::sys::path::append(path, g.outputs()[i]->name() + ".npy");
    if (!writeNpy(std::string(path), outputs[i], diags))
      return false;
  }
  return true;
}

} // namespace

int runRun() {
  Diagnostics diags;
  InputFlags flags;
  if (!parseInputFlags(flags, diags))
    return reportAndExit(diags, kExitUsage);
  std::unique_ptr<Module> module = loadInput(input, diags);
  if (!module)
    return reportAndExit(diags, kExitUserError);
  const Graph *g = selectGraph(*module, diags);
  std::vector<Tensor> inputs, outputs;
  if (!g || !gatherInputs(*g, std::move(flags), inputs, diags))
    return reportAndExit(diags, kExitUserError);

  auto start = std::chrono::steady_clock::now();
  if (!runReference(*g, inputs, outputs, diags))
    return reportAndExit(diags, kExitUserError);
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                  .count();
  std::cerr << "ran @" << g->name() << " on the CPU reference in " << ms << " ms\n";

  for (size_t i = 0; i < outputs.size(); ++i) {
    printSummary(g->outputs()[i]->name(), outputs[i]);
    if (printValues)
      printTensor(outputs[i], std::cout, maxValues);
  }
  if (!outDir.empty() && !writeOutputs(*g, outputs, diags))
    return reportAndExit(diags, kExitUserError);
  return reportAndExit(diags, kExitOk);
}

} // namespace fusec
