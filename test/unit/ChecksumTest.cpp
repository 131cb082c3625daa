// The checksum of fusec's files (frontend/Checksum.h, Note [File checksums]):
// its definition, pinned by a known answer, and the hole for the field.
#include "frontend/Checksum.h"

#include <gtest/gtest.h>
#include <numeric>
#include <vector>

using namespace fusec;

namespace {

std::vector<uint8_t> sampleBytes() {
  std::vector<uint8_t> bytes(100);
  std::iota(bytes.begin(), bytes.end(), 1);
  return bytes;
}

} // namespace

TEST(Checksum, IsTheFirstEightBytesOfBlake3LittleEndian) {
  // BLAKE3("") = af1349b9f5f9a1a6a0404dea36dcc949...
  EXPECT_EQ(checksumOf({}), 0xa6a1f9f5b94913afull);
}

TEST(Checksum, PiecesGiveTheChecksumOfTheWhole) {
  std::vector<uint8_t> bytes = sampleBytes();
  ChecksumBuilder pieces;
  pieces.add(std::span(bytes).first(30));
  pieces.add(std::span(bytes).subspan(30));
  EXPECT_EQ(pieces.value(), checksumOf(bytes));
}

TEST(Checksum, FileChecksumReadsItsFieldAsZeroAndCoversEveryOtherByte) {
  std::vector<uint8_t> file = sampleBytes();
  uint64_t sum = fileChecksum(file, file.data() + 16);
  std::vector<uint8_t> zeroed = file;
  std::fill_n(zeroed.begin() + 16, 8, 0);
  EXPECT_EQ(sum, checksumOf(zeroed));
  file[23] ^= 1; // inside the field
  EXPECT_EQ(fileChecksum(file, file.data() + 16), sum);
  file[24] ^= 1; // just after it
  EXPECT_NE(fileChecksum(file, file.data() + 16), sum);
  file[24] ^= 1;
  file.push_back(0); // appended
  EXPECT_NE(fileChecksum(file, file.data() + 16), sum);
}
