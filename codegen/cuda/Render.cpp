// The CUDA C++ renderer (Render.h): one case per kir opcode. A value becomes
// a `const` local named for it, except where an expression reads better
// inline: parameters, index constants and special registers always, and an
// unnamed load or narrow whose one use is the next instruction of its block
// (so `const float v_x = fusec_f16_to_f32(in_x[i]);` stays one line; nothing
// can come between the two).
#include "codegen/cuda/Render.h"

#include "codegen/cuda/DeviceSources.h"
#include "codegen/cuda/Math.h"
#include "ir/Assert.h"

#include <bit>
#include <cmath>
#include <map>
#include <sstream>

namespace fusec::cuda {

namespace {

using kir::Inst;
using kir::Opcode;
using kir::ValueId;

// Indexed by kir::Special.
constexpr std::string_view kSpecials[] = {"threadIdx.x", "threadIdx.y", "blockDim.x", "blockIdx.x",
                                          "gridDim.x"};
static_assert(std::size(kSpecials) == size_t(kir::Special::NctaidX) + 1);

// Indexed by kir::IndexOp.
constexpr std::string_view kIndexOperators[] = {" + ",  " - ", " * ", " / ", " % ",
                                                " << ", " < ", " & ", " ^ ", " >> "};
static_assert(std::size(kIndexOperators) == size_t(kir::IndexOp::Shr) + 1);

// Indexed by kir::ShuffleMode.
constexpr std::string_view kShuffles[] = {"__shfl_xor_sync", "__shfl_down_sync", "__shfl_up_sync",
                                          "__shfl_sync"};
static_assert(std::size(kShuffles) == size_t(kir::ShuffleMode::Idx) + 1);

/// Whether table `t` is spelled as the bit patterns of its elements: a float table holding an
/// infinity or a NaN, whose literals (__int_as_float) are no constant initializers.
bool asBits(const kir::Table &t) {
  const DenseData &d = t.data;
  if (!isFloat(d.dtype))
    return false;
  for (size_t e = 0; e < d.numElements(); ++e)
    if (!std::isfinite(d.elementAsDouble(e)))
      return true;
  return false;
}

class Renderer {
public:
  explicit Renderer(const kir::Kernel &k) : k(k), names(kir::uniqueNames(k)) {}

  std::string run();

private:
  void countUses(const kir::Block &b);
  void block(const kir::Block &b, const std::string &indent);
  /// The instruction as a statement; "" when it is rendered inline.
  std::string statement(const kir::Block &b, size_t at, const std::string &indent);
  std::string expr(const Inst &i);
  const std::string &ref(ValueId v) const { return exprs.at(v); }
  std::string declare(const Inst &i) {
    const kir::Type &t = k.typeOf(i.result);
    // A pointer value (a select between parameters) is only read through.
    std::string type = t.isPointer() ? cType(t.elem) + " *const" : cType(t);
    return "const " + type + " " + names[i.result] + " = " + expr(i) + ";";
  }
  std::string address(const Inst &i, size_t at = 0) {
    return ref(i.operands[at]) + " + " + ref(i.operands[at + 1]);
  }
  /// The 32-bit shared-window address of operand `at` + operand `at + 1`:
  /// the array's address (loop-invariant) plus 32-bit byte offsets, not a
  /// 64-bit generic pointer converted per access.
  std::string sharedAddress(const Inst &i, size_t at = 0) {
    unsigned size = dtypeSize(k.typeOf(i.operands[at]).elem);
    return "(fusec_smem_u32(" + ref(i.operands[at]) + ") + " +
           (size > 1 ? std::to_string(size) + "u * " : "") + "(unsigned)(" +
           ref(i.operands[at + 1]) + "))";
  }
  std::string async(const Inst &i);
  std::string hopper(const Inst &i);
  std::string warpgroup(const Inst &i, const std::string &indent);
  /// The matrix descriptor of the shared tile whose layout is operand `at`.
  std::string descriptor(const Inst &i, size_t at) {
    return "fusec_wgmma_desc(" + ref(i.operands[at]) + ", " + sharedAddress(i, at + 1) + ")";
  }
  std::string table(const kir::Table &t) const;
  std::string param(const kir::Param &p) const;

  const kir::Kernel &k;
  std::vector<std::string> names;
  std::map<ValueId, unsigned> uses;
  std::map<ValueId, std::string> exprs;                // how each value is read
  std::map<ValueId, std::pair<DType, int64_t>> arrays; // each array's elements
  std::ostringstream os;
};

void Renderer::countUses(const kir::Block &b) {
  for (const Inst &i : b) {
    for (ValueId v : i.operands)
      ++uses[v];
    for (const kir::Block &r : i.regions)
      countUses(r);
  }
}

std::string Renderer::expr(const Inst &i) {
  switch (i.op) {
  case Opcode::Param:
    return k.params[i.imm].name;
  case Opcode::Const:
    return std::to_string(i.imm) + (k.typeOf(i.result).elem == DType::I64 ? "LL" : "");
  case Opcode::Literal:
    return constantLiteral(i.dense, 0);
  case Opcode::Special:
    return "(long long)" + std::string(kSpecials[size_t(i.special)]);
  case Opcode::Index:
    return ref(i.operands[0]) + std::string(kIndexOperators[size_t(i.indexOp)]) +
           ref(i.operands[1]);
  case Opcode::Math: {
    std::vector<std::string> args;
    for (ValueId v : i.operands)
      args.push_back(ref(v));
    return pointwiseExpr(i.math, args);
  }
  case Opcode::Widen:
    if (i.dtype == DType::Bool)
      return ref(i.operands[0]) + " != 0";
    return "fusec_" + std::string(dtypeName(i.dtype)) +
           (k.typeOf(i.result).lanes > 1 ? "x2_to_f32x2(" : "_to_f32(") + ref(i.operands[0]) + ")";
  case Opcode::Narrow:
    if (i.dtype == DType::Bool)
      return "(signed char)" + ref(i.operands[0]);
    return "fusec_f32" + std::string(k.typeOf(i.result).lanes > 1 ? "x2" : "") + "_to_" +
           std::string(dtypeName(i.dtype)) + (k.typeOf(i.result).lanes > 1 ? "x2" : "") + "(" +
           ref(i.operands[0]) + ")";
  case Opcode::Load:
    if (i.lanes == 1)
      return ref(i.operands[0]) + "[" + ref(i.operands[1]) + "]";
    return "*reinterpret_cast<const " + cType(k.typeOf(i.result)) + " *>(" + address(i) + ")";
  case Opcode::Table:
    if (asBits(k.tables[i.imm]))
      return "reinterpret_cast<const " + cType(kir::computeType(k.tables[i.imm].data.dtype)) +
             " *>(" + k.tables[i.imm].name + ")";
    return k.tables[i.imm].name;
  case Opcode::Shuffle: {
    const std::string &mask = ref(i.operands[2]);
    std::string lanes = mask == "4294967295LL" ? "0xffffffffu" : "(unsigned)" + mask;
    return std::string(kShuffles[size_t(i.shuffle)]) + "(" + lanes + ", " + ref(i.operands[0]) +
           ", (int)" + ref(i.operands[1]) + ", " + std::to_string(i.imm) + ")";
  }
  case Opcode::Matrix: {
    if (i.matrix == kir::MatrixOp::LoadX4)
      return std::string(i.imm ? "fusec_ldmatrix_x4_trans(" : "fusec_ldmatrix_x4(") +
             sharedAddress(i) + ")";
    return "fusec_mma_m16n8k16_" + std::string(dtypeName(i.dtype)) + "(" + ref(i.operands[0]) +
           ", " + ref(i.operands[1]) + ", " + ref(i.operands[2]) + ")";
  }
  case Opcode::Select:
    return ref(i.operands[0]) + " ? " + ref(i.operands[1]) + " : " + ref(i.operands[2]);
  case Opcode::Pack:
    return "fusec_pack_" + std::string(dtypeName(i.dtype)) + "x2(" + ref(i.operands[0]) + ", " +
           ref(i.operands[1]) + ")";
  case Opcode::Unpack:
    return "fusec_unpack_" + std::string(dtypeName(i.dtype)) + (i.imm ? "_hi(" : "_lo(") +
           ref(i.operands[0]) + ")";
  case Opcode::Exp2:
    return "fusec_exp2_approx(" + ref(i.operands[0]) + ")";
  case Opcode::AtomicAdd:
    return "atomicAdd(&" + ref(i.operands[0]) + "[" + ref(i.operands[1]) + "], " +
           ref(i.operands[2]) + ")";
  case Opcode::Store:
  case Opcode::Alloca:
  case Opcode::For:
  case Opcode::If:
  case Opcode::Barrier:
  case Opcode::Fence:
  case Opcode::DynamicShared:
  case Opcode::Async:
  case Opcode::MBarrier:
  case Opcode::SetMaxRegisters:
    break;
  }
  FUSEC_ASSERT(false, "not an expression");
}

std::string Renderer::async(const Inst &i) {
  switch (i.async) {
  case kir::AsyncOp::Copy:
    return "fusec_cp_async16(" + sharedAddress(i) + ", " + address(i, 2) + ", " +
           ref(i.operands[4]) + ");";
  case kir::AsyncOp::Commit:
    return "asm volatile(\"cp.async.commit_group;\" ::: \"memory\");";
  case kir::AsyncOp::Wait:
    return "asm volatile(\"cp.async.wait_group " + std::to_string(i.imm) + ";\" ::: \"memory\");";
  case kir::AsyncOp::ProxyFence:
    return "asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\");";
  case kir::AsyncOp::TensorLoad:
  case kir::AsyncOp::TensorStore:
  case kir::AsyncOp::BulkCommit:
  case kir::AsyncOp::BulkWait:
    return hopper(i);
  }
  FUSEC_ASSERT(false, "unknown async op");
}

/// The sm_90 instructions, as inline PTX (kir::hopperPtx): shared addresses as 32-bit words, a
/// tensor map by its generic address (a __grid_constant__ parameter's own).
std::string Renderer::hopper(const Inst &i) {
  auto word = [](const std::string &e) { return "\"r\"(" + e + ")"; };
  std::vector<std::string> inputs;
  if (i.op == Opcode::Barrier) {
    if (!i.cluster)
      inputs = {word(ref(i.operands[0]))};
  } else if (i.op == Opcode::Async && i.async == kir::AsyncOp::TensorLoad) {
    inputs = {word(sharedAddress(i)), "\"l\"(&" + ref(i.operands[2]) + ")",
              word(sharedAddress(i, 3))};
    size_t offsets = i.operands.size() - i.im2col; // im2col offsets are 16-bit registers
    for (size_t c = 5; c < i.operands.size(); ++c)
      inputs.push_back(c < offsets ? word(ref(i.operands[c]))
                                   : "\"h\"((unsigned short)" + ref(i.operands[c]) + ")");
  } else if (i.op == Opcode::Async && i.async == kir::AsyncOp::TensorStore) {
    inputs = {word(sharedAddress(i)), "\"l\"(&" + ref(i.operands[2]) + ")"};
    for (size_t c = 3; c < i.operands.size(); ++c)
      inputs.push_back(word(ref(i.operands[c])));
  } else if (i.op == Opcode::MBarrier && i.mbarrier != kir::MBarrierOp::InitFence) {
    inputs = {word(sharedAddress(i))};
    if (i.mbarrier == kir::MBarrierOp::Wait || i.mbarrier == kir::MBarrierOp::ArriveRemote)
      inputs.push_back(word(ref(i.operands[2])));
  }
  std::string s = "asm volatile(\"";
  for (char c : kir::hopperPtx(i, '%'))
    s += c == '\n' ? std::string("\\n") : std::string(1, c);
  s += "\" :";
  for (size_t o = 0; o < inputs.size(); ++o)
    s += (o ? ", " : ": ") + inputs[o];
  return s + (inputs.empty() ? ":: \"memory\");" : " : \"memory\");");
}

/// The warpgroup matrix instructions, as inline PTX: a wgmma names each accumulator register
/// ("+f" of acc[0], acc[1], ...; "=f" where it overwrites them); a fence and a wait pin each
/// register they guard, so that no write of one moves below the fence and no read above the wait
/// (what CUTLASS's warpgroup_fence_operand does).
std::string Renderer::warpgroup(const Inst &i, const std::string &indent) {
  auto pin = [&](std::string &s) {
    for (ValueId array : i.operands) {
      auto [dtype, count] = arrays.at(array);
      s += "\n" + indent + "#pragma unroll\n" + indent + "for (int r = 0; r < " +
           std::to_string(count) + "; ++r)\n" + indent + "  asm volatile(\"\" : \"+" +
           (dtype == DType::F32 ? "f" : "r") + "\"(" + ref(array) + "[r])::\"memory\");";
    }
  };
  switch (i.matrix) {
  case kir::MatrixOp::WgmmaFence: {
    std::string s = "// registers written before the fence";
    pin(s);
    return s + "\n" + indent + "asm volatile(\"wgmma.fence.sync.aligned;\" ::: \"memory\");";
  }
  case kir::MatrixOp::WgmmaCommit:
    return "asm volatile(\"wgmma.commit_group.sync.aligned;\" ::: \"memory\");";
  case kir::MatrixOp::WgmmaWait: {
    std::string s = "asm volatile(\"wgmma.wait_group.sync.aligned " + std::to_string(i.imm) +
                    ";\" ::: \"memory\");";
    pin(s);
    return s;
  }
  case kir::MatrixOp::Wgmma: {
    unsigned n = unsigned(i.imm) / 2;
    bool sharedA = i.operands.size() == 7;
    std::string ptx; // the PTX as a C string literal's contents
    for (char c : kir::wgmmaPtx(i, '%'))
      ptx += c == '\n' ? std::string("\\n") : std::string(1, c);
    bool overwrite = i.accumulate == kir::Accumulate::Overwrite; // registers written, not read
    std::string outputs;
    for (unsigned r = 0; r < n; ++r)
      outputs += std::string(r ? ", " : "") + (overwrite ? "\"=f\"(" : "\"+f\"(") +
                 ref(i.operands[0]) + "[" + std::to_string(r) + "])";
    std::string a = "\"l\"(" + descriptor(i, 1) + ")";
    if (!sharedA) { // the words of an i32x4 (an expression, maybe)
      std::string words = "(" + ref(i.operands[1]) + ")";
      a = "\"r\"(" + words + ".a), \"r\"(" + words + ".b), \"r\"(" + words + ".c), \"r\"(" + words +
          ".d)";
    }
    return "asm volatile(\"" + ptx + "\"\n" + indent + "    : " + outputs + "\n" + indent +
           "    : " + a + ", \"l\"(" + descriptor(i, i.operands.size() - 3) + "), \"r\"(" +
           (overwrite ? "0" : "1") + ")\n" + indent + "    : \"memory\");";
  }
  case kir::MatrixOp::LoadX4:
  case kir::MatrixOp::MmaM16N8K16:
    break;
  }
  FUSEC_ASSERT(false, "not a warpgroup instruction");
}

std::string Renderer::statement(const kir::Block &b, size_t at, const std::string &indent) {
  const Inst &i = b[at];
  switch (i.op) {
  case Opcode::Param:
  case Opcode::Const:
  case Opcode::Special:
  case Opcode::Table:
    exprs[i.result] = expr(i);
    return "";
  case Opcode::Load:
  case Opcode::Narrow: {
    bool nextUses = at + 1 < b.size() &&
                    std::count(b[at + 1].operands.begin(), b[at + 1].operands.end(), i.result) == 1;
    if (uses[i.result] == 1 && nextUses && k.values[i.result].name.empty()) {
      exprs[i.result] = expr(i);
      return "";
    }
    break;
  }
  case Opcode::Store: {
    const std::string &value = ref(i.operands[2]);
    if (i.lanes == 1)
      return ref(i.operands[0]) + "[" + ref(i.operands[1]) + "] = " + value + ";";
    return "*reinterpret_cast<" + cType(k.typeOf(i.operands[2])) + " *>(" + address(i) +
           ") = " + value + ";";
  }
  case Opcode::Barrier:
    if (i.warp)
      return "__syncwarp();";
    return i.operands.empty() && !i.cluster ? "__syncthreads();" : hopper(i);
  case Opcode::MBarrier:
  case Opcode::SetMaxRegisters:
    return hopper(i);
  case Opcode::Fence:
    return "__threadfence();";
  case Opcode::Async:
    return async(i);
  case Opcode::Matrix:
    if (i.matrix != kir::MatrixOp::LoadX4 && i.matrix != kir::MatrixOp::MmaM16N8K16)
      return warpgroup(i, indent);
    break;
  case Opcode::DynamicShared:
    // Named for the kernel too: every extern __shared__ array of a module
    // with one name must have one type.
    exprs[i.result] = k.name + "_" + names[i.result];
    return "extern __shared__ __align__(" + std::to_string(i.align) + ") " + cType(i.dtype) + " " +
           exprs[i.result] + "[];";
  case Opcode::Alloca:
    exprs[i.result] = names[i.result];
    arrays[i.result] = {i.dtype, i.imm};
    return std::string(k.typeOf(i.result).space == kir::Space::Shared ? "__shared__ " : "") +
           "alignas(" + std::to_string(i.align) + ") " + cType(i.dtype) + " " + names[i.result] +
           "[" + std::to_string(i.imm) + "];";
  case Opcode::For: {
    const std::string &n = names[i.result];
    exprs[i.result] = n;
    if (i.imm != 0)
      os << indent << "#pragma unroll" << (i.imm > 0 ? " " + std::to_string(i.imm) : "") << "\n";
    os << indent << "for (" << cType(k.typeOf(i.result)) << " " << n << " = " << ref(i.operands[0])
       << "; " << n << " < " << ref(i.operands[1]) << "; " << n << " += " << ref(i.operands[2])
       << ") {\n";
    block(i.regions[0], indent + "  ");
    return "}";
  }
  case Opcode::If:
    os << indent << "if (" << ref(i.operands[0]) << ") {\n";
    block(i.regions[0], indent + "  ");
    if (i.regions[1].empty())
      return "}";
    os << indent << "} else {\n";
    block(i.regions[1], indent + "  ");
    return "}";
  case Opcode::Literal:
  case Opcode::Index:
  case Opcode::Math:
  case Opcode::Widen:
  case Opcode::Shuffle:
  case Opcode::Pack:
  case Opcode::Unpack:
  case Opcode::Select:
  case Opcode::Exp2:
  case Opcode::AtomicAdd:
    break;
  }
  std::string line = declare(i);
  exprs[i.result] = names[i.result];
  return line;
}

void Renderer::block(const kir::Block &b, const std::string &indent) {
  for (size_t at = 0; at < b.size(); ++at) {
    std::string line = statement(b, at, indent);
    if (!line.empty())
      os << indent << line << "\n";
  }
}

std::string Renderer::table(const kir::Table &t) const {
  const DenseData &d = t.data;
  if (asBits(t)) { // the elements in their compute type's bits: f32 for all but f64
    bool wide = d.dtype == DType::F64;
    std::string s = "__device__ const " + std::string(wide ? "unsigned long long " : "unsigned ") +
                    t.name + "[" + std::to_string(d.numElements()) + "] = {";
    for (size_t e = 0; e < d.numElements(); ++e) {
      double x = d.elementAsDouble(e);
      uint64_t bits = wide ? std::bit_cast<uint64_t>(x) : std::bit_cast<uint32_t>(float(x));
      s += (e ? ", " : "") + std::to_string(bits) + (wide ? "ull" : "u");
    }
    return s + "};\n\n";
  }
  std::string s = "__device__ const " + cType(kir::computeType(d.dtype)) + " " + t.name + "[" +
                  std::to_string(d.numElements()) + "] = {";
  for (size_t e = 0; e < d.numElements(); ++e)
    s += (e ? ", " : "") + constantLiteral(d, e);
  return s + "};\n\n";
}

std::string Renderer::param(const kir::Param &p) const {
  if (p.type == kir::Type::tensorMap())
    return "const __grid_constant__ fusec_tensor_map " + p.name;
  if (!p.type.isPointer())
    return cType(p.type.elem) + " " + p.name;
  return (p.readOnly ? "const " : "") + cType(p.type.elem) + " *__restrict__ " + p.name;
}

std::string Renderer::run() {
  countUses(k.body);
  for (const kir::Table &t : k.tables)
    os << table(t);
  for (const std::string &line : k.comment)
    os << "// " << line << "\n";
  os << "extern \"C\" __global__ void ";
  if (k.maxThreads)
    os << "__launch_bounds__(" << k.maxThreads
       << (k.minBlocks ? ", " + std::to_string(k.minBlocks) : "") << ") ";
  os << k.name << "(";
  for (size_t p = 0; p < k.params.size(); ++p)
    os << (p ? ",\n    " : "\n    ") << param(k.params[p]);
  os << ") {\n";
  if (k.dependent) // Note [Dependent launch] in codegen/Codegen.cpp
    os << "  asm volatile(\"griddepcontrol.wait;\" ::: \"memory\");\n";
  block(k.body, "  ");
  os << "}\n";
  return os.str();
}

} // namespace

std::string render(const kir::Kernel &k) { return Renderer(k).run(); }

std::string translationUnit(const std::vector<GeneratedKernel> &kernels) {
  std::string unit = "// Generated by fusec (codegen/): " + std::to_string(kernels.size()) +
                     " kernel(s).\n\n" + std::string(deviceHelperSource());
  for (const GeneratedKernel &k : kernels)
    unit += "\n" + k.source;
  return unit;
}

} // namespace fusec::cuda
