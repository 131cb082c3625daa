// Whole-file reads and atomic writes: POSIX opens and reads (non-blocking
// opens, fstat checks, bounded reads), LLVM's file-system support for the
// temporary file and the rename.
#include "ir/FileIO.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <fcntl.h>
#include <mutex>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

namespace fusec {

namespace {

using FileId = std::pair<dev_t, ino_t>;

// Note [Inputs are never overwritten]: the identities of the Input files
// this process read.
struct InputFiles {
  std::mutex lock;
  std::set<FileId> ids;
};

InputFiles &inputFiles() {
  static InputFiles files;
  return files;
}

std::string osError(int err) { return std::error_code(err, std::generic_category()).message(); }

/// Reads exactly `size` bytes from `fd`; false (with `why`) on an error or
/// a file that ends early.
bool readExactly(int fd, uint8_t *out, uint64_t size, std::string &why) {
  for (uint64_t done = 0; done < size;) {
    ssize_t n = ::read(fd, out + done, size_t(std::min<uint64_t>(size - done, 1 << 30)));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      why = n < 0 ? osError(errno) : "the file shrank while it was read";
      return false;
    }
    done += uint64_t(n);
  }
  return true;
}

} // namespace

OpenedFile::~OpenedFile() {
  if (fd >= 0)
    ::close(fd);
}

std::optional<OpenedFile> openRegularFile(const std::string &path, FileRole role,
                                          std::string &why) {
  // O_NONBLOCK: opening a FIFO with no writer returns at once instead of
  // waiting; fstat then refuses it.
  int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | (role == FileRole::Cache ? O_NOFOLLOW : 0);
  int fd = ::open(path.c_str(), flags);
  if (fd < 0) {
    why = errno == ELOOP && role == FileRole::Cache ? "a symbolic link" : osError(errno);
    return std::nullopt;
  }
  OpenedFile file(fd, 0);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    why = osError(errno);
    return std::nullopt;
  }
  if (!S_ISREG(st.st_mode)) {
    why = "not a regular file";
    return std::nullopt;
  }
  file.size = uint64_t(st.st_size);
  if (role == FileRole::Input) {
    std::lock_guard<std::mutex> guard(inputFiles().lock);
    inputFiles().ids.insert({st.st_dev, st.st_ino});
  }
  return file;
}

std::optional<std::vector<uint8_t>> readFile(const std::string &path, Diagnostics &diags,
                                             uint64_t maxBytes, FileRole role) {
  std::string why;
  std::optional<OpenedFile> file = openRegularFile(path, role, why);
  if (!file) {
    diags.error(Loc{}, "cannot open '" + path + "': " + why);
    return std::nullopt;
  }
  if (file->size > maxBytes) {
    diags.error(Loc{}, "cannot read '" + path + "': " + std::to_string(file->size) +
                           " bytes, more than the " + std::to_string(maxBytes) +
                           " this read allows");
    return std::nullopt;
  }
  std::vector<uint8_t> bytes(file->size);
  if (!readExactly(file->fd, bytes.data(), bytes.size(), why)) {
    diags.error(Loc{}, "cannot read '" + path + "': " + why);
    return std::nullopt;
  }
  return bytes;
}

std::optional<std::string> readStdin(Diagnostics &diags, uint64_t maxBytes) {
  std::string text;
  char chunk[1 << 16];
  for (;;) {
    ssize_t n = ::read(STDIN_FILENO, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      diags.error(Loc{}, "cannot read standard input: " + osError(errno));
      return std::nullopt;
    }
    if (n == 0)
      return text;
    if (text.size() + uint64_t(n) > maxBytes) {
      diags.error(Loc{}, "cannot read standard input: more than the " + std::to_string(maxBytes) +
                             " bytes this read allows");
      return std::nullopt;
    }
    text.append(chunk, size_t(n));
  }
}

bool isInputFile(const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return false;
  std::lock_guard<std::mutex> guard(inputFiles().lock);
  return inputFiles().ids.count({st.st_dev, st.st_ino}) > 0;
}

bool writeFileAtomically(const std::string &path, std::span<const uint8_t> bytes,
                         Diagnostics &diags) {
  if (isInputFile(path)) {
    diags.error(Loc{}, "refusing to overwrite '" + path + "': it is an input of this command");
    return false;
  }
  auto fail = [&](std::error_code ec) {
    diags.error(Loc{}, "cannot write '" + path + "': " + ec.message());
    return false;
  };
  int fd;
  llvm::SmallString<256> tmp;
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(path + ".tmp%%%%%%", fd, tmp))
    return fail(ec);
  std::error_code ec;
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
    os.close();
    ec = os.error();
    os.clear_error();
  }
  if (!ec)
    ec = llvm::sys::fs::rename(tmp, path);
  if (ec) {
    llvm::sys::fs::remove(tmp);
    return fail(ec);
  }
  return true;
}

} // namespace fusec
