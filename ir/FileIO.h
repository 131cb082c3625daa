// Whole-file reads and atomic writes, with failures reported as diagnostics
// (the environment channel: the OS's reason is in the message). Every file
// fusec writes goes through writeFileAtomically, so a failed or interrupted
// write never leaves a half-written file where a good one was.
#pragma once

#include "ir/Diagnostics.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace fusec {

/// The bytes of `path`, or nullopt after reporting "cannot open 'path': why".
std::optional<std::vector<uint8_t>> readFile(const std::string &path, Diagnostics &diags);

/// Writes `bytes` to a temporary file beside `path`, then renames it over
/// `path`. Returns false after reporting "cannot write 'path': why".
bool writeFileAtomically(const std::string &path, std::span<const uint8_t> bytes,
                         Diagnostics &diags);
inline bool writeFileAtomically(const std::string &path, std::string_view text,
                                Diagnostics &diags) {
  return writeFileAtomically(
      path, {reinterpret_cast<const uint8_t *>(text.data()), text.size()}, diags);
}

} // namespace fusec
