// Builds the model-file seed corpus: converts each .fir seed to a model file
// with our own writer, so that no binary is committed and the seeds always
// match the current schema.
//
//   fuzz-make-seeds OUTDIR SEED.fir...
#include "frontend/ModelFile.h"
#include "ir/FileIO.h"
#include "ir/TextFormat.h"

#include <filesystem>
#include <iostream>

int main(int argc, char **argv) {
  if (argc < 3) {
    std::cerr << "usage: fuzz-make-seeds OUTDIR SEED.fir...\n";
    return 2;
  }
  std::filesystem::path outDir = argv[1];
  std::filesystem::create_directories(outDir);
  fusec::Diagnostics diags;
  for (int i = 2; i < argc; ++i) {
    std::unique_ptr<fusec::Module> m = fusec::loadAnyModel(argv[i], diags);
    std::string out = (outDir / std::filesystem::path(argv[i]).stem()).string() + ".fb";
    if (!m || !fusec::writeFileAtomically(out, fusec::serializeModel(*m), diags))
      break;
  }
  diags.print(std::cerr);
  return diags.hasErrors() ? 1 : 0;
}
