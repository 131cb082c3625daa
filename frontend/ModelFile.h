// Model files: the flatbuffers form of a module (schema/model.fbs), and
// loading either form by file name. Loading never trusts the bytes: the
// flatbuffers Verifier runs before any field is read, every count and size
// is checked against the file before anything is allocated from it, and the
// IR verifier runs on the result.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/Graph.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace fusec {

struct ModelWriteOptions {
  /// Constants of at least this many bytes go to `<model>.data` beside the
  /// model file instead of inline; 0 keeps everything inline.
  uint64_t externalDataThreshold = 0;
};

/// Loads a model file from memory. `file` names it in diagnostics;
/// `externalDataPath` is where external constant data lives (may be empty
/// when the model has none). Null after reporting errors.
std::unique_ptr<Module> loadModelBuffer(std::span<const uint8_t> bytes, const std::string &file,
                                        const std::string &externalDataPath, Diagnostics &diags);
/// Reads and loads a model file.
std::unique_ptr<Module> loadModelFile(const std::string &path, Diagnostics &diags);

/// Writes a verified module to `path`, and its constants of at least
/// opts.externalDataThreshold bytes to `path + ".data"`, each file through a
/// temporary file renamed over the target. False after reporting
/// "cannot write 'path': why" (or constants too large to keep inline).
bool writeModelFile(const Module &m, const std::string &path, const ModelWriteOptions &opts,
                    Diagnostics &diags);
/// Whether a model file can store `m`: kernel ops (fusion's output) are not
/// part of the format; compiled artifacts hold fused graphs.
bool storableAsModelFile(const Module &m);

/// The model-file bytes of a verified module, every constant inline.
/// Requires storableAsModelFile(m).
std::vector<uint8_t> serializeModel(const Module &m);

/// For tests and fuzzers: recomputes the checksum of model-file bytes in
/// place, so that deliberately damaged bytes get past it to the loader's
/// other checks; first sets the external data's recorded checksum to
/// `dataChecksum` when given. False, with nothing changed, when the bytes
/// are not a verifiable model file or have no checksum. Requires 8-byte
/// aligned bytes.
bool resealModelBuffer(std::span<uint8_t> bytes,
                       std::optional<uint64_t> dataChecksum = std::nullopt);

/// Loads an ONNX model (by its .onnx extension), or `.fir` text or a model
/// file, chosen by content (the flatbuffers file identifier) so that a
/// renamed file still loads.
std::unique_ptr<Module> loadAnyModel(const std::string &path, Diagnostics &diags);

} // namespace fusec
