// The C++ builder: op creation with inference and error reporting.
#include "ir/Builder.h"

#include "ir/Assert.h"
#include "ir/Numerics.h"
#include "ir/Verifier.h"

#include <cstring>

namespace fusec {

Op *Builder::createOp(OpKind kind, const std::vector<Value *> &operands, AttrList attrs) {
  std::vector<TensorType> operandTypes;
  for (Value *v : operands) {
    if (!v)
      return nullptr; // an earlier error, already reported
    operandTypes.push_back(v->type());
  }
  std::vector<TensorType> results;
  if (!checkAttributes(kind, attrs, loc, diags) ||
      !inferResultTypes(kind, operandTypes, attrs, loc, diags, results))
    return nullptr;
  return graph.createOp(kind, operands, results, std::move(attrs), loc, before);
}

Value *Builder::create(OpKind kind, const std::vector<Value *> &operands, AttrList attrs) {
  Op *op = createOp(kind, operands, std::move(attrs));
  if (!op)
    return nullptr;
  FUSEC_ASSERT(op->numResults() == 1, "create() used for a multi-result op");
  return op->result();
}

Value *Builder::constant(DenseRef data) { return create(OpKind::Const, {}, {{"value", data}}); }

Value *Builder::constant(DType dtype, const std::vector<int64_t> &shape,
                         const std::vector<double> &values) {
  std::vector<uint8_t> bytes(values.size() * dtypeSize(dtype));
  for (size_t i = 0; i < values.size(); ++i)
    storeElement(dtype, values[i], bytes.data() + i * dtypeSize(dtype));
  return constant(std::make_shared<DenseData>(dtype, shape, std::move(bytes)));
}

Value *Builder::splat(DType dtype, const std::vector<int64_t> &shape, double v) {
  std::vector<uint8_t> element(dtypeSize(dtype));
  storeElement(dtype, v, element.data());
  return constant(std::make_shared<DenseData>(DenseData::makeSplat(dtype, shape, element)));
}

Value *Builder::matmul(Value *a, Value *b, bool transposeA, bool transposeB) {
  AttrList attrs;
  if (transposeA)
    attrs.push_back({"transpose_a", true});
  if (transposeB)
    attrs.push_back({"transpose_b", true});
  return create(OpKind::MatMul, {a, b}, std::move(attrs));
}

} // namespace fusec
