// ONNX import: a model as exporters write it (PyTorch, tf2onnx, ...) becomes
// a fusec module, read through the ONNX project's own protobuf classes and
// checker (libonnx). Never trusts the bytes: the file is bounded before it is
// parsed, the checker runs before any node is read, every tensor's data is
// checked against its shape before anything is allocated from it, external
// data is read only from inside the model's folder, and the IR verifier runs
// on the result. docs/onnx.md lists the ops, the opsets and the limits.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/Graph.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace fusec {

struct OnnxImportOptions {
  /// The folder external data is read from (and confined to); empty when the
  /// model came from memory, which then may not use external data.
  std::string modelDir;
  /// Bytes of constant data (initializers, inline and external, and folded
  /// constants) one model may hold.
  uint64_t maxDataBytes = uint64_t(1) << 34;
};

/// Imports an ONNX model from memory; `file` names it in diagnostics. Null
/// after reporting errors.
std::unique_ptr<Module> importOnnxBuffer(std::span<const uint8_t> bytes, const std::string &file,
                                         const OnnxImportOptions &opts, Diagnostics &diags);
/// Reads and imports an ONNX model file; external data is read from its
/// folder.
std::unique_ptr<Module> importOnnxFile(const std::string &path, Diagnostics &diags);

/// Whether `path` names an ONNX model by its extension (.onnx).
bool isOnnxPath(const std::string &path);

/// The op types of the default ONNX domain the importer reads, sorted.
std::vector<std::string> onnxSupportedOps();

} // namespace fusec
