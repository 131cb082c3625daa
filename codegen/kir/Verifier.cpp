// kir's verifier: every use is of a value defined earlier in its block or in an enclosing one, and
// every instruction has the operand types its opcode takes (Kir.h). It checks what a renderer
// relies on, so that a template's mistake is reported at the instruction rather than as a malformed
// CUDA or LLVM module.
#include "codegen/kir/Kir.h"
#include "ir/OpTable.h"

#include <map>
#include <set>

namespace fusec::kir {

namespace {

/// The operands instruction `i` takes (a math op's, its op's).
unsigned arity(const Inst &i) {
  switch (i.op) {
  case Opcode::Param:
  case Opcode::Const:
  case Opcode::Literal:
  case Opcode::Special:
  case Opcode::Alloca:
  case Opcode::Table:
  case Opcode::DynamicShared:
  case Opcode::Fence:
  case Opcode::SetMaxRegisters:
    return 0;
  case Opcode::Barrier: // a named barrier's id, or none (the block's)
    return i.operands.size() == 1 ? 1 : 0;
  case Opcode::Widen:
  case Opcode::Narrow:
  case Opcode::If:
  case Opcode::Exp2:
  case Opcode::Unpack:
    return 1;
  case Opcode::Index:
  case Opcode::Load:
  case Opcode::Pack:
    return 2;
  case Opcode::Store:
  case Opcode::For:
  case Opcode::Shuffle:
  case Opcode::Select:
  case Opcode::AtomicAdd:
    return 3;
  case Opcode::Async:
    if (i.async == AsyncOp::TensorLoad) // 5 + a coordinate a dimension (types() checks 1 to 5)
      return i.imm >= 1 && i.imm <= 5 ? 5 + unsigned(i.imm) + i.im2col
                                      : unsigned(i.operands.size());
    if (i.async == AsyncOp::TensorStore) // 3 + a coordinate a dimension
      return i.imm >= 1 && i.imm <= 5 ? 3 + unsigned(i.imm) : unsigned(i.operands.size());
    return i.async == AsyncOp::Copy ? 5 : 0;
  case Opcode::MBarrier:
    if (i.mbarrier == MBarrierOp::InitFence)
      return 0;
    return i.mbarrier == MBarrierOp::Wait || i.mbarrier == MBarrierOp::ArriveRemote ? 3 : 2;
  case Opcode::Matrix:
    switch (i.matrix) {
    case MatrixOp::LoadX4:
      return 2;
    case MatrixOp::MmaM16N8K16:
      return 3;
    case MatrixOp::Wgmma: // A in shared memory (3 operands) or registers (1)
      return i.operands.size() == 5 ? 5 : 7;
    case MatrixOp::WgmmaCommit:
      return 0;
    case MatrixOp::WgmmaFence: // the register arrays it guards
    case MatrixOp::WgmmaWait:
      return unsigned(i.operands.size());
    }
    return 0;
  case Opcode::Math:
    return unsigned(opInfo(i.math.kind).maxOperands);
  }
  return 0;
}

class Verifier {
public:
  explicit Verifier(const Kernel &k) : k(k), names(uniqueNames(k)) {}

  std::vector<std::string> run() {
    for (const Inst &p : k.body)
      if (p.op == Opcode::Param && k.params[p.imm].readOnly)
        readOnly[p.result] = k.params[p.imm].name;
    block(k.body);
    return errors;
  }

private:
  void fail(const Inst &i, const std::string &what) {
    errors.push_back((i.result != kNoValue ? "%" + names[i.result] : place(i)) + ": " + what);
  }
  /// What names an instruction that defines no value in a message.
  static std::string place(const Inst &i) {
    switch (i.op) {
    case Opcode::If:
      return "an if";
    case Opcode::Store:
      return "a store";
    case Opcode::Matrix:
      return "a wgmma";
    case Opcode::Barrier:
      return "a barrier";
    case Opcode::MBarrier:
      return "an mbarrier";
    case Opcode::SetMaxRegisters:
      return "a setmaxnreg";
    default:
      if (i.op == Opcode::Async && i.async == AsyncOp::TensorLoad)
        return "a tma load";
      return i.op == Opcode::Async && i.async == AsyncOp::TensorStore ? "a tma store"
                                                                      : "an async copy";
    }
  }
  const Type &type(const Inst &i, size_t o) const { return k.typeOf(i.operands[o]); }
  bool isIndex(ValueId v) const { return k.typeOf(v) == Type::index(); }
  /// An i32 or i64 scalar: what index math, shared-memory offsets and element indices take.
  bool isInteger(ValueId v) const { return k.typeOf(v) == Type::scalar(DType::I32) || isIndex(v); }
  bool isPredicate(ValueId v) const { return k.typeOf(v) == Type::scalar(DType::Bool); }
  bool isI32(ValueId v) const { return k.typeOf(v) == Type::scalar(DType::I32); }
  /// Whether operand `o` points into `s` and operand `o + 1` is an element index.
  bool isAddress(const Inst &i, size_t o, Space s) const {
    return type(i, o).space == s && isInteger(i.operands[o + 1]);
  }
  void block(const Block &b);
  bool operands(const Inst &i);
  void types(const Inst &i);
  void memory(const Inst &i);
  void wgmma(const Inst &i);
  void tensorCopy(const Inst &i);
  void mbarrier(const Inst &i);
  void namedBarrier(const Inst &i);
  void setMaxRegisters(const Inst &i);

  const Kernel &k;
  std::vector<std::string> names;
  std::set<ValueId> defined;
  std::map<ValueId, std::string> readOnly;                  // read-only parameters' values, by name
  std::map<ValueId, std::pair<DType, int64_t>> localArrays; // each local array's elements
  std::map<ValueId, int64_t> constants;                     // each constant's value
  std::vector<std::string> errors;
};

/// Whether `i` has its opcode's operand count, each defined in scope.
bool Verifier::operands(const Inst &i) {
  unsigned want = arity(i);
  if (i.operands.size() != want) {
    fail(i,
         "takes " + std::to_string(want) + " operands, not " + std::to_string(i.operands.size()));
    return false;
  }
  for (ValueId v : i.operands) {
    if (v < k.values.size() && defined.count(v))
      continue;
    fail(i, "uses a value not defined before it in scope");
    return false;
  }
  // A tensor map lives in the parameter space: only the TMA reads it, by its address.
  bool tma =
      i.op == Opcode::Async && (i.async == AsyncOp::TensorLoad || i.async == AsyncOp::TensorStore);
  for (size_t o = 0; o < i.operands.size(); ++o) {
    if (k.typeOf(i.operands[o]).space != Space::Param || (tma && o == 2))
      continue;
    fail(i, "uses tensor map %" + names[i.operands[o]] + ", which only a tma load or store takes");
    return false;
  }
  return true;
}

void Verifier::wgmma(const Inst &i) {
  size_t b = i.operands.size() - 3; // B's layout, pointer and byte index
  bool sharedA = i.operands.size() == 7;
  auto isTile = [&](size_t o) { // a layout and a byte address
    return isIndex(i.operands[o]) && type(i, o + 1) == Type::pointer(DType::I8, Space::Shared) &&
           isInteger(i.operands[o + 2]);
  };
  auto array = localArrays.find(i.operands[0]);
  bool holds = array != localArrays.end() && array->second.first == DType::F32 &&
               array->second.second >= i.imm / 2;
  if (!holds || !isNarrowFloat(i.dtype) || i.imm < 8 || i.imm > 256 || i.imm % 8 != 0 ||
      !isTile(b) || (sharedA ? !isTile(1) : type(i, 1) != Type::vector(DType::I32, 4)))
    fail(i, "wgmma m64nNk16 (N a multiple of 8 up to 256) of f16 or bf16 takes a local array of "
            "at least N/2 f32, A as a shared tile (layout, i8 pointer, byte index) or i32x4, and "
            "B as a shared tile");
}

void Verifier::tensorCopy(const Inst &i) {
  bool load = i.async == AsyncOp::TensorLoad;
  bool coords = true;
  for (size_t o = load ? 5 : 3; o < i.operands.size(); ++o)
    coords = coords && isI32(i.operands[o]);
  bool ok = i.imm >= 1 && i.imm <= 5 && coords && isAddress(i, 0, Space::Shared) &&
            type(i, 2) == Type::tensorMap();
  if (load &&
      (!ok || type(i, 3) != Type::pointer(DType::I64, Space::Shared) || !isInteger(i.operands[4])))
    fail(i, "tma loads the box at 1 to 5 i32 coordinates of a tensor map to a shared address, "
            "completing on an mbarrier of a shared i64 array");
  if (load && i.im2col && (i.imm < 3 || i.im2col + 2 != i.imm))
    fail(i, "an im2col tma load takes 3 to 5 coordinates and an offset a spatial dim (2 fewer)");
  if (!load && !ok)
    fail(i, "tma stores a shared address to the box at 1 to 5 i32 coordinates of a tensor map");
}

void Verifier::mbarrier(const Inst &i) {
  if (i.mbarrier == MBarrierOp::InitFence)
    return;
  if (type(i, 0) != Type::pointer(DType::I64, Space::Shared) || !isInteger(i.operands[1]))
    fail(i, "an mbarrier is an element of a shared i64 array, not of " + typeName(type(i, 0)));
  constexpr int64_t kLimit = (1 << 20) - 1; // of arrivals and transaction bytes
  if (i.mbarrier == MBarrierOp::Init && (i.imm < 1 || i.imm > kLimit))
    fail(i, "mbarrier.init expects 1 to 2^20 - 1 arrivals, not " + std::to_string(i.imm));
  if (i.mbarrier == MBarrierOp::ExpectTx && (i.imm < 0 || i.imm > kLimit))
    fail(i, "mbarrier.expect_tx expects 0 to 2^20 - 1 bytes, not " + std::to_string(i.imm));
  if (i.mbarrier == MBarrierOp::Wait && !isI32(i.operands[2]))
    fail(i, "mbarrier.wait takes an i32 parity, not " + typeName(type(i, 2)));
  if (i.mbarrier == MBarrierOp::ArriveRemote && !isI32(i.operands[2]))
    fail(i, "a remote mbarrier arrival takes the i32 rank of a block of the cluster, not " +
                typeName(type(i, 2)));
}

void Verifier::namedBarrier(const Inst &i) {
  if (i.operands.empty()) {
    if (i.cluster && i.warp)
      fail(i, "a barrier is the cluster's or the warp's, not both");
    if (i.arrive || i.imm != 0)
      fail(i, "the block's barrier (bar.sync 0) takes no thread count; an arrive names a barrier");
    return;
  }
  if (i.cluster || i.warp)
    fail(i, std::string("the ") + (i.cluster ? "cluster" : "warp") + "'s barrier names no barrier");
  auto id = constants.find(i.operands[0]);
  if (!isI32(i.operands[0]) || (id != constants.end() && (id->second < 1 || id->second > 15)))
    fail(i, "a named barrier's id is an i32 from 1 to 15 (0 is the block's)");
  if (i.imm < 32 || i.imm > 1024 || i.imm % 32 != 0)
    fail(i, "a named barrier counts a multiple of 32 threads up to 1024, not " +
                std::to_string(i.imm));
}

// ptxas ignores a setmaxnreg when it cannot tell the registers a thread has at entry: the launch
// bounds must fix them (its warning C7508).
void Verifier::setMaxRegisters(const Inst &i) {
  if (i.imm < 24 || i.imm > 256 || i.imm % 8 != 0)
    fail(i, "setmaxnreg sets 24 to 256 registers, a multiple of 8, not " + std::to_string(i.imm));
  if (k.maxThreads == 0 || k.minBlocks == 0)
    fail(i, "setmaxnreg needs the kernel's maxthreads and minblocks (else ptxas ignores it)");
}

void Verifier::memory(const Inst &i) {
  const Type &ptr = type(i, 0);
  if (!ptr.isPointer() || !isInteger(i.operands[1])) {
    fail(i, "needs a pointer and an integer element index");
    return;
  }
  Type value = i.op == Opcode::Load ? k.typeOf(i.result) : type(i, 2);
  if (value != Type::vector(ptr.elem, i.lanes) || i.lanes == 0)
    fail(i, "moves " + typeName(value) + " through " + typeName(ptr));
  if (i.op != Opcode::Store)
    return;
  if (auto it = readOnly.find(i.operands[0]); it != readOnly.end())
    fail(i, "stores through read-only parameter %" + it->second);
}

void Verifier::types(const Inst &i) {
  switch (i.op) {
  case Opcode::Index: {
    ValueId x = i.operands[0], y = i.operands[1];
    bool predicates = i.indexOp == IndexOp::And && isPredicate(x) && isPredicate(y);
    if (!predicates && (!isInteger(x) || k.typeOf(x) != k.typeOf(y)))
      fail(i, "index math takes two i32 or two i64 operands (and: or two predicates)");
    return;
  }
  // The tensor-core primitives take what PTX takes.
  case Opcode::Async:
    if (i.async == AsyncOp::Copy &&
        (!isAddress(i, 0, Space::Shared) || !isAddress(i, 2, Space::Global) ||
         !isPredicate(i.operands[4]) || i.imm != 16))
      fail(i, "cp.async copies 16 bytes from a global to a shared address under a predicate");
    if (i.async == AsyncOp::Wait && (i.imm < 0 || i.imm > 7))
      fail(i, "cp.async.wait_group waits for 0 to 7 groups");
    if (i.async == AsyncOp::BulkWait && (i.imm < 0 || i.imm > 7))
      fail(i, "cp.async.bulk.wait_group waits for 0 to 7 groups");
    if (i.async == AsyncOp::TensorLoad || i.async == AsyncOp::TensorStore)
      tensorCopy(i);
    return;
  case Opcode::MBarrier:
    mbarrier(i);
    return;
  case Opcode::Barrier:
    namedBarrier(i);
    return;
  case Opcode::SetMaxRegisters:
    setMaxRegisters(i);
    return;
  case Opcode::Matrix:
    if (i.matrix == MatrixOp::LoadX4 && !isAddress(i, 0, Space::Shared))
      fail(i, "ldmatrix reads at a shared address");
    if (i.matrix == MatrixOp::MmaM16N8K16 &&
        (type(i, 0) != Type::vector(DType::I32, 4) || type(i, 1) != Type::vector(DType::I32, 2) ||
         type(i, 2) != Type::vector(DType::F32, 4) || !isNarrowFloat(i.dtype)))
      fail(i, "mma.m16n8k16 takes i32x4, i32x2 (f16 or bf16 pairs) and f32x4");
    if (i.matrix == MatrixOp::Wgmma)
      wgmma(i);
    if (i.matrix == MatrixOp::WgmmaWait || i.matrix == MatrixOp::WgmmaFence)
      for (ValueId v : i.operands)
        if (!localArrays.count(v))
          fail(i, "wgmma.fence and wgmma.wait_group guard local register arrays");
    if (i.matrix == MatrixOp::WgmmaWait && (i.imm < 0 || i.imm > 7))
      fail(i, "wgmma.wait_group waits for 0 to 7 groups");
    return;
  case Opcode::Pack:
    if (type(i, 0) != Type::scalar(DType::F32) || type(i, 1) != Type::scalar(DType::F32) ||
        !isNarrowFloat(i.dtype))
      fail(i, "packs two f32 into an f16 or bf16 pair");
    return;
  case Opcode::Unpack:
    if (type(i, 0) != Type::scalar(DType::I32) || !isNarrowFloat(i.dtype) || i.imm < 0 || i.imm > 1)
      fail(i, "unpacks the low or high f16 or bf16 half of an i32");
    return;
  case Opcode::Exp2:
    if (type(i, 0) != Type::scalar(DType::F32))
      fail(i, "takes an f32");
    return;
  case Opcode::Select:
    if (!isPredicate(i.operands[0]) || type(i, 1) != type(i, 2))
      fail(i, "selects between two values of one type by a predicate");
    return;
  case Opcode::DynamicShared:
    if (k.typeOf(i.result) != Type::pointer(i.dtype, Space::Shared))
      fail(i, "is a shared pointer to its dtype");
    return;
  case Opcode::Math:
    for (ValueId v : i.operands)
      if (k.typeOf(v).isPointer() || k.typeOf(v).lanes != 1)
        fail(i, "math takes scalar operands");
    return;
  case Opcode::Widen:
  case Opcode::Narrow: {
    DType from = i.op == Opcode::Widen ? storageType(i.dtype) : computeType(i.dtype);
    const Type &x = type(i, 0);
    if (x != Type::scalar(from) && (!isNarrowFloat(i.dtype) || x != Type::vector(from, 2)))
      fail(i, "converts from " + std::string(dtypeName(from)) + ", not " + typeName(x));
    return;
  }
  case Opcode::Load:
  case Opcode::Store:
    memory(i);
    return;
  case Opcode::For:
    if (!isIndex(i.operands[0]) || !isIndex(i.operands[1]) || !isIndex(i.operands[2]))
      fail(i, "a loop counts in i64");
    return;
  case Opcode::If:
    if (!isPredicate(i.operands[0]))
      fail(i, "branches on " + typeName(type(i, 0)) + ", not bool");
    return;
  case Opcode::Shuffle: {
    const Type &v = type(i, 0);
    unsigned bytes = v.isPointer() || v.lanes != 1 ? 0 : dtypeSize(v.elem);
    if ((bytes != 4 && bytes != 8) || !isIndex(i.operands[1]) || !isIndex(i.operands[2]))
      fail(i, "shuffles a 32- or 64-bit scalar by an i64 lane and mask, not " + typeName(v));
    if (i.imm < 1 || i.imm > 32 || (i.imm & (i.imm - 1)))
      fail(i, "shuffles within " + std::to_string(i.imm) + " lanes, not a power of two <= 32");
    return;
  }
  case Opcode::Alloca: {
    Space space = k.typeOf(i.result).space;
    if (i.imm < 1 || (space != Space::Local && space != Space::Shared))
      fail(i, "allocates a local or shared array of at least one element");
    if ((i.align & (i.align - 1)) || i.align < dtypeSize(i.dtype))
      fail(i, "aligns to " + std::to_string(i.align) + " bytes, not a power of two >= its element");
    return;
  }
  case Opcode::Param:
    if (k.typeOf(i.result).space == Space::Param && k.typeOf(i.result) != Type::tensorMap())
      fail(i,
           "a parameter in the param space is a tensor map, not " + typeName(k.typeOf(i.result)));
    return;
  case Opcode::Const:
  case Opcode::Literal:
  case Opcode::Special:
  case Opcode::Table:
  case Opcode::Fence:
    return;
  case Opcode::AtomicAdd: {
    const Type &ptr = type(i, 0);
    if (ptr != Type::pointer(DType::I32, Space::Global) || !isInteger(i.operands[1]) ||
        type(i, 2) != Type::scalar(DType::I32))
      fail(i, "adds an i32 to an i32 in global memory by an integer element index");
    else if (auto it = readOnly.find(i.operands[0]); it != readOnly.end())
      fail(i, "adds through read-only parameter %" + it->second);
    return;
  }
  }
}

void Verifier::block(const Block &b) {
  std::vector<ValueId> scope; // what this block defines, forgotten at its end
  for (const Inst &i : b) {
    if (operands(i))
      types(i);
    if (i.result != kNoValue && !defined.insert(i.result).second)
      fail(i, "is defined twice");
    if (i.op == Opcode::Alloca && k.typeOf(i.result).space == Space::Local)
      localArrays[i.result] = {i.dtype, i.imm};
    if (i.op == Opcode::Const)
      constants[i.result] = i.imm;
    bool warpgroup =
        i.op == Opcode::Matrix && i.matrix != MatrixOp::LoadX4 && i.matrix != MatrixOp::MmaM16N8K16;
    if (i.op == Opcode::Matrix && warpgroup != (i.result == kNoValue))
      fail(i, warpgroup ? "a warpgroup instruction defines no value" : "defines a fragment");
    for (const Block &r : i.regions)
      block(r);
    if (i.op == Opcode::For) // the counter lives in the body only
      defined.erase(i.result);
    else if (i.result != kNoValue)
      scope.push_back(i.result);
  }
  for (ValueId v : scope)
    defined.erase(v);
}

} // namespace

std::vector<std::string> verify(const Kernel &k) { return Verifier(k).run(); }

} // namespace fusec::kir
