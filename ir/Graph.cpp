// Graph mutation: use lists, replace-all-uses, insertion, erasure, cloning.
//
// Invariant: for every op operand i holding value v, v->uses() contains
// {op, i} exactly once; for every graph output k holding v, v->uses()
// contains {nullptr, k} exactly once. Every mutation below keeps it.
#include "ir/Graph.h"

#include "ir/Assert.h"

#include <algorithm>
#include <unordered_map>

namespace fusec {

void Value::addUse(UseNode &node, Use u) {
  node.use = u;
  node.prev = useTail;
  node.next = nullptr;
  (useTail ? useTail->next : useHead) = &node;
  useTail = &node;
  ++useCount;
}

void Value::removeUse(UseNode &node) {
  FUSEC_ASSERT(useCount > 0, "use list out of sync");
  (node.prev ? node.prev->next : useHead) = node.next;
  (node.next ? node.next->prev : useTail) = node.prev;
  node.prev = node.next = nullptr;
  --useCount;
}

void Value::replaceAllUsesWith(Value *other) {
  FUSEC_ASSERT(other && other != this, "replacing a value with itself or null");
  FUSEC_ASSERT(other->owner == owner, "replacing a value with one of another graph");
  for (UseNode *n = useHead; n; n = n->next) {
    if (n->use.user)
      n->use.user->ins[n->use.index] = other;
    else
      owner->outs[n->use.index] = other;
  }
  if (!useHead)
    return;
  // Splice the whole list onto the end of other's, keeping its order.
  useHead->prev = other->useTail;
  (other->useTail ? other->useTail->next : other->useHead) = useHead;
  other->useTail = useTail;
  other->useCount += useCount;
  useHead = useTail = nullptr;
  useCount = 0;
}

void Value::setName(std::string n) {
  owner->usedNames.insert(n);
  nm = std::move(n);
}

Op::~Op() = default;

bool Op::hasStaticShapes() const {
  for (const Value *v : ins)
    if (!isStatic(v->type().shape))
      return false;
  for (const auto &r : outs)
    if (!isStatic(r->type().shape))
      return false;
  return true;
}

void Op::setBody(std::unique_ptr<Graph> body) { bodyGraph = std::move(body); }

void Op::setOperand(unsigned i, Value *v) {
  FUSEC_ASSERT(i < ins.size() && v, "bad operand index or null value");
  ins[i]->removeUse(operandUses[i]);
  ins[i] = v;
  v->addUse(operandUses[i], {this, i});
}

bool Op::hasUses() const {
  for (const auto &r : outs)
    if (r->hasUses())
      return true;
  return false;
}

const Attribute *Op::attrIfPresent(std::string_view name) const {
  for (const NamedAttr &a : attributes)
    if (a.name == name)
      return &a.value;
  return nullptr;
}

const Attribute &Op::attr(std::string_view name) const {
  if (const Attribute *a = attrIfPresent(name))
    return *a;
  const AttrSpec *spec = info().findAttr(name);
  FUSEC_ASSERT(spec && spec->deflt, "attribute neither present nor defaulted");
  return *spec->deflt;
}

void Op::setAttr(std::string name, Attribute value) {
  for (NamedAttr &a : attributes)
    if (a.name == name) {
      a.value = std::move(value);
      return;
    }
  attributes.push_back({std::move(name), std::move(value)});
}

void Op::removeAttr(std::string_view name) {
  std::erase_if(attributes, [&](const NamedAttr &a) { return a.name == name; });
}

Value *Graph::addInput(std::string name, TensorType type) {
  if (name.empty())
    name = uniqueName();
  usedNames.insert(name);
  ins.push_back(std::unique_ptr<Value>(
      new Value(std::move(type), std::move(name), this, nullptr, unsigned(ins.size()))));
  return ins.back().get();
}

std::vector<Value *> Graph::inputs() const {
  std::vector<Value *> out;
  for (const auto &v : ins)
    out.push_back(v.get());
  return out;
}

Op *Graph::createOp(OpKind kind, const std::vector<Value *> &operands,
                    const std::vector<TensorType> &resultTypes, AttrList attrs, Loc loc,
                    Op *before) {
  auto op = std::unique_ptr<Op>(new Op(kind, this, std::move(loc)));
  Op *raw = op.get();
  raw->ins = operands;
  raw->operandUses.resize(operands.size());
  for (unsigned i = 0; i < operands.size(); ++i) {
    FUSEC_ASSERT(operands[i], "null operand");
    operands[i]->addUse(raw->operandUses[i], {raw, i});
  }
  for (const TensorType &t : resultTypes)
    raw->outs.push_back(std::unique_ptr<Value>(
        new Value(t, uniqueName(), this, raw, unsigned(raw->outs.size()))));
  raw->attributes = std::move(attrs);
  auto at = before ? before->pos : opList.end();
  FUSEC_ASSERT(!before || before->owner == this, "inserting before an op of another graph");
  raw->pos = opList.insert(at, std::move(op));
  return raw;
}

void Graph::erase(Op *op) {
  FUSEC_ASSERT(op && op->owner == this, "erasing an op of another graph");
  for (unsigned i = 0; i < op->numResults(); ++i)
    FUSEC_ASSERT(!op->result(i)->hasUses(), "erasing an op whose results are still used");
  for (unsigned i = 0; i < op->ins.size(); ++i)
    op->ins[i]->removeUse(op->operandUses[i]);
  opList.erase(op->pos);
}

void Graph::moveBefore(Op *op, Op *before) {
  FUSEC_ASSERT(op->owner == this && (!before || before->owner == this), "moving across graphs");
  auto to = before ? before->pos : opList.end();
  opList.splice(to, opList, op->pos);
}

Op *Graph::nextOp(const Op *op) const {
  FUSEC_ASSERT(op && op->owner == this, "op of another graph");
  auto next = std::next(op->pos);
  return next == opList.end() ? nullptr : next->get();
}

std::vector<Op *> Graph::opsSnapshot() const {
  std::vector<Op *> out;
  out.reserve(opList.size());
  for (const auto &op : opList)
    out.push_back(op.get());
  return out;
}

void Graph::setOutputs(const std::vector<Value *> &values) {
  for (unsigned k = 0; k < outs.size(); ++k)
    outs[k]->removeUse(outputUses[k]);
  outs = values;
  outputUses = std::vector<UseNode>(outs.size());
  for (unsigned k = 0; k < outs.size(); ++k) {
    FUSEC_ASSERT(outs[k], "null graph output");
    outs[k]->addUse(outputUses[k], {nullptr, k});
  }
}

void Graph::setOutput(unsigned i, Value *v) {
  FUSEC_ASSERT(i < outs.size() && v, "bad output index or null value");
  outs[i]->removeUse(outputUses[i]);
  outs[i] = v;
  v->addUse(outputUses[i], {nullptr, i});
}

std::string Graph::uniqueName(std::string_view hint) {
  std::string name;
  if (hint.empty()) {
    do
      name = std::to_string(nextNumber++);
    while (usedNames.count(name));
  } else {
    // Names are never released, so a suffix found taken stays taken: the
    // next call with this hint starts after it (one probe per name, not a
    // rescan from .1 for every value named after the same hint).
    name = std::string(hint);
    if (usedNames.count(name)) {
      unsigned &i = nextSuffix.try_emplace(name, 1).first->second;
      do
        name = std::string(hint) + "." + std::to_string(i++);
      while (usedNames.count(name));
    }
  }
  usedNames.insert(name);
  return name;
}

std::unique_ptr<Graph> Graph::clone() const {
  auto g = std::make_unique<Graph>(nm);
  g->location = location;
  std::unordered_map<const Value *, Value *> map;
  for (const auto &in : ins)
    map[in.get()] = g->addInput(in->name(), in->type());
  for (const auto &op : opList) {
    std::vector<Value *> operands;
    std::vector<TensorType> types;
    for (Value *v : op->ins)
      operands.push_back(map.at(v));
    for (const auto &r : op->outs)
      types.push_back(r->type());
    Op *copy = g->createOp(op->k, operands, types, op->attributes, op->location);
    if (op->bodyGraph)
      copy->setBody(op->bodyGraph->clone());
    for (unsigned i = 0; i < copy->numResults(); ++i) {
      copy->result(i)->setName(op->result(i)->name());
      map[op->result(i)] = copy->result(i);
    }
  }
  std::vector<Value *> outputs;
  for (Value *v : outs)
    outputs.push_back(map.at(v));
  g->setOutputs(outputs);
  g->nextNumber = nextNumber;
  return g;
}

} // namespace fusec
