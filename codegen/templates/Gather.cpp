// The pointwise template's gathered path.
//
// Note [Gathered operands]
// Fusion puts into a pointwise kernel the movement ops that only it reads (passes/FusionGroups.cpp:
// a rotary embedding's slices, negation and concat of a transposed projection). Such a kernel
// cannot index its operands by the flat output index. It evaluates each result at the output
// coordinates, and each op at the coordinates its user asks for: a pointwise op asks its operands
// at the same coordinates (0 along the axes they broadcast), a transpose permutes them, a slice
// offsets and scales its axis, a broadcast zeroes the broadcast axes, a reshape re-splits each run
// of axes it regroups (a run it keeps passes through), a concat asks every operand at the
// coordinate clamped into that operand's range and selects by the coordinate, and a gather asks its
// indices at their axes' coordinates and its data at the row the index names (a resize's rows:
// Note [Resize as taps] in frontend/onnx/OpsResize.cpp). A value asked for at
// two coordinates is computed twice (a rotary embedding reads its input at d and at d ± 64), at the
// same coordinates once. Shapes are static: the sizes are literals, divisions by them strength
// reduced (the symbolic compile defers such a kernel until its shapes are bound).
//
// Vectors: a thread takes V consecutive elements of the output's last axis at a time (V = 16 bytes
// over the widest element read or written, when that axis divides by V). Coordinates carry lane
// 0's position and the lanes' axis and step (`At`): lane l at c[axis] + l * step. A transpose
// carries the lanes to its operand's axis, a slice scales their step, a broadcast along their
// axis drops them (every lane reads one element), a gather along the data's other axes, a reshape
// carries them when they run along the last axis of a regrouped run and both ends of the run
// divide by V, a concat along their axis when every operand's extent divides by V (a vector then
// lies in one operand). Where an op cannot
// carry them, each lane asks for its own coordinates. A leaf (an operand or a constant table) is
// read as one vector when the lanes run along its contiguous axis with step 1 from an offset that
// is a multiple of V, else one element a lane. The results go out as vectors.
#include "codegen/templates/Gather.h"

#include "codegen/templates/Index.h"
#include "ir/Assert.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>

namespace fusec::templates {

namespace {

using kir::ValueId;
using Sizes = std::vector<int64_t>;

/// The movement ops a gathered kernel reads through: all but `gather_elements`, whose index
/// differs from element to element.
bool isMovement(const Op &op) {
  return op.info().cls == OpClass::Movement && op.kind() != OpKind::GatherElements;
}

/// Where a value is asked for: lane 0's coordinates (one per axis of the value's shape) and where
/// the lanes are (Note [Gathered operands]). `aligned`: c[axis] is a multiple of V.
struct At {
  std::vector<ValueId> c;
  int axis = -1; ///< the axis the lanes move along; -1: every lane at c
  int64_t step = 0;
  bool aligned = false;
};

/// A value at an At: one element per lane, or one for every lane.
using Lanes = std::vector<ValueId>;

/// Lane l's element of `x`.
ValueId laneOf(const Lanes &x, size_t l) { return x[x.size() == 1 ? 0 : l]; }

class GatherBuilder {
public:
  GatherBuilder(const Op &kernel, const std::string &entry, unsigned width)
      : kernel(kernel), body(*kernel.body()), entry(entry), width(width), b(k) {}

  /// The kernel, or nullopt when it would take more than kMaxBuilds evaluations (nested concats
  /// and slices can ask one value at exponentially many places).
  std::optional<KirKernel> run() {
    declareArgs();
    k.name = entry;
    k.comment = comment();
    params = declareParams(b, kernel, args);
    templates::declareConstants(b, body, entry, splats, tables);
    const Shape &space = body.outputs().front()->type().shape;
    Sizes sizes = staticSizes(space);
    unsigned rank = unsigned(sizes.size());
    int64_t numel = *staticNumElements(space);
    auto [step, first] = gridStride(b);
    ValueId numVectors = b.index(numel / width);
    b.forLoop(first, numVectors, step, "vi", 0, [&](ValueId vi) {
      memo.clear();
      ValueId base = b.mul(vi, b.index(width), "base");
      std::set<unsigned> all;
      for (unsigned a = 0; a < rank; ++a)
        all.insert(a);
      std::map<unsigned, ValueId> coords =
          coordinates(b, base, rank, all, [&](unsigned a) { return b.index(sizes[a]); });
      At out;
      for (unsigned a = 0; a < rank; ++a)
        out.c.push_back(coords.at(a));
      if (width > 1)
        out = At{out.c, int(rank) - 1, 1, true};
      for (unsigned j = 0; j < kernel.numResults(); ++j)
        store(j, base, valueAt(body.outputs()[j], out));
    });
    if (builds > kMaxBuilds)
      return std::nullopt;
    return KirKernel{std::move(k), std::move(args), launch(numel), schedule()};
  }

  /// Distinct evaluations a kernel may build: a rotary embedding takes a few dozen.
  static constexpr unsigned kMaxBuilds = 4096;

private:
  void declareArgs() {
    for (unsigned j = 0; j < body.numInputs(); ++j) {
      pointerArg[body.input(j)] = unsigned(args.size());
      args.push_back(
          {KernelArg::Kind::Input, names.fresh("in_", kernel.operand(j)->name()), j, 0, {}});
    }
    for (unsigned j = 0; j < kernel.numResults(); ++j) {
      pointerArg[kernel.result(j)] = unsigned(args.size());
      args.push_back(
          {KernelArg::Kind::Output, names.fresh("out_", kernel.result(j)->name()), j, 0, {}});
    }
    const Shape &space = body.outputs().front()->type().shape;
    args.push_back(
        {KernelArg::Kind::NumElements, names.fresh("", "numel"), 0, 0, staticNumElements(space)});
  }

  /// Result j's lanes, narrowed to its type, stored at flat index `base`: one vector store.
  void store(unsigned j, ValueId base, const Lanes &lanes) {
    const Value *r = kernel.result(j);
    DType t = r->type().dtype;
    ValueId out = params[pointerArg.at(r)];
    if (width == 1) {
      ValueId y = b.narrow(t, lanes[0]);
      b.store(out, base, y);
      return;
    }
    ValueId array = b.localArray(kir::storageType(t), width, k.values[out].name + "_v");
    for (unsigned l = 0; l < width; ++l) {
      ValueId y = b.narrow(t, laneOf(lanes, l));
      ValueId lane = b.index(l);
      b.store(array, lane, y);
    }
    ValueId zero = b.index(0);
    ValueId vector = b.load(array, zero, width);
    b.store(out, base, vector, width);
  }

  /// The value `v` at `at`, built once for each place it is asked for.
  Lanes valueAt(const Value *v, const At &at) {
    auto key = std::tuple(v, at.c, at.axis, at.step);
    if (auto it = memo.find(key); it != memo.end())
      return it->second;
    if (++builds > kMaxBuilds) // given up (run() says so): any value of v's type unwinds
      return {zero(v->type().dtype)};
    Lanes lanes = build(v, at);
    memo[key] = lanes;
    return lanes;
  }

  Lanes build(const Value *v, const At &at) {
    const Op *def = v->definingOp();
    std::string name = "v_" + v->name();
    if (!def) {
      DType t = v->type().dtype;
      std::string loaded = kir::storageType(t) == kir::computeType(t) ? name : "";
      Lanes raw = read(params[pointerArg.at(v)], staticSizes(v->type().shape), kir::storageType(t),
                       at, loaded);
      for (ValueId &x : raw)
        x = b.widen(t, x, name);
      return raw;
    }
    if (auto s = splats.find(v); s != splats.end())
      return {s->second};
    if (auto t = tables.find(v); t != tables.end()) {
      ValueId table = b.tableAddress(t->second);
      // A table is aligned to its element only (and in its compute type, wider than the kernel's
      // vectors assume): one element a lane.
      return read(table, staticSizes(v->type().shape), kir::computeType(v->type().dtype), at, name,
                  false);
    }
    Sizes to = staticSizes(v->type().shape);
    switch (def->kind()) {
    case OpKind::Transpose:
      return transpose(*def, at);
    case OpKind::Slice:
      return slice(*def, at);
    case OpKind::Broadcast:
      return valueAt(def->operand(0),
                     broadcast(at, to, staticSizes(def->operand(0)->type().shape)));
    case OpKind::Reshape:
      return reshape(*def, at);
    case OpKind::Concat:
      return concat(*def, at);
    case OpKind::Gather:
      return gather(*def, at);
    default:
      break;
    }
    FUSEC_ASSERT(def->info().cls == OpClass::Pointwise, "a gathered kernel holds a foreign op");
    std::vector<Lanes> operands;
    size_t n = 1;
    for (const Value *u : def->operands()) {
      operands.push_back(valueAt(u, broadcast(at, to, staticSizes(u->type().shape))));
      n = std::max(n, operands.back().size());
    }
    Lanes out;
    for (size_t l = 0; l < n; ++l) {
      std::vector<ValueId> xs;
      for (const Lanes &x : operands)
        xs.push_back(laneOf(x, l));
      out.push_back(b.math(kir::mathOf(*def), xs, name));
    }
    return out;
  }

  /// Elements of a row-major leaf of `sizes` at `at`: a vector load when the lanes run along its
  /// contiguous axis with step 1 from a multiple of V, else one load a lane.
  Lanes read(ValueId ptr, const Sizes &sizes, DType stored, const At &at, const std::string &name,
             bool vectors = true) {
    Sizes strides = contiguousStrides(sizes);
    ValueId offset = kir::kNoValue;
    bool vectorAligned = vectors && at.aligned;
    for (size_t a = 0; a < sizes.size(); ++a) {
      if (sizes[a] == 1)
        continue;
      ValueId stride = b.index(strides[a]);
      ValueId term = b.mul(at.c[a], stride);
      offset = offset == kir::kNoValue ? term : b.add(offset, term);
      vectorAligned = vectorAligned && (int(a) == at.axis || strides[a] % width == 0);
    }
    if (offset == kir::kNoValue)
      offset = b.index(0);
    if (at.axis < 0)
      return {b.load(ptr, offset, 1, name)};
    int64_t laneStride = at.step * strides[size_t(at.axis)];
    Lanes out;
    if (laneStride == 1 && vectorAligned) {
      ValueId array = b.localArray(stored, width, name.empty() ? "v" : name + "_v");
      ValueId zero = b.index(0);
      ValueId vector = b.load(ptr, offset, width);
      b.store(array, zero, vector, width);
      for (unsigned l = 0; l < width; ++l) {
        ValueId lane = b.index(l);
        out.push_back(b.load(array, lane, 1, name));
      }
      return out;
    }
    for (unsigned l = 0; l < width; ++l) {
      ValueId delta = b.index(int64_t(l) * laneStride);
      ValueId at_l = b.add(offset, delta);
      out.push_back(b.load(ptr, at_l, 1, name));
    }
    return out;
  }

  /// 0 of IR dtype `t`, in its compute type.
  ValueId zero(DType t) {
    return b.literal(DenseData::makeSplat(t, {}, std::vector<uint8_t>(dtypeSize(t), 0)), "");
  }

  /// `v` asked lane by lane: each lane's own coordinates, every lane's element built alone.
  Lanes perLane(const Value *v, const At &at) {
    Lanes out;
    for (unsigned l = 0; l < width; ++l) {
      At own{at.c, -1, 0, false};
      ValueId delta = b.index(int64_t(l) * at.step);
      own.c[size_t(at.axis)] = b.add(at.c[size_t(at.axis)], delta);
      out.push_back(valueAt(v, own)[0]);
    }
    return out;
  }

  /// `at` (in a shape of `to`) as an operand of shape `from` broadcast to it reads it (NumPy's
  /// rule: axes aligned at the end, 0 along the operand's axes of size 1).
  At broadcast(const At &at, const Sizes &to, const Sizes &from) {
    size_t lead = to.size() - from.size();
    At out;
    for (size_t a = 0; a < from.size(); ++a)
      out.c.push_back(from[a] == 1 && to[a + lead] != 1 ? b.index(0) : at.c[a + lead]);
    if (at.axis >= int(lead) && from[size_t(at.axis) - lead] != 1)
      out = At{out.c, at.axis - int(lead), at.step, at.aligned};
    return out;
  }

  Lanes transpose(const Op &t, const At &at) {
    const std::vector<int64_t> &perm = t.getInts("perm");
    At in = at;
    for (size_t a = 0; a < perm.size(); ++a)
      in.c[size_t(perm[a])] = at.c[a];
    if (at.axis >= 0)
      in.axis = int(perm[size_t(at.axis)]);
    return valueAt(t.operand(0), in);
  }

  Lanes slice(const Op &s, const At &at) {
    const Sizes from = staticSizes(s.operand(0)->type().shape);
    unsigned axis = *normalizeAxis(s.getInt("axis"), from.size());
    int64_t start = sliceBound(s.getInt("start"), from[axis]), step = s.getInt("step");
    At in = at;
    ValueId scaled = b.mul(at.c[axis], b.index(step));
    ValueId first = b.index(start);
    in.c[axis] = b.add(scaled, first);
    if (at.axis == int(axis)) {
      in.step = at.step * step;
      in.aligned = at.aligned && start % width == 0;
    }
    return valueAt(s.operand(0), in);
  }

  /// A reshape re-splits each run of axes it regroups: the shortest runs of dims above 1 on both
  /// sides with equal products; a run of one dim on each side passes its coordinate through.
  Lanes reshape(const Op &r, const At &at) {
    const Sizes to = staticSizes(r.result()->type().shape);
    const Sizes from = staticSizes(r.operand(0)->type().shape);
    At in;
    in.c.assign(from.size(), b.index(0));
    if (*staticNumElements(r.result()->type().shape) == 0)
      return valueAt(r.operand(0), in); // never runs
    std::vector<unsigned> outer, inner; // dims above 1 of the result and of the operand
    for (unsigned a = 0; a < to.size(); ++a)
      if (to[a] != 1)
        outer.push_back(a);
    for (unsigned a = 0; a < from.size(); ++a)
      if (from[a] != 1)
        inner.push_back(a);
    size_t i = 0, j = 0;
    while (i < outer.size()) {
      size_t i0 = i, j0 = j;
      int64_t p = to[outer[i++]], q = from[inner[j++]];
      while (p != q) {
        if (p < q)
          p *= to[outer[i++]];
        else
          q *= from[inner[j++]];
      }
      unsigned lastOut = outer[i - 1], lastIn = inner[j - 1];
      bool lanesHere = at.axis >= 0 && std::find(outer.begin() + long(i0), outer.begin() + long(i),
                                                 unsigned(at.axis)) != outer.begin() + long(i);
      if (i - i0 == 1 && j - j0 == 1) {
        in.c[lastIn] = at.c[lastOut];
      } else {
        if (lanesHere && !(unsigned(at.axis) == lastOut && at.step == 1 && at.aligned &&
                           to[lastOut] % width == 0 && from[lastIn] % width == 0))
          return perLane(r.result(), at);
        ValueId flat = at.c[outer[i0]];
        for (size_t x = i0 + 1; x < i; ++x) {
          ValueId scaled = b.mul(flat, b.index(to[outer[x]]));
          flat = b.add(scaled, at.c[outer[x]]);
        }
        for (size_t y = j; y-- > j0;) {
          ValueId size = b.index(from[inner[y]]);
          in.c[inner[y]] = y == j0 ? flat : b.arith(kir::IndexOp::Rem, flat, size);
          if (y > j0)
            flat = b.arith(kir::IndexOp::Div, flat, size);
        }
      }
      if (lanesHere)
        in = At{in.c, int(lastIn), at.step, at.aligned};
    }
    return valueAt(r.operand(0), in);
  }

  /// The index at the coordinates of the indices' axes, counted from the end when negative and
  /// clamped into the data's axis (as the generic gather kernel does); the data at the other
  /// coordinates with that row. Lanes along the indices' axes read a row each.
  Lanes gather(const Op &g, const At &at) {
    const Sizes data = staticSizes(g.operand(0)->type().shape);
    const size_t q = g.operand(1)->type().rank();
    const unsigned axis = *normalizeAxis(g.getInt("axis"), data.size());
    if (at.axis >= int(axis) && at.axis < int(axis + q))
      return perLane(g.result(), at);
    At where{std::vector<ValueId>(at.c.begin() + axis, at.c.begin() + long(axis + q)), -1, 0,
             false};
    ValueId raw = b.convert(DType::I64, valueAt(g.operand(1), where)[0], "index");
    ValueId zero = b.index(0), size = b.index(data[axis]);
    ValueId negative = b.less(raw, zero);
    ValueId fromEnd = b.arith(kir::IndexOp::Add, raw, size);
    ValueId wrapped = b.select(negative, fromEnd, raw);
    ValueId above = b.math({OpKind::Max, DType::I64, DType::I64}, {wrapped, zero}, "");
    ValueId last = b.index(data[axis] - 1);
    ValueId row = b.math({OpKind::Min, DType::I64, DType::I64}, {above, last}, "row");
    At in;
    in.c.assign(at.c.begin(), at.c.begin() + axis);
    in.c.push_back(row);
    in.c.insert(in.c.end(), at.c.begin() + long(axis + q), at.c.end());
    if (at.axis >= 0)
      in = At{in.c, at.axis < int(axis) ? at.axis : at.axis - int(q) + 1, at.step, at.aligned};
    return valueAt(g.operand(0), in);
  }

  /// Every operand at the coordinate clamped into its range, the one holding it selected.
  Lanes concat(const Op &cat, const At &at) {
    const Sizes to = staticSizes(cat.result()->type().shape);
    unsigned axis = *normalizeAxis(cat.getInt("axis"), to.size());
    bool lanesAlong = at.axis == int(axis);
    unsigned n = cat.numOperands();
    Sizes extent;
    for (const Value *u : cat.operands())
      extent.push_back(staticSizes(u->type().shape)[axis]);
    if (lanesAlong && !(at.step == 1 && at.aligned &&
                        std::ranges::all_of(extent, [&](int64_t e) { return e % width == 0; })))
      return perLane(cat.result(), at);
    std::vector<Lanes> parts;
    Sizes offset;
    int64_t at0 = 0;
    for (unsigned i = 0; i < n; ++i) {
      offset.push_back(at0);
      at0 += extent[i];
      if (extent[i] == 0) {
        parts.push_back({});
        continue;
      }
      ValueId x = at.c[axis];
      if (i > 0) {
        ValueId off = b.index(offset[i]);
        ValueId below = b.less(x, off);
        ValueId shifted = b.arith(kir::IndexOp::Sub, x, off);
        x = b.select(below, b.index(0), shifted);
      }
      if (i + 1 < n) {
        ValueId last = b.index(extent[i] - (lanesAlong ? width : 1));
        ValueId above = b.less(last, x);
        x = b.select(above, last, x);
      }
      At in = at;
      in.c[axis] = x;
      parts.push_back(valueAt(cat.operand(i), in));
    }
    Lanes out;
    for (unsigned i = n; i-- > 0;) {
      if (parts[i].empty()) // an empty operand; all of them empty: the kernel never runs
        continue;
      if (out.empty()) {
        out = parts[i];
        continue;
      }
      ValueId end = b.index(offset[i] + extent[i]);
      ValueId inside = b.less(at.c[axis], end);
      size_t lanes = std::max(out.size(), parts[i].size());
      Lanes merged;
      for (size_t l = 0; l < lanes; ++l) {
        ValueId here = laneOf(parts[i], l), later = laneOf(out, l);
        merged.push_back(b.select(inside, here, later));
      }
      out = merged;
    }
    if (out.empty())
      out.push_back(zero(cat.result()->type().dtype));
    return out;
  }

  // 256 threads a block, two vectors a thread (the loop strides over the rest), at most 2^31-1
  // blocks: the flat path's launch.
  std::optional<LaunchConfig> launch(int64_t numel) const {
    constexpr int64_t kBlock = 256;
    int64_t perThread = 2 * int64_t(width);
    int64_t blocks = std::max<int64_t>(1, (numel + kBlock * perThread - 1) / (kBlock * perThread));
    LaunchConfig l;
    l.grid[0] = unsigned(std::min<int64_t>(blocks, 0x7fffffff));
    l.block[0] = unsigned(kBlock);
    return l;
  }

  std::string schedule() const {
    return "grid-stride, " +
           (width > 1 ? "vectors of " + std::to_string(width) + " along the last axis"
                      : std::string("one element a thread a step")) +
           ", operands gathered through " + movementNames();
  }

  /// The kinds of movement op the body holds, each once, in body order.
  std::string movementNames() const {
    std::string out;
    std::set<OpKind> seen;
    for (const auto &op : body.ops())
      if (isMovement(*op) && seen.insert(op->kind()).second)
        out += (out.empty() ? "" : ", ") + std::string(op->name());
    return out;
  }

  std::vector<std::string> comment() const {
    std::string ops;
    for (const auto &op : body.ops())
      if (op->kind() != OpKind::Const)
        ops += (ops.empty() ? "" : ", ") + std::string(op->name());
    return {entry + ": pointwise kernel over " + shapeStr(body.outputs().front()->type().shape) +
                ", operands gathered",
            "fuses: " + ops};
  }

  const Op &kernel;
  const Graph &body;
  const std::string &entry;
  const unsigned width;
  kir::Kernel k;
  kir::Builder b;
  std::vector<KernelArg> args;
  Namer names;
  std::vector<ValueId> params;
  std::map<const Value *, unsigned> pointerArg;
  std::map<const Value *, ValueId> splats;
  std::map<const Value *, unsigned> tables;
  std::map<std::tuple<const Value *, std::vector<ValueId>, int, int64_t>, Lanes> memo;
  unsigned builds = 0;
};

/// Whether the body can be gathered: pointwise, constant and movement ops over static shapes, and
/// results of one shape. Reports what cannot.
bool check(const Op &kernel, Diagnostics &diags) {
  const Graph &body = *kernel.body();
  bool ok = true;
  auto needStatic = [&](const Value *v, const Loc &loc) {
    if (isStatic(v->type().shape))
      return true;
    diags.error(loc, "a pointwise kernel that gathers its operands needs static shapes, not " +
                         v->type().str());
    return false;
  };
  for (unsigned j = 0; j < body.numInputs() && ok; ++j)
    ok = needStatic(body.input(j), kernel.loc());
  for (const auto &op : body.ops()) {
    if (!ok)
      break;
    if (op->info().cls != OpClass::Pointwise && op->kind() != OpKind::Const && !isMovement(*op)) {
      diags.error(op->loc(), "'" + std::string(op->name()) +
                                 "' cannot be generated by the pointwise template");
      return false;
    }
    for (unsigned i = 0; i < op->numResults() && ok; ++i)
      ok = needStatic(op->result(i), op->loc());
  }
  if (!ok)
    return false;
  const Shape &space = body.outputs().front()->type().shape;
  for (const Value *v : body.outputs()) {
    if (v->type().shape == space)
      continue;
    diags.error(kernel.loc(), "pointwise kernel results of types " +
                                  body.outputs().front()->type().str() + " and " + v->type().str() +
                                  " differ in shape; not supported yet");
    return false;
  }
  return true;
}

/// Whether body value `v` is read only as a gather's indices (one element a row, not a vector).
bool onlyIndices(const Value *v) {
  return v->hasUses() && std::ranges::all_of(v->uses(), [](const Use &u) {
           return u.user && u.user->kind() == OpKind::Gather && u.index == 1;
         });
}

/// V: 16 bytes over the widest element read as vectors or written, when the output's last axis
/// divides by it (and V >= 2); else 1.
unsigned vectorWidth(const Op &kernel) {
  unsigned widest = 1;
  for (unsigned j = 0; j < kernel.numOperands(); ++j)
    if (!onlyIndices(kernel.body()->input(j)))
      widest = std::max(widest, dtypeSize(kir::storageType(kernel.operand(j)->type().dtype)));
  for (unsigned j = 0; j < kernel.numResults(); ++j)
    widest = std::max(widest, dtypeSize(kir::storageType(kernel.result(j)->type().dtype)));
  unsigned width = 16 / widest;
  Sizes sizes = staticSizes(kernel.body()->outputs().front()->type().shape);
  bool fits = !sizes.empty() && width >= 2 && sizes.back() % width == 0;
  return fits ? width : 1;
}

} // namespace

bool holdsMovement(const Op &kernel) {
  return std::ranges::any_of(kernel.body()->ops(), [](const auto &op) { return isMovement(*op); });
}

std::optional<KirKernel> buildGathered(const Op &kernel, const std::string &entry,
                                       Diagnostics &diags) {
  if (!check(kernel, diags))
    return std::nullopt;
  std::optional<KirKernel> k = GatherBuilder(kernel, entry, vectorWidth(kernel)).run();
  if (!k)
    diags.error(kernel.loc(), "a pointwise kernel that gathers its operands asks for more than " +
                                  std::to_string(GatherBuilder::kMaxBuilds) +
                                  " elements of its values; not generated");
  return k;
}

} // namespace fusec::templates
