// The graph IR: a Graph is one function of typed inputs, an ordered list of
// ops in SSA form, and outputs. Values know their uses (including uses as a
// graph output) so that replace-all-uses and erase are cheap and safe.
//
// Ownership: a Graph owns its ops and input values; an op owns its results
// and its body graph, if it has one (a `kernel` op does). A body is isolated:
// its ops use only its own inputs and values, never the enclosing graph's.
// Op order is a linked list so that insert and erase do not move other ops.
#pragma once

#include "ir/Attribute.h"
#include "ir/Diagnostics.h"
#include "ir/OpTable.h"
#include "ir/Types.h"

#include <iterator>
#include <list>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace fusec {

class Graph;
class Op;

/// A use of a value: operand `index` of `user`, or graph output `index` when
/// user is null.
struct Use {
  Op *user;
  unsigned index;
  bool operator==(const Use &o) const = default;
};

/// A link of a value's use list. The list is intrusive (the links live in
/// the using op, or in the graph for its outputs) so that dropping a use is
/// O(1) and the list keeps the order in which uses were added.
struct UseNode {
  Use use{nullptr, 0};
  UseNode *prev = nullptr;
  UseNode *next = nullptr;
};

/// A value's uses in the order they were added; a view, invalidated by
/// changes to the value's uses.
class UseRange {
public:
  class iterator {
  public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Use;
    using difference_type = std::ptrdiff_t;
    using pointer = const Use *;
    using reference = const Use &;
    iterator() = default;
    explicit iterator(const UseNode *n) : node(n) {}
    const Use &operator*() const { return node->use; }
    const Use *operator->() const { return &node->use; }
    iterator &operator++() {
      node = node->next;
      return *this;
    }
    iterator operator++(int) {
      iterator old = *this;
      node = node->next;
      return old;
    }
    bool operator==(const iterator &o) const = default;

  private:
    const UseNode *node = nullptr;
  };

  UseRange(const UseNode *head, size_t count) : head(head), count(count) {}
  iterator begin() const { return iterator(head); }
  iterator end() const { return iterator(); }
  size_t size() const { return count; }
  bool empty() const { return count == 0; }

private:
  const UseNode *head;
  size_t count;
};

class Value {
public:
  const TensorType &type() const { return ty; }
  void setType(TensorType t) { ty = std::move(t); }
  const std::string &name() const { return nm; }
  /// Renames the value; the caller keeps names unique (Graph::uniqueName).
  void setName(std::string n);
  Graph *graph() const { return owner; }
  /// The op that defines this value; null for a graph input.
  Op *definingOp() const { return def; }
  bool isGraphInput() const { return def == nullptr; }
  /// Result index in the defining op, or input index in the graph.
  unsigned index() const { return idx; }
  UseRange uses() const { return {useHead, useCount}; }
  bool hasUses() const { return useCount != 0; }
  /// Makes every user of this value (graph outputs too) use `other` instead.
  void replaceAllUsesWith(Value *other);

private:
  friend class Op;
  friend class Graph;
  void addUse(UseNode &node, Use u);
  void removeUse(UseNode &node);
  Value(TensorType t, std::string n, Graph *g, Op *d, unsigned i)
      : ty(std::move(t)), nm(std::move(n)), owner(g), def(d), idx(i) {}

  TensorType ty;
  std::string nm;
  Graph *owner;
  Op *def;
  unsigned idx;
  UseNode *useHead = nullptr;
  UseNode *useTail = nullptr;
  size_t useCount = 0;
};

class Op {
public:
  ~Op();
  OpKind kind() const { return k; }
  const OpInfo &info() const { return opInfo(k); }
  std::string_view name() const { return info().spelling; }
  Graph *parent() const { return owner; }
  const Loc &loc() const { return location; }
  void setLoc(Loc l) { location = std::move(l); }

  unsigned numOperands() const { return unsigned(ins.size()); }
  Value *operand(unsigned i) const { return ins[i]; }
  const std::vector<Value *> &operands() const { return ins; }
  void setOperand(unsigned i, Value *v);

  unsigned numResults() const { return unsigned(outs.size()); }
  Value *result(unsigned i = 0) const { return outs[i].get(); }
  /// Whether any result has a use (an operand or a graph output).
  bool hasUses() const;

  const AttrList &attrs() const { return attributes; }
  /// The attribute, or null when absent (defaults are not consulted).
  const Attribute *attrIfPresent(std::string_view name) const;
  /// The attribute or its default from the op table; asserts one exists.
  const Attribute &attr(std::string_view name) const;
  void setAttr(std::string name, Attribute value);
  void removeAttr(std::string_view name);
  int64_t getInt(std::string_view n) const { return attr(n).get<int64_t>(); }
  double getFloat(std::string_view n) const { return attr(n).get<double>(); }
  bool getBool(std::string_view n) const { return attr(n).get<bool>(); }
  const std::string &getString(std::string_view n) const { return attr(n).get<std::string>(); }
  const std::vector<int64_t> &getInts(std::string_view n) const {
    return attr(n).get<std::vector<int64_t>>();
  }
  DType getDType(std::string_view n) const { return attr(n).get<DType>(); }
  const Shape &getShape(std::string_view n) const { return attr(n).get<Shape>(); }
  const DenseData &getDense(std::string_view n) const { return *attr(n).get<DenseRef>(); }

  /// Whether every operand and result has a static shape.
  bool hasStaticShapes() const;

  /// The body graph (a `kernel` op's), or null.
  Graph *body() const { return bodyGraph.get(); }
  /// Gives the op a body, replacing any it had (null: none).
  void setBody(std::unique_ptr<Graph> body);

private:
  friend class Graph;
  friend class Value;
  Op(OpKind kind, Graph *g, Loc l) : k(kind), owner(g), location(std::move(l)) {}

  OpKind k;
  Graph *owner;
  Loc location;
  std::vector<Value *> ins;
  std::vector<UseNode> operandUses; // operandUses[i] links ins[i]'s use list; never resized
  std::vector<std::unique_ptr<Value>> outs;
  AttrList attributes;
  std::unique_ptr<Graph> bodyGraph;
  std::list<std::unique_ptr<Op>>::iterator pos;
};

class Graph {
public:
  explicit Graph(std::string name = "main") : nm(std::move(name)) {}
  Graph(const Graph &) = delete;
  Graph &operator=(const Graph &) = delete;

  const std::string &name() const { return nm; }
  void setName(std::string n) { nm = std::move(n); }
  const Loc &loc() const { return location; }
  void setLoc(Loc l) { location = std::move(l); }

  // Inputs.
  Value *addInput(std::string name, TensorType type);
  unsigned numInputs() const { return unsigned(ins.size()); }
  Value *input(unsigned i) const { return ins[i].get(); }
  std::vector<Value *> inputs() const;

  // Ops. `before` null means append at the end.
  Op *createOp(OpKind kind, const std::vector<Value *> &operands,
               const std::vector<TensorType> &resultTypes, AttrList attrs = {}, Loc loc = {},
               Op *before = nullptr);
  /// Erases an op whose results have no uses.
  void erase(Op *op);
  /// Moves `op` to just before `before` (null: to the end).
  void moveBefore(Op *op, Op *before);
  const std::list<std::unique_ptr<Op>> &ops() const { return opList; }
  size_t numOps() const { return opList.size(); }
  /// Ops in order as plain pointers: a snapshot safe to iterate while mutating.
  std::vector<Op *> opsSnapshot() const;
  /// The op after `op` in order, or null when `op` is the last.
  Op *nextOp(const Op *op) const;

  // Outputs.
  void setOutputs(const std::vector<Value *> &values);
  const std::vector<Value *> &outputs() const { return outs; }
  void setOutput(unsigned i, Value *v);

  /// A name no value of this graph has had: `hint` if free, else hint.1,
  /// hint.2, ...; with no hint, the next free number.
  std::string uniqueName(std::string_view hint = "");

  /// Deep copy, bodies included; constant data is shared (it is immutable).
  std::unique_ptr<Graph> clone() const;

private:
  friend class Value;
  std::string nm;
  Loc location;
  std::vector<std::unique_ptr<Value>> ins;
  std::list<std::unique_ptr<Op>> opList;
  std::vector<Value *> outs;
  std::vector<UseNode> outputUses; // outputUses[k] links outs[k]'s use list
  std::unordered_set<std::string> usedNames;
  std::unordered_map<std::string, unsigned> nextSuffix; // hint → first suffix not known taken
  size_t nextNumber = 0;
};

/// What a .fir file or a model file holds: one or more graphs.
struct Module {
  std::vector<std::unique_ptr<Graph>> graphs;
};

} // namespace fusec
