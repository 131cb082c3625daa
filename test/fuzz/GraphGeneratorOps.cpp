// The graph generator's recipes: for each op kind of ir/Ops.def, operands
// and attributes that make a valid op (docs/ir.md states each rule used
// here). A recipe picks its first operand among the graph's values (or makes
// a leaf), derives the others from it (a broadcasting partner, a weight
// whose inner dim agrees, a norm's parameters of the normalized dims) and
// hands the op to Generator::make, which keeps it only if its types infer
// both symbolically and concretely. Attribute values include the edges:
// negative axes, slices past either end, strides, groups, padding.
#include "ir/ShapeInference.h"
#include "test/fuzz/GeneratorState.h"

#include <limits>
#include <numeric>

namespace fusec::fuzz {

namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kSliceStarts[] = {0, 0, 1, 2, -1, -2, 5, kMin};
constexpr int64_t kSliceEnds[] = {kMax, kMax, 1, 2, 3, -1, -2, 100, 0};
constexpr int64_t kSliceSteps[] = {1, 1, 2, 3};
constexpr double kEpsilons[] = {1e-5, 1e-3, 0.5};
constexpr OpKind kChainOps[] = {OpKind::Relu, OpKind::Neg, OpKind::Tanh,
                                OpKind::Add,  OpKind::Mul, OpKind::Sigmoid};

/// What the op's row infers with: float-only math, comparisons (any dtype),
/// or arithmetic (numbers).
Want wantFor(OpKind kind) {
  InferFn infer = opInfo(kind).infer;
  if (infer == inferUnaryFloat || infer == inferGelu)
    return Want::Float;
  return infer == inferCompare ? Want::Any : Want::Numeric;
}

/// The symbolic and the concrete form of a picked shape (a reshape's or broadcast's target).
Shape symbolic(const ShapePick &s) {
  Shape out;
  for (const DimPick &d : s)
    out.push_back(d.dim);
  return out;
}

Shape concrete(const ShapePick &s) {
  Shape out;
  for (const DimPick &d : s)
    out.push_back(Dim::fixed(d.size));
  return out;
}

/// An axis of a rank-`rank` value, negative half the time.
int64_t axisOf(Generator &gen, size_t rank) {
  int64_t r = int64_t(rank);
  return gen.range(-r, r - 1);
}

} // namespace

bool Generator::addOp(OpKind kind) {
  switch (opInfo(kind).cls) {
  case OpClass::Pointwise:
    return addPointwise(kind);
  case OpClass::Reduction:
    return addReduction(kind);
  case OpClass::Normalization:
    return addNormalization(kind);
  case OpClass::Contraction:
    return addContraction(kind);
  case OpClass::Movement:
    return addMovement(kind);
  case OpClass::Window:
    return addWindow(kind);
  case OpClass::Scan:
    return addScan(kind);
  case OpClass::Structure:
    break;
  }
  if (kind == OpKind::Kernel)
    return addKernel();
  ShapePick shape = freshShape(0, 3);
  std::vector<int64_t> sizes;
  for (const DimPick &d : shape)
    sizes.push_back(d.size);
  return constant(anyDType(), sizes);
}

bool Generator::addPointwise(OpKind kind) {
  if (kind == OpKind::Cast)
    return make(kind, {operand(Want::Any)}, {{"to", anyDType()}});
  Item *a = operand(wantFor(kind));
  if (!a)
    return false;
  if (kind == OpKind::Where) {
    Item *b = partner(*a, a->dtype());
    return make(kind, {partner(*a, DType::Bool), a, b}, {});
  }
  if (opInfo(kind).maxOperands == 1) {
    AttrList attrs;
    if (kind == OpKind::Gelu && chance(50))
      attrs.push_back({"approximate", chance(50) ? "tanh" : "none"});
    return make(kind, {a}, std::move(attrs));
  }
  // An integer division by an input would fail at run time for its zeros.
  if (kind == OpKind::Div && isInteger(a->dtype()) && chance(80)) {
    std::vector<int64_t> sizes;
    for (const DimPick &d : partnerShape(*a))
      sizes.push_back(d.dim.isStatic() ? d.size : 1);
    return make(kind, {a, constant(a->dtype(), sizes, true)}, {});
  }
  Item *b = partner(*a, a->dtype());
  return chance(30) ? make(kind, {b, a}, {}) : make(kind, {a, b}, {});
}

bool Generator::addReduction(OpKind kind) {
  Item *x = operand(kind == OpKind::ReduceMean ? Want::Float : Want::Numeric);
  if (!x)
    return false;
  std::vector<int64_t> axes;
  for (size_t i = 0; i < x->rank(); ++i)
    if (chance(40))
      axes.push_back(chance(25) ? int64_t(i) - int64_t(x->rank()) : int64_t(i));
  if (chance(20))
    std::reverse(axes.begin(), axes.end());
  AttrList attrs;
  if (!axes.empty() || chance(50))
    attrs.push_back({"axes", axes});
  if (chance(40))
    attrs.push_back({"keepdims", chance(60)});
  return make(kind, {x}, std::move(attrs));
}

bool Generator::addNormalization(OpKind kind) {
  bool isBatchNorm = kind == OpKind::BatchNorm;
  Item *x = operand(Want::Float, isBatchNorm ? 2 : 1, 4);
  if (!x)
    return false;
  std::vector<Item *> operands{x};
  AttrList attrs;
  if (chance(50))
    attrs.push_back({"epsilon", oneOf(kEpsilons)});
  if (isBatchNorm) {
    size_t c = x->value->type().layout == Layout::NHWC ? 3 : 1;
    for (int i = 0; i < 4; ++i)
      operands.push_back(leaf(x->dtype(), {agreeingDim(x->dim(c), x->sizes[c])}));
    return make(kind, operands, std::move(attrs));
  }
  int64_t axis = axisOf(*this, x->rank());
  if (axis != -1 || chance(30))
    attrs.push_back({"axis", axis});
  if (kind == OpKind::Softmax)
    return make(kind, operands, std::move(attrs));
  ShapePick normalized;
  for (size_t i = size_t(axis < 0 ? axis + int64_t(x->rank()) : axis); i < x->rank(); ++i)
    normalized.push_back(agreeingDim(x->dim(i), x->sizes[i]));
  for (int64_t n = range(0, opInfo(kind).maxOperands - 1); n > 0; --n)
    operands.push_back(leaf(x->dtype(), normalized));
  return make(kind, operands, std::move(attrs));
}

ShapePick Generator::batchPartner(const Item &x, size_t lead) {
  ShapePick shape;
  for (size_t i = chance(30) ? size_t(range(0, int64_t(lead))) : 0; i < lead; ++i)
    shape.push_back(chance(25) ? DimPick{Dim::fixed(1), 1} : agreeingDim(x.dim(i), x.sizes[i]));
  return shape;
}

bool Generator::addContraction(OpKind kind) {
  Item *a = operand(kind == OpKind::Attention ? Want::Float : Want::Numeric,
                    kind == OpKind::Linear ? 1 : 2, 4);
  if (!a)
    return false;
  size_t r = a->rank();
  AttrList attrs;
  if (kind != OpKind::Attention && chance(15))
    attrs.push_back({"acc", chance(50) ? DType::F32 : a->dtype()});
  if (kind == OpKind::Linear) {
    DimPick out = freshDim();
    Item *w = leaf(a->dtype(), {out, agreeingDim(a->dim(r - 1), a->sizes[r - 1])});
    DimPick bias = agreeingDim(out.dim, out.size);
    if (chance(50))
      return make(kind, {a, w, leaf(a->dtype(), {bias})}, attrs);
    return make(kind, {a, w}, attrs);
  }
  if (kind == OpKind::MatMul) {
    bool ta = chance(30), tb = chance(30);
    size_t k = ta ? r - 2 : r - 1;
    DimPick inner = agreeingDim(a->dim(k), a->sizes[k]), n = freshDim();
    ShapePick b = batchPartner(*a, r - 2);
    b.push_back(tb ? n : inner);
    b.push_back(tb ? inner : n);
    if (ta || chance(10))
      attrs.push_back({"transpose_a", ta});
    if (tb || chance(10))
      attrs.push_back({"transpose_b", tb});
    return make(kind, {a, leaf(a->dtype(), b)}, std::move(attrs));
  }
  // attention(q, k, v, mask?): q [..., Sq, D], k [..., Sk, D], v [..., Sk, Dv]. Sometimes with
  // head dims the flash-attention template takes (f16/bf16, multiples of 8 from 32 to 256: powers
  // of two, panels, a k16 step half filled), so its plan and both schedules see odd lengths,
  // broadcasts and masks too.
  static constexpr int64_t kHeadDims[] = {32, 40, 64, 80, 128, 136, 256};
  bool heads = chance(25);
  if (heads) {
    ShapePick q = freshShape(1, 3); // batch dims, then Sq
    int64_t d = oneOf(kHeadDims);
    q.push_back({Dim::fixed(d), d});
    if (Item *fresh = viewedLeaf(chance(50) ? DType::F16 : DType::BF16, q)) {
      a = fresh;
      r = a->rank();
    }
  }
  int64_t headDv = oneOf(kHeadDims);
  DimPick sk = freshDim(), dv = heads ? DimPick{Dim::fixed(headDv), headDv} : freshDim();
  ShapePick k = batchPartner(*a, r - 2), v = batchPartner(*a, r - 2);
  k.push_back(sk);
  k.push_back(agreeingDim(a->dim(r - 1), a->sizes[r - 1]));
  v.push_back(agreeingDim(sk.dim, sk.size));
  v.push_back(dv);
  Item *key = heads ? viewedLeaf(a->dtype(), k) : leaf(a->dtype(), k);
  Item *value = heads ? viewedLeaf(a->dtype(), v) : leaf(a->dtype(), v);
  std::vector<Item *> operands{a, key, value};
  if (chance(40)) {
    ShapePick mask{chance(30) ? DimPick{Dim::fixed(1), 1}
                              : agreeingDim(a->dim(r - 2), a->sizes[r - 2]),
                   chance(30) ? DimPick{Dim::fixed(1), 1} : agreeingDim(sk.dim, sk.size)};
    operands.push_back(leaf(dtypeFor(Want::Float), mask));
  }
  if (chance(30))
    attrs.push_back({"causal", chance(70)});
  if (chance(30))
    attrs.push_back({"scale", oneOf(kEpsilons) * 4});
  Item *o = make(kind, operands, std::move(attrs));
  if (o && heads)
    mergeHeads(*o);
  return o;
}

Item *Generator::viewedLeaf(DType dtype, const ShapePick &shape) {
  size_t r = shape.size();
  Item *view = nullptr;
  switch (chance(40) ? range(0, 2) : -1) {
  case 0: { // a transpose, usually keeping the last axis
    std::vector<int64_t> perm(r);
    std::iota(perm.begin(), perm.end(), 0);
    size_t moving = chance(80) ? r - 1 : r;
    for (size_t i = moving; i > 1; --i)
      std::swap(perm[i - 1], perm[size_t(range(0, int64_t(i) - 1))]);
    ShapePick source(r, shape[0]);
    for (size_t i = 0; i < r; ++i)
      source[size_t(perm[i])] = shape[i];
    if (Item *x = leaf(dtype, source))
      view = make(OpKind::Transpose, {x}, {{"perm", perm}});
    break;
  }
  case 1: { // one of three stacked, the unit dim dropped
    ShapePick source = shape;
    source.insert(source.begin(), {Dim::fixed(3), 3});
    int64_t start = range(0, 2);
    Item *x = leaf(dtype, source);
    Item *one =
        x ? make(OpKind::Slice, {x}, {{"axis", int64_t(0)}, {"start", start}, {"end", start + 1}})
          : nullptr;
    if (one)
      view =
          make(OpKind::Reshape, {one}, {{"shape", symbolic(shape)}}, {{"shape", concrete(shape)}});
    break;
  }
  case 2: { // heads split from [..., S, H·D]: reshaped to [..., S, H, D], H and S swapped
    if (r < 3 || !shape[r - 3].dim.isStatic() || !shape[r - 1].dim.isStatic())
      break;
    ShapePick merged(shape.begin(), shape.end() - 3), split;
    int64_t width = shape[r - 3].size * shape[r - 1].size;
    merged.push_back(shape[r - 2]);
    split = merged;
    merged.push_back({Dim::fixed(width), width});
    split.push_back(shape[r - 3]);
    split.push_back(shape[r - 1]);
    std::vector<int64_t> perm(r);
    std::iota(perm.begin(), perm.end(), 0);
    std::swap(perm[r - 3], perm[r - 2]);
    Item *x = leaf(dtype, merged);
    Item *heads =
        x ? make(OpKind::Reshape, {x}, {{"shape", symbolic(split)}}, {{"shape", concrete(split)}})
          : nullptr;
    if (heads)
      view = make(OpKind::Transpose, {heads}, {{"perm", perm}});
    break;
  }
  default:
    break;
  }
  return view ? view : leaf(dtype, shape);
}

void Generator::mergeHeads(Item &o) {
  size_t r = o.rank();
  if (r < 3 || !chance(30))
    return;
  std::vector<int64_t> perm(r);
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[r - 3], perm[r - 2]);
  Item *t = make(OpKind::Transpose, {&o}, {{"perm", perm}});
  if (!t || !t->dim(r - 2).isStatic() || !t->dim(r - 1).isStatic() || chance(20))
    return;
  ShapePick merged;
  for (size_t i = 0; i + 2 < r; ++i)
    merged.push_back({t->dim(i), t->sizes[i]});
  int64_t width = t->sizes[r - 2] * t->sizes[r - 1];
  merged.push_back({Dim::fixed(width), width});
  make(OpKind::Reshape, {t}, {{"shape", symbolic(merged)}}, {{"shape", concrete(merged)}});
}

bool Generator::addMovement(OpKind kind) {
  bool needsAxis = kind == OpKind::Slice || kind == OpKind::Concat || kind == OpKind::Gather ||
                   kind == OpKind::GatherElements;
  Item *x = operand(Want::Any, needsAxis ? 1 : 0, 4);
  if (!x)
    return false;
  switch (kind) {
  case OpKind::Reshape:
    return addReshape(*x);
  case OpKind::Broadcast:
    return addBroadcast(*x);
  case OpKind::Slice:
    return addSlice(*x);
  case OpKind::Concat:
    return addConcat(*x, size_t(range(0, 3)));
  case OpKind::Gather:
    return addGather(*x);
  case OpKind::GatherElements:
    return addGatherElements(*x);
  default:
    break;
  }
  std::vector<int64_t> perm(x->rank());
  std::iota(perm.begin(), perm.end(), 0);
  for (size_t i = perm.size(); i > 1; --i)
    std::swap(perm[i - 1], perm[size_t(range(0, int64_t(i) - 1))]);
  return make(OpKind::Transpose, {x}, {{"perm", perm}});
}

// The target keeps x's named dims, splits its static product into factors,
// and gives one -1 to the product of its `?` dims (or to a static factor).
bool Generator::addReshape(Item &x) {
  ShapePick pieces;
  int64_t product = 1;
  bool anonymous = false;
  for (size_t i = 0; i < x.rank(); ++i) {
    if (x.dim(i).isStatic())
      product *= x.sizes[i];
    else if (x.dim(i).isAnonymous())
      anonymous = true;
    else
      pieces.push_back({x.dim(i), x.sizes[i]});
  }
  for (int64_t f : {2, 3, 5, 2})
    if (product % f == 0 && product > f && chance(50))
      pieces.push_back({Dim::fixed(f), f}), product /= f;
  pieces.push_back({Dim::fixed(product), product});
  if (anonymous)
    pieces.push_back({Dim::fixed(-1), -1});
  else if (chance(25))
    pieces.back() = {Dim::fixed(-1), -1};
  if (chance(20))
    pieces.push_back({Dim::fixed(1), 1});
  for (size_t i = pieces.size(); i > 1 && chance(50); --i)
    std::swap(pieces[i - 1], pieces[size_t(range(0, int64_t(i) - 1))]);
  return make(OpKind::Reshape, {&x}, {{"shape", symbolic(pieces)}}, {{"shape", concrete(pieces)}});
}

// A new target dim must be known when the graph runs: static, or named by
// an input (the reference binds names from the inputs only).
bool Generator::addBroadcast(Item &x) {
  ShapePick target;
  auto known = [&](DimPick d) {
    bool bound = !d.dim.isAnonymous() && boundNames.count(d.dim.symbol);
    return d.dim.isStatic() || bound ? d : DimPick{Dim::fixed(d.size), d.size};
  };
  if (chance(30))
    target.push_back(known(freshDim()));
  for (size_t i = 0; i < x.rank(); ++i) {
    // `?` keeps the operand's dim, whatever it is (1 included).
    DimPick same{chance(15) ? Dim::anonymous() : x.dim(i), x.sizes[i]};
    target.push_back(x.dim(i).isStaticValue(1) && chance(40) ? known(freshDim()) : same);
  }
  return make(OpKind::Broadcast, {&x}, {{"shape", symbolic(target)}},
              {{"shape", concrete(target)}});
}

bool Generator::addSlice(Item &x) {
  AttrList attrs{{"axis", axisOf(*this, x.rank())},
                 {"start", oneOf(kSliceStarts)},
                 {"end", oneOf(kSliceEnds)}};
  int64_t step = oneOf(kSliceSteps);
  if (step != 1 || chance(20))
    attrs.push_back({"step", step});
  return make(OpKind::Slice, {&x}, std::move(attrs));
}

bool Generator::addConcat(Item &x, size_t extra) {
  int64_t axis = axisOf(*this, x.rank());
  size_t a = size_t(axis < 0 ? axis + int64_t(x.rank()) : axis);
  std::vector<Item *> operands{&x};
  for (size_t n = 0; n < extra; ++n) {
    if (chance(30)) {
      operands.push_back(&x);
      continue;
    }
    ShapePick shape;
    for (size_t i = 0; i < x.rank(); ++i)
      shape.push_back(i == a && chance(60) ? freshDim() : agreeingDim(x.dim(i), x.sizes[i]));
    operands.push_back(leaf(x.dtype(), shape));
  }
  return make(OpKind::Concat, operands, {{"axis", axis}});
}

// Indices of rank 0 to 2, in range for the axis's concrete extent (negative ones included).
bool Generator::addGather(Item &x) {
  int64_t axis = axisOf(*this, x.rank());
  size_t a = size_t(axis < 0 ? axis + int64_t(x.rank()) : axis);
  std::vector<int64_t> sizes(size_t(range(0, 2)));
  for (int64_t &s : sizes)
    s = range(1, 4);
  Item *indices = indexConstant(chance(50) ? DType::I32 : DType::I64, sizes, x.sizes[a]);
  return indices && make(OpKind::Gather, {&x, indices}, {{"axis", axis}});
}

// Indices of x's rank, no longer than x along the other axes (at most 3 along the axis), in
// range for the axis's concrete extent.
bool Generator::addGatherElements(Item &x) {
  int64_t axis = axisOf(*this, x.rank());
  size_t a = size_t(axis < 0 ? axis + int64_t(x.rank()) : axis);
  std::vector<int64_t> sizes(x.rank());
  for (size_t i = 0; i < x.rank(); ++i)
    sizes[i] = i == a ? range(1, 3) : x.sizes[i] > 0 ? range(1, x.sizes[i]) : 0;
  Item *indices = indexConstant(chance(50) ? DType::I32 : DType::I64, sizes, x.sizes[a]);
  return indices && make(OpKind::GatherElements, {&x, indices}, {{"axis", axis}});
}

bool Generator::addScan(OpKind kind) {
  Item *x = operand(Want::Numeric, 1, 4);
  if (!x)
    return false;
  int64_t axis = axisOf(*this, x->rank());
  AttrList attrs{{"axis", axis}};
  if (kind == OpKind::TopK) {
    // k within the axis's concrete extent (which a static dim equals).
    int64_t extent = x->sizes[size_t(axis < 0 ? axis + int64_t(x->rank()) : axis)];
    if (extent < 1)
      return false;
    attrs.push_back({"k", range(1, std::min<int64_t>(extent, 4))});
    if (chance(50))
      attrs.push_back({"largest", chance(50)});
    return make(kind, {x}, std::move(attrs));
  }
  if (chance(40))
    attrs.push_back({"exclusive", chance(50)});
  if (chance(40))
    attrs.push_back({"reverse", chance(50)});
  return make(kind, {x}, std::move(attrs));
}

bool Generator::addWindow(OpKind kind) {
  Item *x = operand(kind == OpKind::AvgPool2d ? Want::Float : Want::Numeric, 4, 4);
  if (!x)
    return false;
  if (kind == OpKind::Conv2d)
    return addConv(*x);
  std::vector<int64_t> window{range(1, 3), range(1, 3)};
  AttrList attrs{{"kernel", window}};
  if (chance(50))
    attrs.push_back({"strides", std::vector<int64_t>{range(1, 3), range(1, 2)}});
  if (chance(40))
    attrs.push_back(
        {"pads", std::vector<int64_t>{range(0, window[0] - 1), range(0, window[1] - 1),
                                      range(0, window[0] - 1), range(0, window[1] - 1)}});
  if (kind == OpKind::AvgPool2d && chance(40))
    attrs.push_back({"count_include_pad", chance(50)});
  return make(kind, {x}, std::move(attrs));
}

bool Generator::addConv(Item &x) {
  bool nhwc = x.value->type().layout == Layout::NHWC;
  size_t c = nhwc ? 3 : 1;
  int64_t channels = x.sizes[c], groups = 1;
  if (x.dim(c).isStatic() && channels > 1 && chance(30))
    for (int64_t g : {channels, int64_t(2), int64_t(3)})
      if (channels % g == 0 && chance(50))
        groups = g;
  DimPick out{Dim::fixed(groups * range(1, 3)), 0}, kh{Dim::fixed(range(1, 3)), 0};
  DimPick kw{Dim::fixed(range(1, 3)), 0};
  out.size = out.dim.size, kh.size = kh.dim.size, kw.size = kw.dim.size;
  DimPick perGroup = groups == 1 ? agreeingDim(x.dim(c), channels)
                                 : DimPick{Dim::fixed(channels / groups), channels / groups};
  ShapePick w = nhwc ? ShapePick{out, kh, kw, perGroup} : ShapePick{out, perGroup, kh, kw};
  AttrList attrs;
  if (groups > 1 || chance(10))
    attrs.push_back({"groups", groups});
  if (chance(40))
    attrs.push_back({"strides", std::vector<int64_t>{range(1, 2), range(1, 3)}});
  if (chance(40))
    attrs.push_back(
        {"pads", std::vector<int64_t>{range(0, 2), range(0, 1), range(0, 1), range(0, 2)}});
  if (chance(30))
    attrs.push_back({"dilations", std::vector<int64_t>{range(1, 2), range(1, 2)}});
  if (chance(15))
    attrs.push_back({"acc", chance(50) ? DType::F32 : x.dtype()});
  std::vector<Item *> operands{&x, leaf(x.dtype(), w)};
  if (chance(50))
    operands.push_back(leaf(x.dtype(), {out}));
  return make(OpKind::Conv2d, operands, std::move(attrs));
}

// A chain of pointwise ops over one [?, 8] input, some of them joining an
// earlier value (diamonds): one kernel after fusion, thousands of ops before.
void Generator::addBigChain(size_t length) {
  plainNames = true;
  Item *x = leaf(DType::F32, {{Dim::anonymous(), anonSize}, {Dim::fixed(8), 8}});
  std::vector<Item *> chain{x};
  for (size_t i = 0; i < length && x; ++i) {
    OpKind kind = oneOf(kChainOps);
    Item *other = chance(10) ? oneOf(chain) : x;
    Item *y = opInfo(kind).maxOperands == 1 ? make(kind, {x}, {}) : make(kind, {x, other}, {});
    x = y ? y : x;
    chain.push_back(x);
  }
}

// One concat of thousands of small inputs: as many kernel parameters.
void Generator::addBigConcat(size_t operands) {
  plainNames = true;
  std::vector<Item *> parts;
  for (size_t i = 0; i < operands; ++i)
    parts.push_back(leaf(DType::F32, {{Dim::fixed(1), 1}, {Dim::fixed(2), 2}}));
  make(OpKind::Concat, parts, {{"axis", 0}});
}

} // namespace fusec::fuzz
