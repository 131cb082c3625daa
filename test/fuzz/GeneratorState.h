// The graph generator's state, shared by its two files: GraphGenerator.cpp
// (decisions, dims, leaves, graphs and the module) and GraphGeneratorOps.cpp
// (one recipe per op kind). Internal to the fuzzers.
#pragma once

#include "ir/Builder.h"
#include "test/fuzz/GraphGenerator.h"

#include <deque>
#include <functional>
#include <fuzzer/FuzzedDataProvider.h>
#include <optional>
#include <set>
#include <span>

namespace fusec::fuzz {

/// A value of the graph being built and its concrete sizes.
struct Item {
  Value *value;
  std::vector<int64_t> sizes;
  DType dtype() const { return value->type().dtype; }
  size_t rank() const { return sizes.size(); }
  const Dim &dim(size_t i) const { return value->type().shape[i]; }
};

/// One dim of a new value: its symbolic form and its concrete size.
struct DimPick {
  Dim dim;
  int64_t size;
};
using ShapePick = std::vector<DimPick>;

/// The dtypes an operand may have.
enum class Want { Any, Numeric, Float };
inline bool accepts(Want want, DType t) {
  return want == Want::Any || (want == Want::Float ? isFloat(t) : t != DType::Bool);
}

class Generator {
public:
  Generator(FuzzedDataProvider &data, const GeneratorLimits &limits) : data(data), limits(limits) {}
  GeneratedModule run();

  // Decisions (GraphGenerator.cpp).
  /// True `percent` times in 100; false once the bytes run out.
  bool chance(unsigned percent) {
    return data.ConsumeIntegralInRange<unsigned>(1, 100) > 100 - percent;
  }
  /// A number in [lo, hi].
  int64_t range(int64_t lo, int64_t hi) { return data.ConsumeIntegralInRange<int64_t>(lo, hi); }
  /// One element of a non-empty array, vector or deque.
  template <typename Range> decltype(auto) oneOf(Range &&choices) {
    return choices[data.ConsumeIntegralInRange<size_t>(0, std::size(choices) - 1)];
  }
  DType anyDType();
  DType dtypeFor(Want want);

  // Dims and shapes.
  DimPick freshDim();
  ShapePick freshShape(size_t minRank, size_t maxRank);
  /// A dim of concrete size `size` that agrees with `d` (same name, same
  /// static size, or a `?` against whatever has that size).
  DimPick agreeingDim(const Dim &d, int64_t size);
  /// A shape that broadcasts with x's to x's concrete shape or a larger one.
  ShapePick partnerShape(const Item &x);

  // Values of the current graph.
  /// A new graph input, or a constant when the shape is static (always a
  /// constant in a kernel body, which cannot take new inputs); null when a
  /// body would need an input.
  Item *leaf(DType dtype, const ShapePick &shape, Layout layout = Layout::None);
  /// A constant; with `nonZero`, of elements none of which is zero.
  Item *constant(DType dtype, const std::vector<int64_t> &sizes, bool nonZero = false);
  /// A constant of integer `dtype` whose elements lie in [-extent, extent): a gather's indices
  /// (an input's values would be -1, 0 or 1 only, and out of range where extent is 1).
  Item *indexConstant(DType dtype, const std::vector<int64_t> &sizes, int64_t extent);
  /// A value of the graph satisfying `fits`, or, sometimes or when there is
  /// none, `make()`.
  Item *pick(const std::function<bool(const Item &)> &fits, const std::function<Item *()> &make);
  /// pick() of a value whose dtype `want` accepts and whose rank is in
  /// [minRank, maxRank], made as a leaf when there is none.
  Item *operand(Want want, size_t minRank = 0, size_t maxRank = 4);
  /// A partner of `x` for a broadcasting op: a value that broadcasts with it
  /// (symbolically and concretely), else a leaf of partnerShape(x).
  Item *partner(const Item &x, DType dtype);

  /// Creates the op, keeping it only if its types infer both symbolically
  /// and for the concrete sizes (`concreteAttrs` replace attributes that
  /// hold symbolic dims); names its results. The first result, or null.
  Item *make(OpKind kind, const std::vector<Item *> &operands, AttrList attrs,
             const AttrList &concreteAttrs = {});

  // Recipes (GraphGeneratorOps.cpp): add one op of `kind` to the current
  // graph; false when it could not (the caller tries another).
  bool addOp(OpKind kind);
  /// Adds `count` ops of random kinds (fewer when the bytes run out).
  void addOps(size_t count);
  bool addPointwise(OpKind kind);
  bool addReduction(OpKind kind);
  bool addNormalization(OpKind kind);
  bool addContraction(OpKind kind);
  bool addMovement(OpKind kind);
  bool addWindow(OpKind kind);
  bool addScan(OpKind kind);
  bool addKernel();
  bool addReshape(Item &x);
  /// A value of `shape`: sometimes a view of a new leaf the way attention's operands are (a
  /// transpose, a slice of a stack, a head split), else a leaf.
  Item *viewedLeaf(DType dtype, const ShapePick &shape);
  /// Sometimes the head merge after attention: heads and rows swapped, the heads' dims merged.
  void mergeHeads(Item &o);
  bool addBroadcast(Item &x);
  bool addSlice(Item &x);
  bool addConcat(Item &x, size_t extra);
  bool addGather(Item &x);
  bool addGatherElements(Item &x);
  bool addConv(Item &x);

  // Big modules (GraphGeneratorOps.cpp).
  void addBigChain(size_t length);
  void addBigConcat(size_t operands);

  /// Batch dims that broadcast with x's leading `lead` dims (some of
  /// those dropped, some made 1): a contraction partner's leading dims.
  ShapePick batchPartner(const Item &x, size_t lead);

  /// A name for a new value: an odd one (`y.1`, `y_1`, `y$1`, ...) or the
  /// graph's next number.
  std::string valueName();

  FuzzedDataProvider &data;
  const GeneratorLimits &limits;
  /// The graph being built (a top-level graph or a kernel body) and its values.
  Graph *graph = nullptr;
  std::deque<Item> *items = nullptr; // a deque: items are referenced while it grows
  bool inBody = false;
  bool plainNames = false; // big modules: numbered names only (odd ones cost a search each)
  Diagnostics diags;       // the builder's; errors here mean "try another op"
  /// The current top-level graph's named dims and sizes, and its `?` size.
  std::vector<std::pair<std::string, int64_t>> namedDims;
  int64_t anonSize = 3;
  /// The dim names the current graph's inputs use (the only ones it can bind).
  std::set<std::string> boundNames;
  std::vector<std::vector<int64_t>> *inputShapes = nullptr;
};

} // namespace fusec::fuzz
