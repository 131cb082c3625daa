// The generic kernels' entry point, and what every one is built with (Kernel.h): static sizes and
// strides, and Frame. buildGeneric refuses constants and symbolic shapes, then dispatches the op by
// class to its family's builder. The fallback that makes every verified graph run, correct first;
// the templates are the fast paths.
#include "codegen/templates/generic/Generic.h"

#include "codegen/templates/generic/Kernel.h"
#include "ir/Assert.h"

#include <algorithm>

namespace fusec::generic {

int64_t product(const Sizes &sizes, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t k = begin; k < std::min(end, sizes.size()); ++k)
    n *= sizes[k];
  return n;
}

Sizes broadcastStrides(const Sizes &shape, const Sizes &target) {
  FUSEC_ASSERT(shape.size() <= target.size(), "broadcast to a lower rank");
  Sizes own = contiguousStrides(shape), strides(target.size(), 0);
  size_t lead = target.size() - shape.size();
  for (size_t k = 0; k < shape.size(); ++k)
    strides[lead + k] = shape[k] == 1 ? 0 : own[k];
  return strides;
}

bool isRowMajor(const Sizes &dims, const Sizes &strides) {
  Sizes own = contiguousStrides(dims);
  for (size_t a = 0; a < dims.size(); ++a)
    if (dims[a] != 1 && strides[a] != own[a])
      return false;
  return true;
}

std::vector<unsigned> movingAxes(const Sizes &dims, const Sizes &strides) {
  std::vector<unsigned> axes;
  for (unsigned a = 0; a < dims.size(); ++a)
    if (dims[a] != 1 && strides[a] != 0)
      axes.push_back(a);
  return axes;
}

/// The dtype `op` accumulates in (Frame::acc).
static DType accDType(const Op &op) {
  const Attribute *attr = op.attrIfPresent("acc");
  DType basis = attr                        ? attr->get<DType>()
                : op.kind() == OpKind::TopK ? op.operand(0)->type().dtype
                                            : op.result()->type().dtype;
  if (basis == DType::F64)
    return DType::F64;
  return isFloat(basis) ? DType::F32 : DType::I64;
}

Frame::Frame(const Op &op, const std::string &entry) : b(k), op(op), acc(accDType(op)) {
  k.name = entry;
  k.maxThreads = unsigned(kBlock);
  Namer names;
  for (unsigned i = 0; i < op.numOperands(); ++i)
    args.push_back(
        {KernelArg::Kind::Input, names.fresh("in_", op.operand(i)->name()), i, 0, std::nullopt});
  for (unsigned i = 0; i < op.numResults(); ++i)
    args.push_back(
        {KernelArg::Kind::Output, names.fresh("out_", op.result(i)->name()), i, 0, std::nullopt});
  params = templates::declareParams(b, op, args);
}

ValueId Frame::loadAcc(unsigned i, ValueId at, const std::string &name) {
  DType t = op.operand(i)->type().dtype;
  ValueId x = b.load(in(i), at, 1, kir::storageType(t) == kir::computeType(t) ? name : "");
  return toAcc(t, x, name);
}

ValueId Frame::toAcc(DType t, ValueId x, const std::string &name) {
  ValueId v = b.widen(t, x, name);
  if (kir::computeType(t) == acc)
    return v;
  return b.math({OpKind::Cast, t, acc}, {v}, "");
}

ValueId Frame::fromAcc(ValueId v) {
  DType t = op.result()->type().dtype;
  if (kir::computeType(t) != acc)
    v = b.math({OpKind::Cast, acc, t}, {v}, "");
  return b.narrow(t, v);
}

void Frame::storeAcc(ValueId at, ValueId v) { b.store(out(), at, fromAcc(v)); }

std::vector<std::pair<unsigned, ValueId>> Frame::terms(const Sizes &dims, const Sizes &strides) {
  std::vector<std::pair<unsigned, ValueId>> terms;
  for (unsigned a : movingAxes(dims, strides))
    terms.push_back({a, index(strides[a])});
  return terms;
}

ValueId Frame::offsetOf(ValueId flat, const Sizes &dims, const Sizes &strides, ValueId base) {
  if (product(dims) == 1) // one element
    return base == kir::kNoValue ? index(0) : base;
  if (isRowMajor(dims, strides))
    return base == kir::kNoValue ? flat : b.add(base, flat);
  std::vector<unsigned> axes = movingAxes(dims, strides);
  auto strided = terms(dims, strides);
  auto coords = coordinates(b, flat, unsigned(dims.size()), {axes.begin(), axes.end()},
                            [&](unsigned a) { return index(dims[a]); });
  return stridedOffset(b, coords, strided, base);
}

Frame::Var Frame::var(ValueId init, const std::string &name) {
  ValueId slot = b.localArray(acc, 1, name);
  Var v{*this, slot, index(0)};
  v.set(init);
  return v;
}

void Frame::forEachElement(int64_t numel, const std::function<void(ValueId)> &body) {
  gridStrideLoop(b, index(numel), [&](ValueId i) {
    if (numel > 0) // else a coordinate would divide by a 0 extent
      body(i);
  });
}

void Frame::tileLoop(int64_t tiles, const std::function<void(ValueId)> &body) {
  ValueId first = b.special(kir::Special::CtaidX), step = b.special(kir::Special::NctaidX);
  b.forLoop(first, index(tiles), step, "tile", 0, body);
}

KirKernel Frame::finish(const std::string &note, int64_t blocks) {
  std::string types;
  for (const Value *v : op.operands())
    types += (types.empty() ? "" : ", ") + v->type().str();
  k.comment = {k.name + ": generic kernel for '" + std::string(op.name()) + "' (" + types + " -> " +
                   op.result()->type().str() + ")",
               note};
  LaunchConfig launch;
  launch.grid[0] = unsigned(std::clamp<int64_t>(blocks, 0, 0x7fffffff));
  launch.block[0] = unsigned(kBlock);
  return {std::move(k), std::move(args), launch, note};
}

std::optional<KirKernel> buildGeneric(const Op &op, const std::string &entry, Diagnostics &diags) {
  FUSEC_ASSERT(op.kind() != OpKind::Kernel, "kernel ops go to their template's builder");
  std::string quoted = "'" + std::string(op.name()) + "'";
  if (op.kind() == OpKind::Const) {
    diags.error(op.loc(), quoted + " has no generic kernel: constants are uploaded, not computed");
    return std::nullopt;
  }
  if (!op.hasStaticShapes()) {
    diags.error(op.loc(), quoted + " needs static shapes for its generic kernel");
    return std::nullopt;
  }
  switch (op.info().cls) {
  case OpClass::Pointwise:
    return buildElementwise(op, entry);
  case OpClass::Movement:
    return isTiledTranspose(op) ? buildTiledTranspose(op, entry) : buildElementwise(op, entry);
  case OpClass::Reduction:
    return buildReduction(op, entry);
  case OpClass::Normalization:
    return op.kind() == OpKind::BatchNorm ? buildElementwise(op, entry)
                                          : buildNormalization(op, entry);
  case OpClass::Contraction:
    return op.kind() == OpKind::Attention ? buildAttention(op, entry) : buildMatMul(op, entry);
  case OpClass::Window:
    return isDepthwise(op) ? buildDepthwise(op, entry) : buildWindow(op, entry);
  case OpClass::Scan:
    return op.kind() == OpKind::TopK ? buildTopK(op, entry) : buildScan(op, entry);
  case OpClass::Structure:
    break;
  }
  FUSEC_ASSERT(false, "structure ops have no generic kernel (refused above)");
}

} // namespace fusec::generic
