// Generic kernels of layer_norm, rms_norm and softmax: a group of lanes per
// row (a line of the normalized elements), with the row's statistics
// combined in shared memory (fusec_group_reduce) and the row read again for
// each pass, as the reference computes them: layer_norm takes the mean, then
// the biased variance of x - mean, then (x - mean) / sqrt(var + eps) * gamma
// + beta; rms_norm x / sqrt(mean(x²) + eps) * gamma; softmax the max (NaN
// propagating), then Σ exp(x - max), then exp(x - max) / Σ. Statistics are
// f32 (double for f64). layer_norm and rms_norm rows are the trailing dims
// from `axis` (contiguous); a softmax over the last axis has contiguous
// rows, over another axis its rows are strided columns, and neighbouring
// groups then read neighbouring rows.
#include "codegen/GenericSupport.h"
#include "codegen/PointwiseMath.h"

namespace fusec::codegen::generic {

Rows rowsOf(const Op &op) {
  Sizes in = sizesOf(*op.operand(0));
  size_t axis = *normalizeAxis(op.getInt("axis"), in.size());
  if (op.kind() != OpKind::Softmax)
    return {product(in, 0, axis), product(in, axis), 1};
  int64_t inner = product(in, axis + 1);
  return {product(in, 0, axis) * inner, in[axis], inner};
}

namespace {

constexpr std::string_view kRowKernel = R"(  __shared__ $T red[$BLOCK];
$DECLARE  for (long long tile = blockIdx.x; tile < $TILES; tile += gridDim.x) {
    const long long row = tile * $GROUPS + group;
    const bool active = row < $ROWS;
    const long long base = $BASE;
$PASSES  }
)";

/// One pass over the row: `statements` run for each element j, with `x`
/// the element as $T, `at` its offset.
constexpr std::string_view kPass = R"(    if (active) {
      for (long long j = lane; j < $LENGTH; j += $LANES) {
        const long long at = base + $STEP;
        const $T x = $LOAD;
$STATEMENTS      }
    }
)";

class RowEmitter {
public:
  explicit RowEmitter(KernelBuilder &k)
      : k(k), op(k.op()), rows(rowsOf(op)), t(op.result()->type().dtype), acc(accDType(t)),
        layout(GroupLayout::choose(rows.count, rows.length, rows.inner == 1)) {}

  GeneratedKernel run();

private:
  std::string pass(const std::string &statements) const;
  /// `name` = the group's combined `value`, divided by `divisor` if given.
  std::string combine(const std::string &name, const std::string &value, bool isMax,
                      const std::string &divisor = "") const;
  /// The math function `fn` for acc: expf or exp, sqrtf or sqrt.
  std::string math(std::string_view fn) const {
    return std::string(fn) + (acc == DType::F64 ? "" : "f");
  }
  std::string layerNorm() const;
  std::string softmax() const;

  KernelBuilder &k;
  const Op &op;
  Rows rows;
  DType t, acc;
  GroupLayout layout;
};

std::string RowEmitter::pass(const std::string &statements) const {
  return fill(kPass, {{"LENGTH", lit(rows.length)},
                      {"LANES", std::to_string(layout.lanes)},
                      {"STEP", rows.inner == 1 ? "j" : "j * " + lit(rows.inner)},
                      {"T", std::string(accType(acc))},
                      {"LOAD", loadExpr(t, k.in(0), "at")},
                      {"STATEMENTS", statements}});
}

std::string RowEmitter::combine(const std::string &name, const std::string &value, bool isMax,
                                const std::string &divisor) const {
  std::string reduce = layout.reduce(value, lambda(acc, isMax ? maxExpr : addExpr));
  if (!divisor.empty())
    reduce += " / " + divisor;
  return "    const " + std::string(accType(acc)) + " " + name + " = " + reduce + ";\n";
}

std::string RowEmitter::layerNorm() const {
  std::string type(accType(acc)), n = floatLiteral(acc, double(rows.length));
  bool isRms = op.kind() == OpKind::RmsNorm;
  std::string code;
  if (!isRms)
    code += "    " + type + " sum = " + zeroLiteral(acc) + ";\n" + pass("        sum += x;\n") +
            combine("mean", "sum", false, n);
  std::string centered = isRms ? "x" : "(x - mean)";
  code += "    " + type + " squares = " + zeroLiteral(acc) + ";\n" +
          pass("        const " + type + " d = " + centered + ";\n        squares += d * d;\n") +
          combine("variance", "squares", false, n);
  code += "    const " + type + " denom = " + math("sqrt") + "(variance + " +
          floatLiteral(acc, op.getFloat("epsilon")) + ");\n";
  std::string y = "        " + type + " y = " + centered + " / denom;\n";
  if (op.numOperands() > 1)
    y += "        y = y * " + loadExpr(op.operand(1)->type().dtype, k.in(1), "j") + ";\n";
  if (op.numOperands() > 2)
    y += "        y = y + " + loadExpr(op.operand(2)->type().dtype, k.in(2), "j") + ";\n";
  return code + pass(y + "        " + k.out() + "[at] = " + storeFromAcc(t, acc, "y") + ";\n");
}

std::string RowEmitter::softmax() const {
  std::string type(accType(acc)), exp = math("exp");
  std::string code = "    " + type + " maxPart = " + lowestLiteral(acc) + ";\n" +
                     pass("        maxPart = " + maxExpr(acc, "maxPart", "x") + ";\n") +
                     combine("maximum", "maxPart", true);
  code += "    " + type + " sumPart = " + zeroLiteral(acc) + ";\n" +
          pass("        sumPart += " + exp + "(x - maximum);\n") + combine("sum", "sumPart", false);
  std::string y = "        const " + type + " y = " + exp + "(x - maximum) / sum;\n";
  return code + pass(y + "        " + k.out() + "[at] = " + storeFromAcc(t, acc, "y") + ";\n");
}

GeneratedKernel RowEmitter::run() {
  std::string base = rows.inner == 1
                         ? "row * " + lit(rows.length)
                         : "row / " + lit(rows.inner) + " * " + lit(rows.length * rows.inner) +
                               " + row % " + lit(rows.inner);
  std::string body =
      fill(kRowKernel, {{"T", std::string(accType(acc))},
                        {"BLOCK", std::to_string(kBlock)},
                        {"DECLARE", layout.declare()},
                        {"TILES", lit(layout.tiles(rows.count))},
                        {"GROUPS", std::to_string(layout.groups)},
                        {"ROWS", lit(rows.count)},
                        {"BASE", base},
                        {"PASSES", op.kind() == OpKind::Softmax ? softmax() : layerNorm()}});
  std::string note = std::to_string(layout.lanes) + " lanes per row of " +
                     std::to_string(rows.length) + ", " + std::to_string(layout.groups) +
                     " rows per block";
  return k.finish({note}, body, rows.length ? layout.tiles(rows.count) : 0);
}

} // namespace

GeneratedKernel emitRowNormalization(KernelBuilder &k) { return RowEmitter(k).run(); }

} // namespace fusec::codegen::generic
