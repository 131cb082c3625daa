// Resize and Upsample, spelled in fusec's ops.
//
// Note [Resize as taps]
// ONNX's interpolation is separable: along each resized axis, output
// position o reads a few input positions (its taps) with weights that depend
// on o alone — one tap for nearest, two for linear, four for cubic. The
// importer computes the taps and weights with ONNX's rules (coordinate
// transformation, nearest rounding, cubic coefficient, excluded outside
// taps, the edge clamping of taps past the ends) and writes each axis as
//
//   y = sum over taps t of gather(x, index_t, axis) * weight_t
//
// with index_t a constant list of `out` positions and weight_t a constant
// broadcast along the axis. Axes are resized one after another (the result
// is the same in exact arithmetic; ONNX's reference nests them the same
// way). tf_crop_and_resize's positions outside the region read the
// extrapolation value: a select against a constant mask at the end. The
// fusion pass gathers the gathers and the weighted sum of an axis into one
// pointwise kernel (Note [Gathered operands] in codegen/templates/Gather.cpp),
// and a gather by a 1-D index keeps its data's layout tag, so that a resize
// between convolutions runs in their NHWC layout.
//
// The rules follow ONNX's reference (onnx/backend/test/case/node/resize.py),
// which defines the conformance data: output sizes are floor(scale * size),
// and align_corners divides by scale * size - 1 in real arithmetic.
#include "frontend/onnx/Ops.h"

#include <cmath>

namespace fusec::onnximport {

namespace {

/// The most positions of one resized axis, in and out (each output
/// position is an element of the constant tap tables).
constexpr int64_t kMaxResizedSize = int64_t(1) << 20;

struct ResizeMode {
  std::string mode = "nearest";         // nearest | linear | cubic
  std::string transform = "half_pixel"; // coordinate_transformation_mode
  std::string nearest = "round_prefer_floor";
  double cubicA = -0.75;
  bool excludeOutside = false;
  double extrapolation = 0;
};

/// The taps of one resized axis: index[t][o] and weight[t][o] for output
/// position o; outside[o] for tf_crop_and_resize's extrapolated positions.
struct AxisTaps {
  std::vector<std::vector<int64_t>> index;
  std::vector<std::vector<double>> weight;
  std::vector<bool> outside;
};

std::vector<double> cubicCoefficients(double r, double a) {
  auto near = [&](double t) { return ((a + 2) * t - (a + 3)) * t * t + 1; };      // |t| <= 1
  auto far = [&](double t) { return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a; }; // 1 < |t| < 2
  return {far(r + 1), near(r), near(1 - r), far(2 - r)};
}

/// Taps of an axis of `in` positions resized to `out` by `scale`; roi is
/// this axis' [start, end] for tf_crop_and_resize.
AxisTaps axisTaps(const ResizeMode &m, int64_t in, int64_t out, double scale, double roiStart,
                  double roiEnd) {
  const int64_t n = m.mode == "cubic" ? 4 : 2; // coefficients per position
  const double outWidth = scale * double(in);
  AxisTaps taps;
  bool nearest = m.mode == "nearest";
  size_t numTaps = nearest ? 1 : size_t(n);
  taps.index.assign(numTaps, std::vector<int64_t>(size_t(out)));
  taps.weight.assign(numTaps, std::vector<double>(size_t(out)));
  taps.outside.assign(size_t(out), false);
  for (int64_t o = 0; o < out; ++o) {
    double x = double(o), src = 0;
    const std::string &t = m.transform;
    if (t == "align_corners") {
      src = outWidth == 1 ? 0 : x * double(in - 1) / (outWidth - 1);
    } else if (t == "asymmetric") {
      src = x / scale;
    } else if (t == "tf_half_pixel_for_nn") {
      src = (x + 0.5) / scale;
    } else if (t == "pytorch_half_pixel") {
      src = outWidth == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
    } else if (t == "tf_crop_and_resize") {
      // The region's extent is an f32 difference, as the reference takes it
      // of the roi tensor's f32 elements (an output that lands on an input
      // position exactly must round the same way).
      double extent = double(float(roiEnd) - float(roiStart));
      src = outWidth == 1 ? extent * double(in - 1) / 2
                          : x * extent * double(in - 1) / (outWidth - 1);
      src += roiStart * double(in - 1);
      taps.outside[size_t(o)] = src < 0 || src > double(in - 1);
    } else { // half_pixel
      src = (x + 0.5) / scale - 0.5;
    }
    // The position left of src (src - 1 when src is a position itself) and
    // the fraction past it, in (0, 1].
    double base = std::floor(src);
    if (base == src)
      base -= 1;
    double ratio = src - base;
    std::vector<double> coeff;
    if (m.mode == "cubic")
      coeff = cubicCoefficients(ratio, m.cubicA);
    else
      coeff = {1 - ratio, ratio};
    // The n positions nearest src, as the reference finds them in the input
    // padded by n / 2 edge copies on each side; then clamped into it.
    int64_t first = int64_t(base) - (n / 2 - 1) + n / 2;
    first = std::clamp<int64_t>(first, 0, in);
    std::vector<int64_t> index(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k)
      index[size_t(k)] = first + k - n / 2;
    if (m.excludeOutside) {
      double sum = 0;
      for (int64_t k = 0; k < n; ++k) {
        if (index[size_t(k)] < 0 || index[size_t(k)] >= in)
          coeff[size_t(k)] = 0;
        sum += coeff[size_t(k)];
      }
      for (double &c : coeff)
        c /= sum;
    }
    for (int64_t &i : index)
      i = std::clamp<int64_t>(i, 0, in - 1);
    if (nearest) {
      bool right;
      if (ratio == 1)
        right = true;
      else if (m.nearest == "round_prefer_ceil")
        right = ratio >= 0.5;
      else if (m.nearest == "floor")
        right = false;
      else if (m.nearest == "ceil")
        right = true;
      else // round_prefer_floor
        right = ratio > 0.5;
      taps.index[0][size_t(o)] = index[right ? 1 : 0];
      taps.weight[0][size_t(o)] = 1;
      continue;
    }
    for (size_t k = 0; k < numTaps; ++k) {
      taps.index[k][size_t(o)] = index[k];
      taps.weight[k][size_t(o)] = coeff[k];
    }
  }
  return taps;
}

/// A constant shaped to broadcast along `axis` of a rank-`rank` tensor.
Value *alongAxis(NodeImport &n, DType dtype, size_t rank, unsigned axis,
                 const std::vector<double> &values) {
  std::vector<int64_t> shape(rank, 1);
  shape[axis] = int64_t(values.size());
  return n.b.constant(dtype, shape, values);
}

/// x resized along `axis` by its taps (Note [Resize as taps]).
Value *resizeAxis(NodeImport &n, Value *x, unsigned axis, const AxisTaps &taps) {
  const TensorType &t = x->type();
  size_t out = taps.index[0].size();
  Value *sum = nullptr;
  for (size_t k = 0; k < taps.index.size(); ++k) {
    const std::vector<double> &w = taps.weight[k];
    bool last = k + 1 == taps.index.size();
    if ((sum || !last) && std::all_of(w.begin(), w.end(), [](double v) { return v == 0; }))
      continue;
    std::vector<double> positions(taps.index[k].begin(), taps.index[k].end());
    Value *index = n.b.constant(DType::I64, {int64_t(out)}, positions);
    Value *tap = n.b.create(OpKind::Gather, {x, index}, {{"axis", int64_t(axis)}});
    if (!std::all_of(w.begin(), w.end(), [](double v) { return v == 1; }))
      tap = n.b.mul(tap, alongAxis(n, t.dtype, t.rank(), axis, w));
    sum = sum ? n.b.add(sum, tap) : tap;
  }
  return sum;
}

/// Resize's attributes; nullopt after reporting an unsupported one.
std::optional<ResizeMode> readMode(NodeImport &n, bool legacy) {
  ResizeMode m;
  m.mode = n.attrString("mode", "nearest");
  if (m.mode == "bilinear") // Upsample-7's spelling
    m.mode = "linear";
  if (m.mode != "nearest" && m.mode != "linear" && m.mode != "cubic") {
    n.fail("mode '" + m.mode + "' is not supported");
    return std::nullopt;
  }
  if (legacy) { // Upsample and Resize-10: asymmetric, rounding down
    m.transform = "asymmetric";
    m.nearest = "floor";
    return m;
  }
  m.transform = n.attrString("coordinate_transformation_mode", "half_pixel");
  m.nearest = n.attrString("nearest_mode", "round_prefer_floor");
  m.cubicA = n.attrFloat("cubic_coeff_a", -0.75);
  m.excludeOutside = n.attrInt("exclude_outside", 0) != 0;
  m.extrapolation = n.attrFloat("extrapolation_value", 0);
  static const char *kTransforms[] = {"half_pixel", "pytorch_half_pixel",   "align_corners",
                                      "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"};
  if (std::find(std::begin(kTransforms), std::end(kTransforms), m.transform) ==
      std::end(kTransforms)) {
    n.fail("coordinate_transformation_mode '" + m.transform + "' is not supported");
    return std::nullopt;
  }
  static const char *kNearest[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
  if (std::find(std::begin(kNearest), std::end(kNearest), m.nearest) == std::end(kNearest)) {
    n.fail("nearest_mode '" + m.nearest + "' is not supported");
    return std::nullopt;
  }
  return m;
}

} // namespace

bool importResize(NodeImport &n) {
  const std::string &op = n.node.op_type();
  // Where the scales, sizes and roi are: Upsample-7 has scales as an
  // attribute, Upsample-9 and Resize-10 as input 1; Resize-11 on takes
  // (X, roi, scales, sizes).
  bool legacy = op == "Upsample" || n.opset < 11;
  int scalesAt = legacy ? 1 : 2, sizesAt = legacy ? -1 : 3, roiAt = legacy ? -1 : 1;
  std::optional<ResizeMode> mode = readMode(n, legacy);
  if (!mode)
    return false;
  Value *x = n.input(0);
  if (!x)
    return false;
  const TensorType &t = x->type();
  size_t rank = t.rank();
  if (mode->mode != "nearest" && !isFloat(t.dtype))
    return n.fail(mode->mode + " interpolation needs a float input, got " + t.str());

  std::vector<double> scales;
  if (op == "Upsample" && n.opset < 9) {
    scales = n.attrFloats("scales").value_or(std::vector<double>{});
  } else if (n.has(unsigned(scalesAt))) {
    std::optional<std::vector<double>> s = n.staticFloats(unsigned(scalesAt), "scales");
    if (!s)
      return false;
    scales = *s;
  }
  std::optional<std::vector<SymInt>> sizes;
  if (sizesAt >= 0 && n.has(unsigned(sizesAt))) {
    sizes = n.knownInts(unsigned(sizesAt));
    if (!sizes)
      return n.fail("sizes of Resize must be known when the model is imported (a constant, or "
                    "computed from shapes)");
  }
  if (!scales.empty() == (sizes && !sizes->empty()))
    return n.fail("needs either scales or sizes (exactly one of them)");
  if (!scales.empty() ? scales.size() != rank : sizes->size() != rank)
    return n.fail("needs one scale or size per dim of " + t.str());
  std::vector<double> roi;
  if (mode->transform == "tf_crop_and_resize") {
    if (roiAt < 0 || !n.has(unsigned(roiAt)))
      return n.fail("tf_crop_and_resize needs the roi input");
    std::optional<std::vector<double>> r = n.staticFloats(unsigned(roiAt), "roi");
    if (!r)
      return false;
    if (r->size() != 2 * rank)
      return n.fail("roi needs " + std::to_string(2 * rank) + " elements, got " +
                    std::to_string(r->size()));
    roi = *r;
  }

  Value *y = x;
  std::vector<std::pair<unsigned, std::vector<bool>>> masks;
  for (unsigned axis = 0; y && axis < rank; ++axis) {
    const Dim &d = t.shape[axis];
    bool stays = !scales.empty() ? scales[axis] == 1 : (*sizes)[axis] == SymInt::ofDim(d);
    bool movesAnyway = mode->transform == "tf_crop_and_resize" ||
                       (mode->transform == "tf_half_pixel_for_nn" && mode->mode == "nearest");
    if (stays && !movesAnyway)
      continue;
    if (!d.isStatic() || d.size > kMaxResizedSize)
      return n.fail("resizing the dim " + d.str() + " of " + t.str() +
                    " needs it static and at most 2^20");
    if (d.size == 0)
      return n.fail("cannot resize the empty dim of " + t.str());
    int64_t out;
    double scale;
    if (!scales.empty()) {
      scale = scales[axis];
      if (!(scale > 0) || scale * double(d.size) >= double(kMaxResizedSize + 1))
        return n.fail("scale " + std::to_string(scale) + " of " + t.str() +
                      " must be positive and give a size of at most 2^20");
      out = int64_t(std::floor(scale * double(d.size)));
    } else {
      const SymInt &s = (*sizes)[axis];
      if (!s.isStatic() || s.factor < 1 || s.factor > kMaxResizedSize)
        return n.fail("size " + s.str() + " must be static, in [1, 2^20]");
      out = s.factor;
      scale = double(out) / double(d.size);
    }
    if (out < 1)
      return n.fail("resizes dim " + std::to_string(axis) + " of " + t.str() + " to 0");
    double roiStart = roi.empty() ? 0 : roi[axis], roiEnd = roi.empty() ? 1 : roi[axis + rank];
    AxisTaps taps = axisTaps(*mode, d.size, out, scale, roiStart, roiEnd);
    y = resizeAxis(n, y, axis, taps);
    if (std::find(taps.outside.begin(), taps.outside.end(), true) != taps.outside.end())
      masks.emplace_back(axis, std::move(taps.outside));
  }
  for (auto &[axis, outside] : masks) {
    if (!y)
      break;
    std::vector<double> mask(outside.begin(), outside.end());
    Value *where = alongAxis(n, DType::Bool, rank, axis, mask);
    y = n.b.create(OpKind::Where, {where, scalarLike(n, y, mode->extrapolation), y});
  }
  return n.set(0, y);
}

} // namespace fusec::onnximport
