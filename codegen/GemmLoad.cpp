// Staging the operand tiles of the tensor-core kernel into shared memory.
//
// A tile is `rows` rows of `chunks` 16-byte chunks (8 elements), laid out
// as the operand is in memory (its contiguous dim along the chunks) and
// XOR-swizzled (device/Gemm.cuh). Thread tid stages chunk tid % chunks of
// rows tid / chunks + j * step (step = threads / chunks), so per tile it
// needs one source pointer and one bound: a K-major operand's tile moves
// along its rows' contiguous dim (the bound is how many rows are left), an
// M/N-major one down its rows (the bound is whether its column is inside).
// Two ways:
// - cp.async (Matrix::async): an f16/bf16 operand read as is whose rows
//   are whole chunks (inner % 8 == 0): 16-byte asynchronous copies, zero-
//   filled past the edges, pipelined over the stages.
// - registers: everything else, i.e. a cast prologue (an f32 weight cast to
//   bf16 while loading) or rows that are not whole chunks. The global loads
//   of a future tile are issued into registers before the current tile's
//   math; after it they are converted (the prologue casts), packed and
//   stored into shared memory, so the loads' latency hides behind the math.
//   Loads are 16 bytes wide when inner % 8 == 0, else element by element,
//   each checked against the row's end.
// K tails: chunks past K are zero (checked only when bk does not divide K).
#include "codegen/GemmPlan.h"
#include "codegen/PointwiseMath.h"

#include <cctype>
#include <sstream>

namespace fusec::codegen::gemm {

namespace {

/// One operand's tile and this thread's place in it.
struct TileShape {
  std::string p; // "a" or "b"
  const Matrix *x;
  int rows, chunks, step, perThread, offset; // offset: bytes from the stage's start
  std::string mn0, extent; // the tile's first row (K-major) or column, and that dim's size
  std::string kt = "kt";   // the K step being loaded
  bool edge = true;        // some tile reaches past the operand's M (or N) extent
};

TileShape tileShape(const Plan &plan, bool isA) {
  const TileConfig &t = plan.tile;
  TileShape s;
  s.p = isA ? "a" : "b";
  s.x = isA ? &plan.a : &plan.b;
  int mn = isA ? t.bm : t.bn;
  s.rows = s.x->kMajor ? mn : t.bk;
  s.chunks = (s.x->kMajor ? t.bk : mn) / 8;
  s.step = t.threads() / s.chunks;
  s.perThread = s.rows * s.chunks / t.threads();
  s.offset = isA ? 0 : t.bm * t.bk * 2;
  s.mn0 = isA ? "m0" : "n0";
  s.extent = s.x->kMajor ? s.x->outer : lit(s.x->inner);
  bool literal = !s.extent.empty() && std::isdigit(static_cast<unsigned char>(s.extent[0]));
  s.edge = !literal || std::stoll(s.extent) % mn != 0;
  return s;
}

/// 16-byte vectors per chunk of 8 elements of the stored dtype.
int vectorsPerChunk(DType stored) { return int(dtypeSize(stored)) / 2; }

bool vectorLoads(const Matrix &x) { return x.inner % 8 == 0; }

/// Element e of chunk j of the registers `r`, as computeType(stored).
std::string rawElement(const Matrix &x, const std::string &r, int e) {
  DType t = x.sources.front().stored;
  std::string es = std::to_string(e);
  if (!vectorLoads(x))
    return t == DType::F16    ? "fusec_f16_to_f32(" + r + "[j][" + es + "])"
           : t == DType::BF16 ? "fusec_bf16_to_f32(" + r + "[j][" + es + "])"
                              : r + "[j][" + es + "]";
  auto word = [&](int v, int w) {
    return "fusec_word(" + r + "[j][" + std::to_string(v) + "], " + std::to_string(w) + ")";
  };
  switch (t) {
  case DType::F16:
    return "fusec_f16_to_f32((unsigned short)(" + word(0, e / 2) + (e % 2 ? " >> 16" : "") + "))";
  case DType::BF16:
    return "__uint_as_float(" + word(0, e / 2) + (e % 2 ? " & 0xffff0000u" : " << 16") + ")";
  case DType::F32:
    return "__uint_as_float(" + word(e / 4, e % 4) + ")";
  default: // f64
    return "fusec_f64_from_words(" + word(e / 2, e % 2 * 2) + ", " + word(e / 2, e % 2 * 2 + 1) +
           ")";
  }
}

/// Whether chunk j (a loop variable) at K step kt is inside the operand.
std::string inside(const Plan &plan, const TileShape &s) {
  std::vector<std::string> conds;
  if (s.edge)
    conds.push_back(s.x->kMajor ? s.p + "Rows > j * " + std::to_string(s.step) : s.p + "Cols");
  if (plan.k % plan.tile.bk != 0) { // the K tail: along the chunks, or down the rows
    std::string k = s.kt + " * " + std::to_string(plan.tile.bk);
    std::string c = std::to_string(s.chunks);
    conds.push_back(s.x->kMajor ? k + " + tid % " + c + " * 8 < " + lit(plan.k)
                                : k + " + tid / " + c + " + j * " + std::to_string(s.step) + " < " +
                                      lit(plan.k));
  }
  std::string all;
  for (const std::string &c : conds)
    all += (all.empty() ? "" : " && ") + c;
  return all.empty() ? "true" : all;
}

/// The source of chunk j at K step kt.
std::string source(const Plan &plan, const TileShape &s) {
  std::string inner = lit(s.x->inner), bk = std::to_string(plan.tile.bk);
  std::string rows = "j * " + std::to_string(s.step) + " * " + inner;
  return s.p + "Src + " + rows + " + " + s.kt + " * " + (s.x->kMajor ? bk : bk + " * " + inner);
}

/// The first column of this thread's chunk, for per-element bounds.
std::string firstColumn(const Plan &plan, const TileShape &s) {
  std::string c = "tid % " + std::to_string(s.chunks) + " * 8";
  return s.x->kMajor ? s.kt + " * " + std::to_string(plan.tile.bk) + " + " + c : s.mn0 + " + " + c;
}

std::string destination(const TileShape &s, const std::string &stage) {
  std::string c = std::to_string(s.chunks);
  return stage + (s.offset ? " + " + std::to_string(s.offset) : "") +
         " + 16 * fusec_swizzle(tid / " + c + " + j * " + std::to_string(s.step) + ", tid % " + c +
         ", " + c + ")";
}

std::string fetch(const Plan &plan, const TileShape &s, const std::string &in) {
  std::string stored(storageType(s.x->sources.front().stored));
  std::ostringstream f;
  f << in << "#pragma unroll\n"
    << in << "for (int j = 0; j < " << s.perThread << "; ++j) {\n"
    << in << "  const bool ok = " << inside(plan, s) << ";\n"
    << in << "  const " << stored << " *src = " << source(plan, s) << ";\n";
  if (vectorLoads(*s.x)) {
    int v = vectorsPerChunk(s.x->sources.front().stored);
    f << in << "  #pragma unroll\n"
      << in << "  for (int v = 0; v < " << v << "; ++v)\n"
      << in << "    r" << s.p << "[j][v] = ok ? fusec_load16(src + v * " << 8 / v
      << ") : fusec_u32x4{0u, 0u, 0u, 0u};\n";
  } else {
    f << in << "  const long long col = " << firstColumn(plan, s) << ";\n"
      << in << "  #pragma unroll\n"
      << in << "  for (int e = 0; e < 8; ++e)\n"
      << in << "    r" << s.p << "[j][e] = ok && col + e < " << lit(s.x->inner) << " ? src[e] : ("
      << stored << ")0;\n";
  }
  f << in << "}\n";
  return f.str();
}

std::string copyAsync(const Plan &plan, const TileShape &s, const std::string &stage,
                      const std::string &in) {
  std::ostringstream f;
  f << in << "#pragma unroll\n"
    << in << "for (int j = 0; j < " << s.perThread << "; ++j)\n"
    << in << "  fusec_cp_async16(" << destination(s, stage) << ", " << source(plan, s) << ", "
    << inside(plan, s) << ");\n";
  return f.str();
}

std::string stageRegisters(const Plan &plan, const TileShape &s, const std::string &stage,
                           const std::string &in) {
  std::string pack = plan.operand == DType::BF16 ? "fusec_pack_bf16x2" : "fusec_pack_f16x2";
  const Source &src = s.x->sources.front();
  std::string r = "r" + s.p;
  std::ostringstream f;
  f << in << "#pragma unroll\n"
    << in << "for (int j = 0; j < " << s.perThread << "; ++j) {\n"
    << in << "  fusec_u32x4 w;\n";
  const char *word[] = {"x", "y", "z", "w"};
  bool asIs = src.casts.empty(); // f16/bf16 bits that need no conversion
  for (int h = 0; h < 4; ++h) {
    std::string lo = r + "[j][" + std::to_string(2 * h) + "]",
                hi = r + "[j][" + std::to_string(2 * h + 1) + "]";
    f << in << "  w." << word[h] << " = "
      << (asIs ? "(unsigned)" + lo + " | ((unsigned)" + hi + " << 16)"
               : pack + "(" + castChain(src, rawElement(*s.x, r, 2 * h), true) + ", " +
                     castChain(src, rawElement(*s.x, r, 2 * h + 1), true) + ")")
      << ";\n";
  }
  f << in << "  fusec_st_shared16(" << destination(s, stage) << ", w);\n" << in << "}\n";
  return f.str();
}

} // namespace

std::string loaderTileSetup(const Plan &plan, const std::string &in) {
  std::ostringstream f;
  for (bool isA : {true, false}) {
    TileShape s = tileShape(plan, isA);
    std::string c = std::to_string(s.chunks), inner = lit(s.x->inner);
    f << in << "// " << (isA ? "A" : "B") << " tiles: " << s.rows << " rows of " << s.chunks
      << " chunks ("
      << (s.x->kMajor ? "K"
          : isA       ? "M"
                      : "N")
      << " contiguous), by " << (s.x->async ? "cp.async" : "registers") << "; rows tid / " << c
      << " + j * " << s.step << "\n";
    std::string type(storageType(s.x->sources.front().stored));
    if (s.x->kMajor) {
      f << in << "const " << type << " *" << s.p << "Src = " << s.p << " + (" << s.mn0
        << " + tid / " << c << ") * " << inner << " + tid % " << c << " * 8;\n";
      if (s.edge)
        f << in << "const int " << s.p << "Rows = (int)(" << s.extent << " - " << s.mn0 << " < "
          << s.rows << " ? " << s.extent << " - " << s.mn0 << " : " << s.rows << ") - tid / " << c
          << ";\n";
      continue;
    }
    f << in << "const " << type << " *" << s.p << "Src = " << s.p << " + tid / " << c << " * "
      << inner << " + " << s.mn0 << " + tid % " << c << " * 8;\n";
    if (s.edge)
      f << in << "const bool " << s.p << "Cols = " << s.mn0 << " + tid % " << c << " * 8 < "
        << inner << ";\n";
  }
  return f.str();
}

std::string loaderRegisters(const Plan &plan, const std::string &indent) {
  std::string s;
  for (bool isA : {true, false}) {
    TileShape t = tileShape(plan, isA);
    if (t.x->async)
      continue;
    DType stored = t.x->sources.front().stored;
    std::string j = "[" + std::to_string(t.perThread) + "]";
    s += indent +
         (vectorLoads(*t.x)
              ? "fusec_u32x4 r" + t.p + j + "[" + std::to_string(vectorsPerChunk(stored)) + "]"
              : std::string(storageType(stored)) + " r" + t.p + j + "[8]") +
         ";\n";
  }
  return s;
}

std::string loaderIssue(const Plan &plan, const std::string &stage, const std::string &kt,
                        const std::string &indent) {
  std::string s;
  for (bool isA : {true, false}) {
    TileShape t = tileShape(plan, isA);
    t.kt = kt;
    s += t.x->async ? copyAsync(plan, t, stage, indent) : fetch(plan, t, indent);
  }
  return s;
}

std::string loaderStage(const Plan &plan, const std::string &stage, const std::string &indent) {
  std::string s;
  for (bool isA : {true, false}) {
    TileShape t = tileShape(plan, isA);
    if (!t.x->async)
      s += stageRegisters(plan, t, stage, indent);
  }
  return s;
}

} // namespace fusec::codegen::gemm
