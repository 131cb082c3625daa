// Contractions, convolution, pooling and normalization: each becomes the
// fusec op of the same meaning (matmul, linear, conv2d, the pools,
// batch_norm, layer_norm, softmax), so that the passes see what a .fir
// author would have written — nn.Linear's Gemm(transB = 1) is `linear`, a
// Conv followed by BatchNormalization folds into the filter. 1-D
// convolutions and pools run as 2-D ones of height 1; ops without a fusec
// counterpart (InstanceNormalization, LogSoftmax) are spelled exactly in
// reductions and pointwise ops.
#include "frontend/onnx/Ops.h"

#include <algorithm>
#include <cctype>
#include <numeric>

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
  // Sizes the window arithmetic below (and the op's) can use without
  // overflow or a division by zero.
  constexpr int64_t kMaxWindow = int64_t(1) << 31;
  auto within = [&](const std::vector<int64_t> &v, int64_t lo) {
    return std::all_of(v.begin(), v.end(), [&](int64_t x) { return x >= lo && x <= kMaxWindow; });
  };
  if (!within(w.kernel, 1) || !within(w.strides, 1) || !within(w.dilations, 1) ||
      !within(w.pads, 0)) {
    n.fail("kernel, strides and dilations must be in [1, 2^31] and pads in [0, 2^31]");
    return std::nullopt;
  }
  std::string autoPad = n.attrString("auto_pad", "NOTSET");
  if (autoPad == "VALID") {
    w.pads = {0, 0, 0, 0};
  } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    for (unsigned i = 0; i < 2; ++i) {
      const Dim &d = spatial == 1 && i == 0 ? Dim::fixed(1) : x.shape[2 + i - (spatial == 1)];
      if (!d.isStatic() || d.size > kMaxWindow) {
        n.fail("auto_pad " + autoPad + " needs static spatial dims of at most 2^31, got " +
               x.str());
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

namespace {

/// An einsum operand: a label per dim ('.'-expanded ellipsis dims get labels
/// of their own).
using Labels = std::string;

/// Parses "bij,bjk->bik" (spaces allowed, "..." for the same leading dims in
/// every operand, the output implicit when "->" is absent) into a label string
/// per operand and the output's; nullopt after reporting what is not
/// supported.
std::optional<std::pair<std::vector<Labels>, Labels>> parseEinsum(NodeImport &n,
                                                                  std::string equation) {
  std::erase(equation, ' ');
  size_t arrow = equation.find("->");
  std::string lhs = equation.substr(0, arrow);
  std::optional<std::string> rhs;
  if (arrow != std::string::npos)
    rhs = equation.substr(arrow + 2);
  std::vector<Labels> terms;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma - start));
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  if (terms.size() != n.numInputs() || terms.size() > 2) {
    n.fail("equation '" + equation + "' is not one of one or two operands matching the inputs");
    return std::nullopt;
  }
  // The ellipsis: as many leading labels ('0', '1', ...) as the dims it covers.
  std::optional<size_t> ellipsisDims;
  auto expand = [&](Labels &t, size_t rank) {
    size_t at = t.find("...");
    if (at == std::string::npos)
      return true;
    size_t covered = rank + 3 - t.size();
    if ((ellipsisDims && *ellipsisDims != covered) || rank + 3 < t.size())
      return false;
    ellipsisDims = covered;
    std::string labels;
    for (size_t i = 0; i < covered; ++i)
      labels += char('0' + i);
    t.replace(at, 3, labels);
    return true;
  };
  for (size_t i = 0; i < terms.size(); ++i)
    if (!expand(terms[i], n.type(unsigned(i)).rank()) ||
        terms[i].size() != n.type(unsigned(i)).rank()) {
      n.fail("equation '" + equation + "' does not match the rank of input " + std::to_string(i));
      return std::nullopt;
    }
  Labels out;
  if (rhs) {
    out = *rhs;
    if (out.find("...") != std::string::npos) {
      std::string labels;
      for (size_t i = 0; i < ellipsisDims.value_or(0); ++i)
        labels += char('0' + i);
      out.replace(out.find("..."), 3, labels);
    }
  } else {
    // Implicit: the ellipsis dims, then the labels seen once, sorted.
    std::string once;
    for (char c = 'A'; c <= 'z'; ++c) {
      size_t count = 0;
      for (const Labels &t : terms)
        count += size_t(std::count(t.begin(), t.end(), c));
      if (count == 1 && std::isalpha(static_cast<unsigned char>(c)))
        once += c;
    }
    for (size_t i = 0; i < ellipsisDims.value_or(0); ++i)
      out += char('0' + i);
    out += once;
  }
  for (const Labels &t : terms)
    for (char c : t)
      if (std::count(t.begin(), t.end(), c) > 1) {
        n.fail("equation '" + equation +
               "' repeats a label within an operand (a diagonal): not supported");
        return std::nullopt;
      }
  return std::make_pair(terms, out);
}

} // namespace

// Einsum in its matmul-like forms: one operand (a transpose and sums over
// the labels the output drops) or two, as a batched matmul: labels in both
// operands and the output are batch dims, in both but not the output are
// contracted, in one and the output are that side's free dims (a label in
// one operand only and not in the output is summed there first). Each
// operand is transposed to [batch, free, contracted] / [batch, contracted,
// free], reshaped to one dim per group, multiplied, and the result reshaped
// and transposed to the output's order.
bool importEinsum(NodeImport &n) {
  std::optional<std::pair<std::vector<Labels>, Labels>> parsed =
      parseEinsum(n, n.attrString("equation", ""));
  if (!parsed)
    return false;
  auto &[terms, out] = *parsed;
  std::vector<Value *> in;
  for (unsigned i = 0; i < terms.size(); ++i)
    if (!in.emplace_back(n.input(i)))
      return false;
  auto dimOf = [&](char c) -> Dim {
    for (size_t i = 0; i < terms.size(); ++i)
      if (size_t at = terms[i].find(c); at != std::string::npos)
        return in[i]->type().shape[at];
    return Dim::fixed(1);
  };
  auto inAll = [&](char c, const Labels &other) { return other.find(c) != std::string::npos; };
  // Sums over the labels of operand i that neither the output nor the other
  // operand has.
  auto sumAlone = [&](size_t i) {
    std::vector<int64_t> axes;
    Labels kept;
    for (size_t d = 0; d < terms[i].size(); ++d) {
      char c = terms[i][d];
      bool elsewhere = inAll(c, out) || (terms.size() == 2 && inAll(c, terms[1 - i]));
      if (elsewhere)
        kept += c;
      else
        axes.push_back(int64_t(d));
    }
    if (!axes.empty())
      in[i] = n.b.create(OpKind::ReduceSum, {in[i]}, {{"axes", axes}, {"keepdims", false}});
    terms[i] = kept;
  };
  auto permuteTo = [&](Value *v, const Labels &from, const Labels &to) -> Value * {
    if (!v || from == to)
      return v;
    std::vector<int64_t> perm;
    for (char c : to)
      perm.push_back(int64_t(from.find(c)));
    return n.b.transpose(v, perm);
  };
  for (size_t i = 0; i < terms.size(); ++i)
    sumAlone(i);
  if (std::count(in.begin(), in.end(), nullptr))
    return false; // a sum the builder refused, reported
  for (char c : out)
    if (std::none_of(terms.begin(), terms.end(), [&](const Labels &t) { return inAll(c, t); }))
      return n.fail("output label '" + std::string(1, c) + "' is in no operand");
  if (terms.size() == 1)
    return n.set(0, permuteTo(in[0], terms[0], out));

  Labels batch, contract, freeA, freeB;
  for (char c : terms[0]) {
    bool inB = inAll(c, terms[1]), inOut = inAll(c, out);
    (inB ? (inOut ? batch : contract) : freeA) += c;
  }
  for (char c : terms[1])
    if (!inAll(c, terms[0]))
      freeB += c;
  for (char c : batch)
    if (in[0]->type().shape[terms[0].find(c)] != in[1]->type().shape[terms[1].find(c)])
      return n.fail("batch label '" + std::string(1, c) +
                    "' has different sizes (broadcasting is not supported)");
  // Batch dims in the output's order.
  Labels orderedBatch;
  for (char c : out)
    if (inAll(c, batch))
      orderedBatch += c;
  auto group = [&](const Labels &labels) {
    SymInt p = SymInt::of(1);
    for (char c : labels)
      p = p * SymInt::ofDim(dimOf(c));
    return p;
  };
  auto grouped = [&](Value *v, const Labels &g1, const Labels &g2) -> Value * {
    std::vector<SymInt> target;
    for (char c : orderedBatch)
      target.push_back(SymInt::ofDim(dimOf(c)));
    target.push_back(group(g1));
    target.push_back(group(g2));
    Shape shape = reshapeTarget(target);
    return !v || shape == v->type().shape ? v : n.b.reshape(v, shape);
  };
  Labels orderA = orderedBatch + freeA + contract, orderB = orderedBatch + contract + freeB;
  Value *a = grouped(permuteTo(in[0], terms[0], orderA), freeA, contract);
  Value *b = grouped(permuteTo(in[1], terms[1], orderB), contract, freeB);
  Value *product = n.b.matmul(a, b);
  if (!product)
    return false;
  Labels result = orderedBatch + freeA + freeB;
  Shape shape;
  for (char c : result)
    shape.push_back(dimOf(c));
  Value *expanded = shape == product->type().shape ? product : n.b.reshape(product, shape);
  return n.set(0, permuteTo(expanded, result, out));
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

// Note [Transposed convolution by phases]
// ConvTranspose scatters: input position i adds x[i] * w[k] to output
// position q = i * s + k * d (before the begin padding is cut off). Split the
// outputs by phase r = q mod s, q = m * s + r: the taps reaching phase r are
// the k with k * d = r (mod s) — every (s / g)-th tap from the first, g =
// gcd(s, d) — and they read x[m - t_k], t_k = (k * d - r) / s, which moves by
// d / g from one such tap to the next. So each phase is an ordinary
// convolution with stride 1: dilation d / g, the phase's taps in reverse
// order as the filter, t of its last tap as the begin padding. Per spatial
// dim that is s convolutions (s_h * s_w in 2-D) doing exactly the
// transposed convolution's multiplies, on the tensor-core conv2d kernels;
// their results interleave by a concat and a reshape, and the output window
// (pads, output_padding, output_shape) is a slice, with zeros where it
// starts before q = 0. The filter [C_in, C_out / group, kh, kw] is regrouped
// to conv2d's [C_out, C_in / group, kh, kw]; for a constant filter the
// gathers and transposes fold at compile time.

namespace {

/// One spatial dim of a transposed convolution.
struct TransposedDim {
  int64_t in, kernel, stride, dilation, padBegin, out;
  /// Output rows per phase: the phases cover q in [0, rows * stride).
  int64_t rows() const { return std::max<int64_t>((padBegin + out + stride - 1) / stride, 1); }
};

/// The taps of phase r, last first (the phase's conv filter order), and the
/// offset t of the first of them (Note [Transposed convolution by phases]).
std::vector<int64_t> phaseTaps(const TransposedDim &d, int64_t r, int64_t &offset) {
  std::vector<int64_t> taps;
  for (int64_t k = 0; k < d.kernel; ++k)
    if ((k * d.dilation) % d.stride == r)
      taps.push_back(k);
  if (!taps.empty())
    offset = (taps.front() * d.dilation - r) / d.stride;
  std::reverse(taps.begin(), taps.end());
  return taps;
}

/// Slice [begin, begin + size) of `axis`, reading zeros before 0.
Value *window(NodeImport &n, Value *y, unsigned axis, int64_t begin, int64_t size) {
  if (!y)
    return nullptr;
  if (begin < 0) {
    Shape zeros = y->type().shape;
    zeros[axis] = Dim::fixed(-begin);
    Value *fill = n.b.create(OpKind::Broadcast, {scalarLike(n, y, 0)}, {{"shape", zeros}});
    y = n.b.create(OpKind::Concat, {fill, y}, {{"axis", int64_t(axis)}});
    begin = 0;
  }
  if (!y || (begin == 0 && y->type().shape[axis].isStaticValue(size)))
    return y;
  return n.b.create(OpKind::Slice, {y},
                    {{"axis", int64_t(axis)}, {"start", begin}, {"end", begin + size}});
}

} // namespace

bool importConvTranspose(NodeImport &n) {
  if (n.type(1).rank() != n.type(0).rank())
    return n.fail("the filter " + n.type(1).str() + " and the input " + n.type(0).str() +
                  " differ in rank");
  Value *x = as2d(n, n.input(0)), *w = as2d(n, n.input(1));
  if (!x || !w)
    return false;
  size_t rank = n.type(0).rank();
  const TensorType &xt = x->type(), &wt = w->type();
  if (!isStatic(wt.shape))
    return n.fail("the filter's shape must be static, got " + wt.str());
  // Each phase lists its taps (Note [Transposed convolution by phases]).
  constexpr int64_t kMaxKernel = int64_t(1) << 16;
  if (wt.shape[2].size > kMaxKernel || wt.shape[3].size > kMaxKernel)
    return n.fail("kernel sizes above 2^16 are not supported, got the filter " + n.type(1).str());
  int64_t groups = n.attrInt("group", 1);
  int64_t cin = wt.shape[0].size, coutPerGroup = wt.shape[1].size;
  if (groups < 1 || cin % groups != 0 || !(xt.shape[1].isStaticValue(cin)))
    return n.fail("the filter " + n.type(1).str() + " does not fit the input " + n.type(0).str() +
                  " in " + std::to_string(groups) + " groups");
  size_t spatial = rank - 2;
  auto lifted = [&](std::string_view name, int64_t fill) -> std::optional<std::vector<int64_t>> {
    size_t entries = (name == "pads" ? 2 : 1) * spatial;
    std::vector<int64_t> v = n.attrInts(name).value_or(std::vector<int64_t>(entries, fill));
    if (name == "pads" && v.size() == 2 * spatial && spatial == 1)
      return std::vector<int64_t>{0, v[0], 0, v[1]};
    if (v.size() != entries) {
      n.fail(std::string(name) + " needs one entry per spatial dim" +
             (name == "pads" ? " and side" : ""));
      return std::nullopt;
    }
    if (spatial == 1)
      v.insert(v.begin(), fill);
    return v;
  };
  auto strides = lifted("strides", 1), dilations = lifted("dilations", 1),
       outPadding = lifted("output_padding", 0), pads = lifted("pads", 0);
  if (!strides || !dilations || !outPadding || !pads)
    return false;
  std::vector<int64_t> kernel{wt.shape[2].size, wt.shape[3].size};
  if (auto k = n.attrInts("kernel_shape");
      k && *k != std::vector<int64_t>(kernel.end() - long(spatial), kernel.end()))
    return n.fail("kernel_shape does not match the filter " + n.type(1).str());
  std::optional<std::vector<int64_t>> outputShape = n.attrInts("output_shape");
  if (outputShape && outputShape->size() == spatial + 2) // with N and C
    outputShape->erase(outputShape->begin(), outputShape->begin() + 2);
  if (outputShape && outputShape->size() != spatial)
    return n.fail("output_shape needs one entry per spatial dim");
  std::string autoPad = n.attrString("auto_pad", "NOTSET");
  if (autoPad != "NOTSET" && autoPad != "VALID" && autoPad != "SAME_UPPER" &&
      autoPad != "SAME_LOWER")
    return n.fail("auto_pad '" + autoPad + "' is not supported");

  constexpr int64_t kMaxWindow = int64_t(1) << 31, kMaxPhases = 64;
  TransposedDim dims[2];
  for (unsigned i = 0; i < 2; ++i) {
    TransposedDim &d = dims[i];
    const Dim &in = xt.shape[2 + i];
    if (!in.isStatic())
      return n.fail("the spatial dims must be static, got " + n.type(0).str());
    d = {in.size, kernel[i], (*strides)[i], (*dilations)[i], (*pads)[i], 0};
    int64_t padEnd = (*pads)[i + 2], extra = (*outPadding)[i];
    for (int64_t v : {d.in, d.kernel, d.stride, d.dilation})
      if (v < 1 || v > kMaxWindow)
        return n.fail("sizes, kernel, strides and dilations must be in [1, 2^31]");
    for (int64_t v : {d.padBegin, padEnd, extra})
      if (v < 0 || v > kMaxWindow)
        return n.fail("pads and output_padding must be in [0, 2^31]");
    if (autoPad == "VALID")
      d.padBegin = padEnd = 0;
    int64_t full = d.stride * (d.in - 1) + extra + (d.kernel - 1) * d.dilation + 1;
    if (outputShape || autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      int64_t out = d.in * d.stride;
      if (outputShape) // the height of a lifted 1-D op stays 1
        out = spatial == 2 ? (*outputShape)[i] : i == 0 ? 1 : (*outputShape)[0];
      if (out < 1 || out > kMaxWindow)
        return n.fail("output_shape entries must be in [1, 2^31]");
      // ONNX splits the total padding as evenly as it can, the odd one at
      // the end for SAME_UPPER and at the begin otherwise; a negative total
      // (a larger output) extends the end.
      int64_t total = full - out, half = total >= 0 ? total / 2 : -((-total + 1) / 2);
      d.padBegin = autoPad == "SAME_UPPER" ? half : total - half;
      padEnd = total - d.padBegin;
    }
    d.out = full - d.padBegin - padEnd;
    if (d.out < 1)
      return n.fail("the padding leaves no output along spatial dim " + std::to_string(i));
  }
  if (dims[0].stride * dims[1].stride > kMaxPhases)
    return n.fail("strides whose product is over " + std::to_string(kMaxPhases) +
                  " are not supported");

  // conv2d's filter [C_out, C_in / group, kh, kw].
  int64_t cinPerGroup = cin / groups, cout = coutPerGroup * groups;
  Value *filter =
      groups == 1 ? n.b.transpose(w, {1, 0, 2, 3})
                  : n.b.reshape(n.b.transpose(
                                    n.b.reshape(w, {Dim::fixed(groups), Dim::fixed(cinPerGroup),
                                                    Dim::fixed(coutPerGroup), Dim::fixed(kernel[0]),
                                                    Dim::fixed(kernel[1])}),
                                    {0, 2, 1, 3, 4}),
                                {Dim::fixed(cout), Dim::fixed(cinPerGroup), Dim::fixed(kernel[0]),
                                 Dim::fixed(kernel[1])});
  const Dim batch = xt.shape[0];
  int64_t rowsH = dims[0].rows(), rowsW = dims[1].rows();
  auto phase = [&](int64_t rh, int64_t rw) -> Value * {
    int64_t offH = 0, offW = 0;
    std::vector<int64_t> tapsH = phaseTaps(dims[0], rh, offH), tapsW = phaseTaps(dims[1], rw, offW);
    if (tapsH.empty() || tapsW.empty())
      return n.b.create(
          OpKind::Broadcast, {scalarLike(n, x, 0)},
          {{"shape", Shape{batch, Dim::fixed(cout), Dim::fixed(rowsH), Dim::fixed(rowsW)}}});
    auto pick = [&](Value *f, unsigned axis, const std::vector<int64_t> &taps) {
      if (int64_t(taps.size()) == 1 && taps[0] == 0 && kernel[axis - 2] == 1)
        return f;
      std::vector<double> at(taps.begin(), taps.end());
      return n.b.create(OpKind::Gather, {f, n.b.constant(DType::I64, {int64_t(at.size())}, at)},
                        {{"axis", int64_t(axis)}});
    };
    Value *f = pick(pick(filter, 2, tapsH), 3, tapsW);
    int64_t dh = dims[0].dilation / std::gcd(dims[0].stride, dims[0].dilation);
    int64_t dw = dims[1].dilation / std::gcd(dims[1].stride, dims[1].dilation);
    int64_t beginH = offH + int64_t(tapsH.size() - 1) * dh;
    int64_t beginW = offW + int64_t(tapsW.size() - 1) * dw;
    int64_t endH = std::max<int64_t>(rowsH - dims[0].in - offH, 0);
    int64_t endW = std::max<int64_t>(rowsW - dims[1].in - offW, 0);
    Value *y = n.b.create(OpKind::Conv2d, {x, f},
                          {{"strides", std::vector<int64_t>{1, 1}},
                           {"pads", std::vector<int64_t>{beginH, beginW, endH, endW}},
                           {"dilations", std::vector<int64_t>{dh, dw}},
                           {"groups", groups}});
    return window(n, window(n, y, 2, 0, rowsH), 3, 0, rowsW);
  };
  Value *y;
  if (dims[0].stride == 1 && dims[1].stride == 1) {
    y = phase(0, 0);
  } else {
    // Interleave: y[.., m * sh + rh, m' * sw + rw] = phase(rh, rw)[.., m, m'].
    Shape cell{batch,         Dim::fixed(cout),  Dim::fixed(rowsH),
               Dim::fixed(1), Dim::fixed(rowsW), Dim::fixed(1)};
    std::vector<Value *> rows;
    for (int64_t rh = 0; rh < dims[0].stride; ++rh) {
      std::vector<Value *> cols;
      for (int64_t rw = 0; rw < dims[1].stride; ++rw)
        cols.push_back(n.b.reshape(phase(rh, rw), cell));
      rows.push_back(cols.size() == 1 ? cols[0]
                                      : n.b.create(OpKind::Concat, cols, {{"axis", int64_t(5)}}));
    }
    y = rows.size() == 1 ? rows[0] : n.b.create(OpKind::Concat, rows, {{"axis", int64_t(3)}});
    y = n.b.reshape(y, {batch, Dim::fixed(cout), Dim::fixed(rowsH * dims[0].stride),
                        Dim::fixed(rowsW * dims[1].stride)});
  }
  y = window(n, window(n, y, 2, dims[0].padBegin, dims[0].out), 3, dims[1].padBegin, dims[1].out);
  if (n.has(2)) {
    Value *bias = n.input(2);
    if (bias && !(bias->type().rank() == 1 && bias->type().shape[0].isStaticValue(cout)))
      return n.fail("the bias " + bias->type().str() + " must be [" + std::to_string(cout) + "]");
    y = n.b.add(y, n.b.reshape(bias, {Dim::fixed(cout), Dim::fixed(1), Dim::fixed(1)}));
  }
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
  Value *x2 = as2d(n, x);
  if (n.attrInt("ceil_mode", 0)) {
    // Ceil mode keeps a last, partial window. fusec pools in floor mode, so
    // the window gets room by more padding at the end: padding a max pool
    // ignores, and an average pool that does not count padding divides by
    // the elements it covers — exactly ceil mode's window.
    for (unsigned i = 0; x2 && i < 2; ++i) {
      const Dim &d = x2->type().shape[2 + i];
      if (!d.isStatic() || d.size > (int64_t(1) << 31))
        return n.fail("ceil_mode = 1 needs static spatial dims of at most 2^31, got " +
                      x->type().str());
      int64_t span = d.size + win->pads[i] + win->pads[i + 2] - win->kernel[i];
      if (span < 0)
        return n.fail("the window is larger than the padded input " + x->type().str());
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
