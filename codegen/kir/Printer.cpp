// kir's text form, for `fusec compile --emit=kir` and lit tests: one instruction a line, regions
// indented, every value named once.
//
//   kernel @fusec_f_y(%in_x: ptr<global f16> readonly, %numel: i64) {
//     %first = add %t, %t_1 : i64
//     for %i = %first to %numel step %step {
//       %x = load %in_x[%i] : f16
//       %x_1 = widen f16 %x : f32
//       %y = math relu(%x_1) f16 -> f16 : f32
//       ...
#include "codegen/GeneratedKernel.h"
#include "codegen/kir/Kir.h"
#include "ir/Assert.h"
#include "ir/TextLiterals.h"

#include <sstream>

namespace fusec::kir {

std::vector<std::string> uniqueNames(const Kernel &k) {
  std::vector<std::string> names(k.values.size());
  Namer namer;
  // Parameters first, so that no other value takes a parameter's name.
  std::function<void(const Block &, bool)> walk = [&](const Block &b, bool paramsOnly) {
    for (const Inst &inst : b) {
      if (inst.result != kNoValue && (inst.op == Opcode::Param) == paramsOnly) {
        const std::string &hint = k.values[inst.result].name;
        names[inst.result] = namer.fresh("", hint.empty() ? "t" : hint);
      }
      for (const Block &r : inst.regions)
        walk(r, paramsOnly);
    }
  };
  walk(k.body, true);
  walk(k.body, false);
  return names;
}

namespace {

// Spellings by enumerator, in the enums' order (Kir.h).
constexpr const char *kSpecials[] = {"tid.x", "tid.y", "ntid.x", "ctaid.x", "nctaid.x"};
constexpr const char *kIndexOps[] = {"add", "sub", "mul", "div", "rem",
                                     "shl", "lt",  "and", "xor", "shr"};
constexpr const char *kShuffles[] = {"xor", "down", "up", "idx"};
static_assert(std::size(kSpecials) == size_t(Special::NctaidX) + 1);
static_assert(std::size(kIndexOps) == size_t(IndexOp::Shr) + 1);
static_assert(std::size(kShuffles) == size_t(ShuffleMode::Idx) + 1);

std::string name(DType t) { return std::string(dtypeName(t)); }

class Printer {
public:
  explicit Printer(const Kernel &k) : k(k), names(uniqueNames(k)) {}

  std::string run();

private:
  std::string ref(ValueId v) const { return "%" + names[v]; }
  std::string refs(const std::vector<ValueId> &vs) const {
    std::string s;
    for (ValueId v : vs)
      s += (s.empty() ? "" : ", ") + ref(v);
    return s;
  }
  /// "%ptr[%index]" of operands `o` and `o + 1`.
  std::string at(const Inst &i, size_t o) const {
    return ref(i.operands[o]) + "[" + ref(i.operands[o + 1]) + "]";
  }
  void block(const Block &b, const std::string &indent);
  void region(const Inst &i, const std::string &indent);
  std::string text(const Inst &i) const;
  std::string matrix(const Inst &i) const;
  std::string mbarrier(const Inst &i) const;

  const Kernel &k;
  std::vector<std::string> names;
  std::ostringstream os;
};

/// What `i` does, between "%result = " and " : type".
std::string Printer::text(const Inst &i) const {
  switch (i.op) {
  case Opcode::Const:
    return "const " + std::to_string(i.imm);
  case Opcode::Literal:
    // An empty constant's literal is never read (its kernel has no elements).
    return "literal " + (i.dense.numElements() ? formatElement(i.dense, 0) : "empty");
  case Opcode::Special:
    return "special " + std::string(kSpecials[unsigned(i.special)]);
  case Opcode::Index:
    return std::string(kIndexOps[unsigned(i.indexOp)]) + " " + refs(i.operands);
  case Opcode::Math:
    return "math " + std::string(opInfo(i.math.kind).spelling) + "(" + refs(i.operands) + ")" +
           (i.math.tanh ? " tanh " : " ") + name(i.math.operand) + " -> " + name(i.math.result);
  case Opcode::Widen:
  case Opcode::Narrow:
    return (i.op == Opcode::Widen ? "widen " : "narrow ") + name(i.dtype) + " " +
           ref(i.operands[0]);
  case Opcode::Load:
    return "load " + at(i, 0);
  case Opcode::Store:
    return "store " + at(i, 0) + ", " + ref(i.operands[2]) + " : " +
           typeName(k.typeOf(i.operands[2]));
  case Opcode::Alloca:
    return "alloca " + name(i.dtype) + "[" + std::to_string(i.imm) + "]" +
           (i.align != 16 ? " align " + std::to_string(i.align) : "");
  case Opcode::Table:
    return "table @" + k.tables[i.imm].name;
  case Opcode::Barrier:
    if (i.operands.empty())
      return i.cluster ? "barrier.cluster" : i.warp ? "barrier.warp" : "barrier";
    return (i.arrive ? "barrier.arrive " : "barrier ") + ref(i.operands[0]) + ", " +
           std::to_string(i.imm);
  case Opcode::Shuffle:
    return "shuffle." + std::string(kShuffles[unsigned(i.shuffle)]) + " " + refs(i.operands) +
           " width " + std::to_string(i.imm);
  case Opcode::DynamicShared:
    return "dynamic_shared " + name(i.dtype) +
           (i.align != 128 ? " align " + std::to_string(i.align) : "");
  case Opcode::Async:
    if (i.async == AsyncOp::Copy)
      return "cp.async " + at(i, 0) + ", " + at(i, 2) + ", " + std::to_string(i.imm) +
             " bytes if " + ref(i.operands[4]);
    if (i.async == AsyncOp::Commit)
      return "cp.async.commit_group";
    if (i.async == AsyncOp::ProxyFence)
      return "fence.proxy.async";
    if (i.async == AsyncOp::TensorLoad) { // tma.load.2d %smem[%i], %map, %bars[%j], (%x, %y)
      auto coords = i.operands.begin() + 5, offsets = coords + i.imm;
      return "tma.load." + std::to_string(i.imm) + "d " + at(i, 0) + ", " + ref(i.operands[2]) +
             ", " + at(i, 3) + ", (" + refs(std::vector<ValueId>(coords, offsets)) + ")" +
             (i.im2col ? " im2col (" + refs(std::vector<ValueId>(offsets, i.operands.end())) + ")"
                       : "") +
             (i.ctaMask ? " multicast " + std::to_string(i.ctaMask) : "");
    }
    if (i.async == AsyncOp::TensorStore) // tma.store.2d %map, (%x, %y), %smem[%i]
      return "tma.store." + std::to_string(i.imm) + "d " + ref(i.operands[2]) + ", (" +
             refs(std::vector<ValueId>(i.operands.begin() + 3, i.operands.end())) + "), " +
             at(i, 0);
    if (i.async == AsyncOp::BulkCommit)
      return "cp.async.bulk.commit_group";
    if (i.async == AsyncOp::BulkWait)
      return "cp.async.bulk.wait_group.read " + std::to_string(i.imm);
    return "cp.async.wait_group " + std::to_string(i.imm);
  case Opcode::Matrix:
    return matrix(i);
  case Opcode::MBarrier:
    return mbarrier(i);
  case Opcode::SetMaxRegisters:
    return (i.raise ? "setmaxnreg.inc " : "setmaxnreg.dec ") + std::to_string(i.imm);
  case Opcode::Select:
    return "select " + refs(i.operands);
  case Opcode::Pack:
    return "pack." + name(i.dtype) + "x2 " + refs(i.operands);
  case Opcode::Unpack:
    return "unpack." + name(i.dtype) + (i.imm ? ".hi " : ".lo ") + refs(i.operands);
  case Opcode::Exp2:
    return "exp2 " + refs(i.operands);
  case Opcode::AtomicAdd:
    return "atomic.add " + at(i, 0) + ", " + ref(i.operands[2]);
  case Opcode::Fence:
    return "fence.gpu";
  case Opcode::Param: // in the signature
  case Opcode::For:   // region()
  case Opcode::If:
    break;
  }
  return "?";
}

std::string Printer::matrix(const Inst &i) const {
  switch (i.matrix) {
  case MatrixOp::LoadX4:
    return "ldmatrix.x4" + std::string(i.imm ? ".trans " : " ") + at(i, 0);
  case MatrixOp::MmaM16N8K16:
    return "mma.m16n8k16." + name(i.dtype) + " " + refs(i.operands);
  case MatrixOp::Wgmma: {
    // wgmma.m64n64k16.f16 %acc (=|+=), %layoutA %a[%i], %layoutB %b[%j] (transposed b)
    std::string s = "wgmma.m64n" + std::to_string(i.imm) + "k16." + name(i.dtype) + " " +
                    ref(i.operands[0]) + (i.accumulate == Accumulate::Overwrite ? " = " : " += ");
    size_t b = i.operands.size() - 3;
    s += b == 4 ? ref(i.operands[1]) + " " + at(i, 2) : ref(i.operands[1]);
    s += ", " + ref(i.operands[b]) + " " + at(i, b + 1);
    return s + (i.transposeB ? " transposed b" : "");
  }
  case MatrixOp::WgmmaFence:
    return "wgmma.fence" + (i.operands.empty() ? "" : " guarding " + refs(i.operands));
  case MatrixOp::WgmmaCommit:
    return "wgmma.commit_group";
  case MatrixOp::WgmmaWait:
    return "wgmma.wait_group " + std::to_string(i.imm) +
           (i.operands.empty() ? "" : " guarding " + refs(i.operands));
  }
  return "?";
}

std::string Printer::mbarrier(const Inst &i) const {
  switch (i.mbarrier) {
  case MBarrierOp::Init:
    return "mbarrier.init " + at(i, 0) + ", " + std::to_string(i.imm);
  case MBarrierOp::InitFence:
    return "mbarrier.init_fence";
  case MBarrierOp::Arrive:
    return "mbarrier.arrive " + at(i, 0);
  case MBarrierOp::ExpectTx:
    return "mbarrier.expect_tx " + at(i, 0) + ", " + std::to_string(i.imm);
  case MBarrierOp::Wait:
    return "mbarrier.wait " + at(i, 0) + ", " + ref(i.operands[2]);
  case MBarrierOp::ArriveRemote:
    return "mbarrier.arrive_remote " + at(i, 0) + ", " + ref(i.operands[2]);
  }
  return "?";
}

/// A loop or an if, its regions indented.
void Printer::region(const Inst &i, const std::string &indent) {
  if (i.op == Opcode::For) {
    std::string unroll = i.imm == 0  ? ""
                         : i.imm < 0 ? " unroll full"
                                     : " unroll " + std::to_string(i.imm);
    os << indent << "for " << ref(i.result) << " = " << ref(i.operands[0]) << " to "
       << ref(i.operands[1]) << " step " << ref(i.operands[2]) << unroll
       << (i.keepInvariants ? " keep_invariants" : "") << " {\n";
  } else {
    os << indent << "if " << ref(i.operands[0]) << " {\n";
  }
  block(i.regions[0], indent + "  ");
  if (i.op == Opcode::If && !i.regions[1].empty()) {
    os << indent << "} else {\n";
    block(i.regions[1], indent + "  ");
  }
  os << indent << "}\n";
}

void Printer::block(const Block &b, const std::string &indent) {
  for (const Inst &i : b) {
    if (i.op == Opcode::For || i.op == Opcode::If)
      region(i, indent);
    else if (i.result == kNoValue)
      os << indent << text(i) << "\n";
    else if (i.op != Opcode::Param)
      os << indent << ref(i.result) << " = " << text(i) << " : " << typeName(k.typeOf(i.result))
         << "\n";
  }
}

std::string Printer::run() {
  for (const std::string &line : k.comment)
    os << "// " << line << "\n";
  for (const Table &t : k.tables)
    os << "table @" << t.name << " : " << dtypeName(computeType(t.data.dtype)) << "["
       << t.data.numElements() << "]\n";
  os << "kernel @" << k.name << "(";
  for (size_t p = 0; p < k.params.size(); ++p)
    os << (p ? ", " : "") << "%" << k.params[p].name << ": " << typeName(k.params[p].type)
       << (k.params[p].readOnly ? " readonly" : "");
  os << ")" << (k.maxThreads ? " maxthreads " + std::to_string(k.maxThreads) : "")
     << (k.minBlocks ? " minblocks " + std::to_string(k.minBlocks) : "")
     << (k.dependent ? " dependent" : "") << " {\n";
  block(k.body, "  ");
  os << "}\n";
  return os.str();
}

} // namespace

std::string print(const Kernel &k) { return Printer(k).run(); }

std::string wgmmaPtx(const Inst &i, char sigil) {
  unsigned n = unsigned(i.imm) / 2; // A's operands start at n
  bool sharedA = i.operands.size() == 7;
  auto operand = [&](unsigned at) { return sigil + std::to_string(at); };
  std::string type = i.dtype == DType::BF16 ? "bf16" : "f16";
  std::string ptx = "{\n.reg .pred p;\nsetp.ne.b32 p, " + operand(n + (sharedA ? 2 : 5)) +
                    ", 0;\nwgmma.mma_async.sync.aligned.m64n" + std::to_string(i.imm) + "k16.f32." +
                    type + "." + type + " {";
  for (unsigned r = 0; r < n; ++r)
    ptx += (r ? ", " : "") + operand(r);
  ptx += "}, ";
  if (sharedA)
    ptx += operand(n) + ", " + operand(n + 1);
  else
    ptx += "{" + operand(n) + ", " + operand(n + 1) + ", " + operand(n + 2) + ", " +
           operand(n + 3) + "}, " + operand(n + 4);
  return ptx + ", p, 1, 1, " + (sharedA ? "0, " : "") + (i.transposeB ? "1" : "0") + ";\n}";
}

std::string hopperPtx(const Inst &i, char sigil) {
  auto operand = [&](size_t at) { return sigil + std::to_string(at); };
  std::string imm = std::to_string(i.imm);
  if (i.op == Opcode::Barrier && i.cluster)
    return "barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;";
  if (i.op == Opcode::Barrier)
    return (i.arrive ? "bar.arrive " : "bar.sync ") + operand(0) + ", " + imm + ";";
  if (i.op == Opcode::SetMaxRegisters)
    return std::string("setmaxnreg.") + (i.raise ? "inc" : "dec") + ".sync.aligned.u32 " + imm +
           ";";
  if (i.op == Opcode::Async && i.async == AsyncOp::BulkCommit)
    return "cp.async.bulk.commit_group;";
  if (i.op == Opcode::Async && i.async == AsyncOp::BulkWait)
    return "cp.async.bulk.wait_group.read " + imm + ";";
  if (i.op == Opcode::Async && i.async == AsyncOp::TensorStore) { // [map, {coordinates}], [src]
    std::string coords;
    for (size_t c = 0; c < size_t(i.imm); ++c)
      coords += (c ? ", " : "") + operand(2 + c);
    return "cp.async.bulk.tensor." + imm + "d.global.shared::cta.bulk_group [" + operand(1) +
           ", {" + coords + "}], [" + operand(0) + "];";
  }
  if (i.op == Opcode::Async) { // [dst], [map, {coordinates}], [mbarrier]{, {im2col offsets}}
    std::string coords, offsets;
    for (size_t c = 0; c < size_t(i.imm); ++c)
      coords += (c ? ", " : "") + operand(3 + c);
    for (size_t c = 0; c < i.im2col; ++c)
      offsets += (c ? ", " : "") + operand(3 + size_t(i.imm) + c);
    std::string copy = "cp.async.bulk.tensor." + imm + "d.shared::cluster.global." +
                       (i.im2col ? "im2col" : "tile") + ".mbarrier::complete_tx::bytes";
    std::string args = " [" + operand(0) + "], [" + operand(1) + ", {" + coords + "}], [" +
                       operand(2) + "]" + (i.im2col ? ", {" + offsets + "}" : "");
    if (!i.ctaMask)
      return copy + args + ";";
    return "{\n.reg .b16 mask;\nmov.b16 mask, " + std::to_string(i.ctaMask) + ";\n" + copy +
           ".multicast::cluster" + args + ", mask;\n}";
  }
  FUSEC_ASSERT(i.op == Opcode::MBarrier, "not an sm_90 instruction");
  std::string bar = "[" + operand(0) + "]";
  switch (i.mbarrier) {
  case MBarrierOp::Init:
    return "mbarrier.init.shared::cta.b64 " + bar + ", " + imm + ";";
  case MBarrierOp::InitFence:
    return "fence.mbarrier_init.release.cluster;";
  case MBarrierOp::Arrive:
    return "mbarrier.arrive.shared::cta.b64 _, " + bar + ";";
  case MBarrierOp::ExpectTx:
    return "mbarrier.arrive.expect_tx.shared::cta.b64 _, " + bar + ", " + imm + ";";
  case MBarrierOp::Wait: // a label in braces is local to them: every wait may use the same one
    return "{\n.reg .pred p;\nretry:\nmbarrier.try_wait.parity.shared::cta.b64 p, " + bar + ", " +
           operand(1) + ";\n@!p bra retry;\n}";
  case MBarrierOp::ArriveRemote:
    return "{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, " + operand(0) + ", " +
           operand(1) + ";\nmbarrier.arrive.shared::cluster.b64 _, [remote];\n}";
  }
  FUSEC_ASSERT(false, "unknown mbarrier op");
}

} // namespace fusec::kir
