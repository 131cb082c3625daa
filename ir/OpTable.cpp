// The op table, built once from Ops.def: spelling, class, arity, inference
// function and the parsed attribute signature of every op.
#include "ir/OpTable.h"

#include "ir/Assert.h"
#include "ir/ShapeInference.h"

#include <unordered_map>

namespace fusec {

namespace {
std::vector<OpInfo> buildTable() {
  return {
#define OP(Id, spelling, cls, minOperands, maxOperands, infer, attrs)                              \
  OpInfo{OpKind::Id,                                                                               \
         spelling,                                                                                 \
         OpClass::cls,                                                                             \
         minOperands,                                                                              \
         maxOperands,                                                                              \
         &infer,                                                                                   \
         parseAttrSignature(attrs)},
#include "ir/Ops.def"
  };
}

const std::vector<OpInfo> &table() {
  static const std::vector<OpInfo> ops = buildTable();
  return ops;
}
} // namespace

std::string_view opClassName(OpClass c) {
  static constexpr std::string_view kNames[] = {"pointwise",   "reduction", "normalization",
                                                "contraction", "movement",  "window",
                                                "scan",        "structure"};
  return kNames[unsigned(c)];
}

bool isStridedView(OpKind k) {
  return k == OpKind::Reshape || k == OpKind::Transpose || k == OpKind::Slice;
}

bool isIndexedRead(OpKind k) { return k == OpKind::Gather || k == OpKind::GatherElements; }

const OpInfo &opInfo(OpKind k) {
  const OpInfo &info = table()[unsigned(k)];
  FUSEC_ASSERT(info.kind == k, "op table out of order");
  return info;
}

std::span<const OpInfo> allOps() { return table(); }

std::optional<OpKind> lookupOp(std::string_view spelling) {
  static const auto byName = [] {
    std::unordered_map<std::string_view, OpKind> m;
    for (const OpInfo &info : table())
      m.emplace(info.spelling, info.kind);
    return m;
  }();
  auto it = byName.find(spelling);
  if (it == byName.end())
    return std::nullopt;
  return it->second;
}

const AttrSpec *OpInfo::findAttr(std::string_view name) const {
  for (const AttrSpec &spec : attrs)
    if (spec.name == name)
      return &spec;
  return nullptr;
}

std::string_view InferContext::name() const { return opInfo(kind).spelling; }

const Attribute *InferContext::attrIfPresent(std::string_view name) const {
  for (const NamedAttr &a : attrs)
    if (a.name == name)
      return &a.value;
  return nullptr;
}

const Attribute &InferContext::attr(std::string_view name) const {
  if (const Attribute *a = attrIfPresent(name))
    return *a;
  const AttrSpec *spec = opInfo(kind).findAttr(name);
  FUSEC_ASSERT(spec && spec->deflt, "attribute neither present nor defaulted");
  return *spec->deflt;
}

} // namespace fusec
