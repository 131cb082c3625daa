// kir's types and its builder (see Kir.h).
#include "codegen/kir/Kir.h"

#include "ir/Assert.h"
#include "ir/Numerics.h"

namespace fusec::kir {

MathOp mathOf(const Op &op) {
  FUSEC_ASSERT(op.info().cls == OpClass::Pointwise, "not a pointwise op");
  MathOp m{op.kind(), op.operand(0)->type().dtype, op.result()->type().dtype};
  if (op.kind() == OpKind::Gelu)
    m.tanh = op.getString("approximate") == "tanh";
  return m;
}

std::string typeName(Type t) {
  static constexpr const char *kSpaces[] = {"", "global", "shared", "local", "param"};
  static_assert(std::size(kSpaces) == size_t(Space::Param) + 1);
  if (t == Type::tensorMap())
    return "tensormap";
  std::string elem(dtypeName(t.elem));
  if (t.isPointer())
    return "ptr<" + std::string(kSpaces[unsigned(t.space)]) + " " + elem + ">";
  return t.lanes > 1 ? elem + "x" + std::to_string(t.lanes) : elem;
}

Inst &Builder::append(Inst inst) {
  Block &b = *scopes.back().block;
  b.push_back(std::move(inst));
  return b.back();
}

ValueId Builder::emit(Type t, const std::string &name, Inst inst) {
  k.values.push_back({t, name});
  inst.result = ValueId(k.values.size() - 1);
  return append(std::move(inst)).result;
}

ValueId Builder::reused(const std::string &key, Type t, Inst inst) {
  for (const Scope &s : scopes)
    if (auto it = s.known.find(key); it != s.known.end())
      return it->second;
  return scopes.back().known[key] = emit(t, "", std::move(inst));
}

ValueId Builder::param(const std::string &name, Type type, bool readOnly) {
  k.params.push_back({name, type, readOnly});
  return emit(type, name, {.op = Opcode::Param, .imm = int64_t(k.params.size() - 1)});
}

unsigned Builder::table(const std::string &name, const DenseData &data) {
  k.tables.push_back({name, data});
  return unsigned(k.tables.size() - 1);
}

ValueId Builder::constant(DType t, int64_t v) {
  if (t == DType::I32)
    v = int64_t(int32_t(uint32_t(uint64_t(v))));
  std::string key = "const " + std::string(dtypeName(t)) + " " + std::to_string(v);
  ValueId r = reused(key, Type::scalar(t), {.op = Opcode::Const, .imm = v});
  constants[r] = v;
  return r;
}

ValueId Builder::convert(DType t, ValueId v, const std::string &name) {
  DType from = k.typeOf(v).elem;
  if (from == t)
    return v;
  if (std::optional<int64_t> c = constantOf(v); c && (t == DType::I32 || t == DType::I64))
    return constant(t, *c);
  return math(MathOp{OpKind::Cast, from, t}, {v}, name);
}

ValueId Builder::literal(const DenseData &splat, const std::string &name) {
  return emit(Type::scalar(computeType(splat.dtype)), name,
              {.op = Opcode::Literal, .dense = splat});
}

ValueId Builder::literal(DType t, double v, const std::string &name) {
  FUSEC_ASSERT(t == DType::F32 || t == DType::F64 || isInteger(t), "a literal of f32, f64 or ints");
  std::vector<uint8_t> bytes(dtypeSize(t));
  storeElement(t, v, bytes.data()); // an integer's ±inf: its lowest or highest value
  return literal(DenseData::makeSplat(t, {}, bytes), name);
}

ValueId Builder::special(Special s) {
  std::string key = "special " + std::to_string(unsigned(s));
  return reused(key, Type::index(), {.op = Opcode::Special, .special = s});
}

namespace {

/// `op` of two index constants (`b` nonzero for div and rem; shifts below 64), as i64 math does on
/// the GPU (the caller wraps i32 results).
int64_t fold(IndexOp op, int64_t a, int64_t b) {
  uint64_t x = uint64_t(a), y = uint64_t(b);
  switch (op) {
  case IndexOp::Add:
    return int64_t(x + y);
  case IndexOp::Sub:
    return int64_t(x - y);
  case IndexOp::Mul:
    return int64_t(x * y);
  case IndexOp::Div:
    return a / b;
  case IndexOp::Rem:
    return a % b;
  case IndexOp::Shl:
    return int64_t(x << y);
  case IndexOp::And:
    return int64_t(x & y);
  case IndexOp::Xor:
    return int64_t(x ^ y);
  case IndexOp::Shr:
    return int64_t(x >> y);
  case IndexOp::Lt:
    break;
  }
  FUSEC_ASSERT(false, "not a foldable index op");
}

} // namespace

ValueId Builder::arith(IndexOp op, ValueId a, ValueId b, const std::string &name) {
  // x * 1, x / 1, x + 0 and x - 0 are x, x % 1 is 0, and math on two constants is a constant:
  // templates write index math for the general case and leave such steps to the builder.
  std::optional<int64_t> ca = constantOf(a), cb = constantOf(b);
  bool unit = (op == IndexOp::Mul || op == IndexOp::Div) && cb == 1;
  if (unit || ((op == IndexOp::Add || op == IndexOp::Sub) && cb == 0))
    return a;
  DType t = k.typeOf(a).elem;
  if (op == IndexOp::Rem && cb == 1)
    return constant(t, 0);
  bool divides = op == IndexOp::Div || op == IndexOp::Rem;
  bool shifts = op == IndexOp::Shl || op == IndexOp::Shr;
  if (ca && cb && op != IndexOp::Lt && !(divides && *cb == 0) && !(shifts && uint64_t(*cb) > 63))
    return constant(t, fold(op, *ca, *cb));
  if ((op == IndexOp::Mul && ca == 1) || (op == IndexOp::Add && ca == 0))
    return b;
  return emit(op == IndexOp::Lt ? Type::scalar(DType::Bool) : k.typeOf(a), name,
              {.op = Opcode::Index, .operands = {a, b}, .indexOp = op});
}

ValueId Builder::math(const MathOp &m, const std::vector<ValueId> &args, const std::string &name) {
  return emit(Type::scalar(computeType(m.result)), name,
              {.op = Opcode::Math, .operands = args, .math = m});
}

ValueId Builder::widen(DType t, ValueId v, const std::string &name) {
  if (storageType(t) == computeType(t))
    return v;
  return emit(Type::vector(computeType(t), k.typeOf(v).lanes), name,
              {.op = Opcode::Widen, .operands = {v}, .dtype = t});
}

ValueId Builder::narrow(DType t, ValueId v) {
  if (storageType(t) == computeType(t))
    return v;
  return emit(Type::vector(storageType(t), k.typeOf(v).lanes), "",
              {.op = Opcode::Narrow, .operands = {v}, .dtype = t});
}

ValueId Builder::load(ValueId ptr, ValueId index, unsigned lanes, const std::string &name) {
  return emit(Type::vector(k.typeOf(ptr).elem, lanes), name,
              {.op = Opcode::Load, .operands = {ptr, index}, .lanes = lanes});
}

void Builder::store(ValueId ptr, ValueId index, ValueId value, unsigned lanes) {
  append({.op = Opcode::Store, .operands = {ptr, index, value}, .lanes = lanes});
}

ValueId Builder::localArray(DType t, unsigned count, const std::string &name) {
  return emit(Type::pointer(t, Space::Local), name,
              {.op = Opcode::Alloca, .imm = count, .dtype = t});
}

ValueId Builder::sharedArray(DType t, unsigned count, const std::string &name, unsigned align) {
  return emit(Type::pointer(t, Space::Shared), name,
              {.op = Opcode::Alloca, .imm = count, .dtype = t, .align = align});
}

void Builder::barrier() { append({.op = Opcode::Barrier}); }

ValueId Builder::atomicAdd(ValueId ptr, ValueId index, ValueId value, const std::string &name) {
  return emit(Type::scalar(DType::I32), name,
              {.op = Opcode::AtomicAdd, .operands = {ptr, index, value}});
}

void Builder::fence() { append({.op = Opcode::Fence}); }

ValueId Builder::shuffle(ShuffleMode mode, ValueId v, ValueId lane, unsigned width, ValueId mask) {
  if (mask == kNoValue)
    mask = index(0xffffffff);
  return emit(k.typeOf(v), "",
              {.op = Opcode::Shuffle, .operands = {v, lane, mask}, .imm = width, .shuffle = mode});
}

ValueId Builder::tableAddress(unsigned table) {
  const Table &t = k.tables[table];
  return emit(Type::pointer(computeType(t.data.dtype), Space::Global), t.name,
              {.op = Opcode::Table, .imm = table});
}

ValueId Builder::dynamicShared(DType t, const std::string &name, unsigned align) {
  return emit(Type::pointer(t, Space::Shared), name,
              {.op = Opcode::DynamicShared, .dtype = t, .align = align});
}

void Builder::copyAsync(ValueId dst, ValueId dstIndex, ValueId src, ValueId srcIndex,
                        ValueId valid) {
  append({.op = Opcode::Async,
          .operands = {dst, dstIndex, src, srcIndex, valid},
          .imm = 16,
          .async = AsyncOp::Copy});
}

void Builder::commitAsync() { append({.op = Opcode::Async, .async = AsyncOp::Commit}); }

void Builder::waitAsync(unsigned pending) {
  append({.op = Opcode::Async, .imm = pending, .async = AsyncOp::Wait});
}

ValueId Builder::loadMatrix(ValueId ptr, ValueId index, bool transposed, const std::string &name) {
  return emit(Type::vector(DType::I32, 4), name,
              {.op = Opcode::Matrix,
               .operands = {ptr, index},
               .imm = transposed,
               .matrix = MatrixOp::LoadX4});
}

ValueId Builder::mma(DType t, ValueId a, ValueId b, ValueId c, const std::string &name) {
  return emit(
      Type::vector(DType::F32, 4), name,
      {.op = Opcode::Matrix, .operands = {a, b, c}, .dtype = t, .matrix = MatrixOp::MmaM16N8K16});
}

int64_t Builder::wgmmaLayout(unsigned swizzleBytes, unsigned strideBytes, unsigned leadingBytes) {
  int64_t mode = swizzleBytes == 128 ? 1 : swizzleBytes == 64 ? 2 : swizzleBytes == 32 ? 3 : 0;
  return int64_t(uint64_t(mode) << 62 | uint64_t(strideBytes >> 4) << 32 |
                 uint64_t(leadingBytes >> 4) << 16);
}

void Builder::wgmma(DType t, unsigned n, ValueId acc, const SharedTile &a, const SharedTile &b,
                    bool transposeB, Accumulate into) {
  append({.op = Opcode::Matrix,
          .operands = {acc, a.layout, a.ptr, a.index, b.layout, b.ptr, b.index},
          .imm = n,
          .dtype = t,
          .matrix = MatrixOp::Wgmma,
          .transposeB = transposeB,
          .accumulate = into});
}

void Builder::wgmma(DType t, unsigned n, ValueId acc, ValueId a, const SharedTile &b,
                    bool transposeB, Accumulate into) {
  append({.op = Opcode::Matrix,
          .operands = {acc, a, b.layout, b.ptr, b.index},
          .imm = n,
          .dtype = t,
          .matrix = MatrixOp::Wgmma,
          .transposeB = transposeB,
          .accumulate = into});
}

void Builder::wgmmaFence(const std::vector<ValueId> &registers) {
  append({.op = Opcode::Matrix, .operands = registers, .matrix = MatrixOp::WgmmaFence});
}

void Builder::wgmmaCommit() { append({.op = Opcode::Matrix, .matrix = MatrixOp::WgmmaCommit}); }

void Builder::wgmmaWait(unsigned pending, const std::vector<ValueId> &accumulators) {
  append({.op = Opcode::Matrix,
          .operands = accumulators,
          .imm = pending,
          .matrix = MatrixOp::WgmmaWait});
}

void Builder::proxyFence() { append({.op = Opcode::Async, .async = AsyncOp::ProxyFence}); }

void Builder::tensorLoad(ValueId dst, ValueId dstIndex, ValueId map, ValueId bar, ValueId barIndex,
                         const std::vector<ValueId> &coords, uint16_t ctaMask) {
  std::vector<ValueId> operands = {dst, dstIndex, map, bar, barIndex};
  operands.insert(operands.end(), coords.begin(), coords.end());
  append({.op = Opcode::Async,
          .operands = std::move(operands),
          .imm = int64_t(coords.size()),
          .async = AsyncOp::TensorLoad,
          .ctaMask = ctaMask});
}

void Builder::tensorLoadIm2col(ValueId dst, ValueId dstIndex, ValueId map, ValueId bar,
                               ValueId barIndex, const std::vector<ValueId> &coords,
                               const std::vector<ValueId> &offsets) {
  std::vector<ValueId> operands = {dst, dstIndex, map, bar, barIndex};
  operands.insert(operands.end(), coords.begin(), coords.end());
  operands.insert(operands.end(), offsets.begin(), offsets.end());
  append({.op = Opcode::Async,
          .operands = std::move(operands),
          .imm = int64_t(coords.size()),
          .async = AsyncOp::TensorLoad,
          .im2col = uint8_t(offsets.size())});
}

void Builder::tensorStore(ValueId src, ValueId srcIndex, ValueId map,
                          const std::vector<ValueId> &coords) {
  std::vector<ValueId> operands = {src, srcIndex, map};
  operands.insert(operands.end(), coords.begin(), coords.end());
  append({.op = Opcode::Async,
          .operands = std::move(operands),
          .imm = int64_t(coords.size()),
          .async = AsyncOp::TensorStore});
}

void Builder::bulkCommit() { append({.op = Opcode::Async, .async = AsyncOp::BulkCommit}); }

void Builder::bulkWait(unsigned pending) {
  append({.op = Opcode::Async, .imm = pending, .async = AsyncOp::BulkWait});
}

void Builder::clusterBarrier() { append({.op = Opcode::Barrier, .cluster = true}); }

void Builder::warpBarrier() { append({.op = Opcode::Barrier, .warp = true}); }

void Builder::barrier(ValueId id, unsigned threads) {
  append({.op = Opcode::Barrier, .operands = {id}, .imm = threads});
}

void Builder::barrierArrive(ValueId id, unsigned threads) {
  append({.op = Opcode::Barrier, .operands = {id}, .imm = threads, .arrive = true});
}

void Builder::mbarrierInit(ValueId bar, ValueId index, unsigned count) {
  append({.op = Opcode::MBarrier,
          .operands = {bar, index},
          .imm = count,
          .mbarrier = MBarrierOp::Init});
}

void Builder::mbarrierInitFence() {
  append({.op = Opcode::MBarrier, .mbarrier = MBarrierOp::InitFence});
}

void Builder::mbarrierArrive(ValueId bar, ValueId index) {
  append({.op = Opcode::MBarrier, .operands = {bar, index}, .mbarrier = MBarrierOp::Arrive});
}

void Builder::mbarrierExpectTx(ValueId bar, ValueId index, unsigned bytes) {
  append({.op = Opcode::MBarrier,
          .operands = {bar, index},
          .imm = bytes,
          .mbarrier = MBarrierOp::ExpectTx});
}

void Builder::mbarrierWait(ValueId bar, ValueId index, ValueId parity) {
  append({.op = Opcode::MBarrier, .operands = {bar, index, parity}, .mbarrier = MBarrierOp::Wait});
}

void Builder::mbarrierArriveRemote(ValueId bar, ValueId index, ValueId rank) {
  append({.op = Opcode::MBarrier,
          .operands = {bar, index, rank},
          .mbarrier = MBarrierOp::ArriveRemote});
}

void Builder::setMaxRegisters(unsigned count, bool raise) {
  append({.op = Opcode::SetMaxRegisters, .imm = count, .raise = raise});
}

ValueId Builder::select(ValueId cond, ValueId a, ValueId b, const std::string &name) {
  return emit(k.typeOf(a), name, {.op = Opcode::Select, .operands = {cond, a, b}});
}

ValueId Builder::pack(DType t, ValueId lo, ValueId hi, const std::string &name) {
  return emit(Type::scalar(DType::I32), name,
              {.op = Opcode::Pack, .operands = {lo, hi}, .dtype = t});
}

ValueId Builder::unpack(DType t, ValueId word, unsigned half, const std::string &name) {
  return emit(Type::scalar(DType::F32), name,
              {.op = Opcode::Unpack, .operands = {word}, .imm = half, .dtype = t});
}

ValueId Builder::exp2(ValueId x, const std::string &name) {
  return emit(Type::scalar(DType::F32), name, {.op = Opcode::Exp2, .operands = {x}});
}

void Builder::inBlock(Block &block, const std::function<void()> &build) {
  // Nothing is appended to the enclosing block while `block` is open, so the instruction that owns
  // it stays where it is meanwhile.
  scopes.push_back({&block, {}});
  build();
  scopes.pop_back();
}

void Builder::forLoop(ValueId start, ValueId end, ValueId step, const std::string &name, int unroll,
                      const std::function<void(ValueId)> &body, bool keepInvariants) {
  Inst loop{.op = Opcode::For,
            .operands = {start, end, step},
            .imm = unroll,
            .regions = {Block()},
            .keepInvariants = keepInvariants};
  ValueId i = emit(k.typeOf(start), name, std::move(loop));
  inBlock(scopes.back().block->back().regions[0], [&] { body(i); }); // the loop's body
}

void Builder::ifThenElse(ValueId cond, const std::function<void()> &then,
                         const std::function<void()> &otherwise) {
  Inst &branch = append({.op = Opcode::If, .operands = {cond}, .regions = {Block(), Block()}});
  inBlock(branch.regions[0], then);
  if (otherwise)
    inBlock(branch.regions[1], otherwise);
}

} // namespace fusec::kir
