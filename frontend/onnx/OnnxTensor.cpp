// Reading ONNX TensorProtos. Note [Import budget]: every byte a model makes
// the importer hold (initializers, Constant values, constants folded at
// import) is taken from one budget before it is allocated, so that a small
// file claiming a huge tensor, or one whose external data names a huge file,
// is refused with a message instead of exhausting memory. The count is
// checked against what the tensor really carries before the budget is
// charged: raw bytes, a typed field's length, or an external file's size.
#include "frontend/onnx/OnnxTensor.h"

#include "ir/FileIO.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cstring>
#include <unistd.h>

namespace fusec::onnximport {

using onnx::TensorProto;

std::optional<DType> dtypeOf(int32_t elemType) {
  switch (elemType) {
  case TensorProto::FLOAT:
    return DType::F32;
  case TensorProto::FLOAT16:
    return DType::F16;
  case TensorProto::BFLOAT16:
    return DType::BF16;
  case TensorProto::DOUBLE:
    return DType::F64;
  case TensorProto::INT32:
    return DType::I32;
  case TensorProto::INT64:
    return DType::I64;
  case TensorProto::INT8:
    return DType::I8;
  case TensorProto::BOOL:
    return DType::Bool;
  default:
    return std::nullopt;
  }
}

std::string elemTypeName(int32_t elemType) {
  if (TensorProto::DataType_IsValid(elemType))
    return TensorProto::DataType_Name(TensorProto::DataType(elemType));
  return "element type " + std::to_string(elemType);
}

int64_t integerElement(const DenseData &d, size_t i) {
  const uint8_t *p = d.element(i);
  switch (d.dtype) {
  case DType::I8:
    return int8_t(*p);
  case DType::Bool:
    return *p != 0;
  case DType::I32: {
    int32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  default: {
    int64_t v;
    std::memcpy(&v, p, 8);
    return v;
  }
  }
}

DenseData integerData(DType dtype, std::vector<int64_t> shape, const std::vector<int64_t> &values) {
  unsigned size = dtypeSize(dtype);
  std::vector<uint8_t> bytes(values.size() * size);
  for (size_t i = 0; i < values.size(); ++i)
    std::memcpy(bytes.data() + i * size, &values[i], size); // little-endian: the low bytes
  return DenseData(dtype, std::move(shape), std::move(bytes));
}

namespace {

/// The element count of `dims`; nullopt when a dim is negative or the
/// product overflows.
std::optional<int64_t> countElements(const TensorProto &t) {
  int64_t n = 1;
  for (int64_t d : t.dims()) {
    if (d < 0 || (d != 0 && n > std::numeric_limits<int64_t>::max() / d))
      return std::nullopt;
    n *= d;
  }
  return n;
}

/// The number of elements `t` carries in the typed field its element type
/// uses.
int64_t typedFieldSize(const TensorProto &t) {
  switch (t.data_type()) {
  case TensorProto::FLOAT:
    return t.float_data_size();
  case TensorProto::DOUBLE:
    return t.double_data_size();
  case TensorProto::INT64:
    return t.int64_data_size();
  default:
    return t.int32_data_size(); // int32, int8, bool, float16, bfloat16
  }
}

/// Element i of the typed field, stored as `size` little-endian bytes.
void storeTypedElement(const TensorProto &t, int64_t i, unsigned size, uint8_t *out) {
  switch (t.data_type()) {
  case TensorProto::FLOAT: {
    float v = t.float_data(int(i));
    std::memcpy(out, &v, 4);
    return;
  }
  case TensorProto::DOUBLE: {
    double v = t.double_data(int(i));
    std::memcpy(out, &v, 8);
    return;
  }
  case TensorProto::INT64: {
    int64_t v = t.int64_data(int(i));
    std::memcpy(out, &v, 8);
    return;
  }
  default: {
    // int32_data holds int32 values, and the bits of the narrower types
    // (int8, bool, and float16/bfloat16 as uint16) in its low bytes.
    int32_t v = t.int32_data(int(i));
    if (t.data_type() == TensorProto::BOOL)
      v = v != 0;
    std::memcpy(out, &v, size); // little-endian: the low bytes first
    return;
  }
  }
}

/// The value of an external_data key, or empty.
std::string externalField(const TensorProto &t, std::string_view key) {
  for (const onnx::StringStringEntryProto &e : t.external_data())
    if (e.key() == key)
      return e.value();
  return {};
}

/// A decimal field of external_data (offset, length); `fallback` when
/// absent, nullopt when malformed.
std::optional<uint64_t> externalNumber(const TensorProto &t, std::string_view key,
                                       uint64_t fallback) {
  std::string s = externalField(t, key);
  if (s.empty())
    return fallback;
  uint64_t v = 0;
  if (llvm::StringRef(s).getAsInteger(10, v))
    return std::nullopt;
  return v;
}

} // namespace

std::string resolveLocation(const std::string &location, const std::string &modelDir,
                            std::string &error) {
  if (modelDir.empty()) {
    error = "external data '" + location + "' but the model was not read from a file";
    return {};
  }
  if (location.empty() || llvm::sys::path::is_absolute(location) ||
      location.find('\0') != std::string::npos) {
    error = "external data location '" + location + "' is not a relative path";
    return {};
  }
  for (llvm::StringRef part :
       llvm::make_range(llvm::sys::path::begin(location), llvm::sys::path::end(location)))
    if (part == "..") {
      error = "external data location '" + location + "' leaves the model's folder";
      return {};
    }
  llvm::SmallString<256> dir, file, joined(modelDir);
  llvm::sys::path::append(joined, location);
  if (llvm::sys::fs::real_path(modelDir, dir) || llvm::sys::fs::real_path(joined, file)) {
    error = "cannot open external data '" + location + "': no such file";
    return {};
  }
  if (!llvm::StringRef(file).starts_with(std::string(dir) + "/")) {
    error = "external data location '" + location + "' leaves the model's folder";
    return {};
  }
  return std::string(file);
}

std::string externalLocation(const TensorProto &t) { return externalField(t, "location"); }

namespace {

/// Reads `t`'s external bytes: `bytes` long, from its file inside
/// src.modelDir at its offset.
bool readExternal(const TensorProto &t, const TensorSource &src, uint64_t bytes,
                  std::vector<uint8_t> &out, std::string &error) {
  std::string location = externalField(t, "location");
  std::optional<uint64_t> offset = externalNumber(t, "offset", 0);
  std::optional<uint64_t> length = externalNumber(t, "length", bytes);
  if (!offset || !length) {
    error = "external data of '" + location + "' has a malformed offset or length";
    return false;
  }
  if (*length != bytes) {
    error = "external data length " + std::to_string(*length) + " does not match the " +
            std::to_string(bytes) + " bytes of the tensor's shape";
    return false;
  }
  std::string path = resolveLocation(location, src.modelDir, error);
  if (path.empty())
    return false;
  std::string why;
  std::optional<OpenedFile> file = openRegularFile(path, FileRole::Input, why);
  if (!file) {
    error = "cannot open external data '" + location + "': " + why;
    return false;
  }
  if (*offset > file->size || file->size - *offset < bytes) {
    error = "external data '" + location + "' holds " + std::to_string(file->size) +
            " bytes, fewer than offset " + std::to_string(*offset) + " + length " +
            std::to_string(bytes);
    return false;
  }
  out.resize(bytes);
  uint64_t done = 0;
  while (done < bytes) {
    ssize_t n = ::pread(file->fd, out.data() + done, bytes - done, off_t(*offset + done));
    if (n <= 0) {
      error = "cannot read external data '" + location + "'";
      return false;
    }
    done += uint64_t(n);
  }
  return true;
}

} // namespace

std::optional<DenseData> readTensor(const TensorProto &t, TensorSource &src, std::string &error) {
  std::optional<DType> dtype = dtypeOf(t.data_type());
  if (!dtype) {
    error = "element type " + elemTypeName(t.data_type()) + " is not supported";
    return std::nullopt;
  }
  std::optional<int64_t> count = countElements(t);
  unsigned size = dtypeSize(*dtype);
  if (!count || uint64_t(*count) > std::numeric_limits<uint64_t>::max() / size) {
    error = "tensor dims are negative or their product overflows";
    return std::nullopt;
  }
  uint64_t bytes = uint64_t(*count) * size;
  bool external = t.data_location() == TensorProto::EXTERNAL;
  // The data the tensor carries, checked against its shape before the
  // budget is charged (an external file's size is checked while reading).
  if (!external && t.has_raw_data() && t.raw_data().size() != bytes) {
    error = "raw data has " + std::to_string(t.raw_data().size()) + " bytes, the shape needs " +
            std::to_string(bytes);
    return std::nullopt;
  }
  if (!external && !t.has_raw_data() && typedFieldSize(t) != *count) {
    error = "tensor holds " + std::to_string(typedFieldSize(t)) + " elements, its shape needs " +
            std::to_string(*count);
    return std::nullopt;
  }
  if (bytes > src.budget) {
    error = "tensor of " + std::to_string(bytes) + " bytes is over the import's limit (" +
            std::to_string(src.budget) + " bytes left)";
    return std::nullopt;
  }
  src.budget -= bytes;

  std::vector<int64_t> shape(t.dims().begin(), t.dims().end());
  std::vector<uint8_t> data;
  if (external) {
    if (!readExternal(t, src, bytes, data, error))
      return std::nullopt;
  } else if (t.has_raw_data()) {
    data.assign(t.raw_data().begin(), t.raw_data().end());
  } else {
    data.resize(bytes);
    for (int64_t i = 0; i < *count; ++i)
      storeTypedElement(t, i, size, data.data() + i * size);
  }
  if (*dtype == DType::Bool)
    for (uint8_t &b : data)
      b = b != 0;
  return DenseData(*dtype, std::move(shape), std::move(data));
}

} // namespace fusec::onnximport
