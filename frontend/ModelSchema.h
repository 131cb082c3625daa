// Internal to frontend/: what the model reader and writer share. The schema
// (schema/model.fbs, compiled by flatc at build time), its version, the
// layout rules of external data, and the mapping between the IR's enums and
// the schema's, which list the same values in the same order.
#pragma once

#include "frontend/schema/model_generated.h"
#include "ir/Types.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace fusec::modelfile {

/// The format's major version, the newest this reader reads; docs/model-format.md
/// has the policy. A file records the oldest version that reads it correctly:
/// kSchemaVersion when it holds a splat constant (new in version 2), else
/// kSchemaVersionWithoutSplats.
inline constexpr uint32_t kSchemaVersion = 2;
inline constexpr uint32_t kSchemaVersionWithoutSplats = 1;
/// Offsets into the external data file are multiples of this, so that a
/// mapped data file gives aligned weights.
inline constexpr uint64_t kDataAlignment = 16;
/// Flatbuffers address at most 2 GiB; the writer refuses to put more than
/// this many bytes of constants inline, leaving room for the graph itself.
inline constexpr uint64_t kMaxInlineConstantBytes = uint64_t(1) << 30;

/// The external data file of the model file `modelPath`.
inline std::string externalDataPath(const std::string &modelPath) { return modelPath + ".data"; }

/// True when `bytes` (at least 8 of them) carry the model file identifier.
inline bool hasModelIdentifier(const uint8_t *bytes, size_t size) {
  return size >= 8 && fb::ModelBufferHasIdentifier(bytes);
}

/// Runs flatbuffers' Verifier over a whole model file (every offset, vector
/// and string in bounds), with table nesting bounded to 16 (the schema nests
/// 6 deep) and the table count to one per 4 bytes of file.
inline bool verifyModel(std::span<const uint8_t> bytes) {
  if (bytes.size() >= FLATBUFFERS_MAX_BUFFER_SIZE)
    return false;
  flatbuffers::Verifier::Options opts;
  opts.max_depth = 16;
  opts.max_tables = flatbuffers::uoffset_t(bytes.size() / sizeof(flatbuffers::soffset_t));
  flatbuffers::Verifier verifier(bytes.data(), bytes.size(), opts);
  return fb::VerifyModelBuffer(verifier);
}

/// Whether the root table of a verified model file has 8 bytes in a row
/// that no field covers (Note [Hidden checksum], ModelChecksum.cpp).
bool rootHasGap(std::span<const uint8_t> bytes);

#define FUSEC_SAME_ENUM(Ir, Fb)                                                                    \
  static_assert(uint8_t(Ir) == uint8_t(Fb), "schema enum order differs from the IR's")
FUSEC_SAME_ENUM(DType::F32, fb::DType::F32);
FUSEC_SAME_ENUM(DType::F16, fb::DType::F16);
FUSEC_SAME_ENUM(DType::BF16, fb::DType::BF16);
FUSEC_SAME_ENUM(DType::F64, fb::DType::F64);
FUSEC_SAME_ENUM(DType::I32, fb::DType::I32);
FUSEC_SAME_ENUM(DType::I64, fb::DType::I64);
FUSEC_SAME_ENUM(DType::I8, fb::DType::I8);
FUSEC_SAME_ENUM(DType::Bool, fb::DType::Bool);
static_assert(std::size(kAllDTypes) == size_t(fb::DType::MAX) + 1, "a dtype is missing");
FUSEC_SAME_ENUM(Layout::None, fb::Layout::None);
FUSEC_SAME_ENUM(Layout::NCHW, fb::Layout::NCHW);
FUSEC_SAME_ENUM(Layout::NHWC, fb::Layout::NHWC);
static_assert(uint8_t(Layout::NHWC) == uint8_t(fb::Layout::MAX), "a layout is missing");
#undef FUSEC_SAME_ENUM

inline fb::DType toSchema(DType t) { return fb::DType(uint8_t(t)); }
inline fb::Layout toSchema(Layout l) { return fb::Layout(uint8_t(l)); }

/// The IR dtype of a stored value; nullopt when out of range.
inline std::optional<DType> fromSchema(fb::DType t) {
  if (uint8_t(t) > uint8_t(fb::DType::MAX))
    return std::nullopt;
  return DType(uint8_t(t));
}
inline std::optional<Layout> fromSchema(fb::Layout l) {
  if (uint8_t(l) > uint8_t(fb::Layout::MAX))
    return std::nullopt;
  return Layout(uint8_t(l));
}

} // namespace fusec::modelfile
