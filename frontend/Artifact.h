// Compiled artifacts (`.fusec`, frontend/schema/artifact.fbs): one graph
// compiled for one target at one binding of its input shapes. This layer
// only reads and writes the file: it verifies the flatbuffer and the fields
// it needs before anything is used, and writes atomically. Whether the
// artifact fits this fusec and this GPU is the runtime's question.
#pragma once

#include "ir/Diagnostics.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fusec {

/// The artifact format this fusec writes and reads: 2 since the whole file
/// is checksummed.
inline constexpr uint32_t kArtifactFormatVersion = 2;

struct ArtifactKernel {
  std::string name;
  std::string key; ///< the kernel cache key of its source
  std::string templateName;
  std::string ptx;
  std::string cubin;
};

struct Artifact {
  std::string fusecVersion;
  std::string target;
  std::string nvrtcVersion;
  std::string graphText; ///< one graph in .fir text
  std::vector<std::vector<int64_t>> inputShapes;
  int64_t arenaBytes = 0;
  std::vector<ArtifactKernel> kernels;
};

/// True when the file at `path` starts like an artifact (identifier FSCA).
bool isArtifactFile(const std::string &path);

/// Writes `a` to `path` atomically. False after reporting an I/O error.
bool writeArtifact(const std::string &path, const Artifact &a, Diagnostics &diags);

/// Reads and verifies an artifact; reports "'<path>' ..." and returns
/// nullopt for a file that is not one, is truncated or corrupt (any byte
/// changed or appended since it was written), or has a format version this
/// fusec does not read.
std::optional<Artifact> readArtifact(const std::string &path, Diagnostics &diags);

} // namespace fusec
