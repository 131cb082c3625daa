// Pointwise math, comparisons, logic and reductions. Ops fusec has become
// that op; the others are spelled in fusec's ops exactly as ONNX defines
// them (Reciprocal = 1 / x, Softplus = log(exp(x) + 1), LeakyRelu = x < 0 ?
// alpha * x : x, ...), which the fusion pass then fuses like any pointwise
// chain. Integer arithmetic on values known at import (Note [Values known at
// import]) is evaluated here, so that shape computations leave no ops.
#include "frontend/onnx/Ops.h"
#include "ir/Assert.h"
#include "ir/Numerics.h"

#include <cmath>

namespace fusec::onnximport {

namespace {

using KindRow = std::pair<std::string_view, OpKind>;

/// The fusec op an ONNX op type maps to in `table`.
template <size_t N> OpKind kindOf(const KindRow (&table)[N], std::string_view op) {
  for (const auto &[name, kind] : table)
    if (name == op)
      return kind;
  FUSEC_ASSERT(false, "an op type the op table sent to the wrong handler");
}

constexpr KindRow kUnary[] = {
    {"Abs", OpKind::Abs},         {"Erf", OpKind::Erf},     {"Exp", OpKind::Exp},
    {"Log", OpKind::Log},         {"Neg", OpKind::Neg},     {"Relu", OpKind::Relu},
    {"Sigmoid", OpKind::Sigmoid}, {"Sqrt", OpKind::Sqrt},   {"Tanh", OpKind::Tanh},
    {"Sin", OpKind::Sin},         {"Cos", OpKind::Cos},     {"Floor", OpKind::Floor},
    {"Ceil", OpKind::Ceil},       {"Round", OpKind::Round}, {"Sign", OpKind::Sign},
};

constexpr KindRow kBinary[] = {
    {"Add", OpKind::Add},           {"Sub", OpKind::Sub},        {"Mul", OpKind::Mul},
    {"Div", OpKind::Div},           {"Pow", OpKind::Pow},        {"Equal", OpKind::Eq},
    {"Less", OpKind::Lt},           {"LessOrEqual", OpKind::Le}, {"Greater", OpKind::Gt},
    {"GreaterOrEqual", OpKind::Ge}, {"Max", OpKind::Max},        {"Min", OpKind::Min},
    {"Sum", OpKind::Add},           {"Mean", OpKind::Add},
};

/// `kind` on two known integers; unknown where the importer cannot tell
/// (arithmetic on symbolic sizes other than products, and comparisons
/// whose answer depends on the sizes).
SymInt foldInts(OpKind kind, const SymInt &a, const SymInt &b) {
  if (a.isStatic() && b.isStatic()) {
    int64_t x = a.factor, y = b.factor, r = 0;
    bool overflow = false;
    switch (kind) {
    case OpKind::Add:
      overflow = __builtin_add_overflow(x, y, &r);
      break;
    case OpKind::Sub:
      overflow = __builtin_sub_overflow(x, y, &r);
      break;
    case OpKind::Mul:
      overflow = __builtin_mul_overflow(x, y, &r);
      break;
    case OpKind::Div:
      if (y == 0 || (x == std::numeric_limits<int64_t>::min() && y == -1))
        return SymInt::unknownValue();
      r = x / y;
      break;
    case OpKind::Max:
      r = std::max(x, y);
      break;
    case OpKind::Min:
      r = std::min(x, y);
      break;
    case OpKind::Eq:
      r = x == y;
      break;
    case OpKind::Lt:
      r = x < y;
      break;
    case OpKind::Le:
      r = x <= y;
      break;
    case OpKind::Gt:
      r = x > y;
      break;
    case OpKind::Ge:
      r = x >= y;
      break;
    default:
      return SymInt::unknownValue();
    }
    return overflow ? SymInt::unknownValue() : SymInt::of(r);
  }
  if (a.unknown || b.unknown)
    return SymInt::unknownValue();
  switch (kind) {
  case OpKind::Mul:
    return a * b;
  case OpKind::Add:
  case OpKind::Sub:
    if (b.isStatic() && b.factor == 0)
      return a;
    if (kind == OpKind::Add && a.isStatic() && a.factor == 0)
      return b;
    return SymInt::unknownValue();
  case OpKind::Div:
    if (b.isStatic() && b.factor != 0 && a.factor % b.factor == 0)
      return SymInt{a.factor / b.factor, a.names, false};
    if (a == b)
      return SymInt::of(1);
    return SymInt::unknownValue();
  case OpKind::Eq:
    // A size is never negative: a symbolic size differs from every negative
    // constant (the -1 that exporters compare shapes against).
    if (a == b)
      return SymInt::of(1);
    if ((a.isStatic() && a.factor < 0) || (b.isStatic() && b.factor < 0))
      return SymInt::of(0);
    return SymInt::unknownValue();
  default:
    return SymInt::unknownValue();
  }
}

/// Folds `kind` over two known integer lists with numpy broadcasting (a
/// scalar or a one-element list against a list); false when the inputs are
/// not both known.
bool foldKnown(NodeImport &n, OpKind kind, unsigned i, unsigned j) {
  const auto &a = n.knownInts(i), &b = n.knownInts(j);
  if (!a || !b || !isInteger(n.type(i).dtype) || n.type(i).dtype != n.type(j).dtype)
    return false;
  size_t len = std::max(a->size(), b->size());
  if ((a->size() != len && a->size() != 1) || (b->size() != len && b->size() != 1))
    return false;
  std::vector<SymInt> out;
  for (size_t k = 0; k < len; ++k)
    out.push_back(foldInts(kind, (*a)[a->size() == 1 ? 0 : k], (*b)[b->size() == 1 ? 0 : k]));
  bool compare = kind == OpKind::Eq || kind == OpKind::Lt || kind == OpKind::Le ||
                 kind == OpKind::Gt || kind == OpKind::Ge;
  bool scalar = n.type(i).rank() == 0 && n.type(j).rank() == 0;
  return n.setInts(0, std::move(out), compare ? DType::Bool : n.type(i).dtype, scalar);
}

} // namespace

bool importUnary(NodeImport &n) {
  OpKind kind = kindOf(kUnary, n.node.op_type());
  if (const auto &ints = n.knownInts(0); ints && (kind == OpKind::Neg || kind == OpKind::Abs)) {
    std::vector<SymInt> out;
    for (const SymInt &v : *ints) {
      if (kind == OpKind::Abs && v.isStatic())
        out.push_back(SymInt::of(v.factor < 0 ? -v.factor : v.factor));
      else if (kind == OpKind::Abs)
        out.push_back(v); // a size is never negative
      else
        out.push_back(v * SymInt::of(-1));
    }
    return n.setInts(0, std::move(out), n.type(0).dtype, n.type(0).rank() == 0);
  }
  return n.set(0, n.b.create(kind, {n.input(0)}));
}

bool importBinary(NodeImport &n) {
  OpKind kind = kindOf(kBinary, n.node.op_type());
  if (foldKnown(n, kind, 0, 1))
    return true;
  Value *a = n.input(0), *b = n.input(1);
  if (!a || !b)
    return false;
  // Pow's exponent may have a type of its own; fusec's pow takes the base's.
  if (kind == OpKind::Pow && b->type().dtype != a->type().dtype)
    b = n.b.cast(b, a->type().dtype);
  return n.set(0, n.b.create(kind, {a, b}));
}

bool importVariadic(NodeImport &n) {
  OpKind kind = kindOf(kBinary, n.node.op_type());
  Value *acc = n.input(0);
  for (unsigned i = 1; acc && i < n.numInputs(); ++i) {
    Value *next = n.input(i);
    acc = next ? n.b.create(kind, {acc, next}) : nullptr;
  }
  if (acc && n.node.op_type() == "Mean") {
    Value *count = scalarLike(n, acc, double(n.numInputs()));
    acc = n.b.div(acc, count);
  }
  return n.set(0, acc);
}

bool importReciprocal(NodeImport &n) {
  Value *x = n.input(0);
  Value *one = scalarLike(n, x, 1.0);
  return n.set(0, n.b.div(one, x));
}

bool importNot(NodeImport &n) {
  Value *x = n.input(0);
  Value *no = scalarLike(n, x, 0.0);
  return n.set(0, n.b.create(OpKind::Eq, {x, no}));
}

bool importLogic(NodeImport &n) {
  Value *a = n.input(0), *b = n.input(1);
  if (!a || !b)
    return false;
  const std::string &op = n.node.op_type();
  if (op == "Xor")
    return n.set(0, n.b.create(OpKind::Ne, {a, b}));
  // And = a ? b : false; Or = a ? true : b.
  Value *constant = scalarLike(n, a, op == "Or" ? 1.0 : 0.0);
  return n.set(0, op == "And" ? n.b.create(OpKind::Where, {a, b, constant})
                              : n.b.create(OpKind::Where, {a, constant, b}));
}

bool importWhere(NodeImport &n) {
  const auto &c = n.knownInts(0), &x = n.knownInts(1), &y = n.knownInts(2);
  if (c && x && y && n.type(1).dtype == n.type(2).dtype) {
    size_t len = std::max({c->size(), x->size(), y->size()});
    auto at = [&](const std::vector<SymInt> &v, size_t k) { return v[v.size() == 1 ? 0 : k]; };
    bool foldable = true;
    std::vector<SymInt> out;
    for (size_t k = 0; k < len && foldable; ++k) {
      for (const auto *v : {&*c, &*x, &*y})
        foldable &= v->size() == len || v->size() == 1;
      if (!foldable || !at(*c, k).isStatic()) {
        foldable = false;
        break;
      }
      out.push_back(at(*c, k).factor ? at(*x, k) : at(*y, k));
    }
    if (foldable)
      return n.setInts(0, std::move(out), n.type(1).dtype, n.type(1).rank() == 0);
  }
  return n.set(0, n.b.create(OpKind::Where, {n.input(0), n.input(1), n.input(2)}));
}

bool importCast(NodeImport &n) {
  std::optional<DType> to;
  if (n.node.op_type() == "CastLike") {
    to = n.type(1).dtype;
  } else {
    int64_t elem = n.attrInt("to", 0);
    to = dtypeOf(int32_t(elem));
    if (!to)
      return n.fail("casting to " + elemTypeName(int32_t(elem)) + " is not supported");
  }
  if (const auto &ints = n.knownInts(0); ints && (isInteger(*to) || *to == DType::Bool)) {
    std::vector<SymInt> out = *ints;
    if (*to == DType::Bool)
      for (SymInt &v : out)
        v = v.isStatic() ? SymInt::of(v.factor != 0) : SymInt::unknownValue();
    return n.setInts(0, std::move(out), *to, n.type(0).rank() == 0);
  }
  if (const auto &ints = n.knownInts(0); ints && isFloat(*to)) {
    // Known integers as floats (a window's size cast for Range) stay known.
    std::vector<double> values;
    for (const SymInt &v : *ints)
      if (v.isStatic())
        values.push_back(double(v.factor));
    if (values.size() == ints->size()) {
      std::vector<int64_t> shape;
      if (n.type(0).rank() == 1)
        shape.push_back(int64_t(values.size()));
      std::vector<uint8_t> bytes(values.size() * dtypeSize(*to));
      for (size_t i = 0; i < values.size(); ++i)
        storeElement(*to, values[i], bytes.data() + i * dtypeSize(*to));
      return n.setData(0, DenseData(*to, std::move(shape), std::move(bytes)));
    }
  }
  if (n.type(0).dtype == *to)
    return n.alias(0, 0);
  return n.set(0, n.b.cast(n.input(0), *to));
}

bool importClip(NodeImport &n) {
  Value *x = n.input(0);
  if (!x)
    return false;
  std::optional<Value *> lo, hi;
  if (n.opset < 11) {
    if (n.hasAttr("min"))
      lo = scalarLike(n, x, n.attrFloat("min", 0));
    if (n.hasAttr("max"))
      hi = scalarLike(n, x, n.attrFloat("max", 0));
  } else {
    if (n.has(1))
      lo = n.input(1);
    if (n.has(2))
      hi = n.input(2);
  }
  if (lo)
    x = n.b.max(x, *lo);
  if (hi)
    x = n.b.min(x, *hi);
  if (!lo && !hi)
    return n.alias(0, 0);
  return n.set(0, x);
}

bool importActivation(NodeImport &n) {
  Value *x = n.input(0);
  if (!x)
    return false;
  const std::string &op = n.node.op_type();
  auto c = [&](double v) { return scalarLike(n, x, v); };
  if (op == "Softplus") {
    Value *e = n.b.exp(x);
    return n.set(0, n.b.create(OpKind::Log, {n.b.add(e, c(1.0))}));
  }
  if (op == "HardSigmoid" || op == "HardSwish") {
    double alpha = op == "HardSwish" ? 1.0 / 6 : n.attrFloat("alpha", 0.2);
    double beta = op == "HardSwish" ? 0.5 : n.attrFloat("beta", 0.5);
    Value *scaled = n.b.mul(x, c(alpha));
    Value *shifted = n.b.add(scaled, c(beta));
    Value *upper = n.b.min(shifted, c(1.0));
    Value *h = n.b.max(upper, c(0.0));
    return n.set(0, op == "HardSwish" ? n.b.mul(x, h) : h);
  }
  // LeakyRelu and Elu: x < 0 ? f(x) : x.
  Value *negative = n.b.create(OpKind::Lt, {x, c(0.0)});
  Value *f;
  if (op == "LeakyRelu") {
    f = n.b.mul(x, c(n.attrFloat("alpha", 0.01)));
  } else { // Elu
    Value *e = n.b.exp(x);
    Value *em1 = n.b.sub(e, c(1.0));
    f = n.b.mul(em1, c(n.attrFloat("alpha", 1.0)));
  }
  return n.set(0, n.b.create(OpKind::Where, {negative, f, x}));
}

bool importIdentity(NodeImport &n) {
  // Identity, and Dropout at inference: the input itself (a term known at
  // import stays known).
  if (n.node.op_type() == "Dropout" && n.opset >= 12 && n.has(2)) {
    std::optional<std::vector<int64_t>> training = n.staticInts(2, "training_mode");
    if (!training)
      return false;
    // Training with a ratio of 0 drops nothing: the input, as at inference.
    std::optional<std::vector<double>> ratio =
        n.has(1) ? n.staticFloats(1, "ratio") : std::vector<double>{0.5};
    if (!ratio)
      return false;
    if (!training->empty() && (*training)[0] != 0 && (ratio->size() != 1 || (*ratio)[0] != 0))
      return n.fail("training mode is not supported (fusec compiles inference)");
  }
  if (n.wants(1)) { // Dropout's mask: every element kept
    Value *yes = n.b.scalar(DType::Bool, 1.0);
    if (!n.set(1, n.b.create(OpKind::Broadcast, {yes}, {{"shape", n.type(0).shape}})))
      return false;
  }
  return n.alias(0, 0);
}

bool importCumSum(NodeImport &n) {
  std::optional<int64_t> axis = staticInt(n, 1, "axis");
  if (!axis)
    return false;
  std::optional<unsigned> a = axisOf(n, *axis, n.type(0).rank());
  if (!a)
    return false;
  return n.set(0, n.b.create(OpKind::CumSum, {n.input(0)},
                             {{"axis", int64_t(*a)},
                              {"exclusive", n.attrInt("exclusive", 0) != 0},
                              {"reverse", n.attrInt("reverse", 0) != 0}}));
}

bool importReduce(NodeImport &n) {
  const std::string &op = n.node.op_type();
  // ReduceSum took its axes as an input from opset 13; the others from 18.
  std::optional<std::vector<int64_t>> axes = axesOf(n, op == "ReduceSum" ? 13 : 18);
  if (!axes)
    return false;
  bool keep = n.attrInt("keepdims", 1) != 0;
  if (const auto &ints = n.knownInts(0); op == "ReduceProd" && ints) {
    // A shape's element count stays a value known at import.
    SymInt p = SymInt::of(1);
    for (const SymInt &v : *ints)
      p = p * v;
    return n.setInts(0, {p}, n.type(0).dtype, !keep);
  }
  Value *x = n.input(0);
  if (!x)
    return false;
  if (axes->empty() && n.attrInt("noop_with_empty_axes", 0))
    return n.set(0, n.b.reshape(x, x->type().shape));
  auto reduce = [&](OpKind kind, Value *v, bool keepDims) {
    return n.b.create(kind, {v}, {{"axes", *axes}, {"keepdims", keepDims}});
  };
  if (op == "ReduceSum")
    return n.set(0, reduce(OpKind::ReduceSum, x, keep));
  if (op == "ReduceMean")
    return n.set(0, reduce(OpKind::ReduceMean, x, keep));
  if (op == "ReduceMax")
    return n.set(0, reduce(OpKind::ReduceMax, x, keep));
  if (op == "ReduceMin")
    return n.set(0, reduce(OpKind::ReduceMin, x, keep));
  if (op == "ReduceProd")
    return n.set(0, reduce(OpKind::ReduceProd, x, keep));
  if (op == "ReduceL1")
    return n.set(0, reduce(OpKind::ReduceSum, n.b.create(OpKind::Abs, {x}), keep));
  if (op == "ReduceSumSquare" || op == "ReduceL2") {
    Value *sum = reduce(OpKind::ReduceSum, n.b.mul(x, x), keep);
    return n.set(0, op == "ReduceL2" ? n.b.sqrt(sum) : sum);
  }
  // ReduceLogSumExp, stable: m + log(sum(exp(x - m))) with m the max.
  Value *m = reduce(OpKind::ReduceMax, x, true);
  Value *shifted = n.b.sub(x, m);
  Value *sum = reduce(OpKind::ReduceSum, n.b.exp(shifted), true);
  Value *lse = n.b.add(n.b.create(OpKind::Log, {sum}), m);
  if (!keep && lse) {
    Value *r = reduce(OpKind::ReduceMax, lse, false); // drops the kept axes
    return n.set(0, r);
  }
  return n.set(0, lse);
}

bool importTopK(NodeImport &n) {
  Value *x = n.input(0);
  if (!x)
    return false;
  std::optional<int64_t> k = n.opset < 10 ? n.attrInt("k", -1) : staticInt(n, 1, "K");
  if (!k)
    return false;
  std::optional<unsigned> axis = axisOf(n, n.attrInt("axis", -1), x->type().rank());
  if (!axis)
    return false;
  // sorted = 0 lets the order be any; fusec's is always sorted.
  Value *indices =
      n.b.create(OpKind::TopK, {x},
                 {{"k", *k}, {"axis", int64_t(*axis)}, {"largest", n.attrInt("largest", 1) != 0}});
  if (n.wants(0) &&
      !n.set(0, n.b.create(OpKind::GatherElements, {x, indices}, {{"axis", int64_t(*axis)}})))
    return false;
  return n.set(1, indices);
}

bool importArgExtreme(NodeImport &n) {
  Value *x = n.input(0);
  if (!x)
    return false;
  const TensorType &t = x->type();
  std::optional<unsigned> axis = axisOf(n, n.attrInt("axis", 0), t.rank());
  if (!axis)
    return false;
  bool last = n.attrInt("select_last_index", 0) != 0;
  const Dim &d = t.shape[*axis];
  Value *v = x;
  if (last) {
    // The last of equal extremes is the first along the reversed axis.
    if (!d.isStatic() || d.size > (int64_t(1) << 20))
      return n.fail("select_last_index = 1 needs a static axis of at most 2^20, got " + t.str());
    std::vector<double> reversed;
    for (int64_t i = d.size - 1; i >= 0; --i)
      reversed.push_back(double(i));
    v = n.b.create(OpKind::Gather, {x, n.b.constant(DType::I64, {d.size}, reversed)},
                   {{"axis", int64_t(*axis)}});
  }
  Value *index = n.b.create(
      OpKind::TopK, {v},
      {{"k", int64_t(1)}, {"axis", int64_t(*axis)}, {"largest", n.node.op_type() == "ArgMax"}});
  if (last)
    index = n.b.sub(n.b.scalar(DType::I64, double(d.size - 1)), index);
  if (index && n.attrInt("keepdims", 1) == 0) {
    Shape shape = index->type().shape;
    shape.erase(shape.begin() + *axis);
    index = n.b.reshape(index, shape);
  }
  return n.set(0, index);
}

} // namespace fusec::onnximport
