// How the row_reduction template sees a body's shapes, internal to codegen/:
// the reduced block of axes of an anchor (a reduction or a normalization),
// the view [outer, reduced, inner] it defines, and how another shape
// broadcasts against that view.
#pragma once

#include "codegen/templates/rowred/Plan.h"

#include <optional>
#include <string>
#include <utility>

namespace fusec::rowred {

/// Whether `op` anchors a row reduction: reduce_*, layer_norm, rms_norm, softmax.
bool isAnchor(const Op &op);

/// The axes [begin, end) an anchor reduces over, or nullopt after reporting
/// an error when they are not one contiguous block.
std::optional<std::pair<unsigned, unsigned>> anchorBlock(const Op &anchor, Diagnostics &diags);

/// The view of `anchor`'s input reduced over `block`, or nullopt after
/// reporting an error when the reduced or inner extent is symbolic.
std::optional<View> makeView(const Op &anchor, std::pair<unsigned, unsigned> block,
                             Diagnostics &diags);

/// The groups along which a value of `shape` varies, broadcast (numpy,
/// right-aligned) against the view, or against the view without its reduced
/// axes when `rowForm` (the shape of a reduction's result without keepdims).
/// Nullopt when it spans a group only partly or does not broadcast. Groups
/// of extent 1 count as not spanned.
std::optional<unsigned> classify(const View &view, const Shape &shape, bool rowForm);

/// "f16[4,1024] over axes [1, 2)", for messages.
std::string describe(const View &view);

} // namespace fusec::rowred
