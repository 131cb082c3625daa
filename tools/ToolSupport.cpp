// Shared command-line tool helpers.
#include "tools/ToolSupport.h"

#include "frontend/ModelFile.h"
#include "ir/FileIO.h"
#include "ir/TextFormat.h"
#include "runtime/ConstantFolder.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

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
  auto buf = llvm::MemoryBuffer::getSTDIN();
  if (!buf) {
    diags.error(Loc{}, "cannot read standard input: " + buf.getError().message());
    return nullptr;
  }
  return parseModule((*buf)->getBuffer(), "<stdin>", diags);
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

bool optimizeModule(Module &m, PrecisionChoice precision, Diagnostics &diags) {
  std::vector<const PassInfo *> pipeline;
  if (!parsePipeline("default", pipeline, diags))
    return false;
  PassOptions opts;
  opts.precision = precision;
  opts.foldConstant = makeReferenceFolder();
  return runPipeline(m, pipeline, opts, {}, diags);
}

bool sameFile(const std::string &a, const std::string &b) {
  llvm::sys::fs::UniqueID ia, ib;
  if (llvm::sys::fs::getUniqueID(a, ia) || llvm::sys::fs::getUniqueID(b, ib))
    return false;
  return ia == ib;
}

} // namespace fusec
