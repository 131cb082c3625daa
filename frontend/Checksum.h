// Content checksums of fusec's files: model files, their external data, and
// artifacts. One hash for all of them, BLAKE3 (llvm/Support/BLAKE3.h), of
// which the first 8 bytes, read as a little-endian integer, are stored.
//
// Note [File checksums]: a flatbuffers file stores the checksum of its own
// bytes in a `Checksum` struct field of its root table. The writer writes the
// field with a placeholder, computes the checksum of the finished file with
// the field's 8 bytes read as zero, and patches it in place; the reader, once
// flatbuffers' Verifier has made the field's location trustworthy, computes
// it the same way and compares. Every other byte is covered: vtables,
// padding, data, and bytes appended after the buffer. The checksum detects
// damage (a flipped bit, a hand edit, a truncated or extended copy), not an
// adversary, who can recompute it. BLAKE3 rather than xxh3 because it is fed
// in pieces: the hole is hashed without copying the file, and a large data
// file in bounded chunks, at several GB/s either way.
#pragma once

#include "llvm/Support/BLAKE3.h"

#include <cstdint>
#include <span>

namespace fusec {

/// A checksum of bytes fed in pieces; value() is that of their concatenation.
class ChecksumBuilder {
public:
  void add(std::span<const uint8_t> bytes);
  /// The checksum of everything added so far.
  uint64_t value();

private:
  llvm::BLAKE3 hasher;
};

/// The checksum of all of `bytes`.
uint64_t checksumOf(std::span<const uint8_t> bytes);

/// The checksum of the file `file` whose checksum field, 8 bytes, lies at
/// `field` (a pointer into `file`): every byte, with the field's read as zero.
uint64_t fileChecksum(std::span<const uint8_t> file, const void *field);

} // namespace fusec
