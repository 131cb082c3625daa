// kir's text form, for `fusec compile --emit=kir` and lit tests: one
// instruction a line, regions indented, every value named once.
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

#include "ir/TextLiterals.h"

#include <set>
#include <sstream>

namespace fusec::kir {

std::vector<std::string> uniqueNames(const Kernel &k) {
  std::vector<std::string> names(k.values.size());
  Namer namer;
  std::set<ValueId> params;
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

std::string_view specialName(Special s) {
  switch (s) {
  case Special::TidX:
    return "tid.x";
  case Special::TidY:
    return "tid.y";
  case Special::NtidX:
    return "ntid.x";
  case Special::CtaidX:
    return "ctaid.x";
  case Special::NctaidX:
    return "nctaid.x";
  }
  return "?";
}

std::string_view indexOpName(IndexOp op) {
  switch (op) {
  case IndexOp::Add:
    return "add";
  case IndexOp::Sub:
    return "sub";
  case IndexOp::Mul:
    return "mul";
  case IndexOp::Div:
    return "div";
  case IndexOp::Rem:
    return "rem";
  case IndexOp::Shl:
    return "shl";
  case IndexOp::Lt:
    return "lt";
  case IndexOp::And:
    return "and";
  case IndexOp::Xor:
    return "xor";
  case IndexOp::Shr:
    return "shr";
  }
  return "?";
}

std::string_view shuffleName(ShuffleMode m) {
  switch (m) {
  case ShuffleMode::Xor:
    return "xor";
  case ShuffleMode::Down:
    return "down";
  case ShuffleMode::Up:
    return "up";
  case ShuffleMode::Idx:
    return "idx";
  }
  return "?";
}

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
  void block(const Block &b, const std::string &indent);
  std::string inst(const Inst &i, const std::string &indent);

  const Kernel &k;
  std::vector<std::string> names;
  std::ostringstream os;
};

std::string Printer::inst(const Inst &i, const std::string &indent) {
  std::string type = i.result == kNoValue ? "" : " : " + typeName(k.typeOf(i.result));
  std::string lhs = i.result == kNoValue ? "" : ref(i.result) + " = ";
  switch (i.op) {
  case Opcode::Param:
    return "";
  case Opcode::Const:
    return lhs + "const " + std::to_string(i.imm) + type;
  case Opcode::Literal:
    // An empty constant's literal is never read (its kernel has no elements).
    return lhs + "literal " + (i.dense.numElements() ? formatElement(i.dense, 0) : "empty") + type;
  case Opcode::Special:
    return lhs + "special " + std::string(specialName(i.special)) + type;
  case Opcode::Index:
    return lhs + std::string(indexOpName(i.indexOp)) + " " + refs(i.operands) + type;
  case Opcode::Math:
    return lhs + "math " + std::string(opInfo(i.math.kind).spelling) + "(" + refs(i.operands) +
           ")" + (i.math.tanh ? " tanh " : " ") + std::string(dtypeName(i.math.operand)) + " -> " +
           std::string(dtypeName(i.math.result)) + type;
  case Opcode::Widen:
  case Opcode::Narrow:
    return lhs + (i.op == Opcode::Widen ? "widen " : "narrow ") +
           std::string(dtypeName(i.dtype)) + " " + ref(i.operands[0]) + type;
  case Opcode::Load:
    return lhs + "load " + ref(i.operands[0]) + "[" + ref(i.operands[1]) + "]" + type;
  case Opcode::Store:
    return "store " + ref(i.operands[0]) + "[" + ref(i.operands[1]) + "], " + ref(i.operands[2]) +
           " : " + typeName(k.typeOf(i.operands[2]));
  case Opcode::Alloca:
    return lhs + "alloca " + std::string(dtypeName(i.dtype)) + "[" + std::to_string(i.imm) + "]" +
           (i.align != 16 ? " align " + std::to_string(i.align) : "") + type;
  case Opcode::Table:
    return lhs + "table @" + k.tables[i.imm].name + type;
  case Opcode::For: {
    std::string unroll = i.imm == 0    ? ""
                         : i.imm < 0   ? " unroll full"
                                       : " unroll " + std::to_string(i.imm);
    os << indent << "for " << ref(i.result) << " = " << ref(i.operands[0]) << " to "
       << ref(i.operands[1]) << " step " << ref(i.operands[2]) << unroll << " {\n";
    block(i.regions[0], indent + "  ");
    return "}";
  }
  case Opcode::Barrier:
    return "barrier";
  case Opcode::Shuffle:
    return lhs + "shuffle." + std::string(shuffleName(i.shuffle)) + " " + refs(i.operands) +
           " width " + std::to_string(i.imm) + type;
  case Opcode::DynamicShared:
    return lhs + "dynamic_shared " + std::string(dtypeName(i.dtype)) + type;
  case Opcode::Async:
    switch (i.async) {
    case AsyncOp::Copy:
      return "cp.async " + ref(i.operands[0]) + "[" + ref(i.operands[1]) + "], " +
             ref(i.operands[2]) + "[" + ref(i.operands[3]) + "], " + std::to_string(i.imm) +
             " bytes if " + ref(i.operands[4]);
    case AsyncOp::Commit:
      return "cp.async.commit_group";
    case AsyncOp::Wait:
      return "cp.async.wait_group " + std::to_string(i.imm);
    }
    return "?";
  case Opcode::Matrix:
    if (i.matrix == MatrixOp::LoadX4)
      return lhs + "ldmatrix.x4" + (i.imm ? ".trans " : " ") + ref(i.operands[0]) + "[" +
             ref(i.operands[1]) + "]" + type;
    return lhs + "mma.m16n8k16." + std::string(dtypeName(i.dtype)) + " " + refs(i.operands) +
           type;
  case Opcode::Select:
    return lhs + "select " + refs(i.operands) + type;
  case Opcode::Pack:
    return lhs + "pack." + std::string(dtypeName(i.dtype)) + "x2 " + refs(i.operands) + type;
  case Opcode::If:
    os << indent << "if " << ref(i.operands[0]) << " {\n";
    block(i.regions[0], indent + "  ");
    if (i.regions[1].empty())
      return "}";
    os << indent << "} else {\n";
    block(i.regions[1], indent + "  ");
    return "}";
  }
  return "?";
}

void Printer::block(const Block &b, const std::string &indent) {
  for (const Inst &i : b) {
    std::string line = inst(i, indent);
    if (!line.empty())
      os << indent << line << "\n";
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
     << (k.minBlocks ? " minblocks " + std::to_string(k.minBlocks) : "") << " {\n";
  block(k.body, "  ");
  os << "}\n";
  return os.str();
}

} // namespace

std::string print(const Kernel &k) { return Printer(k).run(); }

} // namespace fusec::kir
