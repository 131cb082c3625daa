// Helpers for the CPU reference executor tests: a graph built through the
// Builder, run on given inputs, with diagnostics turned into test failures.
#pragma once

#include "ir/Builder.h"
#include "runtime/reference/Reference.h"

#include <cmath>
#include <gtest/gtest.h>
#include <sstream>
#include <string>
#include <vector>

namespace fusec::testing {

inline Tensor makeTensor(DType dtype, std::vector<int64_t> shape, const std::vector<double> &v) {
  return Tensor::fromDoubles(dtype, std::move(shape), v);
}

inline Tensor randomTensor(DType dtype, std::vector<int64_t> shape, uint64_t seed, double lo = -1.0,
                           double hi = 1.0) {
  Tensor t(dtype, std::move(shape));
  fillRandom(t, seed, lo, hi);
  return t;
}

inline std::string diagText(const Diagnostics &diags) {
  std::ostringstream os;
  diags.print(os);
  return os.str();
}

/// A graph under construction and a way to run it.
struct GraphRunner {
  Graph g{"test"};
  Diagnostics diags;
  Builder b{g, diags};

  Value *input(const std::string &name, DType dtype, const std::vector<int64_t> &shape,
               Layout layout = Layout::None) {
    return g.addInput(name, TensorType{dtype, staticShape(shape), layout});
  }
  Value *input(const std::string &name, TensorType type) { return g.addInput(name, type); }
  Value *op(OpKind kind, const std::vector<Value *> &operands, AttrList attrs = {}) {
    Value *v = b.create(kind, operands, std::move(attrs));
    EXPECT_TRUE(v) << "building '" << opInfo(kind).spelling << "' failed:\n" << diagText(diags);
    return v;
  }

  /// Runs with `outputs` as the graph's outputs; fails the test on any error.
  std::vector<Tensor> run(const std::vector<Value *> &outputs, const std::vector<Tensor> &inputs) {
    g.setOutputs(outputs);
    std::vector<Tensor> results;
    if (diags.hasErrors() || !runReference(g, inputs, results, diags)) {
      ADD_FAILURE() << diagText(diags);
      results.assign(outputs.size(), Tensor());
    }
    return results;
  }

  /// Runs expecting failure; returns the printed diagnostics.
  std::string runError(const std::vector<Value *> &outputs, const std::vector<Tensor> &inputs) {
    g.setOutputs(outputs);
    std::vector<Tensor> results;
    EXPECT_FALSE(diags.hasErrors()) << "the graph should build:\n" << diagText(diags);
    EXPECT_FALSE(runReference(g, inputs, results, diags)) << "the run should fail";
    return diagText(diags);
  }
};

/// Each element of `t` within `tol` (absolute + relative) of `want`.
inline void expectNear(const Tensor &t, const std::vector<double> &want, double tol) {
  ASSERT_EQ(t.numElements(), want.size()) << t.typeStr();
  for (size_t i = 0; i < want.size(); ++i) {
    double got = t.getDouble(i);
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got)) << "element " << i;
      continue;
    }
    EXPECT_NEAR(got, want[i], tol * (1 + std::fabs(want[i]))) << "element " << i;
  }
}

/// `t` holds exactly `want` rounded to t's dtype (NaN matches NaN).
inline void expectExact(const Tensor &t, const std::vector<double> &want) {
  Tensor expected = Tensor::fromDoubles(t.dtype, t.shape, want);
  ASSERT_EQ(t.numElements(), want.size()) << t.typeStr();
  for (size_t i = 0; i < want.size(); ++i) {
    double got = t.getDouble(i), exp = expected.getDouble(i);
    if (std::isnan(exp))
      EXPECT_TRUE(std::isnan(got)) << "element " << i;
    else
      EXPECT_EQ(got, exp) << "element " << i;
  }
}

} // namespace fusec::testing
