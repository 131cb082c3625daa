// Content checksums (see Checksum.h and Note [File checksums]).
#include "frontend/Checksum.h"

#include "ir/Assert.h"

#include "llvm/Support/Endian.h"

#include <array>

namespace fusec {

void ChecksumBuilder::add(std::span<const uint8_t> bytes) {
  hasher.update(llvm::ArrayRef<uint8_t>(bytes.data(), bytes.size()));
}

uint64_t ChecksumBuilder::value() {
  std::array<uint8_t, 8> digest = hasher.final<8>();
  return llvm::support::endian::read64le(digest.data());
}

uint64_t checksumOf(std::span<const uint8_t> bytes) {
  ChecksumBuilder builder;
  builder.add(bytes);
  return builder.value();
}

uint64_t fileChecksum(std::span<const uint8_t> file, const void *field) {
  constexpr size_t kFieldBytes = sizeof(uint64_t);
  const uint8_t *at = static_cast<const uint8_t *>(field);
  FUSEC_ASSERT(at >= file.data() && at + kFieldBytes <= file.data() + file.size(),
               "checksum field outside its file");
  size_t offset = size_t(at - file.data());
  static constexpr std::array<uint8_t, kFieldBytes> kZeros{};
  ChecksumBuilder builder;
  builder.add(file.first(offset));
  builder.add(kZeros);
  builder.add(file.subspan(offset + kFieldBytes));
  return builder.value();
}

} // namespace fusec
