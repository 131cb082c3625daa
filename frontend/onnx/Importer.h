// The importer's state, shared by the driver (Importer.cpp) and the op
// handlers (Ops*.cpp). Internal to frontend/onnx.
//
// Note [Values known at import]
// ONNX spells shapes as tensors: Reshape's target is an input, often
// computed by Shape -> Gather -> Unsqueeze -> Concat from another tensor's
// shape. fusec's ops take shapes as attributes, so the importer evaluates
// that arithmetic itself. Every ONNX tensor is a Term: a graph value, and,
// for small integer tensors (rank 0 or 1) whose elements are known, those
// elements as SymInts — a static factor times named dims, so that a model
// whose inputs name dims (dim_param batch, sequence) keeps them symbolic and
// one import serves every size. Initializers and Constant values are known
// too (as data). A term's graph value is made only when an op reads it as a
// tensor, so shape arithmetic leaves no ops behind.
#pragma once

#include "frontend/onnx/OnnxImport.h"
#include "frontend/onnx/OnnxTensor.h"
#include "ir/Builder.h"

#include "llvm/ADT/StringMap.h"

#include <optional>
#include <vector>

namespace fusec::onnximport {

/// An integer known at import: factor times the product of `names` (sorted),
/// or unknown (an anonymous dim, or arithmetic the importer does not follow).
struct SymInt {
  int64_t factor = 1;
  std::vector<std::string> names;
  bool unknown = false;

  static SymInt of(int64_t v) { return SymInt{v, {}, false}; }
  static SymInt ofDim(const Dim &d);
  static SymInt unknownValue() { return SymInt{0, {}, true}; }
  bool isStatic() const { return !unknown && names.empty(); }
  /// The dim this value is, if it is one: a static size or one name.
  std::optional<Dim> asDim() const;
  bool operator==(const SymInt &o) const = default;
  std::string str() const;
};

SymInt operator*(const SymInt &a, const SymInt &b);

struct Term {
  Value *value = nullptr; // the graph value; made on first use when `data` or `ints` is set
  TensorType type;
  DenseRef data;                           // contents of an initializer or Constant
  std::optional<std::vector<SymInt>> ints; // Note [Values known at import]
};

class Importer;

/// One node being imported: its inputs as terms, its attributes, and where
/// its results go. Handlers report through fail(), located at the node.
class NodeImport {
public:
  NodeImport(Importer &im, const onnx::NodeProto &node, Loc loc, int64_t opset);

  const onnx::NodeProto &node;
  const Loc loc;
  const int64_t opset; // of the default domain
  Builder &b;

  /// Inputs given (a trailing or middle input may be left out by an empty name).
  unsigned numInputs() const { return unsigned(node.input_size()); }
  bool has(unsigned i) const { return i < numInputs() && !node.input(int(i)).empty(); }
  const Term &term(unsigned i) const;
  const TensorType &type(unsigned i) const { return term(i).type; }
  /// Input i as a graph value; null after an error.
  Value *input(unsigned i);
  /// Input i's elements, which must be known at import (static); nullopt
  /// after reporting what is missing. `what` names the input in messages.
  std::optional<std::vector<int64_t>> staticInts(unsigned i, std::string_view what);
  /// Input i's elements known at import, static or symbolic, or nullopt.
  const std::optional<std::vector<SymInt>> &knownInts(unsigned i) const { return term(i).ints; }
  /// Input i's float elements, which must be a known constant.
  std::optional<std::vector<double>> staticFloats(unsigned i, std::string_view what);

  bool hasAttr(std::string_view name) const { return findAttr(name) != nullptr; }
  const onnx::AttributeProto *findAttr(std::string_view name) const;
  int64_t attrInt(std::string_view name, int64_t fallback) const;
  double attrFloat(std::string_view name, double fallback) const;
  std::string attrString(std::string_view name, std::string fallback) const;
  std::optional<std::vector<int64_t>> attrInts(std::string_view name) const;
  std::optional<std::vector<double>> attrFloats(std::string_view name) const;

  unsigned numOutputs() const { return unsigned(node.output_size()); }
  bool wants(unsigned i) const { return i < numOutputs() && !node.output(int(i)).empty(); }
  /// Binds output i to a graph value (null: an error already reported).
  bool set(unsigned i, Value *v);
  /// Binds output i to input `from` itself (Identity, a cast to the same
  /// dtype): the same term, no op.
  bool alias(unsigned i, unsigned from);
  /// Binds output i to elements known at import, of `dtype` (an integer).
  bool setInts(unsigned i, std::vector<SymInt> ints, DType dtype, bool scalar);
  /// Binds output i to a known constant, charging its bytes to the import's
  /// budget unless tensorAttr already did.
  bool setData(unsigned i, DenseData data, bool charged = false);
  /// Reads a tensor attribute's contents (charged to the import's budget);
  /// nullopt after reporting why not.
  std::optional<DenseData> tensorAttr(const onnx::TensorProto &t, std::string_view what);

  /// Reports an error at the node; returns false.
  bool fail(std::string message);

private:
  Importer &im;
};

/// Imports one node; false after reporting why.
using OpHandler = bool (*)(NodeImport &);
/// The handler of an op type of the default domain, or null when fusec does
/// not import it.
OpHandler findHandler(std::string_view opType);
/// Every op type with a handler, sorted (docs/onnx.md and `fusec import --list-ops`).
std::vector<std::string> supportedOps();

/// Converts a known element list to a fusec shape: a static size, a named
/// dim, or `?` for a product of names or an unknown value.
Shape shapeOf(const std::vector<SymInt> &ints);
/// A reshape target from known elements: static sizes, named dims, -1, and
/// for products of names (batch * seq) a -1 when there is no other, `?`
/// otherwise (checked at run time).
Shape reshapeTarget(const std::vector<SymInt> &ints);

} // namespace fusec::onnximport
