// The fused epilogue of a gemm kernel (see GemmPlan.h): one device function
// per chain that takes the accumulator of one output element (row, col) of
// the result seen as rows x N, rounds it to the anchor's dtype (after adding
// linear's bias) as the reference does, evaluates the chain's pointwise ops
// in registers (PointwiseMath's expressions), and returns each result the
// chain stores. Inputs broadcast to the result shape: their index is built
// from col and from row's coordinates over the result's leading axes (row
// itself when the input spans them all). Constants become literals
// (splats) or small __device__ tables. The kernels stage their
// accumulators in shared memory; epilogueLoop then walks the block's tile
// four adjacent columns a thread (coalesced reads of epilogue inputs),
// calls the function per element and stores the four results at once (8
// bytes of f16/bf16, 16 of f32) when N % 4 == 0, else element by element.
// The function is inlined four times per chain, not once per accumulator:
// NVRTC compile time stays low whatever the epilogue holds.
#include "codegen/GemmPlan.h"
#include "codegen/PointwiseMath.h"
#include "ir/Assert.h"

#include <sstream>

namespace fusec::codegen::gemm {

namespace {

std::string scaled(const std::string &x, const std::string &stride) {
  return stride == "1LL" ? x : x + " * " + stride;
}

/// The element of an input of shape `s`, broadcast to the result, at
/// (row, col) of the result seen as rows x N.
std::string operandIndex(const Plan &plan, const std::vector<int64_t> &sizes, const Shape &s) {
  size_t r = plan.dims.size(), lead = r - s.size();
  auto moves = [&](size_t k) { return k >= lead && sizes[k - lead] != 1; };
  std::vector<std::string> stride(r);
  std::vector<std::string> after;
  for (size_t k = r; k-- > 0;) {
    stride[k] = productOf(after);
    if (moves(k))
      after.push_back(plan.dims[k]);
  }
  std::vector<std::string> terms;
  if (moves(r - 1))
    terms.push_back("col");
  bool all = r >= 2, none = true;
  for (size_t k = 0; k + 1 < r; ++k) {
    all = all && moves(k);
    none = none && !moves(k);
  }
  if (all)
    terms.push_back(scaled("row", stride[r - 2]));
  for (size_t k = 0; !all && !none && k + 1 < r; ++k) {
    if (!moves(k))
      continue;
    std::vector<std::string> inner(plan.dims.begin() + long(k) + 1, plan.dims.end() - 1);
    std::string coord = inner.empty() ? "row" : "row / " + productOf(inner);
    if (k > 0)
      coord = "(" + coord + " % " + plan.dims[k] + ")";
    terms.push_back(scaled(coord, stride[k]));
  }
  std::string index;
  for (const std::string &t : terms)
    index += (index.empty() ? "" : " + ") + t;
  return index.empty() ? "0" : index;
}

/// Static sizes of `s` with 0 for a (named) symbolic dim: only `== 1` is asked.
std::vector<int64_t> sizesOf(const Shape &s) {
  std::vector<int64_t> sizes;
  for (const Dim &d : s)
    sizes.push_back(d.isStatic() ? d.size : 0);
  return sizes;
}

/// The kernel operands chain `g`'s epilogue reads, in operand order.
std::vector<unsigned> chainInputs(const Plan &plan, unsigned g) {
  const Chain &chain = plan.chains[g];
  std::set<unsigned> inputs;
  if (chain.bias)
    inputs.insert(chain.bias->input);
  for (const Op *op : chain.ops)
    for (const Value *v : op->operands())
      if (v->isGraphInput())
        inputs.insert(v->index());
  return {inputs.begin(), inputs.end()};
}

std::string callArgs(const Plan &plan, unsigned g) {
  std::string args;
  for (unsigned j : chainInputs(plan, g))
    args += plan.inputs[j] + ", ";
  return args;
}

/// Writes the epilogue function of one chain.
class ChainWriter {
public:
  ChainWriter(const Plan &plan, unsigned g, std::ostream &tables)
      : plan(plan), g(g), chain(plan.chains[g]), tables(tables) {}

  std::string function();

private:
  std::string fresh(const std::string &base);
  std::string name(const Value *v);
  std::string valueOf(const Value *v);
  void constant(const Op &op);
  std::string anchorValue();

  const Plan &plan;
  unsigned g;
  const Chain &chain;
  std::ostream &tables;
  std::map<const Value *, std::string> local;
  std::set<std::string> used;
  std::ostringstream body;
};

std::string ChainWriter::fresh(const std::string &base) {
  std::string n = base;
  for (unsigned i = 1; !used.insert(n).second; ++i)
    n = base + "_" + std::to_string(i);
  return n;
}

std::string ChainWriter::name(const Value *v) {
  return local[v] = fresh("v_" + cIdentifier(v->name()));
}

// A kernel input is loaded at its first use.
std::string ChainWriter::valueOf(const Value *v) {
  auto it = local.find(v);
  if (it != local.end())
    return it->second;
  FUSEC_ASSERT(v->isGraphInput(), "epilogue value used before it is computed");
  unsigned j = v->index();
  DType t = v->type().dtype;
  std::string index = operandIndex(plan, sizesOf(v->type().shape), v->type().shape);
  std::string n = name(v);
  body << "  const " << computeType(t) << " " << n << " = " << loadExpr(t, plan.inputs[j], index)
       << ";\n";
  return n;
}

void ChainWriter::constant(const Op &op) {
  const DenseData &d = op.getDense("value");
  std::string type(computeType(d.dtype)), n = name(op.result());
  if (d.isSplat()) {
    body << "  const " << type << " " << n << " = " << constantLiteral(d, 0) << ";\n";
    return;
  }
  std::string table = plan.entry + "_g" + std::to_string(g) + "_" + n;
  tables << "__device__ const " << type << " " << table << "[" << d.numElements() << "] = {";
  for (size_t i = 0; i < d.numElements(); ++i)
    tables << (i ? ", " : "") << constantLiteral(d, i);
  tables << "};\n\n";
  std::vector<int64_t> sizes(d.shape.begin(), d.shape.end());
  body << "  const " << type << " " << n << " = " << table << "["
       << operandIndex(plan, sizes, op.result()->type().shape) << "];\n";
}

// The contraction's value, rounded to its dtype: what the reference stores.
std::string ChainWriter::anchorValue() {
  std::string sum = "acc";
  if (chain.bias) {
    const Source &b = *chain.bias;
    std::string biasValue = castChain(b, loadExpr(b.stored, plan.inputs[b.input], "col"));
    std::string n = fresh("v_bias");
    body << "  const " << computeType(b.type()) << " " << n << " = " << biasValue << ";\n";
    sum = "acc + (" + std::string(computeType(plan.acc)) + ")" + n;
  }
  std::string n = name(chain.anchor->result());
  body << "  const " << computeType(plan.result) << " " << n << " = "
       << castExpr(plan.acc, plan.result, sum) << ";\n";
  return n;
}

std::string ChainWriter::function() {
  anchorValue();
  std::string fused;
  for (const Op *op : chain.ops) {
    if (op->kind() == OpKind::Const) {
      constant(*op);
      continue;
    }
    std::vector<std::string> args;
    for (const Value *v : op->operands())
      args.push_back(valueOf(v));
    std::string expr = pointwiseExpr(*op, args), n = name(op->result());
    body << "  const " << computeType(op->result()->type().dtype) << " " << n << " = " << expr
         << ";\n";
    fused += (fused.empty() ? "" : ", ") + std::string(op->name());
  }
  std::ostringstream f;
  f << "// Epilogue of %" << chain.anchor->result()->name() << ": "
    << (fused.empty() ? "rounding only" : fused) << "\n"
    << "__device__ __forceinline__ void " << plan.entry << "_epilogue" << g << "(";
  for (unsigned j : chainInputs(plan, g))
    f << plan.params[j] << ", ";
  f << "long long row, long long col, " << computeType(plan.acc) << " acc";
  for (unsigned j : chain.results)
    f << ", " << computeType(plan.kernel->result(j)->type().dtype) << " &r" << j;
  f << ") {\n" << body.str();
  for (unsigned j : chain.results)
    f << "  r" << j << " = " << local.at(plan.body->outputs()[j]) << ";\n";
  f << "}\n\n";
  return f.str();
}

std::string call(const Plan &plan, unsigned g, int q) {
  std::string s = plan.entry + "_epilogue" + std::to_string(g) + "(" + callArgs(plan, g) +
                  "row, col" + (q ? " + " + std::to_string(q) : "") + ", c" + std::to_string(q);
  for (unsigned j : plan.chains[g].results)
    s += ", e" + std::to_string(j) + "_" + std::to_string(q);
  return s + ");";
}

std::string declareResults(const Plan &plan, unsigned g, const std::string &indent) {
  std::string s;
  for (unsigned j : plan.chains[g].results) {
    s += indent + std::string(computeType(plan.kernel->result(j)->type().dtype)) + " ";
    for (int q = 0; q < 4; ++q)
      s += std::string(q ? ", " : "") + "e" + std::to_string(j) + "_" + std::to_string(q);
    s += ";\n";
  }
  return s;
}

std::string storeOne(const Plan &plan, unsigned j, int q) {
  DType t = plan.kernel->result(j)->type().dtype;
  std::string e = "e" + std::to_string(j) + "_" + std::to_string(q);
  return plan.outputs[j] + "[row * " + lit(plan.n) + " + col" +
         (q ? " + " + std::to_string(q) : "") + "] = " + storeExpr(t, e) + ";";
}

/// Four adjacent elements stored at once: 8 bytes of f16/bf16, 16 of f32.
std::string storeQuad(const Plan &plan, unsigned j, const std::string &indent) {
  DType t = plan.kernel->result(j)->type().dtype;
  std::string e = "e" + std::to_string(j) + "_",
              at = plan.outputs[j] + " + row * " + lit(plan.n) + " + col";
  if (isNarrowFloat(t)) {
    std::string args;
    for (int q = 0; q < 4; ++q)
      args += ", " + storeExpr(t, e + std::to_string(q));
    return indent + "fusec_store4_u16(" + at + args + ");\n";
  }
  if (t == DType::F32)
    return indent + "fusec_store4_f32(" + at + ", " + e + "0, " + e + "1, " + e + "2, " + e +
           "3);\n";
  std::string s;
  for (int q = 0; q < 4; ++q)
    s += indent + storeOne(plan, j, q) + "\n";
  return s;
}

/// Chain g's epilogue on the four elements (row, col + q), q < 4, whose
/// accumulators are c0..c3; with N % 4 != 0 each is checked against N.
std::string epilogueQuad(const Plan &plan, unsigned g, const std::string &indent) {
  std::string s = declareResults(plan, g, indent);
  if (plan.n % 4 == 0) {
    for (int q = 0; q < 4; ++q)
      s += indent + call(plan, g, q) + "\n";
    for (unsigned j : plan.chains[g].results)
      s += storeQuad(plan, j, indent);
    return s;
  }
  for (int q = 0; q < 4; ++q) {
    s += indent + "if (col" + (q ? " + " + std::to_string(q) : "") + " < " + lit(plan.n) + ") {\n";
    s += indent + "  " + call(plan, g, q) + "\n";
    for (unsigned j : plan.chains[g].results)
      s += indent + "  " + storeOne(plan, j, q) + "\n";
    s += indent + "}\n";
  }
  return s;
}

} // namespace

std::string epilogueFunctions(const Plan &plan) {
  std::ostringstream tables, functions;
  for (unsigned g = 0; g < plan.chains.size(); ++g)
    functions << ChainWriter(plan, g, tables).function();
  return tables.str() + functions.str();
}

std::string epilogueLoop(const Plan &plan, int ldc, const std::string &indent) {
  const TileConfig &t = plan.tile;
  const std::string in = indent + "    ", type(computeType(plan.acc));
  std::ostringstream s;
  s << indent << "#pragma unroll 1\n"
    << indent << "for (int i = tid; i < " << t.bm * t.bn / 4 << "; i += " << t.threads() << ") {\n"
    << indent << "  const int r = i / " << t.bn / 4 << ";\n"
    << indent << "  const int c = i % " << t.bn / 4 << " * 4;\n"
    << indent << "  const long long m = m0 + r;\n"
    << indent << "  const long long col = n0 + c;\n"
    << indent << "  if (m >= rowsM || col >= " << lit(plan.n) << ")\n"
    << indent << "    continue;\n"
    << indent << "  const long long row = z * rowsM + m;\n";
  for (int q = 0; q < 4; ++q)
    s << indent << "  const " << type << " c" << q << " = tileC[r * " << ldc << " + c + " << q
      << "];\n";
  if (plan.chains.size() == 1) {
    s << epilogueQuad(plan, 0, indent + "  ") << indent << "}\n";
    return s.str();
  }
  for (unsigned g = 0; g < plan.chains.size(); ++g)
    s << indent << "  " << (g ? "} else if" : "if") << " (chain == " << g << ") {\n"
      << epilogueQuad(plan, g, in);
  s << indent << "  }\n" << indent << "}\n";
  return s.str();
}

} // namespace fusec::codegen::gemm
