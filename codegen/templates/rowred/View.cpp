// The row_reduction template's view of shapes (see RowReductionView.h).
//
// An anchor reduces one contiguous block of axes [begin, end) of its input
// S: reduce_* over its `axes` (all axes when empty), layer_norm and rms_norm
// over [axis, rank), softmax over [axis, axis + 1). The view splits S into
// three groups, outer [0, begin), reduced [begin, end) and inner [end,
// rank); end == rank is the row path (rows of `reduced` elements), anything
// else the column path. Another value of the body broadcasts against the
// view group by group: within a group, either every axis matches S (the
// value varies along the group) or every axis is 1 or absent (it does not);
// a value that matches part of a group is refused, because one flat
// coordinate per group could not index it.
#include "codegen/templates/rowred/View.h"

#include <algorithm>
#include <cstdint>

namespace fusec::rowred {

GroupBit View::groupOf(unsigned axis) const {
  if (axis < begin)
    return Outer;
  return axis < end ? Reduced : Inner;
}

bool isAnchor(const Op &op) {
  switch (op.kind()) {
  case OpKind::ReduceSum:
  case OpKind::ReduceMax:
  case OpKind::ReduceMin:
  case OpKind::ReduceMean:
  case OpKind::LayerNorm:
  case OpKind::RmsNorm:
  case OpKind::Softmax:
    return true;
  default:
    return false;
  }
}

static std::string axesText(const std::vector<unsigned> &axes) {
  std::string s;
  for (unsigned a : axes)
    s += (s.empty() ? "" : ", ") + std::to_string(a);
  return "[" + s + "]";
}

/// The normalized, sorted axes of a reduce_* op (all axes when empty).
static std::vector<unsigned> reducedAxes(const Op &op) {
  size_t rank = op.operand(0)->type().rank();
  std::vector<unsigned> axes;
  for (int64_t a : op.getInts("axes"))
    axes.push_back(*normalizeAxis(a, rank));
  if (op.getInts("axes").empty())
    for (unsigned a = 0; a < rank; ++a)
      axes.push_back(a);
  std::sort(axes.begin(), axes.end());
  return axes;
}

std::optional<std::pair<unsigned, unsigned>> anchorBlock(const Op &anchor, Diagnostics &diags) {
  unsigned rank = unsigned(anchor.operand(0)->type().rank());
  if (anchor.kind() == OpKind::LayerNorm || anchor.kind() == OpKind::RmsNorm)
    return std::pair(*normalizeAxis(anchor.getInt("axis"), rank), rank);
  if (anchor.kind() == OpKind::Softmax) {
    unsigned axis = *normalizeAxis(anchor.getInt("axis"), rank);
    return std::pair(axis, axis + 1);
  }
  std::vector<unsigned> axes = reducedAxes(anchor);
  if (axes.empty()) // a rank-0 input: one row of one element
    return std::pair(0u, 0u);
  if (axes.back() - axes.front() + 1 == axes.size())
    return std::pair(axes.front(), axes.back() + 1);
  diags.error(anchor.loc(), "'" + std::string(anchor.name()) + "' reduces axes " + axesText(axes) +
                                " of " + anchor.operand(0)->type().str() +
                                "; the row_reduction template needs one contiguous block of axes");
  return std::nullopt;
}

std::optional<View> makeView(const Op &anchor, std::pair<unsigned, unsigned> block,
                             Diagnostics &diags) {
  const TensorType &x = anchor.operand(0)->type();
  View view{x.shape, x.dtype, block.first, block.second, 1, 1, int64_t(1)};
  for (unsigned axis = 0; axis < x.rank(); ++axis) {
    const Dim &d = x.shape[axis];
    GroupBit g = view.groupOf(axis);
    if (g == Outer) {
      view.outer = d.isStatic() && view.outer ? std::optional(*view.outer * d.size) : std::nullopt;
      continue;
    }
    if (!d.isStatic()) {
      diags.error(anchor.loc(), "'" + std::string(anchor.name()) + "' of " + x.str() + ": the " +
                                    (g == Reduced ? "reduced" : "inner") +
                                    " extent must be static for the row_reduction template");
      return std::nullopt;
    }
    (g == Reduced ? view.reduced : view.inner) *= d.size;
  }
  if (view.reduced * view.inner > INT32_MAX) { // columns are `int` in the kernel
    diags.error(anchor.loc(), "'" + std::string(anchor.name()) + "' of " + x.str() +
                                  ": rows of more than 2^31 - 1 elements are not supported by "
                                  "the row_reduction template");
    return std::nullopt;
  }
  return view;
}

std::optional<unsigned> classify(const View &view, const Shape &shape, bool rowForm) {
  std::vector<unsigned> axes; // the view's axes that `shape` aligns with
  for (unsigned a = 0; a < view.shape.size(); ++a)
    if (!rowForm || view.groupOf(a) != Reduced)
      axes.push_back(a);
  if (shape.size() > axes.size())
    return std::nullopt;
  size_t lead = axes.size() - shape.size();
  unsigned matched = 0, broadcast = 0;
  for (size_t i = 0; i < axes.size(); ++i) {
    const Dim &s = view.shape[axes[i]];
    GroupBit g = view.groupOf(axes[i]);
    if (s.isStaticValue(1))
      continue; // a size-1 axis neither varies nor broadcasts
    if (i < lead || shape[i - lead].isStaticValue(1))
      broadcast |= g;
    else if (shape[i - lead] == s)
      matched |= g;
    else
      return std::nullopt;
  }
  if (matched & broadcast)
    return std::nullopt;
  return matched;
}

std::string describe(const View &view) {
  return TensorType{view.dtype, view.shape, Layout::None}.str() + " reduced over axes [" +
         std::to_string(view.begin) + ", " + std::to_string(view.end) + ")";
}

} // namespace fusec::rowred
