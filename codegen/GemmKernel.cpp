// What the tensor-core and SIMT gemm kernels share: the tile space and its
// decoding, and the kernel's leading comment.
//
// Tiles are numbered chain fastest (the anchors of a grouped gemm compute
// the same output tile one after another, so their common A tile is read
// from L2), then by batch, then within one product in groups of
// `groupM` tile rows walked column by column: the tiles in flight at once
// share few rows of A and columns of B, which stay in L2. A block takes
// tiles blockIdx.x, blockIdx.x + gridDim.x, ..., so any grid is correct
// (the static launch has one tile per block). Tile coordinates are ints:
// fewer registers, and a grid holds fewer than 2^31 tiles anyway.
#include "codegen/GemmPlan.h"
#include "codegen/PointwiseMath.h"

#include <algorithm>
#include <sstream>

namespace fusec::codegen::gemm {

namespace {

/// `ptr` advanced to the batch's matrix, as the operand's storage type.
std::string operandPointer(const Plan &plan, const Matrix &x, const std::string &name) {
  const Source &s0 = x.sources.front();
  std::string type(storageType(s0.stored));
  std::string ptr;
  for (size_t g = 0; g + 1 < x.sources.size(); ++g)
    ptr += "chain == " + std::to_string(g) + " ? " + plan.inputs[x.sources[g].input] + " : ";
  ptr += plan.inputs[x.sources.back().input];
  if (x.sources.size() > 1)
    ptr = "(" + ptr + ")";
  std::string offset = x.batchOffset == "0" ? "" : " + " + x.batchOffset;
  return "const " + type + " *__restrict__ " + name + " = " + ptr + offset + ";";
}

} // namespace

std::string tilePrelude(const Plan &plan, const std::string &indent) {
  const TileConfig &t = plan.tile;
  std::ostringstream s;
  s << indent << "const long long rowsM = " << plan.m << "; // rows of one product\n"
    << indent << "const long long tilesM = (rowsM + " << t.bm - 1 << ") / " << t.bm << ";\n"
    << indent << "const long long tilesN = " << lit((plan.n + t.bn - 1) / t.bn) << ";\n"
    << indent << "const long long numTiles = "
    << productOf({lit(int64_t(plan.chains.size())), plan.batches, "tilesM", "tilesN"}) << ";\n";
  return s.str();
}

std::string tileDecode(const Plan &plan, const std::string &indent) {
  const TileConfig &t = plan.tile;
  std::string chains = std::to_string(plan.chains.size());
  std::string rest = plan.chains.size() > 1 ? "tile / " + chains : "tile";
  std::ostringstream s;
  if (plan.chains.size() > 1)
    s << indent << "const int chain = (int)(tile % " << chains << ");\n";
  if (plan.batches != lit(1))
    s << indent << "const int z = (int)(" << rest << " / (tilesM * tilesN));\n"
      << indent << "const int u = (int)(" << rest << " % (tilesM * tilesN));\n";
  else
    s << indent << "const int z = 0;\n" << indent << "const int u = (int)" << rest << ";\n";
  s << indent << "const int firstM = u / (" << t.groupM << " * (int)tilesN) * " << t.groupM << ";\n"
    << indent << "const int groupRows = tilesM - firstM < " << t.groupM
    << " ? (int)tilesM - firstM : " << t.groupM << ";\n"
    << indent << "const int m0 = (firstM + u % groupRows) * " << t.bm << ";\n"
    << indent << "const int n0 = u % (" << t.groupM << " * (int)tilesN) / groupRows * " << t.bn
    << ";\n"
    << indent << operandPointer(plan, plan.a, "a") << "\n"
    << indent << operandPointer(plan, plan.b, "b") << "\n";
  return s.str();
}

std::string tileIndexType(const Plan &plan) {
  std::optional<LaunchConfig> launch = staticLaunch(plan, 0);
  return launch && launch->grid[0] < 0x7fffffff ? "int" : "long long";
}

std::optional<LaunchConfig> staticLaunch(const Plan &plan, int sharedBytes) {
  if (!plan.staticShapes)
    return std::nullopt;
  const TileConfig &t = plan.tile;
  int64_t tilesM = (std::stoll(plan.m) + t.bm - 1) / t.bm, tilesN = (plan.n + t.bn - 1) / t.bn;
  int64_t tiles = int64_t(plan.chains.size()) * std::stoll(plan.batches) * tilesM * tilesN;
  LaunchConfig launch;
  launch.grid[0] = unsigned(std::min<int64_t>(tiles, 0x7fffffff));
  launch.block[0] = unsigned(t.threads());
  launch.sharedBytes = unsigned(sharedBytes);
  return launch;
}

std::string kernelComment(const Plan &plan, const std::string &how) {
  const Op &anchor = *plan.chains.front().anchor;
  std::string operands;
  for (const Value *v : anchor.operands())
    operands += (operands.empty() ? "" : ", ") + v->type().str();
  std::string fused;
  for (const auto &op : plan.body->ops())
    if (op->kind() != OpKind::Const)
      fused += (fused.empty() ? "" : ", ") + std::string(op->name());
  std::ostringstream s;
  s << "// " << plan.entry << ": gemm kernel, " << plan.chains.size() << " x " << anchor.name()
    << "(" << operands << ") -> " << anchor.result()->type().str() << "\n"
    << "// " << how << "\n"
    << "// fuses: " << fused << "\n";
  return s.str();
}

} // namespace fusec::codegen::gemm
