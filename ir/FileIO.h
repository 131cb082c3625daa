// Whole-file reads and atomic writes, with failures reported as diagnostics
// (the environment channel: the OS's reason is in the message).
//
// Reads open regular files only, without blocking (a FIFO, a device or a
// directory is refused, never waited on or read without end), and read at
// most a bound the caller names. Every file fusec writes goes through
// writeFileAtomically, so a failed or interrupted write never leaves a
// half-written file where a good one was.
//
// Note [Inputs are never overwritten]
// A file read as an input (a model, its external data, an .npy) is
// remembered by its device and inode for the rest of the process, and
// writeFileAtomically refuses to replace it, whatever path names it: so no
// command writes its output over a file it read (`fusec convert w.fb
// w.fb.data`, `fusec run m.fir --input=x=y.npy -o .` with an output %y,
// `fusec compile m.fir -o m.fir`). Kernel-cache entries are read as Cache
// files: not remembered (the cache replaces a corrupt entry), and a symbolic
// link is not followed to one.
#pragma once

#include "ir/Diagnostics.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fusec {

enum class FileRole : uint8_t { Input, Cache };

/// The most bytes a model file (.fir text, .fb, .fusec) may have: what a
/// flatbuffer can address.
inline constexpr uint64_t kMaxModelFileBytes = (uint64_t(1) << 31) - 1;

/// A regular file opened for reading; closes on destruction.
class OpenedFile {
public:
  OpenedFile(int fd, uint64_t size) : fd(fd), size(size) {}
  OpenedFile(OpenedFile &&o) noexcept : fd(o.fd), size(o.size) { o.fd = -1; }
  OpenedFile &operator=(OpenedFile &&o) noexcept {
    std::swap(fd, o.fd); // o closes what this held
    size = o.size;
    return *this;
  }
  ~OpenedFile();

  int fd;
  uint64_t size;
};

/// Opens the regular file `path` without blocking; nullopt with `why` set
/// ("No such file or directory", "not a regular file", ...) when it cannot.
std::optional<OpenedFile> openRegularFile(const std::string &path, FileRole role,
                                          std::string &why);

/// The bytes of the regular file `path`, or nullopt after reporting
/// "cannot open 'path': why", or "cannot read 'path': N bytes, more than
/// the M this read allows" when it holds more than `maxBytes`.
std::optional<std::vector<uint8_t>> readFile(const std::string &path, Diagnostics &diags,
                                             uint64_t maxBytes, FileRole role = FileRole::Input);

/// Standard input, at most `maxBytes` of it; reports "cannot read standard
/// input: ..." otherwise.
std::optional<std::string> readStdin(Diagnostics &diags, uint64_t maxBytes);

/// Writes `bytes` to a temporary file beside `path`, then renames it over
/// `path`. Returns false after reporting "cannot write 'path': why", or
/// "refusing to overwrite 'path': it is an input of this command" (Note
/// [Inputs are never overwritten]).
bool writeFileAtomically(const std::string &path, std::span<const uint8_t> bytes,
                         Diagnostics &diags);
inline bool writeFileAtomically(const std::string &path, std::string_view text,
                                Diagnostics &diags) {
  return writeFileAtomically(
      path, {reinterpret_cast<const uint8_t *>(text.data()), text.size()}, diags);
}

/// Whether `path` names a file this process read as an Input.
bool isInputFile(const std::string &path);

} // namespace fusec
