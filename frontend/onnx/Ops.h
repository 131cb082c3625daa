// The op handlers of the ONNX importer, by file; Ops.cpp maps op types to
// them. Internal to frontend/onnx.
#pragma once

#include "frontend/onnx/Importer.h"

namespace fusec::onnximport {

// OpsMath.cpp: pointwise math, comparisons and logic, reductions.
bool importUnary(NodeImport &n);
bool importBinary(NodeImport &n);
bool importVariadic(NodeImport &n);
bool importReciprocal(NodeImport &n);
bool importNot(NodeImport &n);
bool importLogic(NodeImport &n);
bool importWhere(NodeImport &n);
bool importCast(NodeImport &n);
bool importClip(NodeImport &n);
bool importActivation(NodeImport &n);
bool importIdentity(NodeImport &n);
bool importReduce(NodeImport &n);
bool importCumSum(NodeImport &n);
bool importTopK(NodeImport &n);
bool importArgExtreme(NodeImport &n);

// OpsTensor.cpp: shapes, movement, constants.
bool importConstant(NodeImport &n);
bool importConstantOfShape(NodeImport &n);
bool importShape(NodeImport &n);
bool importSize(NodeImport &n);
bool importRange(NodeImport &n);
bool importReshape(NodeImport &n);
bool importFlatten(NodeImport &n);
bool importSqueeze(NodeImport &n);
bool importUnsqueeze(NodeImport &n);
bool importTranspose(NodeImport &n);
bool importConcat(NodeImport &n);
bool importSplit(NodeImport &n);
bool importSlice(NodeImport &n);
bool importGather(NodeImport &n);
bool importGatherElements(NodeImport &n);
bool importExpand(NodeImport &n);
bool importTile(NodeImport &n);
bool importPad(NodeImport &n);
bool importTrilu(NodeImport &n);

// OpsNN.cpp: contractions, convolution, pooling, normalization.
bool importMatMul(NodeImport &n);
bool importGemm(NodeImport &n);
bool importEinsum(NodeImport &n);
bool importConv(NodeImport &n);
bool importConvTranspose(NodeImport &n);
bool importPool(NodeImport &n);
bool importGlobalPool(NodeImport &n);
bool importBatchNorm(NodeImport &n);
bool importLayerNorm(NodeImport &n);
bool importInstanceNorm(NodeImport &n);
bool importSoftmax(NodeImport &n);

// OpsResize.cpp: interpolation.
bool importResize(NodeImport &n);

// Shared helpers.
/// A scalar constant of `like`'s dtype.
Value *scalarLike(NodeImport &n, Value *like, double v);
/// Input i as one integer known at import (a K, an axis); nullopt after
/// reporting. `what` names it in messages.
std::optional<int64_t> staticInt(NodeImport &n, unsigned i, std::string_view what);
/// Axis `axis` (possibly negative) of a rank; nullopt after reporting.
std::optional<unsigned> axisOf(NodeImport &n, int64_t axis, size_t rank);
/// The axes of a reduction or squeeze: the attribute before `inputFrom`
/// (the opset that moved them to input 1), input 1 from then on; empty when
/// absent. Nullopt after an error.
std::optional<std::vector<int64_t>> axesOf(NodeImport &n, int64_t inputFrom);

} // namespace fusec::onnximport
