// Contractions, convolution, pooling and normalization: each becomes the
// fusec op of the same meaning (matmul, linear, conv2d, the pools,
// batch_norm, layer_norm, softmax), so that the passes see what a .fir
// author would have written — nn.Linear's Gemm(transB = 1) is `linear`, a
// Conv followed by BatchNormalization folds into the filter. 1-D
// convolutions and pools run as 2-D ones of height 1; ops without a fusec
// counterpart (InstanceNormalization, LogSoftmax) are spelled exactly in
// reductions and pointwise ops.
#include "frontend/onnx/Ops.h"

namespace fusec::onnximport {

namespace {

/// A window op's geometry in 2-D: kernel, strides, dilations and pads
/// ([top, left, bottom, right]) — ONNX's order for two spatial dims.
struct Window {
  std::vector<int64_t> kernel, strides{1, 1}, dilations{1, 1}, pads{0, 0, 0, 0};
};

/// Reads strides, dilations, pads and auto_pad of a window op over `x`
/// (rank 3 or 4, NCHW), with the given kernel sizes; 1-D geometry is lifted
/// to 2-D with a height of 1.
std::optional<Window> readWindow(NodeImport &n, const TensorType &x, std::vector<int64_t> kernel) {
  if (x.rank() != 3 && x.rank() != 4) {
    n.fail("windows over more than 2 spatial dims are not supported, got input " + x.str());
    return std::nullopt;
  }
  size_t spatial = x.rank() - 2;
  auto lift = [&](std::vector<int64_t> v, int64_t fill) {
    if (spatial == 1)
      v.insert(v.begin(), fill);
    return v;
  };
  Window w;
  w.kernel = lift(kernel, 1);
  if (auto s = n.attrInts("strides"))
    w.strides = lift(*s, 1);
  if (auto d = n.attrInts("dilations"))
    w.dilations = lift(*d, 1);
  if (auto p = n.attrInts("pads")) {
    if (p->size() != 2 * spatial) {
      n.fail(std::to_string(p->size()) + " pads for " + std::to_string(spatial) + " spatial dims");
      return std::nullopt;
    }
    w.pads = spatial == 1 ? std::vector<int64_t>{0, (*p)[0], 0, (*p)[1]} : *p;
  }
  if (w.kernel.size() != 2 || w.strides.size() != 2 || w.dilations.size() != 2) {
    n.fail("kernel, strides and dilations must have one entry per spatial dim");
    return std::nullopt;
  }
  std::string autoPad = n.attrString("auto_pad", "NOTSET");
  if (autoPad == "VALID") {
    w.pads = {0, 0, 0, 0};
  } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    for (unsigned i = 0; i < 2; ++i) {
      const Dim &d = spatial == 1 && i == 0 ? Dim::fixed(1) : x.shape[2 + i - (spatial == 1)];
      if (!d.isStatic()) {
        n.fail("auto_pad " + autoPad + " needs static spatial dims, got " + x.str());
        return std::nullopt;
      }
      int64_t out = (d.size + w.strides[i] - 1) / w.strides[i];
      int64_t extent = (w.kernel[i] - 1) * w.dilations[i] + 1;
      int64_t total = std::max<int64_t>((out - 1) * w.strides[i] + extent - d.size, 0);
      int64_t small = total / 2, large = total - small;
      w.pads[i] = autoPad == "SAME_UPPER" ? small : large;
      w.pads[i + 2] = autoPad == "SAME_UPPER" ? large : small;
    }
  } else if (autoPad != "NOTSET") {
    n.fail("auto_pad '" + autoPad + "' is not supported");
    return std::nullopt;
  }
  return w;
}

/// Rank 3 [N, C, L] as rank 4 [N, C, 1, L]; rank 4 as it is; else an error.
Value *as2d(NodeImport &n, Value *x) {
  if (!x)
    return nullptr;
  const TensorType &t = x->type();
  if (t.rank() == 4)
    return x;
  if (t.rank() != 3) {
    n.fail("windows over more than 2 spatial dims are not supported, got input " + t.str());
    return nullptr;
  }
  return n.b.reshape(x, {t.shape[0], t.shape[1], Dim::fixed(1), t.shape[2]});
}

/// The result of a 2-D window op back in the input's rank.
Value *fromTwoD(NodeImport &n, Value *y, size_t rank) {
  if (!y || rank == 4)
    return y;
  const Shape &s = y->type().shape;
  return n.b.reshape(y, {s[0], s[1], s[3]});
}

} // namespace

bool importMatMul(NodeImport &n) {
  Value *a = n.input(0), *b = n.input(1);
  if (!a || !b)
    return false;
  // numpy's 1-D operands: a vector on the left is a row, on the right a
  // column, and that dim leaves the result.
  bool rowVector = a->type().rank() == 1, columnVector = b->type().rank() == 1;
  if (rowVector)
    a = n.b.reshape(a, {Dim::fixed(1), a->type().shape[0]});
  if (columnVector)
    b = n.b.reshape(b, {b->type().shape[0], Dim::fixed(1)});
  Value *y = n.b.matmul(a, b);
  if (y && (rowVector || columnVector)) {
    Shape s = y->type().shape;
    if (columnVector)
      s.pop_back();
    if (rowVector)
      s.erase(s.end() - 1 - !columnVector);
    y = n.b.reshape(y, s);
  }
  return n.set(0, y);
}

bool importGemm(NodeImport &n) {
  bool transA = n.attrInt("transA", 0), transB = n.attrInt("transB", 0);
  double alpha = n.attrFloat("alpha", 1), beta = n.attrFloat("beta", 1);
  Value *a = n.input(0), *b = n.input(1);
  Value *c = n.has(2) ? n.input(2) : nullptr;
  if (!a || !b || (n.has(2) && !c))
    return false;
  // nn.Linear: x @ wᵀ + bias.
  if (!transA && transB && alpha == 1 && beta == 1 && (!c || c->type().rank() == 1)) {
    std::vector<Value *> operands{a, b};
    if (c)
      operands.push_back(c);
    return n.set(0, n.b.create(OpKind::Linear, operands));
  }
  Value *y = n.b.matmul(a, b, transA, transB);
  if (alpha != 1)
    y = n.b.mul(y, scalarLike(n, y, alpha));
  if (c) {
    if (beta != 1)
      c = n.b.mul(c, scalarLike(n, c, beta));
    y = n.b.add(y, c);
  }
  return n.set(0, y);
}

bool importConv(NodeImport &n) {
  Value *x = n.input(0), *w = n.input(1);
  if (!x || !w)
    return false;
  size_t rank = x->type().rank();
  const TensorType &wt = w->type();
  std::vector<int64_t> kernel;
  for (size_t i = 2; i < wt.rank(); ++i) {
    if (!wt.shape[i].isStatic())
      return n.fail("the filter's spatial dims must be static, got " + wt.str());
    kernel.push_back(wt.shape[i].size);
  }
  if (auto k = n.attrInts("kernel_shape"); k && *k != kernel)
    return n.fail("kernel_shape does not match the filter " + wt.str());
  std::optional<Window> win = readWindow(n, x->type(), kernel);
  if (!win)
    return false;
  Value *x2 = as2d(n, x), *w2 = as2d(n, w);
  std::vector<Value *> operands{x2, w2};
  if (n.has(2))
    operands.push_back(n.input(2));
  Value *y = n.b.create(OpKind::Conv2d, operands,
                        {{"strides", win->strides},
                         {"pads", win->pads},
                         {"dilations", win->dilations},
                         {"groups", n.attrInt("group", 1)}});
  return n.set(0, fromTwoD(n, y, rank));
}

bool importPool(NodeImport &n) {
  Value *x = n.input(0);
  if (!x)
    return false;
  if (n.wants(1))
    return n.fail("the indices output is not supported");
  size_t rank = x->type().rank();
  std::optional<std::vector<int64_t>> kernel = n.attrInts("kernel_shape");
  if (!kernel)
    return n.fail("has no kernel_shape");
  std::optional<Window> win = readWindow(n, x->type(), *kernel);
  if (!win)
    return false;
  if (win->dilations != std::vector<int64_t>{1, 1})
    return n.fail("dilated pooling is not supported");
  bool max = n.node.op_type() == "MaxPool";
  bool includePad = n.attrInt("count_include_pad", 0) != 0;
  if (n.attrInt("ceil_mode", 0)) {
    // Ceil mode keeps a last, partial window. fusec pools in floor mode, so
    // the window gets room by more padding at the end: padding a max pool
    // ignores, and an average pool that does not count padding divides by
    // the elements it covers — exactly ceil mode's window.
    Value *x2 = as2d(n, x);
    for (unsigned i = 0; x2 && i < 2; ++i) {
      const Dim &d = x2->type().shape[2 + i];
      if (!d.isStatic())
        return n.fail("ceil_mode = 1 needs static spatial dims, got " + x->type().str());
      int64_t span = d.size + win->pads[i] + win->pads[i + 2] - win->kernel[i];
      int64_t floorOut = span / win->strides[i] + 1;
      int64_t ceilOut = (span + win->strides[i] - 1) / win->strides[i] + 1;
      if (ceilOut == floorOut)
        continue;
      if (!max && includePad)
        return n.fail("ceil_mode = 1 with count_include_pad = 1 is not supported");
      // The last window must start inside the input or its leading padding.
      if ((ceilOut - 1) * win->strides[i] >= d.size + win->pads[i])
        return n.fail("ceil_mode = 1 with a window that starts in the padding is not supported");
      win->pads[i + 2] += (ceilOut - 1) * win->strides[i] + win->kernel[i] -
                          (d.size + win->pads[i] + win->pads[i + 2]);
    }
  }
  AttrList attrs{{"kernel", win->kernel}, {"strides", win->strides}, {"pads", win->pads}};
  if (!max)
    attrs.push_back({"count_include_pad", includePad});
  Value *x2 = as2d(n, x);
  Value *y = n.b.create(max ? OpKind::MaxPool2d : OpKind::AvgPool2d, {x2}, std::move(attrs));
  return n.set(0, fromTwoD(n, y, rank));
}

bool importGlobalPool(NodeImport &n) {
  Value *x = n.input(0);
  if (!x)
    return false;
  std::vector<int64_t> axes;
  for (size_t i = 2; i < x->type().rank(); ++i)
    axes.push_back(int64_t(i));
  OpKind kind = n.node.op_type() == "GlobalMaxPool" ? OpKind::ReduceMax : OpKind::ReduceMean;
  return n.set(0, n.b.create(kind, {x}, {{"axes", axes}, {"keepdims", true}}));
}

bool importBatchNorm(NodeImport &n) {
  if (n.attrInt("training_mode", 0) || n.wants(1) || n.wants(2))
    return n.fail("training mode is not supported (fusec compiles inference)");
  std::vector<Value *> operands;
  for (unsigned i = 0; i < 5; ++i)
    if (!operands.emplace_back(n.input(i)))
      return false;
  return n.set(
      0, n.b.create(OpKind::BatchNorm, operands, {{"epsilon", n.attrFloat("epsilon", 1e-5)}}));
}

bool importLayerNorm(NodeImport &n) {
  if (n.attrInt("stash_type", 1) != 1)
    return n.fail("stash_type other than float is not supported");
  std::vector<Value *> operands;
  for (unsigned i = 0; i < 3; ++i)
    if (n.has(i) && !operands.emplace_back(n.input(i)))
      return false;
  int64_t axis = n.attrInt("axis", -1);
  double epsilon = n.attrFloat("epsilon", 1e-5);
  if (!n.set(0, n.b.create(OpKind::LayerNorm, operands, {{"axis", axis}, {"epsilon", epsilon}})))
    return false;
  if (!n.wants(1) && !n.wants(2))
    return true;
  // The statistics, when asked for: the mean and 1 / sqrt(var + epsilon)
  // over the normalized dims, kept as dims of 1, in f32 (stash_type).
  Value *x = operands[0];
  std::optional<unsigned> first = axisOf(n, axis, x->type().rank());
  if (!first)
    return false;
  std::vector<int64_t> axes;
  for (size_t i = *first; i < x->type().rank(); ++i)
    axes.push_back(int64_t(i));
  AttrList over{{"axes", axes}, {"keepdims", true}};
  if (x->type().dtype != DType::F32)
    x = n.b.cast(x, DType::F32);
  Value *mean = n.b.create(OpKind::ReduceMean, {x}, over);
  Value *centered = n.b.sub(x, mean);
  Value *square = n.b.mul(centered, centered);
  Value *var = n.b.create(OpKind::ReduceMean, {square}, over);
  Value *shifted = n.b.add(var, scalarLike(n, var, epsilon));
  return n.set(1, mean) && n.set(2, n.b.rsqrt(shifted));
}

bool importInstanceNorm(NodeImport &n) {
  Value *x = n.input(0), *scale = n.input(1), *bias = n.input(2);
  if (!x || !scale || !bias)
    return false;
  size_t rank = x->type().rank();
  if (rank < 3 || scale->type().rank() != 1)
    return n.fail("needs an input of rank >= 3 and a scale of rank 1, got " + x->type().str() +
                  " and " + scale->type().str());
  std::vector<int64_t> axes;
  Shape param{scale->type().shape[0]};
  for (size_t i = 2; i < rank; ++i) {
    axes.push_back(int64_t(i));
    param.push_back(Dim::fixed(1));
  }
  // (x - mean) / sqrt(var + eps) * scale + bias, statistics per sample and
  // channel over the spatial dims.
  AttrList over{{"axes", axes}, {"keepdims", true}};
  Value *mean = n.b.create(OpKind::ReduceMean, {x}, over);
  Value *centered = n.b.sub(x, mean);
  Value *square = n.b.mul(centered, centered);
  Value *var = n.b.create(OpKind::ReduceMean, {square}, over);
  Value *shifted = n.b.add(var, scalarLike(n, var, n.attrFloat("epsilon", 1e-5)));
  Value *normed = n.b.mul(centered, n.b.rsqrt(shifted));
  Value *scaled = n.b.mul(normed, n.b.reshape(scale, param));
  return n.set(0, n.b.add(scaled, n.b.reshape(bias, param)));
}

bool importSoftmax(NodeImport &n) {
  Value *x = n.input(0);
  if (!x)
    return false;
  const TensorType t = x->type();
  bool log = n.node.op_type() == "LogSoftmax";
  int64_t axisAttr = n.attrInt("axis", n.opset < 13 ? 1 : -1);
  std::optional<unsigned> axis = axisOf(n, axisAttr, t.rank());
  if (!axis)
    return false;
  // Before opset 13 the op normalizes the input flattened to 2-D at `axis`:
  // over every dim from `axis` on.
  bool flatten = n.opset < 13 && *axis + 1 != t.rank();
  if (flatten) {
    SymInt outer = SymInt::of(1), inner = SymInt::of(1);
    for (size_t i = 0; i < t.rank(); ++i) {
      SymInt &part = i < *axis ? outer : inner;
      part = part * SymInt::ofDim(t.shape[i]);
    }
    Shape two{outer.asDim().value_or(Dim::fixed(-1)),
              inner.asDim().value_or(outer.asDim() ? Dim::fixed(-1) : Dim::anonymous())};
    x = n.b.reshape(x, two);
  }
  int64_t over = flatten ? 1 : int64_t(*axis);
  Value *y;
  if (!log) {
    y = n.b.create(OpKind::Softmax, {x}, {{"axis", over}});
  } else {
    // x - max - log(sum(exp(x - max))), stable.
    AttrList keep{{"axes", std::vector<int64_t>{over}}, {"keepdims", true}};
    Value *m = n.b.create(OpKind::ReduceMax, {x}, keep);
    Value *shifted = n.b.sub(x, m);
    Value *sum = n.b.create(OpKind::ReduceSum, {n.b.exp(shifted)}, keep);
    y = n.b.sub(shifted, n.b.create(OpKind::Log, {sum}));
  }
  if (flatten && y)
    y = n.b.reshape(y, t.shape);
  return n.set(0, y);
}

} // namespace fusec::onnximport
