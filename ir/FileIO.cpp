// Whole-file reads and atomic writes on top of LLVM's file-system support.
#include "ir/FileIO.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

namespace fusec {

std::optional<std::vector<uint8_t>> readFile(const std::string &path, Diagnostics &diags) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (!buf) {
    diags.error(Loc{}, "cannot open '" + path + "': " + buf.getError().message());
    return std::nullopt;
  }
  llvm::StringRef data = (*buf)->getBuffer();
  return std::vector<uint8_t>(data.begin(), data.end());
}

bool writeFileAtomically(const std::string &path, std::span<const uint8_t> bytes,
                         Diagnostics &diags) {
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
