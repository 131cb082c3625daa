// Reading and writing `.fusec` artifacts (see Artifact.h). The reader runs
// the flatbuffers Verifier over the whole buffer before touching a field,
// checks the format version and then the checksum of the whole file (Note
// [File checksums]), so that a byte changed or appended after writing is
// refused, and copies everything out, so nothing refers into the file
// afterwards.
#include "frontend/Artifact.h"

#include "frontend/Checksum.h"
#include "frontend/schema/artifact_generated.h"
#include "ir/FileIO.h"

#include <unistd.h>

namespace fusec {

namespace fa = fusec::artifact;

bool isArtifactFile(const std::string &path) {
  std::string why;
  std::optional<OpenedFile> file = openRegularFile(path, FileRole::Input, why);
  uint8_t head[8];
  return file && ::pread(file->fd, head, sizeof head, 0) == ssize_t(sizeof head) &&
         fa::ArtifactBufferHasIdentifier(head);
}

bool writeArtifact(const std::string &path, const Artifact &a, Diagnostics &diags) {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<flatbuffers::Offset<fa::Kernel>> kernels;
  for (const ArtifactKernel &k : a.kernels) {
    auto cubin =
        fbb.CreateVector(reinterpret_cast<const uint8_t *>(k.cubin.data()), k.cubin.size());
    kernels.push_back(fa::CreateKernel(fbb, fbb.CreateString(k.name), fbb.CreateString(k.key),
                                       fbb.CreateString(k.templateName), fbb.CreateString(k.ptx),
                                       cubin));
  }
  std::vector<flatbuffers::Offset<fa::Shape>> shapes;
  for (const std::vector<int64_t> &s : a.inputShapes)
    shapes.push_back(fa::CreateShape(fbb, fbb.CreateVector(s)));
  fa::Checksum placeholder(0);
  auto root = fa::CreateArtifact(fbb, kArtifactFormatVersion, fbb.CreateString(a.fusecVersion),
                                 fbb.CreateString(a.target), fbb.CreateString(a.nvrtcVersion),
                                 fbb.CreateString(a.graphText), fbb.CreateVector(shapes),
                                 a.arenaBytes, fbb.CreateVector(kernels), &placeholder);
  fa::FinishArtifactBuffer(fbb, root);
  std::span<uint8_t> bytes(fbb.GetBufferPointer(), fbb.GetSize());
  fa::Artifact *written = fa::GetMutableArtifact(bytes.data());
  written->mutable_checksum()->mutate_blake3(fileChecksum(bytes, written->checksum()));
  return writeFileAtomically(path, bytes, diags);
}

namespace {

std::string str(const flatbuffers::String *s) { return s ? s->str() : std::string(); }

/// Copies the verified root out.
void copyOut(const fa::Artifact &root, Artifact &a) {
  a.fusecVersion = str(root.fusec_version());
  a.target = str(root.target());
  a.nvrtcVersion = str(root.nvrtc_version());
  a.graphText = str(root.graph());
  a.arenaBytes = root.arena_bytes();
  if (root.input_shapes())
    for (const fa::Shape *s : *root.input_shapes())
      a.inputShapes.emplace_back(s->dims()
                                     ? std::vector<int64_t>(s->dims()->begin(), s->dims()->end())
                                     : std::vector<int64_t>{});
  if (root.kernels())
    for (const fa::Kernel *k : *root.kernels())
      a.kernels.push_back({str(k->name()), str(k->key()), str(k->template_()), str(k->ptx()),
                           std::string(k->cubin()->begin(), k->cubin()->end())});
}

} // namespace

std::optional<Artifact> readArtifact(const std::string &path, Diagnostics &diags) {
  std::optional<std::vector<uint8_t>> bytes = readFile(path, diags, kMaxModelFileBytes);
  if (!bytes)
    return std::nullopt;
  std::string name = "'" + path + "'";
  if (bytes->size() < 8 || !fa::ArtifactBufferHasIdentifier(bytes->data())) {
    diags.error(Loc{}, name + " is not a fusec artifact (bad identifier)");
    return std::nullopt;
  }
  flatbuffers::Verifier::Options opts;
  opts.max_depth = 8;
  flatbuffers::Verifier verifier(bytes->data(), bytes->size(), opts);
  if (bytes->size() >= FLATBUFFERS_MAX_BUFFER_SIZE || !fa::VerifyArtifactBuffer(verifier)) {
    diags.error(Loc{}, name + " is truncated or corrupt: flatbuffers verification failed");
    return std::nullopt;
  }
  const fa::Artifact &root = *fa::GetArtifact(bytes->data());
  if (root.format_version() != kArtifactFormatVersion) {
    diags.error(Loc{}, name + " has artifact format version " +
                           std::to_string(root.format_version()) + "; this fusec reads version " +
                           std::to_string(kArtifactFormatVersion) + ": compile it again");
    return std::nullopt;
  }
  const fa::Checksum *checksum = root.checksum();
  if (!checksum || fileChecksum(*bytes, checksum) != checksum->blake3()) {
    diags.error(Loc{}, name + " is corrupt: checksum mismatch");
    return std::nullopt;
  }
  Artifact a;
  copyOut(root, a);
  return a;
}

} // namespace fusec
