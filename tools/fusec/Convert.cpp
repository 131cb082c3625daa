// fusec convert IN OUT: between the .fir text form and the flatbuffers model
// file, chosen by OUT's extension (.fir for text, anything else a model
// file). Lossless in both directions, weights included.
//
// fusec import MODEL.onnx -o OUT: an ONNX model as a fusec model file or
// .fir text (frontend/onnx, docs/onnx.md), whatever the input's name.
#include "frontend/ModelFile.h"
#include "frontend/onnx/OnnxImport.h"
#include "ir/TextFormat.h"
#include "tools/ToolSupport.h"
#include "tools/fusec/Commands.h"

#include "llvm/ADT/StringRef.h"

namespace fusec {

namespace cl = llvm::cl;

cl::SubCommand convertCommand("convert", "Convert a model between .fir text and .fb");

static cl::opt<std::string> input(cl::Positional, cl::Required, cl::desc("<input>"),
                                  cl::sub(convertCommand), cl::cat(toolCategory));
static cl::opt<std::string> output(cl::Positional, cl::Required, cl::desc("<output .fir|.fb>"),
                                   cl::sub(convertCommand), cl::cat(toolCategory));
static cl::opt<uint64_t>
    externalThreshold("external-data", cl::init(0), cl::sub(convertCommand), cl::cat(toolCategory),
                      cl::value_desc("bytes"),
                      cl::desc("Store constants of at least this many bytes in OUT.data beside "
                               "the model file (0: keep all inline)"));

cl::SubCommand importCommand("import", "Import an ONNX model as a .fb model file or .fir text");

static cl::opt<std::string> onnxInput(cl::Positional, cl::desc("<model .onnx>"),
                                      cl::sub(importCommand), cl::cat(toolCategory));
static cl::opt<std::string> importOutput("o", cl::desc("Output: .fir text ('-': stdout) or .fb"),
                                         cl::value_desc("file"), cl::sub(importCommand),
                                         cl::cat(toolCategory));
static cl::opt<uint64_t>
    importThreshold("external-data", cl::init(0), cl::sub(importCommand), cl::cat(toolCategory),
                    cl::value_desc("bytes"),
                    cl::desc("Store constants of at least this many bytes in OUT.data beside "
                             "the model file (0: keep all inline)"));
static cl::opt<bool> listOps("list-ops", cl::sub(importCommand), cl::cat(toolCategory),
                             cl::desc("Print the ONNX op types fusec imports, and exit"));

/// Writes `m` to `path`: .fir text (or stdout for '-'), else a model file.
static int writeModule(const Module &m, const std::string &path, uint64_t threshold,
                       Diagnostics &diags) {
  bool ok;
  if (llvm::StringRef(path).ends_with(".fir") || path == "-")
    ok = writeTextOutput(
        path, [&](std::ostream &os) { printModule(m, os); }, diags);
  else
    ok = writeModelFile(m, path, {threshold}, diags);
  return reportAndExit(diags, ok ? kExitOk : kExitUserError);
}

int runConvert() {
  Diagnostics diags; // writes refuse to replace the files read (ir/FileIO.h)
  std::unique_ptr<Module> module = loadInput(input, diags);
  if (!module)
    return reportAndExit(diags, kExitUserError);
  return writeModule(*module, output, externalThreshold, diags);
}

int runImport() {
  if (listOps) {
    for (const std::string &op : onnxSupportedOps())
      llvm::outs() << op << "\n";
    return kExitOk;
  }
  if (onnxInput.empty() || importOutput.empty()) {
    llvm::errs() << "fusec import: needs a model and -o OUT (see 'fusec import --help')\n";
    return kExitUsage;
  }
  Diagnostics diags;
  std::unique_ptr<Module> module = importOnnxFile(onnxInput, diags);
  if (!module)
    return reportAndExit(diags, kExitUserError);
  return writeModule(*module, importOutput, importThreshold, diags);
}

} // namespace fusec
