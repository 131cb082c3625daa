// Generic kernels of the elementwise ops: every pointwise op of ir/Ops.def
// and batch_norm (inference form), one thread per output element over a
// grid-stride loop, so that consecutive threads write consecutive elements.
//
// A pointwise operand of the result's shape is read at the flat index; a
// broadcast operand at the strided sum of the output coordinates it spans
// (static strides, 0 along broadcast axes). The math is PointwiseMath's, the
// same text the pointwise template renders (f16/bf16 widened to f32, f64
// kept in double, integers wrapping). batch_norm reads its four per-channel
// parameters at the channel coordinate (axis 1, or 3 for {nhwc}) and
// computes (x - mean) / sqrt(var + eps) * scale + bias as the reference does.
#include "codegen/GenericSupport.h"
#include "codegen/PointwiseMath.h"

#include <sstream>

namespace fusec::codegen::generic {

namespace {

GeneratedKernel emitPointwise(KernelBuilder &k) {
  const Op &op = k.op();
  Sizes shape = sizesOf(*op.result());
  IndexSpace space(shape, "c");
  std::ostringstream loop;
  std::vector<std::string> args;
  for (unsigned i = 0; i < op.numOperands(); ++i) {
    std::string index = space.offsetOr("i", broadcastStrides(sizesOf(*op.operand(i)), shape));
    DType t = op.operand(i)->type().dtype;
    args.push_back("x" + std::to_string(i));
    loop << "    const " << computeType(t) << " " << args.back() << " = "
         << loadExpr(t, k.in(i), index) << ";\n";
  }
  DType rt = op.result()->type().dtype;
  loop << "    const " << computeType(rt) << " y = " << pointwiseExpr(op, args) << ";\n"
       << "    " << k.out() << "[i] = " << storeExpr(rt, "y") << ";\n";
  int64_t numel = product(shape);
  std::string body = gridStrideLoop(numel, space.split("i", "    ") + loop.str());
  return k.finish({"one thread per element"}, body, blocksFor(numel));
}

GeneratedKernel emitBatchNorm(KernelBuilder &k) {
  const Op &op = k.op();
  Sizes shape = sizesOf(*op.result());
  size_t axis = op.operand(0)->type().layout == Layout::NHWC ? 3 : 1;
  DType t = op.result()->type().dtype;
  DType math = t == DType::F64 ? DType::F64 : DType::F32;
  std::string type(computeType(t)), sqrtFn = t == DType::F64 ? "sqrt" : "sqrtf";
  IndexSpace space(shape, "c");
  Sizes channelStride(shape.size(), 0);
  channelStride[axis] = 1;
  std::string channel = space.offset(channelStride);
  static const char *names[] = {"x", "scale", "bias", "mean", "var"};
  std::ostringstream loop;
  for (unsigned i = 0; i < 5; ++i) {
    DType pt = op.operand(i)->type().dtype;
    loop << "    const " << type << " " << names[i] << " = "
         << loadExpr(pt, k.in(i), i == 0 ? "i" : channel) << ";\n";
  }
  loop << "    const " << type << " y = (x - mean) / " << sqrtFn << "(var + "
       << floatLiteral(math, op.getFloat("epsilon")) << ") * scale + bias;\n"
       << "    " << k.out() << "[i] = " << storeExpr(t, "y") << ";\n";
  int64_t numel = product(shape);
  std::string body = gridStrideLoop(numel, space.split("i", "    ") + loop.str());
  return k.finish({"one thread per element; channel axis " + std::to_string(axis)}, body,
                  blocksFor(numel));
}

} // namespace

GeneratedKernel emitElementwise(KernelBuilder &k) {
  return k.op().kind() == OpKind::BatchNorm ? emitBatchNorm(k) : emitPointwise(k);
}

} // namespace fusec::codegen::generic
