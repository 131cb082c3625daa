// Lowering to launches (see Lowering.h). One pass over a snapshot of the
// top-level ops: each non-constant op goes to codegen's emitKernel; a kernel
// op that it refuses is replaced by copies of its body's ops (inserted where
// the kernel was, named uniquely in the enclosing graph), which are then
// emitted one by one. The refusal's message is kept as the fallback's reason.
#include "runtime/gpu/Lowering.h"

#include "codegen/Codegen.h"
#include "ir/Kernel.h"

#include <algorithm>
#include <unordered_map>

namespace fusec {

namespace {

/// Replaces kernel op `k` by its body's ops; returns the inserted ops.
std::vector<Op *> inlineKernel(Graph &g, Op *k) {
  const Graph &body = *k->body();
  std::unordered_map<const Value *, Value *> mapped;
  for (unsigned i = 0; i < body.numInputs(); ++i)
    mapped[body.input(i)] = k->operand(i);
  std::vector<Op *> inserted;
  for (const auto &op : body.ops()) {
    std::vector<Value *> operands;
    for (const Value *v : op->operands())
      operands.push_back(mapped.at(v));
    std::vector<TensorType> types;
    for (unsigned i = 0; i < op->numResults(); ++i)
      types.push_back(op->result(i)->type());
    Op *copy = g.createOp(op->kind(), operands, types, op->attrs(), op->loc(), k);
    for (unsigned i = 0; i < op->numResults(); ++i) {
      copy->result(i)->setName(g.uniqueName(op->result(i)->name()));
      mapped[op->result(i)] = copy->result(i);
    }
    inserted.push_back(copy);
  }
  std::vector<std::pair<Value *, std::string>> renames; // keep the kernel's result names
  for (unsigned i = 0; i < k->numResults(); ++i) {
    Value *v = mapped.at(body.outputs()[i]);
    k->result(i)->replaceAllUsesWith(v);
    if (std::find(inserted.begin(), inserted.end(), v->definingOp()) != inserted.end())
      renames.push_back({v, k->result(i)->name()});
  }
  g.erase(k);
  for (auto &[v, name] : renames)
    v->setName(name);
  return inserted;
}

std::string firstMessage(const Diagnostics &d) {
  return d.all().empty() ? std::string("refused") : d.all().front().message;
}

bool emitStep(Graph &g, Op *op, LoweredGraph &out, EntryNamer &names, Diagnostics &diags,
              bool allowFallback, Backend backend, std::string_view target) {
  if (op->kind() == OpKind::Const)
    return true;
  Diagnostics trial;
  std::string entry = names(*op, g.name());
  if (std::optional<GeneratedKernel> k = emitKernel(*op, entry, trial, backend, target)) {
    out.steps.push_back({op, std::move(*k)});
    return true;
  }
  names.release(entry); // the ops of an inlined kernel may take its name
  if (op->kind() != OpKind::Kernel || !allowFallback) {
    diags.append(trial);
    return false;
  }
  out.fallbacks.push_back({Severity::Note, op->loc(),
                           describeLaunchedOp(*op) + " runs op by op: " + firstMessage(trial)});
  for (Op *inner : inlineKernel(g, op))
    if (!emitStep(g, inner, out, names, diags, allowFallback, backend, target))
      return false;
  return true;
}

} // namespace

std::string stepTemplateName(const Op &op) {
  return op.kind() == OpKind::Kernel ? op.getString("template") : std::string(op.name());
}

int64_t LoweredGraph::scratchBytes() const {
  int64_t end = 0;
  for (const LoweredStep &s : steps)
    end = std::max(end, s.scratchAt + s.kernel.scratchBytes);
  return end;
}

bool lowerForGpu(Graph &g, LoweredGraph &out, EntryNamer &names, Diagnostics &diags,
                 bool allowFallback, Backend backend, std::string_view target) {
  for (Op *op : g.opsSnapshot())
    if (!emitStep(g, op, out, names, diags, allowFallback, backend, target))
      return false;
  int64_t scratch = 0;
  for (LoweredStep &s : out.steps) {
    s.scratchAt = scratch;
    scratch += (s.kernel.scratchBytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
  }
  return true;
}

} // namespace fusec
