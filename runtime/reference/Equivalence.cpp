// The equivalence check: the same seeded random inputs through the CPU
// reference before and after a rewrite; outputs compared elementwise.
//
// The error of an element is |got − want| / max(1, |want|): relative for
// large values, absolute near zero (where relative error is meaningless for
// values that cancel). Two NaNs agree; a NaN against a number does not.
#include "runtime/reference/Equivalence.h"

#include "ir/Assert.h"
#include "runtime/reference/Reference.h"

#include <cmath>
#include <sstream>

namespace fusec {

double toleranceFor(DType t) { return isNarrowFloat(t) ? 1e-2 : 1e-5; }

double gpuToleranceFor(DType t) { return isNarrowFloat(t) ? 2e-2 : 1e-4; }

DType lowestPrecision(const Graph &g, DType lowest) {
  auto visit = [&](DType t) {
    if (isFloat(t) && toleranceFor(t) > toleranceFor(lowest))
      lowest = t;
  };
  for (Value *v : g.inputs())
    visit(v->type().dtype);
  for (const auto &op : g.ops()) {
    for (unsigned i = 0; i < op->numResults(); ++i)
      visit(op->result(i)->type().dtype);
    if (op->body())
      lowest = lowestPrecision(*op->body(), lowest);
  }
  return lowest;
}

namespace {

/// Seeded random inputs (randomInput); every symbolic dim of one name gets
/// one size. False after reporting an input too large to allocate.
bool makeInputs(const Graph &g, const EquivalenceOptions &opts, std::vector<Tensor> &inputs,
                Diagnostics &diags) {
  for (unsigned i = 0; i < g.numInputs(); ++i) {
    std::vector<int64_t> shape;
    for (const Dim &d : g.input(i)->type().shape) {
      auto it = opts.dims.find(d.symbol);
      shape.push_back(d.isStatic()            ? d.size
                      : it != opts.dims.end() ? it->second
                                              : opts.defaultDimSize);
    }
    Tensor t;
    if (!randomInput(*g.input(i), shape, opts.seed * 7919 + i, t, diags))
      return false;
    inputs.push_back(std::move(t));
  }
  return true;
}

std::string indexStr(const std::vector<int64_t> &shape, size_t flat) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = shape[d] ? int64_t(flat) % shape[d] : 0;
    flat = shape[d] ? flat / size_t(shape[d]) : flat;
  }
  std::string s = "[";
  for (size_t d = 0; d < idx.size(); ++d)
    s += (d ? "," : "") + std::to_string(idx[d]);
  return s + "]";
}

double elementError(double want, double got) {
  if (std::isnan(want) || std::isnan(got))
    return std::isnan(want) && std::isnan(got) ? 0 : INFINITY;
  if (want == got) // equal infinities too
    return 0;
  if (std::isinf(want) || std::isinf(got))
    return INFINITY;
  return std::fabs(got - want) / std::max(1.0, std::fabs(want));
}

} // namespace

void compareOutput(const Graph &g, unsigned k, const Tensor &want, const Tensor &got,
                   EquivalenceResult &r) {
  FUSEC_ASSERT(want.shape == got.shape && want.dtype == got.dtype,
               "compared tensors differ in type");
  for (size_t i = 0; i < want.numElements(); ++i) {
    double a = want.getDouble(i), b = got.getDouble(i);
    double err = elementError(a, b);
    if (!(err > r.worstError) && !r.worstWhere.empty())
      continue;
    r.worstError = err;
    std::ostringstream where;
    where << "output " << k << " (%" << g.outputs()[k]->name() << ") at " << indexStr(want.shape, i)
          << ": want " << a << ", got " << b;
    r.worstWhere = where.str();
  }
}

EquivalenceResult checkEquivalence(const Graph &before, const Graph &after,
                                   const EquivalenceOptions &opts, Diagnostics &diags) {
  EquivalenceResult r;
  r.tolerance = toleranceFor(lowestPrecision(after));
  std::vector<Tensor> inputs, want, got;
  if (before.numInputs() != after.numInputs() ||
      before.outputs().size() != after.outputs().size()) {
    diags.error(after.loc(), "equivalence check: @" + after.name() +
                                 " changed its signature (inputs or outputs)");
    return r;
  }
  if (!makeInputs(before, opts, inputs, diags) || !runReference(before, inputs, want, diags) ||
      !runReference(after, inputs, got, diags))
    return r;
  for (unsigned k = 0; k < want.size(); ++k) {
    if (want[k].shape != got[k].shape || want[k].dtype != got[k].dtype) {
      diags.error(after.loc(), "equivalence check: @" + after.name() + " output " +
                                   std::to_string(k) + " changed type from " + want[k].typeStr() +
                                   " to " + got[k].typeStr());
      return r;
    }
    compareOutput(after, k, want[k], got[k], r);
  }
  r.equivalent = r.worstError <= r.tolerance;
  if (!r.equivalent) {
    std::ostringstream msg;
    msg << "equivalence check failed for @" << after.name() << ": " << r.worstWhere << " (error "
        << r.worstError << " > tolerance " << r.tolerance << ")";
    diags.error(after.loc(), msg.str());
  }
  return r;
}

} // namespace fusec
