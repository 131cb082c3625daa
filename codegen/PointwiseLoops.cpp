// The loops of the pointwise template's CUDA C++ (see Pointwise.cpp): the
// scalar grid-stride loop, and the vector path.
//
// Vector path (PointwisePlan::width = V > 1): the loop runs over vectors of V
// elements: one vector load per flat-indexed operand into a register array,
// the element body unrolled V times over it, one vector store per result; the
// numel % V tail elements run the scalar loop. Base pointers are 16-byte
// aligned (a runtime guarantee), so vector i is aligned to its size.
#include "codegen/PointwiseEmitter.h"
#include "codegen/PointwiseMath.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>

namespace fusec::codegen {

void PointwiseEmitter::emitCoordinates(std::ostream &os) const {
  if (plan.coords.empty())
    return;
  os << "    long long rem = i;\n";
  for (unsigned k = unsigned(plan.space.size()); k-- > *plan.coords.begin();) {
    if (k == 0) {
      os << "    const long long c0 = rem;\n";
      break;
    }
    std::string extent = scalar(plan.extents[k]);
    os << "    const long long c" << k << " = rem % " << extent << ";\n";
    if (k > *plan.coords.begin())
      os << "    rem /= " << extent << ";\n";
  }
}

/// The body for one element `i`: loads, one statement per op, stores.
/// Flat-indexed operands and results go through the register arrays of the
/// vector loop (`<pointer>_v[e]`) when `vector` is set.
void PointwiseEmitter::emitElement(std::ostream &os, const std::string &indent, bool vector) const {
  for (const Value *v : body.inputs()) {
    if (!v->hasUses())
      continue;
    bool viaArray = vector && isFlat(v);
    os << indent << "const " << computeType(v->type().dtype) << " " << local.at(v) << " = "
       << loadExpr(v->type().dtype, pointer(v) + (viaArray ? "_v" : ""),
                   viaArray ? "e" : indexExpr(plan.index.at(v)))
       << ";\n";
  }
  for (const auto &op : body.ops()) {
    const Value *r = op->result();
    std::string type(computeType(r->type().dtype));
    if (op->kind() == OpKind::Const) {
      if (tableLoad.count(r))
        os << indent << "const " << type << " " << local.at(r) << " = " << tableLoad.at(r) << ";\n";
      continue;
    }
    std::vector<std::string> args;
    for (const Value *v : op->operands())
      args.push_back(local.at(v));
    os << indent << "const " << type << " " << local.at(r) << " = " << pointwiseExpr(*op, args)
       << ";\n";
  }
  for (unsigned j = 0; j < kernel.numResults(); ++j) {
    const std::string &ptr = pointer(kernel.result(j));
    os << indent << ptr << (vector ? "_v[e]" : "[i]") << " = "
       << storeExpr(kernel.result(j)->type().dtype, local.at(body.outputs()[j])) << ";\n";
  }
}

void PointwiseEmitter::emitScalarLoop(std::ostream &os, const std::string &start) const {
  os << "  for (long long i = " << start << "; i < numel; i += step) {\n";
  emitCoordinates(os);
  emitElement(os, "    ", false);
  os << "  }\n";
}

/// "fusec_v16" etc.: the type of one vector of `bytes` bytes.
static std::string vectorType(size_t bytes) { return "fusec_v" + std::to_string(bytes); }

void PointwiseEmitter::emitVectorLoop(std::ostream &os) const {
  unsigned width = plan.width;
  std::string w = std::to_string(width);
  os << "  const long long numVectors = numel / " << w << ";\n"
     << "  for (long long vi = first; vi < numVectors; vi += step) {\n";
  auto array = [&](const Value *v, const std::string &ptr) {
    os << "    alignas(16) " << storageType(v->type().dtype) << " " << ptr << "_v[" << w << "];\n";
  };
  for (const Value *v : body.inputs()) {
    if (!v->hasUses() || !isFlat(v))
      continue;
    const std::string &ptr = pointer(v);
    std::string vt = vectorType(dtypeSize(v->type().dtype) * width);
    array(v, ptr);
    os << "    *reinterpret_cast<" << vt << " *>(" << ptr << "_v) = reinterpret_cast<const " << vt
       << " *>(" << ptr << ")[vi];\n";
  }
  for (unsigned j = 0; j < kernel.numResults(); ++j)
    array(kernel.result(j), pointer(kernel.result(j)));
  os << "#pragma unroll\n    for (int e = 0; e < " << w << "; ++e) {\n"
     << "      const long long i = vi * " << w << " + e;\n";
  std::ostringstream coordinateStream;
  emitCoordinates(coordinateStream);
  std::string coordinates = coordinateStream.str();
  for (llvm::StringRef line : llvm::split(coordinates, '\n'))
    if (!line.empty())
      os << "  " << line.str() << "\n";
  emitElement(os, "      ", true);
  os << "    }\n";
  for (unsigned j = 0; j < kernel.numResults(); ++j) {
    const std::string &ptr = pointer(kernel.result(j));
    std::string vt = vectorType(dtypeSize(kernel.result(j)->type().dtype) * width);
    os << "    reinterpret_cast<" << vt << " *>(" << ptr << ")[vi] = *reinterpret_cast<const " << vt
       << " *>(" << ptr << "_v);\n";
  }
  os << "  }\n";
}

} // namespace fusec::codegen
