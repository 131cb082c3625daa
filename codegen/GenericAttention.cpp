// The generic kernel of attention: softmax(q · kᵀ · scale + mask) · v by an
// online softmax over the keys, each query row owned by a group of lanes of
// one warp: `pieces` lanes split the depths (lane `piece` holds elements
// piece, piece + pieces, ... of the query row and of the value accumulators,
// in registers) and `splits` sets of them split the keys (set `split` takes
// keys split, split + splits, ...). Per key, a lane adds its partial dot
// product (four interleaved sums, so the additions do not wait on each
// other), the pieces' partials meet by shuffles, and the score (in the
// accumulation type: f32 for f32/f16/bf16 or `acc`, double for f64) gets the
// mask element converted to that type; exp(score - running max) · v_j folds
// into the accumulators, which are rescaled when the max grows. The splits'
// (max, sum, accumulators) merge by shuffles at the end. Pieces are chosen so
// each lane keeps at least 8 of D and Dv; splits only when there are too few
// rows to fill the GPU (decode-like shapes). With Dv > 256 a group owns one
// output element instead (pieces = 1) and recomputes the scores.
//
// Semantics follow the reference: scale defaults to 1/sqrt(D); `causal`
// drops key j for query i when j > i (top-left aligned); batch dims and the
// mask broadcast ([..., Sq, Sk], right-aligned). A score of -inf contributes
// nothing; a row whose scores are all -inf gives NaN (exp(-inf - -inf)), a
// NaN or +inf score gives NaN, and no keys at all (Sk = 0) gives 0.
#include "codegen/GenericSupport.h"
#include "codegen/PointwiseMath.h"

#include <algorithm>
#include <cmath>

namespace fusec::codegen::generic {

namespace {

/// Key splits are added until this many threads run (or a group fills a warp).
constexpr int64_t kWantThreads = 1 << 18;

constexpr std::string_view kAttentionKernel =
    R"(  const long long step = (long long)gridDim.x * blockDim.x;
  for (long long item = (long long)blockIdx.x * blockDim.x + threadIdx.x; item < $ITEMS; item += step) {
$GROUP    const long long i = row % $SQ;
$SPLIT    const long long qRow = $Q_ROW;
    const long long kBase = $K_BASE;
    const long long vBase = $V_BASE;
$MASK_ROW$Q_REGS    $T acc[$W];
#pragma unroll
    for (int c = 0; c < $W; ++c)
      acc[c] = $ZERO;
    $T rowMax = $LOWEST;
    $T rowSum = $ZERO;
    const long long keys = $KEYS;
$KEY_LOOP      $T partial[4] = {$ZERO, $ZERO, $ZERO, $ZERO};
$DOT      $T dot = (partial[0] + partial[1]) + (partial[2] + partial[3]);
$SHUFFLE      const $T s = $SCORE;
      if (s == $LOWEST)
        continue;
      if (s > rowMax) {
        const $T correction = $EXP(rowMax - s);
        rowSum *= correction;
#pragma unroll
        for (int c = 0; c < $W; ++c)
          acc[c] *= correction;
        rowMax = s;
      }
      const $T p = $EXP(s - rowMax);
      rowSum += p;
      const long long vRow = vBase + j * $DV;
#pragma unroll
      for (int c = 0; c < $W; ++c)
        acc[c] += p * $LOAD_V;
    }
$MERGE$STORE  }
)";

/// Merges the key splits' states, lanes `offset` apart, into every lane.
constexpr std::string_view kMerge =
    R"(    for (int offset = $PIECES; offset < $GROUP_LANES; offset *= 2) {
      const $T otherMax = __shfl_xor_sync(lanes, rowMax, offset);
      const $T otherSum = __shfl_xor_sync(lanes, rowSum, offset);
      const $T newMax = $MAX(rowMax, otherMax);
      const $T mine = rowMax == $LOWEST ? $ZERO : $EXP(rowMax - newMax);
      const $T theirs = otherMax == $LOWEST ? $ZERO : $EXP(otherMax - newMax);
      rowSum = rowSum * mine + otherSum * theirs;
#pragma unroll
      for (int c = 0; c < $W; ++c)
        acc[c] = acc[c] * mine + __shfl_xor_sync(lanes, acc[c], offset) * theirs;
      rowMax = newMax;
    }
)";

Sizes leading(const Sizes &s) { return Sizes(s.begin(), s.end() - 2); }

} // namespace

AttentionShape attentionShapeOf(const Op &op) {
  AttentionShape a;
  Sizes out = sizesOf(*op.result()), key = sizesOf(*op.operand(1));
  a.sq = out.end()[-2];
  a.dv = out.end()[-1];
  a.sk = key.end()[-2];
  a.d = sizesOf(*op.operand(0)).back();
  a.perRow = a.dv <= kMaxRegisterRow;
  if (a.perRow)
    while (a.pieces < 8 && a.d % (2 * a.pieces) == 0 && a.dv % (2 * a.pieces) == 0 &&
           std::min(a.d, a.dv) / (2 * a.pieces) >= 8)
      a.pieces *= 2;
  int64_t groups = product(leading(out)) * a.sq * (a.perRow ? 1 : a.dv);
  while (a.pieces * a.splits < 32 && a.splits < a.sk && groups * a.pieces * a.splits < kWantThreads)
    a.splits *= 2;
  return a;
}

namespace {

class AttentionEmitter {
public:
  explicit AttentionEmitter(KernelBuilder &k)
      : k(k), op(k.op()), t(op.result()->type().dtype), acc(accDType(t, accAttr(op))),
        type(accType(acc)), batch(leading(sizesOf(*op.result())), "b") {
    AttentionShape shape = attentionShapeOf(op);
    sq = shape.sq, sk = shape.sk, d = shape.d, dv = shape.dv;
    perRow = shape.perRow, pieces = shape.pieces, splits = shape.splits;
  }

  GeneratedKernel run();

private:
  std::string groupDeclarations() const;
  /// The batch offset of operand `i`'s matrix of `matrixSize` elements.
  std::string base(unsigned i, int64_t matrixSize);
  /// The maskRow declaration and the added mask element ("" without a mask).
  std::pair<std::string, std::string> mask();
  std::string keyLoop() const;
  std::string dotLoop(const std::string &qAt) const;
  std::string shuffle() const;
  std::string merge() const;
  std::string store() const;
  std::string note(bool hasMask) const;
  std::string load(unsigned i, const std::string &index) const {
    return loadExpr(op.operand(i)->type().dtype, k.in(i), index);
  }
  /// Element c of this lane's share of a row of D (or Dv) elements.
  std::string mine() const {
    return pieces == 1 ? "c" : "c * " + std::to_string(pieces) + " + piece";
  }
  int64_t rows() const { return product(batch.sizes()) * sq; }

  KernelBuilder &k;
  const Op &op;
  DType t, acc;
  std::string type;
  IndexSpace batch;
  int64_t sq, sk, d, dv;
  bool perRow;
  int64_t pieces, splits;
};

/// Declarations of row (or row and col), and of the lane's place in its group.
std::string AttentionEmitter::groupDeclarations() const {
  int64_t lanes = pieces * splits;
  std::string g = std::to_string(lanes), code;
  std::string group = lanes == 1 ? "item" : "(item / " + g + ")";
  if (perRow)
    code = "    const long long row = " + group + ";\n";
  else
    code = "    const long long row = " + group + " / " + lit(dv) + ";\n" +
           "    const long long col = " + group + " % " + lit(dv) + ";\n";
  if (pieces > 1)
    code += "    const int piece = (int)(item % " + std::to_string(pieces) + ");\n";
  if (splits > 1)
    code += "    const int split = (int)(item" +
            (pieces == 1 ? "" : " / " + std::to_string(pieces)) + " % " + std::to_string(splits) +
            ");\n";
  if (lanes > 1)
    code += "    const unsigned lanes = " + std::to_string((1ull << lanes) - 1) +
            "u << (threadIdx.x % 32 / " + g + " * " + g + ");\n";
  return code;
}

std::string AttentionEmitter::base(unsigned i, int64_t matrixSize) {
  Sizes strides = broadcastStrides(leading(sizesOf(*op.operand(i))), batch.sizes());
  for (int64_t &s : strides)
    s *= matrixSize;
  return batch.offset(strides);
}

std::pair<std::string, std::string> AttentionEmitter::mask() {
  if (op.numOperands() < 4)
    return {"", ""};
  Sizes scores = batch.sizes();
  scores.push_back(sq);
  scores.push_back(sk);
  Sizes strides = broadcastStrides(sizesOf(*op.operand(3)), scores);
  int64_t rowStride = strides.end()[-2], colStride = strides.end()[-1];
  strides.resize(scores.size() - 2);
  std::string row = batch.offset(strides);
  if (rowStride != 0 && sq > 1)
    row = sum(row, "i" + (rowStride == 1 ? "" : " * " + lit(rowStride)));
  std::string at = "maskRow";
  if (colStride != 0 && sk > 1)
    at += " + j" + (colStride == 1 ? "" : " * " + lit(colStride));
  std::string element = load(3, at);
  if (op.operand(3)->type().dtype == DType::F64 && acc != DType::F64)
    element = "(" + type + ")" + element;
  return {"    const long long maskRow = " + row + ";\n", " + " + element};
}

/// The loop header over this lane's keys; with splits, `live` says whether
/// the lane has a key this round (all lanes of a group run every round).
std::string AttentionEmitter::keyLoop() const {
  if (splits == 1)
    return "    for (long long j = 0; j < keys; ++j) {\n"
           "      const long long kRow = kBase + j * " +
           lit(d) + ";\n";
  return "    for (long long j0 = 0; j0 < keys; j0 += " + std::to_string(splits) + ") {\n" +
         "      const long long j = j0 + split;\n      const bool live = j < keys;\n" +
         "      const long long kRow = kBase + j * " + lit(d) + ";\n";
}

std::string AttentionEmitter::dotLoop(const std::string &qAt) const {
  std::string indent = splits == 1 ? "      " : "        ";
  std::string loop = indent + "for (int c = 0; c < " + lit(d / pieces) + "; ++c)\n" + indent +
                     "  partial[c % 4] += " + qAt + " * " + load(1, "kRow + " + mine()) + ";\n";
  if (splits == 1)
    return "#pragma unroll\n" + loop;
  return "      if (live) {\n#pragma unroll\n" + loop + "      }\n";
}

std::string AttentionEmitter::shuffle() const {
  if (pieces == 1)
    return "";
  return "      for (int offset = " + std::to_string(pieces / 2) +
         "; offset > 0; offset /= 2)\n        dot += __shfl_xor_sync(lanes, dot, offset, " +
         std::to_string(pieces) + ");\n";
}

std::string AttentionEmitter::merge() const {
  if (splits == 1)
    return "";
  return fill(kMerge, {{"PIECES", std::to_string(pieces)},
                       {"GROUP_LANES", std::to_string(pieces * splits)},
                       {"T", type},
                       {"MAX", acc == DType::F64 ? "fusec_max_f64" : "fusec_max_f32"},
                       {"LOWEST", lowestLiteral(acc)},
                       {"ZERO", zeroLiteral(acc)},
                       {"EXP", acc == DType::F64 ? "exp" : "expf"},
                       {"W", perRow ? lit(dv / pieces) : "1"}});
}

/// The stores of this lane's share of the output (split 0's, with splits).
std::string AttentionEmitter::store() const {
  std::string at = perRow ? "row * " + lit(dv) + " + " + mine() : "row * " + lit(dv) + " + col";
  std::string value = storeFromAcc(t, acc, sk == 0 ? "acc[c]" : "acc[c] / rowSum");
  std::string indent = splits == 1 ? "    " : "      ";
  std::string loop = "#pragma unroll\n" + indent + "for (int c = 0; c < " +
                     (perRow ? lit(dv / pieces) : "1") + "; ++c)\n" + indent + "  " + k.out() +
                     "[" + at + "] = " + value + ";\n";
  return splits == 1 ? loop : "    if (split == 0) {\n" + loop + "    }\n";
}

std::string AttentionEmitter::note(bool hasMask) const {
  std::string who = perRow ? "query row" : "output element";
  return std::to_string(pieces * splits) + " lane(s) per " + who + " (" + std::to_string(pieces) +
         " over the depth, " + std::to_string(splits) + " over the keys), online softmax over " +
         std::to_string(sk) + " keys" + (op.getBool("causal") ? " (causal)" : "") +
         (hasMask ? ", mask" : "");
}

GeneratedKernel AttentionEmitter::run() {
  bool qInRegisters = d > 0 && d / pieces <= kMaxRegisterRow;
  std::string qBase = base(0, sq * d), kBase = base(1, sk * d), vBase = base(2, sk * dv);
  auto [maskRow, maskAdd] = mask();
  std::string split = batch.split("batch", "    ");
  if (!split.empty())
    split = "    const long long batch = row / " + lit(sq) + ";\n" + split;
  std::string qRegs = "    " + type + " q[" + lit(d / pieces) + "];\n#pragma unroll\n" +
                      "    for (int c = 0; c < " + lit(d / pieces) +
                      "; ++c)\n      q[c] = " + load(0, "qRow + " + mine()) + ";\n";
  std::string qAt = qInRegisters ? "q[c]" : load(0, "qRow + " + mine());
  std::string score = "dot * " +
                      floatLiteral(acc, op.attrIfPresent("scale") ? op.getFloat("scale")
                                                                  : 1.0 / std::sqrt(double(d))) +
                      maskAdd;
  if (splits > 1)
    score = "live ? " + score + " : " + lowestLiteral(acc);
  int64_t items = dv == 0 ? 0 : rows() * (perRow ? 1 : dv) * pieces * splits;
  std::string body = fill(
      kAttentionKernel,
      {{"ITEMS", lit(items)},
       {"GROUP", groupDeclarations()},
       {"SQ", lit(sq)},
       {"SPLIT", split},
       {"Q_ROW", sum(qBase, "i * " + lit(d))},
       {"K_BASE", kBase},
       {"V_BASE", vBase},
       {"DV", lit(dv)},
       {"MASK_ROW", maskRow},
       {"Q_REGS", qInRegisters ? qRegs : ""},
       {"T", type},
       {"W", perRow ? lit(dv / pieces) : "1"},
       {"ZERO", zeroLiteral(acc)},
       {"LOWEST", lowestLiteral(acc)},
       {"KEYS", op.getBool("causal") ? "i + 1 < " + lit(sk) + " ? i + 1 : " + lit(sk) : lit(sk)},
       {"KEY_LOOP", keyLoop()},
       {"DOT", dotLoop(qAt)},
       {"SHUFFLE", shuffle()},
       {"SCORE", score},
       {"EXP", acc == DType::F64 ? "exp" : "expf"},
       {"LOAD_V", load(2, perRow ? "vRow + " + mine() : "vRow + col")},
       {"MERGE", merge()},
       {"STORE", store()}});
  return k.finish({note(!maskAdd.empty())}, body, blocksFor(items));
}

} // namespace

GeneratedKernel emitAttention(KernelBuilder &k) { return AttentionEmitter(k).run(); }

} // namespace fusec::codegen::generic
