// The op table as C++: OpKind and the per-op facts, all derived from Ops.def.
#pragma once

#include "ir/Attribute.h"
#include "ir/Types.h"

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace fusec {

class Graph;

// Note [Exhaustive op switches]
// A switch over OpKind has no default, so that an op added to Ops.def fails
// to compile wherever ops are dispatched (-Werror=switch): the CPU reference,
// each back end's pointwise math, the generic kernels. A switch over the ops
// of one class names the others with ir/OpCases.def. A helper over a smaller
// set (the binary arithmetic ops, say) keeps a default that asserts: it is
// reached only from such a switch, whose case for a new op must choose it.
enum class OpKind : uint16_t {
#define OP(Id, spelling, cls, minOperands, maxOperands, infer, attrs) Id,
#include "ir/Ops.def"
};

enum class OpClass : uint8_t {
  Pointwise,
  Reduction,
  Normalization,
  Contraction,
  Movement,
  Window,
  Scan,
  Structure
};
std::string_view opClassName(OpClass c);

struct AttrSpec {
  std::string name;
  AttrKind kind;
  bool optional = false;          // may be absent (with or without a default)
  std::optional<Attribute> deflt; // value used when absent
};

/// What an inference function sees: the op's operands' types and attributes
/// (attributes already checked against the signature, defaults not filled).
struct InferContext {
  OpKind kind;
  std::span<const TensorType> operands;
  const AttrList &attrs;
  /// The op's body graph (a `kernel` op's), or null.
  const Graph *body = nullptr;

  std::string_view name() const;
  /// The attribute or its default; asserts that one of them exists.
  const Attribute &attr(std::string_view name) const;
  const Attribute *attrIfPresent(std::string_view name) const;
  int64_t getInt(std::string_view n) const { return attr(n).get<int64_t>(); }
  double getFloat(std::string_view n) const { return attr(n).get<double>(); }
  bool getBool(std::string_view n) const { return attr(n).get<bool>(); }
  const std::string &getString(std::string_view n) const { return attr(n).get<std::string>(); }
  const std::vector<int64_t> &getInts(std::string_view n) const {
    return attr(n).get<std::vector<int64_t>>();
  }
};

/// Infers result types. On failure it calls `error` once per problem with a
/// message in the diagnostic style (no location; the caller adds it) and
/// returns false.
using InferFn = bool (*)(const InferContext &ctx, std::vector<TensorType> &results,
                         const std::function<void(std::string)> &error);

struct OpInfo {
  OpKind kind;
  std::string_view spelling;
  OpClass cls;
  int minOperands, maxOperands; // maxOperands -1 = variadic
  InferFn infer;
  std::vector<AttrSpec> attrs;

  const AttrSpec *findAttr(std::string_view name) const;
};

const OpInfo &opInfo(OpKind k);
std::optional<OpKind> lookupOp(std::string_view spelling);

/// Whether ops of kind `k` may show their operand's elements through new strides and a first
/// element, moving none (reshape where the layout allows, transpose, slice): the views a kernel
/// can read or write in place.
bool isStridedView(OpKind k);

/// Whether ops of kind `k` read their data at indices that are data themselves (gather,
/// gather_elements).
bool isIndexedRead(OpKind k);

/// Every op, in table order.
std::span<const OpInfo> allOps();

/// Parses an attribute-signature string of Ops.def ("a: int = 1, ?b: ints").
/// Defined with the text parser, which owns the attribute-literal syntax.
std::vector<AttrSpec> parseAttrSignature(std::string_view sig);

} // namespace fusec
