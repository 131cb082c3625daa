// What a row_reduction kernel runs inside one row (see RowReduction.cpp):
// the row's pointers and held arrays, the per-row values of each level,
// and the passes over the row's elements. A pass evaluates exactly the
// nodes its roots need (the reductions it feeds, the results it stores, the
// values it holds for later passes), one `const` statement each, in
// dependence order; values of other passes come from held arrays (register
// path) or are recomputed from memory (loop and column paths).
#include "codegen/PointwiseMath.h"
#include "codegen/RowReductionWriter.h"
#include "ir/Assert.h"

namespace fusec::rowred {

using namespace codegen;

struct Writer::Pass {
  unsigned sweep = 0;
  std::vector<std::string> pre, element, post; // before, per element of, after a vector
  std::set<unsigned> done;
};

namespace {

std::string suffixOf(DType type) {
  if (type == DType::F64)
    return "f64";
  return type == DType::F32 ? "f32" : "i64";
}

std::string reduceName(ReduceKind k) {
  return k == ReduceKind::Sum ? "sum" : k == ReduceKind::Max ? "max" : "min";
}

std::string identity(ReduceKind k, DType type) {
  std::string t = suffixOf(type);
  if (k == ReduceKind::Sum)
    return t == "f32" ? "0.0f" : t == "f64" ? "0.0" : "0LL";
  std::string sign = k == ReduceKind::Max ? "-" : "";
  if (t == "f32")
    return sign + "__int_as_float(0x7f800000)";
  if (t == "f64")
    return sign + "__longlong_as_double(0x7ff0000000000000LL)";
  return k == ReduceKind::Max ? "(-9223372036854775807LL - 1)" : "9223372036854775807LL";
}

/// "v_x" -> "x": the IR-derived part of a node's C name.
std::string stem(const std::string &name) {
  return name.rfind("v_", 0) == 0 ? name.substr(2) : name;
}

std::string storageName(DType t) {
  return t == DType::F32 ? "f32" : t == DType::F16 ? "f16" : "bf16";
}

} // namespace

bool Writer::isHoisted(const Node &n) const {
  return n.mask == 0 && n.level == 0 && n.kind != NodeKind::Reduce;
}

std::string Writer::rowIndex(unsigned mask) const {
  std::string index;
  if (mask & Outer) {
    int64_t stride =
        ((mask & Reduced) ? prog.view.reduced : 1) * ((mask & Inner) ? prog.view.inner : 1);
    index = stride == 1 ? "row" : "row * " + std::to_string(stride) + "LL";
  }
  if (mask & Inner)
    index += index.empty() ? "inner" : " + inner";
  return index.empty() ? "0" : index;
}

/// The offset of the current element from its row's first, for an operand
/// spanning `mask` (with Reduced).
std::string Writer::elementIndex(unsigned mask) const {
  std::string col = sched.vec > 1 ? "(col + w)" : "col";
  return (mask & Inner) ? col + " * " + std::to_string(prog.view.inner) + "LL" : col;
}

std::string Writer::rowGuard() const {
  std::string guard = sched.rowsPerBlock > 1 && sched.mode != Mode::Column ? "live" : "";
  if (sched.mode != Mode::Column && sched.threads > 1)
    guard += (guard.empty() ? "" : " && ") + std::string("lane == 0");
  return guard;
}

/// A literal of C type `type` ("float" or "double") for `v`.
static std::string literal(double v, const std::string &type) {
  return floatLiteral(v, type == "double");
}

std::string Writer::cType(const Node &n) { return std::string(computeType(n.type)); }

std::string Writer::tablesText() const {
  std::string text;
  for (const Node &n : prog.nodes) {
    if (n.kind != NodeKind::Table)
      continue;
    const DenseData &d = *n.constant;
    text += "__device__ const " + cType(n) + " " + n.table + "[" + std::to_string(d.numElements()) +
            "] = {";
    for (size_t i = 0; i < d.numElements(); ++i)
      text += (i ? ", " : "") + constantLiteral(d, i);
    text += "};\n\n";
  }
  return text;
}

std::string Writer::exprText(const Node &n, const std::vector<std::string> &a) const {
  std::string t = cType(n);
  switch (n.expr) {
  case ExprKind::Pointwise:
    return pointwiseExpr(*n.op, a);
  case ExprKind::Convert:
    return n.type == prog.nodes[n.args[0]].type ? a[0] : "(" + t + ")" + a[0];
  case ExprKind::Mean:
    return a[0] + " / " + literal(n.count, t);
  case ExprKind::Difference:
    return a[0] + " - " + a[1];
  case ExprKind::Square:
    return a[0] + " * " + a[0];
  case ExprKind::Rstd:
    return literal(1, t) + " / " + (t == "double" ? "sqrt" : "sqrtf") + "(" + a[0] + " / " +
           literal(n.count, t) + " + " + literal(n.epsilon, t) + ")";
  case ExprKind::Normalize:
  case ExprKind::RmsNormalize: {
    bool isRms = n.expr == ExprKind::RmsNormalize;
    size_t p = isRms ? 2 : 3; // gamma and beta follow
    std::string y = isRms ? a[0] + " * " + a[1] : "(" + a[0] + " - " + a[1] + ") * " + a[2];
    y += a.size() > p ? " * " + a[p] : "";
    return a.size() > p + 1 ? y + " + " + a[p + 1] : y;
  }
  case ExprKind::ExpDifference:
    return expExpr(n.dtype, a[0] + " - " + a[1]);
  case ExprKind::Reciprocal:
    return literal(1, t) + " / " + a[0];
  case ExprKind::Product:
    return a[0] + " * " + a[1];
  }
  FUSEC_ASSERT(false, "unknown expression kind");
}

std::string Writer::rowValue(const Node &n) const {
  std::vector<std::string> args;
  switch (n.kind) {
  case NodeKind::Load:
    return loadExpr(n.dtype, inNames[n.input], rowIndex(n.mask));
  case NodeKind::Table:
    return n.table + "[" + rowIndex(n.mask) + "]";
  case NodeKind::Splat:
    return constantLiteral(*n.constant, 0);
  case NodeKind::Expr:
    for (unsigned a : n.args)
      args.push_back(prog.nodes[a].name);
    return exprText(n, args);
  case NodeKind::Reduce:
    break;
  }
  FUSEC_ASSERT(false, "a reduction has no per-row expression");
}

// Row pointers of elementwise operands and results, and the held arrays.
void Writer::writeRowSetup(std::ostream &os) {
  for (const Node &n : prog.nodes) {
    if (n.kind == NodeKind::Load && n.isElementwise() && rowIndex(n.mask) != "0")
      os << "    const " << storageType(n.dtype) << " *src_" << stem(n.name) << " = "
         << inNames[n.input] << " + " << rowIndex(n.mask) << ";\n";
    if (n.held)
      os << "    " << cType(n) << " h_" << stem(n.name) << "[" << sched.vectors * sched.vec
         << "];\n";
  }
  for (const Store &s : prog.stores)
    if ((s.mask & Reduced) && rowIndex(s.mask) != "0")
      os << "    " << storageType(s.dtype) << " *dst_" << stem(outNames[s.result]) << " = "
         << outNames[s.result] << " + " << rowIndex(s.mask) << ";\n";
}

void Writer::writeRowScope(unsigned level, std::ostream &os) {
  for (const Node &n : prog.nodes)
    if (!n.isElementwise() && !isHoisted(n) && n.kind != NodeKind::Reduce && n.level == level)
      os << "    const " << cType(n) << " " << n.name << " = " << rowValue(n) << ";\n";
  std::string guard = rowGuard();
  for (const Store &s : prog.stores) {
    const Node &n = prog.nodes[s.node];
    if ((s.mask & Reduced) || n.level != level)
      continue;
    os << "    " << (guard.empty() ? "" : "if (" + guard + ")\n      ") << outNames[s.result] << "["
       << rowIndex(s.mask) << "] = " << storeExpr(s.dtype, n.name) << ";\n";
  }
}

std::string Writer::elementValue(const Node &n, Pass &p) {
  std::vector<std::string> args;
  std::string src;
  switch (n.kind) {
  case NodeKind::Load:
    src = rowIndex(n.mask) == "0" ? inNames[n.input] : "src_" + stem(n.name);
    if (sched.vec == 1)
      return loadExpr(n.dtype, src, elementIndex(n.mask));
    p.pre.push_back("float x_" + stem(n.name) + "[" + std::to_string(sched.vec) + "];");
    p.pre.push_back("fusec_load_" + storageName(n.dtype) + "(" + src + " + col, x_" + stem(n.name) +
                    ", " + std::to_string(sched.vec) + ");");
    return "x_" + stem(n.name) + "[w]";
  case NodeKind::Table:
    return n.table + "[" + (rowIndex(n.mask) == "0" ? "" : rowIndex(n.mask) + " + ") +
           elementIndex(n.mask) + "]";
  case NodeKind::Expr:
    for (unsigned a : n.args)
      args.push_back(prog.nodes[a].name);
    return exprText(n, args);
  default:
    FUSEC_ASSERT(false, "not an elementwise node");
  }
}

// Emits node `i` into the pass, after what it reads.
void Writer::need(unsigned i, Pass &p) {
  const Node &n = prog.nodes[i];
  if (p.done.count(i) || !n.isElementwise())
    return;
  p.done.insert(i);
  std::string slot = sched.vec > 1 ? "k * " + std::to_string(sched.vec) + " + w" : "k";
  if (n.held && n.level < p.sweep) {
    p.element.push_back("const " + cType(n) + " " + n.name + " = h_" + stem(n.name) + "[" + slot +
                        "];");
    return;
  }
  for (unsigned a : n.args)
    need(a, p);
  p.element.push_back("const " + cType(n) + " " + n.name + " = " + elementValue(n, p) + ";");
  if (n.held)
    p.element.push_back("h_" + stem(n.name) + "[" + slot + "] = " + n.name + ";");
}

void Writer::addStores(unsigned s, Pass &p) {
  for (const Store &st : prog.stores) {
    const Node &n = prog.nodes[st.node];
    if (!(st.mask & Reduced) || n.level != s)
      continue;
    need(st.node, p);
    std::string name = stem(outNames[st.result]);
    std::string dst = rowIndex(st.mask) == "0" ? outNames[st.result] : "dst_" + name;
    if (sched.vec == 1) {
      p.element.push_back(dst + "[" + elementIndex(st.mask) + "] = " + storeExpr(st.dtype, n.name) +
                          ";");
      continue;
    }
    std::string width = std::to_string(sched.vec);
    p.pre.push_back("float y_" + name + "[" + width + "];");
    p.element.push_back("y_" + name + "[w] = " + n.name + ";");
    p.post.push_back("fusec_store_" + storageName(st.dtype) + "(" + dst + " + col, y_" + name +
                     ", " + width + ");");
  }
}

void Writer::writeSweep(unsigned s, std::ostream &os) {
  Pass p;
  p.sweep = s;
  for (unsigned i = 0; i < prog.nodes.size(); ++i) {
    const Node &n = prog.nodes[i];
    if (n.kind == NodeKind::Reduce && sweepOf(prog, i) == s) {
      os << "    " << cType(n) << " " << n.name << " = " << identity(n.reduce, n.type) << ";\n";
      need(n.args[0], p);
      const std::string &x = prog.nodes[n.args[0]].name;
      p.element.push_back(n.reduce == ReduceKind::Sum && n.type != DType::I64
                              ? n.name + " += " + x + ";"
                              : n.name + " = fusec_" + reduceName(n.reduce) + "_" +
                                    suffixOf(n.type) + "(" + n.name + ", " + x + ");");
    } else if (n.held && n.level == s) {
      need(i, p);
    }
  }
  addStores(s, p);
  os << "    // pass " << s << " over the row\n";
  writePassLoop(p, os);
  writeCombine(s, os);
}

// Opens the loop over the row's vectors (register path: unrolled over the
// thread's vectors, guarded when they overrun the row or the row is past
// the last); returns what closes it, and the indentation inside in `ind`.
std::string Writer::openPassLoop(bool usesCol, std::string &ind, std::ostream &os) const {
  int64_t q = sched.numVectors, perRow = int64_t(sched.vectors) * sched.threads;
  ind = "      ";
  if (sched.mode == Mode::Column) {
    os << "    #pragma unroll 4\n    for (int col = 0; col < " << q << "; ++col) {\n";
    return "    }\n";
  }
  if (sched.mode == Mode::Loop) {
    os << "    #pragma unroll 4\n    for (int q = lane; q < " << q << "; q += " << sched.threads
       << ") {\n";
    return "    }\n";
  }
  std::string guard = sched.rowsPerBlock > 1 ? "live" : "";
  if (perRow != q)
    guard += (guard.empty() ? "" : " && ") + ("q < " + std::to_string(q));
  os << "    #pragma unroll\n    for (int k = 0; k < " << sched.vectors << "; ++k) {\n";
  if (usesCol || perRow != q)
    os << ind << "const int q = k * " << sched.threads << " + lane;\n";
  if (guard.empty())
    return "    }\n";
  os << ind << "if (" << guard << ") {\n";
  ind += "  ";
  return "      }\n    }\n";
}

void Writer::writePassLoop(const Pass &p, std::ostream &os) const {
  bool usesCol = false;
  for (const auto *lines : {&p.pre, &p.element, &p.post})
    for (const std::string &line : *lines)
      usesCol = usesCol || line.find("col") != std::string::npos;
  std::string ind;
  std::string close = openPassLoop(usesCol, ind, os);
  if (sched.mode != Mode::Column && usesCol)
    os << ind << "const int col = q" << (sched.vec > 1 ? " * " + std::to_string(sched.vec) : "")
       << ";\n";
  for (const std::string &line : p.pre)
    os << ind << line << "\n";
  std::string elementIndent = sched.vec > 1 ? ind + "  " : ind;
  if (sched.vec > 1)
    os << ind << "#pragma unroll\n" << ind << "for (int w = 0; w < " << sched.vec << "; ++w) {\n";
  for (const std::string &line : p.element)
    os << elementIndent << line << "\n";
  if (sched.vec > 1)
    os << ind << "}\n";
  for (const std::string &line : p.post)
    os << ind << line << "\n";
  os << close;
}

// A block reduction's scratch may be rewritten by the next row's
// reduction into it only after every thread has read it: with two or more
// reductions a row, the barrier of each one in between orders that, so
// the trailing barrier is left out (`reuse` false).
unsigned Writer::blockReductions() const {
  unsigned count = 0;
  for (const Node &n : prog.nodes)
    count += n.kind == NodeKind::Reduce;
  return count;
}

void Writer::writeCombine(unsigned s, std::ostream &os) {
  if (sched.mode == Mode::Column || sched.threads == 1)
    return;
  for (unsigned i = 0; i < prog.nodes.size(); ++i) {
    const Node &n = prog.nodes[i];
    if (n.kind != NodeKind::Reduce || sweepOf(prog, i) != s)
      continue;
    std::string fn = reduceName(n.reduce) + "_" + suffixOf(n.type);
    if (sched.threads <= 32) {
      os << "    " << n.name << " = fusec_warp_" << fn << "(" << n.name << ", " << sched.threads
         << ");\n";
      continue;
    }
    shared += "  __shared__ " + cType(n) + " red_" + n.name + "[32];\n";
    os << "    " << n.name << " = fusec_block_" << fn << "(" << n.name << ", red_" << n.name << ", "
       << sched.threads / 32 << ", " << (blockReductions() > 1 ? "false" : "true") << ");\n";
  }
}

} // namespace fusec::rowred
