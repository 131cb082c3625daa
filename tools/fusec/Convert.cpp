// fusec convert IN OUT: between the .fir text form and the flatbuffers model
// file, chosen by OUT's extension (.fir for text, anything else a model
// file). Lossless in both directions, weights included.
#include "frontend/ModelFile.h"
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

int runConvert() {
  Diagnostics diags; // writes refuse to replace the files read (ir/FileIO.h)
  std::unique_ptr<Module> module = loadInput(input, diags);
  if (!module)
    return reportAndExit(diags, kExitUserError);
  bool ok;
  if (llvm::StringRef(output).ends_with(".fir") || output == "-")
    ok = writeTextOutput(
        output, [&](std::ostream &os) { printModule(*module, os); }, diags);
  else
    ok = writeModelFile(*module, output, {externalThreshold}, diags);
  return reportAndExit(diags, ok ? kExitOk : kExitUserError);
}

} // namespace fusec
