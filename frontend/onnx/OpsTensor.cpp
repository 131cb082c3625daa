// Shapes, movement and constants. Shape arithmetic is evaluated on values
// known at import (Note [Values known at import]); a tensor op whose shape
// argument is such a value becomes fusec's op with that shape as its
// attribute. Ops fusec has no kernel for yet are spelled exactly in its ops
// where their arguments are static: Gather with constant indices as slices,
// Tile as reshape + broadcast, Pad as concatenation with constants or edge
// slices, Trilu as a select against a constant mask.
#include "frontend/onnx/Ops.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace fusec::onnximport {

namespace {

/// The most constant indices a Gather is spelled with as slices.
constexpr size_t kMaxGatherSlices = 16;
/// The most slices a backward Slice or a reflecting Pad is spelled with.
constexpr size_t kMaxSlices = 256;
/// The most elements Range and Trilu's mask make at import.
constexpr int64_t kMaxFoldedElements = int64_t(1) << 24;

Value *slice(NodeImport &n, Value *x, unsigned axis, int64_t start, int64_t end, int64_t step = 1) {
  return n.b.create(OpKind::Slice, {x},
                    {{"axis", int64_t(axis)}, {"start", start}, {"end", end}, {"step", step}});
}

Value *broadcastTo(NodeImport &n, Value *x, Shape shape) {
  return n.b.create(OpKind::Broadcast, {x}, {{"shape", std::move(shape)}});
}

std::vector<SymInt> dimsOf(const TensorType &t) {
  std::vector<SymInt> out;
  for (const Dim &d : t.shape)
    out.push_back(SymInt::ofDim(d));
  return out;
}

/// Python's slice of a known list.
std::vector<SymInt> sliceList(const std::vector<SymInt> &v, int64_t start, int64_t end,
                              int64_t step) {
  int64_t size = int64_t(v.size());
  auto clampBound = [&](int64_t b, int64_t lo, int64_t hi) {
    if (b < 0)
      b += size;
    return std::clamp(b, lo, hi);
  };
  std::vector<SymInt> out;
  // i stays within [-1, size] before each step, so i + step cannot overflow
  // once the step is clamped to the list's length.
  step = std::clamp<int64_t>(step, -size - 1, size + 1);
  if (step > 0) {
    for (int64_t i = clampBound(start, 0, size), e = clampBound(end, 0, size); i < e; i += step)
      out.push_back(v[size_t(i)]);
  } else {
    for (int64_t i = clampBound(start, -1, size - 1), e = clampBound(end, -1, size - 1); i > e;
         i += step)
      out.push_back(v[size_t(i)]);
  }
  return out;
}

} // namespace

bool importConstant(NodeImport &n) {
  for (const onnx::AttributeProto &a : n.node.attribute()) {
    const std::string &name = a.name();
    if (name == "value") {
      std::optional<DenseData> data = n.tensorAttr(a.t(), "value");
      return data && n.setData(0, std::move(*data), true);
    }
    auto store = [&](DType dtype, std::vector<int64_t> shape, auto values) {
      std::vector<uint8_t> bytes(values.size() * sizeof(values[0]));
      std::memcpy(bytes.data(), values.data(), bytes.size());
      return n.setData(0, DenseData(dtype, std::move(shape), std::move(bytes)));
    };
    if (name == "value_float")
      return store(DType::F32, {}, std::vector<float>{a.f()});
    if (name == "value_floats")
      return store(DType::F32, {int64_t(a.floats_size())},
                   std::vector<float>(a.floats().begin(), a.floats().end()));
    if (name == "value_int")
      return store(DType::I64, {}, std::vector<int64_t>{a.i()});
    if (name == "value_ints")
      return store(DType::I64, {int64_t(a.ints_size())},
                   std::vector<int64_t>(a.ints().begin(), a.ints().end()));
    return n.fail("a constant given as '" + name + "' is not supported");
  }
  return n.fail("has no value");
}

bool importConstantOfShape(NodeImport &n) {
  const auto &shapeInts = n.knownInts(0);
  if (!shapeInts)
    return n.fail("the shape must be known when the model is imported");
  DenseData value(DType::F32, {}, std::vector<uint8_t>(4, 0));
  if (const onnx::AttributeProto *a = n.findAttr("value")) {
    std::optional<DenseData> v = n.tensorAttr(a->t(), "value");
    if (!v)
      return false;
    if (v->numElements() != 1)
      return n.fail("value must hold one element");
    value = std::move(*v);
  }
  std::vector<uint8_t> element(value.element(0), value.element(0) + dtypeSize(value.dtype));
  std::vector<int64_t> sizes;
  int64_t count = 1;
  for (const SymInt &v : *shapeInts) {
    if (v.isStatic() && v.factor > 0 && __builtin_mul_overflow(count, v.factor, &count))
      return n.fail("the shape's element count overflows");
    if (!v.isStatic()) {
      // A symbolic shape: the value broadcast at run time.
      Value *scalar = n.b.constant(std::make_shared<const DenseData>(
          DenseData::makeSplat(value.dtype, {}, std::move(element))));
      return n.set(0, broadcastTo(n, scalar, shapeOf(*shapeInts)));
    }
    if (v.factor < 0)
      return n.fail("shape has a negative dim " + std::to_string(v.factor));
    sizes.push_back(v.factor);
  }
  return n.setData(0, DenseData::makeSplat(value.dtype, std::move(sizes), std::move(element)));
}

bool importShape(NodeImport &n) {
  std::vector<SymInt> dims = dimsOf(n.type(0));
  int64_t start = n.attrInt("start", 0),
          end = n.attrInt("end", std::numeric_limits<int64_t>::max());
  return n.setInts(0, sliceList(dims, start, end, 1), DType::I64, false);
}

bool importSize(NodeImport &n) {
  SymInt count = SymInt::of(1);
  for (const SymInt &d : dimsOf(n.type(0)))
    count = count * d;
  return n.setInts(0, {count}, DType::I64, true);
}

/// Range(start, limit, delta) with a symbolic limit and start = 0, delta =
/// 1: positions 0, 1, ..., limit - 1 (a sequence's position ids), as the
/// exclusive running sum of ones over `limit` elements.
static bool importSymbolicRange(NodeImport &n) {
  const auto &start = n.knownInts(0), &limit = n.knownInts(1), &delta = n.knownInts(2);
  if (!start || !limit || !delta || start->size() != 1 || limit->size() != 1 ||
      delta->size() != 1 || !((*start)[0] == SymInt::of(0)) || !((*delta)[0] == SymInt::of(1)))
    return false;
  std::optional<Dim> length = (*limit)[0].asDim();
  if (!length || length->isStatic())
    return false;
  DType dtype = n.type(0).dtype;
  Value *one = n.b.scalar(dtype, 1.0);
  Value *ones = broadcastTo(n, one, {*length});
  return n.set(0, n.b.create(OpKind::CumSum, {ones}, {{"axis", int64_t(0)}, {"exclusive", true}}));
}

bool importRange(NodeImport &n) {
  DType dtype = n.type(0).dtype;
  if (n.knownInts(1) && n.knownInts(1)->size() == 1 && !(*n.knownInts(1))[0].isStatic() &&
      importSymbolicRange(n))
    return true;
  if (isInteger(dtype)) {
    std::optional<std::vector<int64_t>> start = n.staticInts(0, "start"),
                                        limit = start ? n.staticInts(1, "limit") : std::nullopt,
                                        delta = limit ? n.staticInts(2, "delta") : std::nullopt;
    if (!delta)
      return false;
    if (start->size() != 1 || limit->size() != 1 || delta->size() != 1 || (*delta)[0] == 0)
      return n.fail("start, limit and delta must be scalars, delta not 0");
    // ceil((limit - start) / delta), in 128 bits so that no operand overflows.
    __int128 span = __int128((*limit)[0]) - (*start)[0], step = (*delta)[0];
    __int128 count = span / step + (span % step != 0 && (span > 0) == (step > 0));
    if (count > kMaxFoldedElements)
      return n.fail("a range of more than " + std::to_string(kMaxFoldedElements) +
                    " elements is over the import's limit");
    std::vector<int64_t> values;
    for (int64_t i = 0; i < int64_t(count); ++i)
      values.push_back(int64_t((*start)[0] + __int128(i) * step));
    if (values.size() <= 1024) {
      std::vector<SymInt> ints;
      for (int64_t v : values)
        ints.push_back(SymInt::of(v));
      return n.setInts(0, std::move(ints), dtype, false);
    }
    int64_t len = int64_t(values.size());
    return n.setData(0, integerData(dtype, {len}, values));
  }
  std::optional<std::vector<double>> start = n.staticFloats(0, "start"),
                                     limit = start ? n.staticFloats(1, "limit") : std::nullopt,
                                     delta = limit ? n.staticFloats(2, "delta") : std::nullopt;
  if (!delta)
    return false;
  if (start->size() != 1 || limit->size() != 1 || delta->size() != 1 || (*delta)[0] == 0)
    return n.fail("start, limit and delta must be scalars, delta not 0");
  double count = std::ceil(((*limit)[0] - (*start)[0]) / (*delta)[0]);
  if (!(count <= double(kMaxFoldedElements)))
    return n.fail("a range of " + std::to_string(count) + " elements is over the import's limit");
  int64_t len = std::max<int64_t>(int64_t(count), 0);
  std::vector<double> values;
  for (int64_t i = 0; i < len; ++i)
    values.push_back((*start)[0] + double(i) * (*delta)[0]);
  return n.set(0, n.b.constant(dtype, {len}, values));
}

bool importReshape(NodeImport &n) {
  std::vector<SymInt> target;
  if (n.opset < 5) {
    std::optional<std::vector<int64_t>> shape = n.attrInts("shape");
    for (int64_t v : shape.value_or(std::vector<int64_t>{}))
      target.push_back(SymInt::of(v));
  } else if (const auto &known = n.knownInts(1)) {
    target = *known;
  } else {
    return n.fail("the target shape must be known when the model is imported");
  }
  const TensorType &x = n.type(0);
  bool allowZero = n.attrInt("allowzero", 0) != 0;
  for (size_t i = 0; i < target.size(); ++i)
    if (!allowZero && target[i].isStatic() && target[i].factor == 0) {
      if (i >= x.rank())
        return n.fail("a 0 at position " + std::to_string(i) + " has no input dim to copy");
      target[i] = SymInt::ofDim(x.shape[i]);
    }
  // A known list stays known through a reshape between rank 0 and 1.
  if (const auto &ints = n.knownInts(0); ints && target.size() <= 1)
    return n.setInts(0, *ints, x.dtype, target.empty());
  return n.set(0, n.b.reshape(n.input(0), reshapeTarget(target)));
}

bool importFlatten(NodeImport &n) {
  const TensorType &x = n.type(0);
  int64_t axis = n.attrInt("axis", 1);
  if (axis < 0)
    axis += int64_t(x.rank());
  if (axis < 0 || axis > int64_t(x.rank()))
    return n.fail("axis " + std::to_string(n.attrInt("axis", 1)) + " is out of range");
  std::vector<SymInt> dims = dimsOf(x);
  SymInt outer = SymInt::of(1), inner = SymInt::of(1);
  for (size_t i = 0; i < dims.size(); ++i) {
    SymInt &part = int64_t(i) < axis ? outer : inner;
    part = part * dims[i];
  }
  return n.set(0, n.b.reshape(n.input(0), reshapeTarget({outer, inner})));
}

bool importSqueeze(NodeImport &n) {
  std::optional<std::vector<int64_t>> axes = axesOf(n, 13);
  if (!axes)
    return false;
  const TensorType &x = n.type(0);
  std::vector<bool> drop(x.rank(), false);
  for (int64_t a : *axes) {
    std::optional<unsigned> axis = axisOf(n, a, x.rank());
    if (!axis)
      return false;
    if (!x.shape[*axis].isStaticValue(1) && !x.shape[*axis].isAnonymous())
      return n.fail("cannot squeeze dim " + std::to_string(a) + " of " + x.str() + ": it is not 1");
    drop[*axis] = true;
  }
  if (axes->empty())
    for (size_t i = 0; i < x.rank(); ++i)
      drop[i] = x.shape[i].isStaticValue(1);
  if (const auto &ints = n.knownInts(0); ints && x.rank() == 1 && drop[0])
    return n.setInts(0, *ints, x.dtype, true);
  Shape shape;
  for (size_t i = 0; i < x.rank(); ++i)
    if (!drop[i])
      shape.push_back(x.shape[i].isAnonymous() ? Dim::fixed(1) : x.shape[i]);
  return n.set(0, n.b.reshape(n.input(0), shape));
}

bool importUnsqueeze(NodeImport &n) {
  std::optional<std::vector<int64_t>> axes = axesOf(n, 13);
  if (!axes)
    return false;
  const TensorType &x = n.type(0);
  size_t rank = x.rank() + axes->size();
  std::vector<bool> inserted(rank, false);
  for (int64_t a : *axes) {
    std::optional<unsigned> axis = axisOf(n, a, rank);
    if (!axis)
      return false;
    if (inserted[*axis])
      return n.fail("axis " + std::to_string(a) + " is given twice");
    inserted[*axis] = true;
  }
  if (const auto &ints = n.knownInts(0); ints && x.rank() == 0 && rank == 1)
    return n.setInts(0, *ints, x.dtype, false);
  Shape shape;
  for (size_t i = 0, from = 0; i < rank; ++i)
    shape.push_back(inserted[i] ? Dim::fixed(1) : x.shape[from++]);
  return n.set(0, n.b.reshape(n.input(0), shape));
}

bool importTranspose(NodeImport &n) {
  size_t rank = n.type(0).rank();
  std::vector<int64_t> perm;
  for (size_t i = 0; i < rank; ++i)
    perm.push_back(int64_t(rank - 1 - i));
  if (std::optional<std::vector<int64_t>> given = n.attrInts("perm"))
    perm = *given;
  return n.set(0, n.b.transpose(n.input(0), perm));
}

bool importConcat(NodeImport &n) {
  int64_t axis = n.attrInt("axis", 0);
  bool known = true;
  for (unsigned i = 0; i < n.numInputs(); ++i)
    known &= n.knownInts(i).has_value() && n.type(i).rank() == 1;
  if (known) {
    std::vector<SymInt> out;
    for (unsigned i = 0; i < n.numInputs(); ++i)
      out.insert(out.end(), n.knownInts(i)->begin(), n.knownInts(i)->end());
    return n.setInts(0, std::move(out), n.type(0).dtype, false);
  }
  std::vector<Value *> parts;
  for (unsigned i = 0; i < n.numInputs(); ++i)
    if (!(parts.emplace_back(n.input(i))))
      return false;
  return n.set(0, n.b.create(OpKind::Concat, parts, {{"axis", axis}}));
}

bool importSplit(NodeImport &n) {
  const TensorType &x = n.type(0);
  std::optional<unsigned> axis = axisOf(n, n.attrInt("axis", 0), x.rank());
  if (!axis)
    return false;
  std::vector<int64_t> sizes;
  if (n.opset < 13 && n.hasAttr("split")) {
    sizes = *n.attrInts("split");
  } else if (n.opset >= 13 && n.has(1)) {
    std::optional<std::vector<int64_t>> given = n.staticInts(1, "split");
    if (!given)
      return false;
    sizes = *given;
  } else {
    const Dim &d = x.shape[*axis];
    if (!d.isStatic() || d.size % n.numOutputs() != 0)
      return n.fail("cannot split dim " + d.str() + " into " + std::to_string(n.numOutputs()) +
                    " equal parts");
    sizes.assign(n.numOutputs(), d.size / n.numOutputs());
  }
  if (sizes.size() != n.numOutputs())
    return n.fail(std::to_string(sizes.size()) + " split sizes for " +
                  std::to_string(n.numOutputs()) + " outputs");
  Value *v = n.input(0);
  int64_t start = 0;
  for (unsigned i = 0; i < sizes.size(); ++i) {
    int64_t end;
    if (sizes[i] < 0 || __builtin_add_overflow(start, sizes[i], &end))
      return n.fail("split size " + std::to_string(sizes[i]) + " is negative or overflows");
    if (!n.set(i, slice(n, v, *axis, start, end)))
      return false;
    start = end;
  }
  return true;
}

bool importSlice(NodeImport &n) {
  const TensorType &x = n.type(0);
  std::vector<int64_t> starts, ends, axes, steps;
  if (n.opset < 10) {
    starts = n.attrInts("starts").value_or(std::vector<int64_t>{});
    ends = n.attrInts("ends").value_or(std::vector<int64_t>{});
    axes = n.attrInts("axes").value_or(std::vector<int64_t>{});
  } else {
    std::optional<std::vector<int64_t>> s = n.staticInts(1, "starts");
    std::optional<std::vector<int64_t>> e = s ? n.staticInts(2, "ends") : std::nullopt;
    if (!e)
      return false;
    starts = *s, ends = *e;
    if (n.has(3)) {
      std::optional<std::vector<int64_t>> a = n.staticInts(3, "axes");
      if (!a)
        return false;
      axes = *a;
    }
    if (n.has(4)) {
      std::optional<std::vector<int64_t>> st = n.staticInts(4, "steps");
      if (!st)
        return false;
      steps = *st;
    }
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(int64_t(i));
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    return n.fail("starts, ends, axes and steps differ in length");
  if (const auto &ints = n.knownInts(0); ints && x.rank() == 1 && starts.size() == 1) {
    if (steps[0] == 0)
      return n.fail("step 0");
    return n.setInts(0, sliceList(*ints, starts[0], ends[0], steps[0]), x.dtype, false);
  }
  Value *v = n.input(0);
  for (size_t i = 0; v && i < starts.size(); ++i) {
    std::optional<unsigned> axis = axisOf(n, axes[i], x.rank());
    if (!axis)
      return false;
    if (steps[i] == 0)
      return n.fail("step 0");
    if (steps[i] > 0) {
      v = slice(n, v, *axis, starts[i], ends[i], steps[i]);
      continue;
    }
    // A backward slice of a static dim: its rows one by one, concatenated.
    const Dim &d = v->type().shape[*axis];
    if (!d.isStatic())
      return n.fail("a backward slice of the symbolic dim " + d.str() + " is not supported");
    std::vector<SymInt> indices;
    for (int64_t k = 0; k < d.size && k <= int64_t(kMaxSlices); ++k)
      indices.push_back(SymInt::of(k));
    if (d.size > int64_t(kMaxSlices))
      return n.fail("a backward slice of a dim of " + std::to_string(d.size) +
                    " is not supported (at most " + std::to_string(kMaxSlices) + ")");
    std::vector<SymInt> picked = sliceList(indices, starts[i], ends[i], steps[i]);
    std::vector<Value *> rows;
    for (const SymInt &k : picked)
      rows.push_back(slice(n, v, *axis, k.factor, k.factor + 1));
    if (rows.empty())
      v = slice(n, v, *axis, 0, 0);
    else
      v = rows.size() == 1 ? rows[0] : n.b.create(OpKind::Concat, rows, {{"axis", int64_t(*axis)}});
  }
  return n.set(0, v);
}

bool importGather(NodeImport &n) {
  const TensorType &data = n.type(0), &indexType = n.type(1);
  std::optional<unsigned> axis = axisOf(n, n.attrInt("axis", 0), data.rank());
  if (!axis)
    return false;
  const auto &known = n.knownInts(0);
  const auto &indexInts = n.knownInts(1);
  // Elements of a known list picked by known indices: a known result.
  if (known && indexInts && data.rank() == 1 && indexType.rank() <= 1) {
    std::vector<SymInt> out;
    for (const SymInt &i : *indexInts) {
      int64_t k = i.isStatic() ? i.factor : -int64_t(known->size()) - 1;
      if (k < 0)
        k += int64_t(known->size());
      if (k < 0 || k >= int64_t(known->size()))
        return n.fail("index " + i.str() + " is out of range for " + std::to_string(known->size()) +
                      " elements");
      out.push_back((*known)[size_t(k)]);
    }
    return n.setInts(0, std::move(out), data.dtype, indexType.rank() == 0);
  }
  // A few constant indices: one slice each along the axis (slices fuse into
  // the kernels that read them); otherwise fusec's gather.
  bool fewConstant = indexInts && indexInts->size() <= kMaxGatherSlices &&
                     std::all_of(indexInts->begin(), indexInts->end(),
                                 [](const SymInt &i) { return i.isStatic(); });
  if (!fewConstant) {
    Value *x = n.input(0), *indices = n.input(1);
    return n.set(0, n.b.create(OpKind::Gather, {x, indices}, {{"axis", int64_t(*axis)}}));
  }
  std::optional<std::vector<int64_t>> indices = n.staticInts(1, "indices");
  if (!indices)
    return false;
  const Dim &d = data.shape[*axis];
  Value *x = n.input(0);
  std::vector<Value *> parts;
  for (int64_t k : *indices) {
    if (k < 0 && !d.isStatic()) // the gather op counts from the end at run time
      return n.set(0, n.b.create(OpKind::Gather, {x, n.input(1)}, {{"axis", int64_t(*axis)}}));
    int64_t i = k < 0 ? k + d.size : k;
    if (i < 0 || (d.isStatic() && i >= d.size))
      return n.fail("index " + std::to_string(k) + " is out of range for dim " + d.str());
    parts.push_back(slice(n, x, *axis, i, i + 1));
  }
  Value *picked =
      parts.size() == 1 ? parts[0] : n.b.create(OpKind::Concat, parts, {{"axis", int64_t(*axis)}});
  Shape shape(data.shape.begin(), data.shape.begin() + *axis);
  for (const Dim &i : indexType.shape)
    shape.push_back(i);
  shape.insert(shape.end(), data.shape.begin() + *axis + 1, data.shape.end());
  return n.set(0, n.b.reshape(picked, shape));
}

bool importGatherElements(NodeImport &n) {
  std::optional<unsigned> axis = axisOf(n, n.attrInt("axis", 0), n.type(0).rank());
  if (!axis)
    return false;
  return n.set(
      0, n.b.create(OpKind::GatherElements, {n.input(0), n.input(1)}, {{"axis", int64_t(*axis)}}));
}

bool importExpand(NodeImport &n) {
  const auto &target = n.knownInts(1);
  if (!target)
    return n.fail("the shape must be known when the model is imported");
  const TensorType &x = n.type(0);
  Shape want = shapeOf(*target), out;
  size_t rank = std::max(want.size(), x.rank());
  for (size_t i = 0; i < rank; ++i) {
    // numpy's broadcast of the two shapes, aligned at the right.
    const Dim *a = i + x.rank() >= rank ? &x.shape[i + x.rank() - rank] : nullptr;
    const Dim *b = i + want.size() >= rank ? &want[i + want.size() - rank] : nullptr;
    if (!a || a->isStaticValue(1))
      out.push_back(*b);
    else if (!b || b->isStaticValue(1) || *a == *b)
      out.push_back(*a);
    else if (a->isStatic() && b->isStatic())
      return n.fail("cannot expand " + x.str() + " to " + shapeStr(want));
    else
      out.push_back(b->isAnonymous() ? *a : *b);
  }
  Value *v = n.input(0);
  if (out == x.shape)
    return n.set(0, n.b.reshape(v, out));
  return n.set(0, broadcastTo(n, v, out));
}

bool importTile(NodeImport &n) {
  std::optional<std::vector<int64_t>> repeats = n.staticInts(1, "repeats");
  if (!repeats)
    return false;
  Value *v = n.input(0);
  if (!v)
    return false;
  if (repeats->size() != v->type().rank())
    return n.fail(std::to_string(repeats->size()) + " repeats for rank " +
                  std::to_string(v->type().rank()));
  for (size_t axis = 0; v && axis < repeats->size(); ++axis) {
    int64_t r = (*repeats)[axis];
    if (r < 0)
      return n.fail("repeat " + std::to_string(r) + " is negative");
    if (r == 1)
      continue;
    // [.., d, ..] -> [.., 1, d, ..] -> broadcast [.., r, d, ..] -> [.., r*d, ..]
    Shape shape = v->type().shape, wide = shape, tiled = shape;
    wide.insert(wide.begin() + int64_t(axis), Dim::fixed(1));
    Shape repeated = wide;
    repeated[axis] = Dim::fixed(r);
    const Dim &d = shape[axis];
    int64_t size = -1;
    if (d.isStatic() && __builtin_mul_overflow(d.size, r, &size))
      return n.fail("tiling dim " + d.str() + " " + std::to_string(r) + " times overflows");
    tiled[axis] = Dim::fixed(size);
    Value *w = n.b.reshape(v, wide);
    Value *b = broadcastTo(n, w, repeated);
    v = n.b.reshape(b, tiled);
  }
  return n.set(0, v ? n.b.reshape(v, v->type().shape) : nullptr);
}

bool importPad(NodeImport &n) {
  std::string mode = n.attrString("mode", "constant");
  if (mode != "constant" && mode != "edge" && mode != "reflect")
    return n.fail("mode '" + mode + "' is not supported");
  std::vector<int64_t> pads;
  double fill = 0;
  if (n.opset < 11) {
    pads = n.attrInts("pads").value_or(std::vector<int64_t>{});
    fill = n.attrFloat("value", 0);
  } else {
    std::optional<std::vector<int64_t>> p = n.staticInts(1, "pads");
    if (!p)
      return false;
    pads = *p;
    if (n.has(2)) {
      std::optional<std::vector<double>> c = n.staticFloats(2, "constant_value");
      if (!c)
        return false;
      if (c->size() != 1)
        return n.fail("constant_value must be one element");
      fill = (*c)[0];
    }
  }
  Value *v = n.input(0);
  if (!v)
    return false;
  size_t rank = v->type().rank();
  if (pads.size() != 2 * rank)
    return n.fail(std::to_string(pads.size()) + " pads for rank " + std::to_string(rank) +
                  " (needs " + std::to_string(2 * rank) + ")");
  constexpr int64_t kMaxPad = int64_t(1) << 40;
  for (int64_t p : pads)
    if (p < -kMaxPad || p > kMaxPad)
      return n.fail("pad " + std::to_string(p) + " is out of range");
  for (unsigned axis = 0; v && axis < rank; ++axis) {
    int64_t before = pads[axis], after = pads[axis + rank];
    if (before == 0 && after == 0)
      continue;
    const Dim d = v->type().shape[axis];
    // Negative pads crop.
    if (before < 0 || after < 0) {
      if (!d.isStatic())
        return n.fail("cropping the symbolic dim " + d.str() + " is not supported");
      v = slice(n, v, axis, std::max<int64_t>(-before, 0), d.size - std::max<int64_t>(-after, 0));
      before = std::max<int64_t>(before, 0), after = std::max<int64_t>(after, 0);
      if (!v || (before == 0 && after == 0))
        continue;
    }
    int64_t size = v->type().shape[axis].size;
    if (mode != "constant" && (!v->type().shape[axis].isStatic() || size == 0))
      return n.fail("'" + mode + "' padding needs a static, non-empty dim");
    if (mode == "reflect" && (before >= size || after >= size))
      return n.fail("reflect padding wider than the dim");
    if (before + after > int64_t(kMaxSlices))
      return n.fail("padding of " + std::to_string(before + after) + " is over the import's limit");
    auto side = [&](int64_t width, bool leading) -> Value * {
      Shape shape = v->type().shape;
      shape[axis] = Dim::fixed(width);
      if (mode == "constant")
        return broadcastTo(n, scalarLike(n, v, fill), shape);
      if (mode == "edge") {
        Value *edge = leading ? slice(n, v, axis, 0, 1) : slice(n, v, axis, size - 1, size);
        return broadcastTo(n, edge, shape);
      }
      // reflect: x[w], ..., x[1] before; x[size-2], ..., x[size-1-w] after.
      std::vector<Value *> rows;
      for (int64_t k = 0; k < width; ++k) {
        int64_t i = leading ? width - k : size - 2 - k;
        rows.push_back(slice(n, v, axis, i, i + 1));
      }
      return rows.size() == 1 ? rows[0]
                              : n.b.create(OpKind::Concat, rows, {{"axis", int64_t(axis)}});
    };
    std::vector<Value *> parts;
    if (before > 0)
      parts.push_back(side(before, true));
    parts.push_back(v);
    if (after > 0)
      parts.push_back(side(after, false));
    v = n.b.create(OpKind::Concat, parts, {{"axis", int64_t(axis)}});
  }
  return n.set(0, v ? n.b.reshape(v, v->type().shape) : nullptr);
}

bool importTrilu(NodeImport &n) {
  const TensorType &x = n.type(0);
  if (x.rank() < 2)
    return n.fail("needs rank >= 2, got " + x.str());
  const Dim &rows = x.shape[x.rank() - 2], &cols = x.shape[x.rank() - 1];
  if (!rows.isStatic() || !cols.isStatic() ||
      (rows.size != 0 && cols.size > kMaxFoldedElements / rows.size))
    return n.fail("needs static last two dims of a bounded size, got " + x.str());
  std::optional<int64_t> k = n.has(1) ? staticInt(n, 1, "k") : int64_t(0);
  if (!k)
    return false;
  bool upper = n.attrInt("upper", 1) != 0;
  std::vector<double> mask;
  for (int64_t i = 0; i < rows.size; ++i)
    for (int64_t j = 0; j < cols.size; ++j)
      mask.push_back(upper ? j - i >= *k : j - i <= *k);
  Value *keep = n.b.constant(DType::Bool, {rows.size, cols.size}, mask);
  Value *x0 = n.input(0);
  Value *zero = scalarLike(n, x0, 0.0);
  return n.set(0, n.b.create(OpKind::Where, {keep, x0, zero}));
}

} // namespace fusec::onnximport
