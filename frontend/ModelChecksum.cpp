// The model file's checksums (Note [File checksums] in Checksum.h) where
// they need more than a call: the check that no checksum field was hidden
// by damage, and resealing a deliberately damaged buffer for the fuzzer.
#include "frontend/Checksum.h"
#include "frontend/ModelFile.h"
#include "frontend/ModelSchema.h"

#include <algorithm>
#include <vector>

namespace fusec {
namespace modelfile {

// Note [Hidden checksum]: a model file without a checksum field is read as
// one written before checksums existed, and is not checked. One damaged byte
// of the root's vtable can hide the field of a newer file (the vtable's size
// shrunk so that the slot falls outside it, or the slot zeroed), which would
// make a damaged file read as an unprotected one. The field's 8 bytes are
// still inside the root table, though, and no field lists them: flatbuffers
// pads only to align the next field, so a well-formed table never has 8
// bytes in a row that are neither its vtable offset nor one of its fields.
// A root without a checksum that has such a gap is refused.

/// Bytes of each field of the root table, by vtable slot.
constexpr uint8_t kRootFieldBytes[] = {4, 8, 4, 4, 4, 8, 8, 8};
static_assert(fb::Model::VT_EXTERNAL_DATA_CHECKSUM == 4 + 2 * (std::size(kRootFieldBytes) - 1),
              "kRootFieldBytes lacks a field of the root table");

bool rootHasGap(std::span<const uint8_t> bytes) {
  using namespace flatbuffers;
  const uint8_t *table = bytes.data() + ReadScalar<uoffset_t>(bytes.data());
  const uint8_t *vtable = table - ReadScalar<soffset_t>(table);
  // The vtable: its size, the table's size, then one offset per slot.
  size_t entries = ReadScalar<voffset_t>(vtable) / sizeof(voffset_t);
  if (entries < 2)
    return false;
  size_t tableSize = ReadScalar<voffset_t>(vtable + sizeof(voffset_t));
  std::vector<bool> covered(tableSize, false);
  std::fill_n(covered.begin(), std::min(tableSize, sizeof(soffset_t)), true);
  for (size_t slot = 0; slot + 2 < entries; ++slot) {
    size_t at = ReadScalar<voffset_t>(vtable + sizeof(voffset_t) * (slot + 2));
    if (at == 0 || at >= tableSize)
      continue;
    if (slot >= std::size(kRootFieldBytes))
      return false; // a newer writer's field, of a size not known here
    std::fill(covered.begin() + at,
              covered.begin() + std::min(tableSize, at + kRootFieldBytes[slot]), true);
  }
  size_t run = 0;
  for (bool c : covered)
    if ((run = c ? 0 : run + 1) == sizeof(uint64_t))
      return true;
  return false;
}

} // namespace modelfile

bool resealModelBuffer(std::span<uint8_t> bytes, std::optional<uint64_t> dataChecksum) {
  if (!modelfile::hasModelIdentifier(bytes.data(), bytes.size()) || !modelfile::verifyModel(bytes))
    return false;
  // Both fields are found before either is written: in a damaged file the
  // root's vtable may lie under a checksum field, and writing one would
  // move the other.
  fb::Model *model = fb::GetMutableModel(bytes.data());
  fb::Checksum *file = model->mutable_checksum();
  fb::Checksum *data = model->mutable_external_data_checksum();
  if (!file)
    return false;
  if (dataChecksum && data)
    data->mutate_blake3(*dataChecksum);
  file->mutate_blake3(fileChecksum(bytes, file));
  return true;
}

} // namespace fusec
