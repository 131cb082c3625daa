// Loading model files (schema/model.fbs). Nothing in the bytes is trusted:
//
//  1. The envelope, before any field is read: the size within what
//     flatbuffers can address, the file identifier, then flatbuffers'
//     Verifier over the whole buffer (every offset, vector and string in
//     bounds, table nesting and count bounded). Then the format version and
//     the recorded file size, which catches a truncation that only cut
//     trailing padding; then the file's checksum (Note [File checksums]),
//     which catches any other change, in files that carry one (and files
//     where damage may have hidden it: Note [Hidden checksum]).
//  2. Constants: dtype in range, dims >= 0, byte length == numel * dtype
//     size with checked arithmetic, bool bytes 0 or 1; external ranges
//     aligned and inside the data file, whose size and checksum are checked
//     before anything is allocated from it, and of which only those ranges
//     are read.
//  3. Graphs (ModelGraphReader.cpp), then the IR verifier.
//
// Loading stops at the first problem: a model file is machine-written, so one
// precise message is worth more than a cascade of consequences.
#include "frontend/Checksum.h"
#include "frontend/LoadContext.h"
#include "frontend/ModelFile.h"
#include "frontend/ModelSchema.h"
#include "ir/FileIO.h"
#include "ir/Verifier.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

namespace fusec {
namespace modelfile {

bool LoadContext::charge(uint64_t bytes) {
  if (bytes <= budget) {
    budget -= bytes;
    return true;
  }
  return fail("'" + file + "' is corrupt: its objects overlap");
}

std::string quote(std::string_view s) {
  constexpr size_t kMaxShown = 64;
  std::string out;
  llvm::raw_string_ostream os(out);
  os << '\'';
  llvm::printEscapedString(llvm::StringRef(s.data(), std::min(s.size(), kMaxShown)), os);
  os << (s.size() > kMaxShown ? "...'" : "'");
  return out;
}

bool isValueName(std::string_view s) {
  auto nameChar = [](char c) { return llvm::isAlnum(c) || c == '_' || c == '.' || c == '$'; };
  return !s.empty() && std::all_of(s.begin(), s.end(), nameChar);
}

bool isIdentifier(std::string_view s) { return isValueName(s) && !llvm::isDigit(s[0]); }

namespace {

/// The external data file, opened on first use, when its size and its
/// checksum (when the model records them) are checked. Reads only the ranges
/// asked for, after checking them against the file's actual size.
class ExternalData {
public:
  ExternalData(std::string path, uint64_t expectedSize, const fb::Checksum *expectedChecksum)
      : path(std::move(path)), expectedSize(expectedSize), expectedChecksum(expectedChecksum) {}
  /// Reads [offset, offset + length) of the file into `out`.
  bool read(uint64_t offset, uint64_t length, std::vector<uint8_t> &out, const Where &where,
            LoadContext &ctx);

private:
  bool open(LoadContext &ctx);
  bool checkChecksum(LoadContext &ctx);

  std::string path;
  uint64_t expectedSize;
  const fb::Checksum *expectedChecksum;
  std::optional<OpenedFile> file;
  uint64_t size = 0;
  uint64_t unread = 0; // Note [Read budget], for the data file
};

bool ExternalData::open(LoadContext &ctx) {
  if (path.empty())
    return ctx.fail("'" + ctx.file + "' has external data, but no data file was given");
  std::string why;
  file = openRegularFile(path, FileRole::Input, why);
  if (!file)
    return ctx.fail("cannot open '" + path + "': " + why);
  size = unread = file->size;
  if (expectedSize != 0 && size != expectedSize)
    return ctx.fail("'" + path + "' has " + std::to_string(size) + " bytes, but '" + ctx.file +
                    "' was written with " + std::to_string(expectedSize));
  return !expectedChecksum || checkChecksum(ctx);
}

/// Reads the whole data file in bounded chunks and compares its checksum
/// with the one the model records.
bool ExternalData::checkChecksum(LoadContext &ctx) {
  constexpr uint64_t kChunk = uint64_t(1) << 20;
  std::vector<uint8_t> chunk(std::min(size, kChunk));
  ChecksumBuilder checksum;
  for (uint64_t done = 0; done < size;) {
    llvm::MutableArrayRef<char> into(reinterpret_cast<char *>(chunk.data()),
                                     std::min(size - done, kChunk));
    llvm::Expected<size_t> n = llvm::sys::fs::readNativeFileSlice(file->fd, into, done);
    if (!n)
      return ctx.fail("cannot read '" + path + "': " + llvm::toString(n.takeError()));
    if (*n == 0)
      return ctx.fail("cannot read '" + path + "': the file shrank while being read");
    checksum.add(std::span(chunk.data(), *n));
    done += *n;
  }
  if (checksum.value() != expectedChecksum->blake3())
    return ctx.fail("'" + path + "' is corrupt or not the data file of '" + ctx.file +
                    "': checksum mismatch");
  return true;
}

bool ExternalData::read(uint64_t offset, uint64_t length, std::vector<uint8_t> &out,
                        const Where &where, LoadContext &ctx) {
  if (!file && !open(ctx))
    return false;
  if (offset % kDataAlignment != 0)
    return ctx.fail(where, "external data offset " + std::to_string(offset) +
                               " is not a multiple of " + std::to_string(kDataAlignment));
  if (offset > size || length > size - offset)
    return ctx.fail(where, "external data [" + std::to_string(offset) + ", +" +
                               std::to_string(length) + ") lies outside '" + path + "' (" +
                               std::to_string(size) + " bytes)");
  if (length > unread)
    return ctx.fail(where, "external data overlaps another constant's");
  unread -= length;
  out.resize(length);
  for (uint64_t done = 0; done < length;) {
    llvm::MutableArrayRef<char> into(reinterpret_cast<char *>(out.data()) + done, length - done);
    llvm::Expected<size_t> n = llvm::sys::fs::readNativeFileSlice(file->fd, into, offset + done);
    if (!n)
      return ctx.fail("cannot read '" + path + "': " + llvm::toString(n.takeError()));
    if (*n == 0)
      return ctx.fail("cannot read '" + path + "': the file shrank while being read");
    done += *n;
  }
  return true;
}

/// The byte length of a constant of `dtype` and `shape`, with checked arithmetic.
bool constantByteSize(DType dtype, const std::vector<int64_t> &shape, const Where &where,
                      LoadContext &ctx, uint64_t &bytes) {
  int64_t numel = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return ctx.fail(where, "negative dimension " + std::to_string(d));
    if (__builtin_mul_overflow(numel, d, &numel))
      return ctx.fail(where, "element count overflows");
  }
  if (__builtin_mul_overflow(uint64_t(numel), uint64_t(dtypeSize(dtype)), &bytes))
    return ctx.fail(where, "byte size overflows");
  return true;
}

/// Reads the constant's bytes, inline or external, once their length is
/// right: every element's, or a splat's one (Note [Splat constants]).
bool readConstantBytes(const fb::Constant &c, DType dtype, const std::vector<int64_t> &shape,
                       const Where &where, ExternalData &external, LoadContext &ctx,
                       std::vector<uint8_t> &out) {
  uint64_t bytes = 0;
  if (!constantByteSize(dtype, shape, where, ctx, bytes))
    return false;
  std::string type = TensorType{dtype, staticShape(shape), Layout::None}.str();
  if (c.splat() && bytes > kMaxSplatBytes)
    return ctx.fail(where, "splat of " + type + " exceeds the 1 GiB limit on constant data");
  if (c.splat())
    bytes = dtypeSize(dtype);
  const fb::ExternalData *ext = c.external();
  if (ext && c.data())
    return ctx.fail(where, "has both inline and external data");
  uint64_t stored = ext ? ext->length() : count(c.data());
  if (stored != bytes)
    return ctx.fail(where, "has " + std::to_string(stored) + " bytes of data, but " +
                               (c.splat() ? "a splat of " : "") + type + " needs " +
                               std::to_string(bytes));
  if (ext)
    return external.read(ext->offset(), ext->length(), out, where, ctx);
  if (!ctx.take(c.data()))
    return false;
  if (c.data())
    out.assign(c.data()->begin(), c.data()->end());
  return true;
}

bool readConstant(const fb::Constant &c, unsigned index, ExternalData &external, LoadContext &ctx,
                  DenseRef &out) {
  Where where{ctx.fileLoc(), "constant " + std::to_string(index) + ": "};
  std::optional<DType> dtype = fromSchema(c.dtype());
  if (!dtype)
    return ctx.fail(where, "unknown dtype " + std::to_string(unsigned(c.dtype())));
  if (!ctx.take(c.shape()))
    return false;
  std::vector<int64_t> shape;
  if (c.shape())
    shape.assign(c.shape()->begin(), c.shape()->end());
  std::vector<uint8_t> bytes;
  if (!readConstantBytes(c, *dtype, shape, where, external, ctx, bytes))
    return false;
  if (*dtype == DType::Bool) {
    auto bad = std::find_if(bytes.begin(), bytes.end(), [](uint8_t b) { return b > 1; });
    if (bad != bytes.end())
      return ctx.fail(where, "bool element " + std::to_string(bad - bytes.begin()) + " is " +
                                 std::to_string(*bad) + ", not 0 or 1");
  }
  out = std::make_shared<DenseData>(
      c.splat() ? DenseData::makeSplat(*dtype, std::move(shape), std::move(bytes))
                : DenseData(*dtype, std::move(shape), std::move(bytes)));
  return true;
}

/// Checks the envelope of `bytes` and points `model` at its verified root.
bool openModel(std::span<const uint8_t> bytes, LoadContext &ctx, const fb::Model *&model) {
  const std::string name = "'" + ctx.file + "'";
  if (bytes.size() >= FLATBUFFERS_MAX_BUFFER_SIZE)
    return ctx.fail(name + " is too large for a model file");
  if (!hasModelIdentifier(bytes.data(), bytes.size()))
    return ctx.fail(name + " is not a fusec model file (bad identifier)");
  if (!verifyModel(bytes))
    return ctx.fail(name + " is truncated or corrupt: flatbuffers verification failed");
  model = fb::GetModel(bytes.data());
  uint32_t version = model->schema_version();
  if (version == 0)
    return ctx.fail(name + " does not record its model format version");
  if (version > kSchemaVersion)
    return ctx.fail(name + " has model format version " + std::to_string(version) +
                    "; this fusec reads versions up to " + std::to_string(kSchemaVersion));
  uint64_t recorded = model->file_size();
  if (recorded != 0 && recorded != bytes.size())
    return ctx.fail(name + " is truncated or corrupt: it has " + std::to_string(bytes.size()) +
                    " bytes, but was written with " + std::to_string(recorded));
  // Files written before checksums existed have none and are not checked.
  const fb::Checksum *checksum = model->checksum();
  if (checksum && fileChecksum(bytes, checksum) != checksum->blake3())
    return ctx.fail(name + " is corrupt: checksum mismatch");
  if (!checksum && rootHasGap(bytes))
    return ctx.fail(name + " is corrupt: its root table holds bytes that no field accounts for");
  return true;
}

std::unique_ptr<Module> readModel(const fb::Model &model, const std::string &externalDataPath,
                                  LoadContext &ctx) {
  if (!ctx.take(model.constants()) || !ctx.take(model.graphs()))
    return nullptr;
  ExternalData external(externalDataPath, model.external_data_size(),
                        model.external_data_checksum());
  std::vector<DenseRef> constants(count(model.constants()));
  for (uint32_t i = 0; i < constants.size(); ++i)
    if (!readConstant(*model.constants()->Get(i), i, external, ctx, constants[i]))
      return nullptr;
  if (count(model.graphs()) == 0) {
    ctx.fail("'" + ctx.file + "' holds no graphs");
    return nullptr;
  }
  auto module = std::make_unique<Module>();
  llvm::StringSet<> names;
  for (uint32_t i = 0; i < model.graphs()->size(); ++i) {
    std::unique_ptr<Graph> graph = readGraph(*model.graphs()->Get(i), i, constants, ctx);
    if (!graph)
      return nullptr;
    if (!names.insert(graph->name()).second) {
      ctx.fail("graph " + std::to_string(i) + ": duplicate graph name " + quote(graph->name()));
      return nullptr;
    }
    module->graphs.push_back(std::move(graph));
  }
  return module;
}

} // namespace
} // namespace modelfile

std::unique_ptr<Module> loadModelBuffer(std::span<const uint8_t> bytes, const std::string &file,
                                        const std::string &externalDataPath, Diagnostics &diags) {
  // Flatbuffers reads scalars in place; give it an 8-byte aligned copy when
  // the caller's buffer is not (its own checks are relative to the start).
  std::vector<uint64_t> aligned;
  if (reinterpret_cast<uintptr_t>(bytes.data()) % alignof(uint64_t) != 0) {
    aligned.resize(bytes.size() / sizeof(uint64_t) + 1);
    std::memcpy(aligned.data(), bytes.data(), bytes.size());
    bytes = {reinterpret_cast<const uint8_t *>(aligned.data()), bytes.size()};
  }
  modelfile::LoadContext ctx(file, bytes.size(), diags);
  const fb::Model *model = nullptr;
  if (!modelfile::openModel(bytes, ctx, model))
    return nullptr;
  std::unique_ptr<Module> module = modelfile::readModel(*model, externalDataPath, ctx);
  if (!module || !verify(*module, diags))
    return nullptr;
  return module;
}

} // namespace fusec
