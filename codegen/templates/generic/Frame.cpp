// What every generic kernel is built with (GenericKernel.h): static sizes
// and strides, the accumulator dtype, the group layout of reductions, and
// the frame (parameters, accumulator math in kir, group reductions through
// shared memory, the launch).
#include "codegen/templates/Index.h"
#include "codegen/templates/generic/Kernel.h"
#include "ir/Assert.h"

#include <algorithm>
#include <cmath>

namespace fusec::generic {

Sizes sizesOf(const Value &v) {
  Sizes sizes;
  for (const Dim &d : v.type().shape) {
    FUSEC_ASSERT(d.isStatic(), "the generic kernels need static shapes");
    sizes.push_back(d.size);
  }
  return sizes;
}

int64_t product(const Sizes &sizes, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t k = begin; k < std::min(end, sizes.size()); ++k)
    n *= sizes[k];
  return n;
}

Sizes contiguousStrides(const Sizes &shape) {
  Sizes strides(shape.size());
  int64_t s = 1;
  for (size_t k = shape.size(); k-- > 0; s *= shape[k])
    strides[k] = s;
  return strides;
}

Sizes broadcastStrides(const Sizes &shape, const Sizes &target) {
  FUSEC_ASSERT(shape.size() <= target.size(), "broadcast to a lower rank");
  Sizes own = contiguousStrides(shape), strides(target.size(), 0);
  size_t lead = target.size() - shape.size();
  for (size_t k = 0; k < shape.size(); ++k)
    strides[lead + k] = shape[k] == 1 ? 0 : own[k];
  return strides;
}

DType accDType(DType t, std::optional<DType> acc) {
  DType basis = acc.value_or(t);
  if (basis == DType::F64)
    return DType::F64;
  return isFloat(basis) ? DType::F32 : DType::I64;
}

std::optional<DType> accAttr(const Op &op) {
  const Attribute *acc = op.attrIfPresent("acc");
  return acc ? std::optional<DType>(acc->get<DType>()) : std::nullopt;
}

namespace {

/// The smallest power of two >= n, clamped to [lo, hi] (powers of two).
int64_t pow2Clamp(int64_t n, int64_t lo, int64_t hi) {
  int64_t p = lo;
  while (p < n && p < hi)
    p *= 2;
  return p;
}

} // namespace

GroupLayout GroupLayout::choose(int64_t lines, int64_t length, bool elementsContiguous) {
  int64_t lanes = pow2Clamp(length, 1, kBlock);
  if (!elementsContiguous)
    lanes = std::min(lanes, kBlock / pow2Clamp(lines, 1, 32));
  return {kBlock / lanes, lanes, elementsContiguous};
}

Frame::Frame(const Op &op, const std::string &entry, DType acc) : b(k), op(op), acc(acc) {
  k.name = entry;
  k.maxThreads = unsigned(kBlock);
  Namer names;
  for (unsigned i = 0; i < op.numOperands(); ++i) {
    const Value *v = op.operand(i);
    std::string name = names.fresh("in_", v->name());
    kir::Type type = kir::Type::pointer(kir::storageType(v->type().dtype), kir::Space::Global);
    inputs.push_back(b.param(name, type, true));
    args.push_back({KernelArg::Kind::Input, name, i, 0, std::nullopt});
  }
  for (unsigned i = 0; i < op.numResults(); ++i) {
    const Value *v = op.result(i);
    std::string name = names.fresh("out_", v->name());
    kir::Type type = kir::Type::pointer(kir::storageType(v->type().dtype), kir::Space::Global);
    ValueId p = b.param(name, type);
    if (i == 0)
      output = p;
    args.push_back({KernelArg::Kind::Output, name, i, 0, std::nullopt});
  }
}

ValueId Frame::load(unsigned i, ValueId at, const std::string &name) {
  DType t = op.operand(i)->type().dtype;
  ValueId x = b.load(inputs[i], at, 1, kir::storageType(t) == kir::computeType(t) ? name : "");
  return b.widen(t, x, name);
}

ValueId Frame::loadAcc(unsigned i, ValueId at, const std::string &name) {
  return toAcc(op.operand(i)->type().dtype, load(i, at, name));
}

ValueId Frame::toAcc(DType t, ValueId v) {
  if (kir::computeType(t) == acc)
    return v;
  return b.math({OpKind::Cast, t, acc}, {v}, "");
}

void Frame::storeAcc(ValueId at, ValueId v) {
  DType t = op.result()->type().dtype;
  if (kir::computeType(t) != acc)
    v = b.math({OpKind::Cast, acc, t}, {v}, "");
  ValueId stored = b.narrow(t, v);
  b.store(output, at, stored);
}

ValueId Frame::constant(double v, const std::string &name) { return b.literal(acc, v, name); }

ValueId Frame::lowest() { return constant(-HUGE_VAL, "lowest"); }

ValueId Frame::math(OpKind kind, std::vector<ValueId> args, const std::string &name) {
  return b.math({kind, acc, acc}, args, name);
}

ValueId Frame::compare(OpKind kind, ValueId a, ValueId c) {
  return b.math({kind, acc, DType::Bool}, {a, c}, "");
}

ValueId Frame::offsetOf(ValueId flat, const Sizes &dims, const Sizes &strides, ValueId base) {
  Sizes own = contiguousStrides(dims);
  bool rowMajor = true, single = true; // the element at the flat index itself; one element
  for (unsigned a = 0; a < dims.size(); ++a) {
    rowMajor = rowMajor && (dims[a] == 1 || strides[a] == own[a]);
    single = single && dims[a] == 1;
  }
  if (single)
    return base == kir::kNoValue ? index(0) : base;
  if (rowMajor)
    return base == kir::kNoValue ? flat : b.add(base, flat);
  std::set<unsigned> needed;
  std::vector<std::pair<unsigned, ValueId>> terms;
  for (unsigned a = 0; a < dims.size(); ++a) {
    if (dims[a] == 1 || strides[a] == 0)
      continue;
    needed.insert(a);
    terms.push_back({a, index(strides[a])});
  }
  auto coords = coordinates(b, flat, unsigned(dims.size()), needed,
                            [&](unsigned a) { return index(dims[a]); });
  return stridedOffset(b, coords, terms, base);
}

Frame::Var Frame::var(ValueId init, const std::string &name) {
  Var v{*this, b.localArray(acc, 1, name)};
  v.set(init);
  return v;
}

std::pair<ValueId, ValueId> Frame::groupAndLane(const GroupLayout &layout) {
  ValueId tid = b.special(kir::Special::TidX);
  ValueId inner = index(layout.lanesInner ? layout.lanes : layout.groups);
  ValueId first = b.arith(kir::IndexOp::Div, tid, inner, layout.lanesInner ? "group" : "lane");
  ValueId second = b.arith(kir::IndexOp::Rem, tid, inner, layout.lanesInner ? "lane" : "group");
  return layout.lanesInner ? std::pair(first, second) : std::pair(second, first);
}

ValueId Frame::groupReduce(ValueId v, OpKind kind, const GroupLayout &layout, ValueId group,
                           ValueId lane) {
  FUSEC_ASSERT(scratch != kir::kNoValue, "a group reduction needs scratchArray() first");
  ValueId laneStride = index(layout.lanesInner ? 1 : layout.groups);
  ValueId mine = layout.lanesInner ? b.mul(group, index(layout.lanes), "mine") : group;
  ValueId at = b.add(mine, b.mul(lane, laneStride), "at");
  b.store(scratch, at, v);
  b.barrier();
  for (int64_t half = layout.lanes / 2; half > 0; half /= 2) {
    b.ifThenElse(b.less(lane, index(half)), [&] {
      ValueId partner = b.add(at, index(half * (layout.lanesInner ? 1 : layout.groups)));
      ValueId left = b.load(scratch, at, 1, "left");
      ValueId right = b.load(scratch, partner, 1, "right");
      ValueId both = math(kind, {left, right});
      b.store(scratch, at, both);
    });
    b.barrier();
  }
  ValueId total = b.load(scratch, mine, 1, "total");
  b.barrier();
  return total;
}

void Frame::scratchArray() { scratch = b.sharedArray(acc, unsigned(kBlock), "red"); }

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

} // namespace fusec::generic
