// The importer's op table: ONNX op type -> handler. One row per op type of
// the default domain fusec imports; docs/onnx.md lists them with what each
// becomes.
#include "frontend/onnx/Ops.h"

#include <algorithm>

namespace fusec::onnximport {

namespace {
struct Row {
  std::string_view opType;
  OpHandler handler;
};

constexpr Row kOps[] = {
    // Pointwise.
    {"Abs", importUnary},
    {"Add", importBinary},
    {"And", importLogic},
    {"Cast", importCast},
    {"CastLike", importCast},
    {"Ceil", importUnary},
    {"Clip", importClip},
    {"Cos", importUnary},
    {"Div", importBinary},
    {"Dropout", importIdentity},
    {"Elu", importActivation},
    {"Equal", importBinary},
    {"Erf", importUnary},
    {"Exp", importUnary},
    {"Floor", importUnary},
    {"Greater", importBinary},
    {"GreaterOrEqual", importBinary},
    {"HardSigmoid", importActivation},
    {"HardSwish", importActivation},
    {"Identity", importIdentity},
    {"LeakyRelu", importActivation},
    {"Less", importBinary},
    {"LessOrEqual", importBinary},
    {"Log", importUnary},
    {"Max", importVariadic},
    {"Mean", importVariadic},
    {"Min", importVariadic},
    {"Mul", importBinary},
    {"Neg", importUnary},
    {"Not", importNot},
    {"Or", importLogic},
    {"Pow", importBinary},
    {"Reciprocal", importReciprocal},
    {"Relu", importUnary},
    {"Round", importUnary},
    {"Sigmoid", importUnary},
    {"Sign", importUnary},
    {"Sin", importUnary},
    {"Softplus", importActivation},
    {"Sqrt", importUnary},
    {"Sub", importBinary},
    {"Sum", importVariadic},
    {"Tanh", importUnary},
    {"Where", importWhere},
    {"Xor", importLogic},
    // Reductions, scans, selections.
    {"ArgMax", importArgExtreme},
    {"ArgMin", importArgExtreme},
    {"CumSum", importCumSum},
    {"ReduceL1", importReduce},
    {"ReduceL2", importReduce},
    {"ReduceLogSumExp", importReduce},
    {"ReduceMax", importReduce},
    {"ReduceMean", importReduce},
    {"ReduceMin", importReduce},
    {"ReduceProd", importReduce},
    {"ReduceSum", importReduce},
    {"ReduceSumSquare", importReduce},
    {"TopK", importTopK},
    // Shapes, movement, constants.
    {"Concat", importConcat},
    {"Constant", importConstant},
    {"ConstantOfShape", importConstantOfShape},
    {"Expand", importExpand},
    {"Flatten", importFlatten},
    {"Gather", importGather},
    {"GatherElements", importGatherElements},
    {"Pad", importPad},
    {"Resize", importResize},
    {"Range", importRange},
    {"Reshape", importReshape},
    {"Shape", importShape},
    {"Size", importSize},
    {"Slice", importSlice},
    {"Split", importSplit},
    {"Squeeze", importSqueeze},
    {"Tile", importTile},
    {"Transpose", importTranspose},
    {"Trilu", importTrilu},
    {"Unsqueeze", importUnsqueeze},
    {"Upsample", importResize},
    // Contractions, convolution, pooling, normalization.
    {"AveragePool", importPool},
    {"BatchNormalization", importBatchNorm},
    {"Conv", importConv},
    {"ConvTranspose", importConvTranspose},
    {"Einsum", importEinsum},
    {"Gemm", importGemm},
    {"GlobalAveragePool", importGlobalPool},
    {"GlobalMaxPool", importGlobalPool},
    {"InstanceNormalization", importInstanceNorm},
    {"LayerNormalization", importLayerNorm},
    {"LogSoftmax", importSoftmax},
    {"MatMul", importMatMul},
    {"MaxPool", importPool},
    {"Softmax", importSoftmax},
};
} // namespace

OpHandler findHandler(std::string_view opType) {
  for (const Row &r : kOps)
    if (r.opType == opType)
      return r.handler;
  return nullptr;
}

std::vector<std::string> supportedOps() {
  std::vector<std::string> out;
  for (const Row &r : kOps)
    out.emplace_back(r.opType);
  std::sort(out.begin(), out.end());
  return out;
}

Value *scalarLike(NodeImport &n, Value *like, double v) {
  return like ? n.b.scalar(like->type().dtype, v) : nullptr;
}

std::optional<int64_t> staticInt(NodeImport &n, unsigned i, std::string_view what) {
  std::optional<std::vector<int64_t>> v = n.staticInts(i, what);
  if (!v)
    return std::nullopt;
  if (v->size() != 1) {
    n.fail(std::string(what) + " must be one element");
    return std::nullopt;
  }
  return v->front();
}

std::optional<unsigned> axisOf(NodeImport &n, int64_t axis, size_t rank) {
  std::optional<unsigned> a = normalizeAxis(axis, rank);
  if (!a)
    n.fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return a;
}

std::optional<std::vector<int64_t>> axesOf(NodeImport &n, int64_t inputFrom) {
  if (n.opset < inputFrom)
    return n.attrInts("axes").value_or(std::vector<int64_t>{});
  if (!n.has(1))
    return std::vector<int64_t>{};
  return n.staticInts(1, "axes");
}

} // namespace fusec::onnximport
