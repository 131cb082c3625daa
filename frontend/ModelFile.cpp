// Loading by file name: model files, and .fir text or model file told apart
// by content (the flatbuffers file identifier at bytes 4..8), so that a
// renamed file still loads. Text never carries the identifier: a .fir file
// starts with a comment or `func`. A file without it whose name ends in .fb
// goes to the model loader anyway, so that a damaged model file is reported
// as one rather than as unparsable text. A file named .onnx goes to the ONNX
// importer (protobuf has no identifier to tell it by).
#include "frontend/ModelFile.h"

#include "frontend/ModelSchema.h"
#include "frontend/onnx/OnnxImport.h"
#include "ir/FileIO.h"
#include "ir/TextFormat.h"

#include "llvm/ADT/StringRef.h"

namespace fusec {

std::unique_ptr<Module> loadModelFile(const std::string &path, Diagnostics &diags) {
  std::optional<std::vector<uint8_t>> bytes = readFile(path, diags, kMaxModelFileBytes);
  if (!bytes)
    return nullptr;
  return loadModelBuffer(*bytes, path, modelfile::externalDataPath(path), diags);
}

std::unique_ptr<Module> loadAnyModel(const std::string &path, Diagnostics &diags) {
  if (isOnnxPath(path))
    return importOnnxFile(path, diags);
  std::optional<std::vector<uint8_t>> bytes = readFile(path, diags, kMaxModelFileBytes);
  if (!bytes)
    return nullptr;
  if (modelfile::hasModelIdentifier(bytes->data(), bytes->size()) ||
      llvm::StringRef(path).ends_with(".fb"))
    return loadModelBuffer(*bytes, path, modelfile::externalDataPath(path), diags);
  std::string_view text(reinterpret_cast<const char *>(bytes->data()), bytes->size());
  return parseModule(text, path, diags);
}

} // namespace fusec
