// ONNX tensors (initializers, Constant values, test data) as fusec constants.
// Internal to the importer: the only header of frontend/onnx that names
// protobuf types besides Importer.h.
#pragma once

#include "ir/Attribute.h"
#include "onnx/onnx_pb.h"

#include <optional>
#include <string>

namespace fusec::onnximport {

/// The fusec dtype of an ONNX element type; nullopt for the types fusec has
/// no dtype for (uint8, int16, strings, complex, ...).
std::optional<DType> dtypeOf(int32_t elemType);
/// The ONNX name of an element type ("FLOAT16"), for messages.
std::string elemTypeName(int32_t elemType);

/// Element i of an integer (or bool) constant, exactly.
int64_t integerElement(const DenseData &d, size_t i);
/// An integer constant of `dtype` (i8, i32, i64) holding `values`, each
/// wrapped to the dtype's width.
DenseData integerData(DType dtype, std::vector<int64_t> shape, const std::vector<int64_t> &values);

/// Where tensor data may come from, and how much of it is left to take.
struct TensorSource {
  /// The model's folder, the only place external data is read from; empty
  /// when the model came from memory.
  std::string modelDir;
  /// Bytes still allowed (Note [Import budget]); each tensor read takes its
  /// bytes from it before allocating them.
  uint64_t budget = 0;
};

/// Resolves an external data location inside the model's folder: relative,
/// no `..`, and (after symbolic links) still inside it. Empty with `error`
/// set otherwise.
std::string resolveLocation(const std::string &location, const std::string &modelDir,
                            std::string &error);
/// The `location` of a tensor's external data (empty when it has none).
std::string externalLocation(const onnx::TensorProto &t);

/// The contents of `t`: its dims and data checked against each other (raw
/// bytes, typed fields or an external file confined to src.modelDir) before
/// anything is allocated. Nullopt with `error` set otherwise.
std::optional<DenseData> readTensor(const onnx::TensorProto &t, TensorSource &src,
                                    std::string &error);

} // namespace fusec::onnximport
