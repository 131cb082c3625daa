// Shared pieces of the generic emitter (see GenericSupport.h): sizes and
// strides, accumulator math as C text over the helpers of
// device/Pointwise.cuh, coordinate splitting, group-reduction layouts, and
// the kernel frame (comment, signature, loops, launch).
#include "codegen/GenericSupport.h"

#include "codegen/PointwiseMath.h"
#include "ir/Assert.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <sstream>

namespace fusec::codegen::generic {

Sizes sizesOf(const Value &v) {
  Sizes sizes;
  for (const Dim &d : v.type().shape) {
    FUSEC_ASSERT(d.isStatic(), "the generic emitter needs static shapes");
    sizes.push_back(d.size);
  }
  return sizes;
}

int64_t product(const Sizes &sizes, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t k = begin; k < std::min(end, sizes.size()); ++k)
    n *= sizes[k];
  return n;
}

Sizes contiguousStrides(const Sizes &shape) {
  Sizes strides(shape.size());
  int64_t s = 1;
  for (size_t k = shape.size(); k-- > 0; s *= shape[k])
    strides[k] = s;
  return strides;
}

Sizes broadcastStrides(const Sizes &shape, const Sizes &target) {
  FUSEC_ASSERT(shape.size() <= target.size(), "broadcast to a lower rank");
  Sizes own = contiguousStrides(shape), strides(target.size(), 0);
  size_t lead = target.size() - shape.size();
  for (size_t k = 0; k < shape.size(); ++k)
    strides[lead + k] = shape[k] == 1 ? 0 : own[k];
  return strides;
}

std::string lit(int64_t v) { return std::to_string(v) + "LL"; }

std::string sum(const std::string &a, const std::string &b) {
  if (a == "0")
    return b;
  return b == "0" ? a : a + " + " + b;
}

int64_t pow2Clamp(int64_t n, int64_t lo, int64_t hi) {
  int64_t p = lo;
  while (p < n && p < hi)
    p *= 2;
  return p;
}

DType accDType(DType t, std::optional<DType> acc) {
  DType basis = acc.value_or(t);
  if (basis == DType::F64)
    return DType::F64;
  return isFloat(basis) ? DType::F32 : DType::I64;
}

std::optional<DType> accAttr(const Op &op) {
  const Attribute *acc = op.attrIfPresent("acc");
  return acc ? std::optional<DType>(acc->get<DType>()) : std::nullopt;
}

std::string_view accType(DType acc) { return computeType(acc); }

std::string storeFromAcc(DType t, DType acc, const std::string &x) {
  if (acc == DType::I64 || !isFloat(t))
    return storeExpr(t, castExpr(acc, t, x));
  if (acc == DType::F32 || t == DType::F64)
    return storeExpr(t, x);
  switch (t) {
  case DType::F16:
    return "fusec_f64_to_f16(" + x + ")";
  case DType::BF16:
    return "fusec_f64_to_bf16(" + x + ")";
  default:
    return "(float)" + x;
  }
}

std::string floatLiteral(DType acc, double v) {
  FUSEC_ASSERT(acc == DType::F32 || acc == DType::F64, "not a float accumulator");
  std::vector<uint8_t> bytes(dtypeSize(acc));
  if (acc == DType::F64) {
    std::memcpy(bytes.data(), &v, sizeof v);
  } else {
    float f = float(v);
    std::memcpy(bytes.data(), &f, sizeof f);
  }
  return constantLiteral(DenseData(acc, {}, std::move(bytes)), 0);
}

std::string zeroLiteral(DType acc) { return acc == DType::I64 ? "0LL" : floatLiteral(acc, 0.0); }

std::string lowestLiteral(DType acc) {
  return acc == DType::I64 ? "(-9223372036854775807LL - 1)" : floatLiteral(acc, -HUGE_VAL);
}

std::string highestLiteral(DType acc) {
  return acc == DType::I64 ? "9223372036854775807LL" : floatLiteral(acc, HUGE_VAL);
}

std::string addExpr(DType acc, const std::string &a, const std::string &b) {
  return acc == DType::I64 ? "fusec_add_i(" + a + ", " + b + ")" : a + " + " + b;
}

std::string mulExpr(DType acc, const std::string &a, const std::string &b) {
  return acc == DType::I64 ? "fusec_mul_i(" + a + ", " + b + ")" : a + " * " + b;
}

std::string maxExpr(DType acc, const std::string &a, const std::string &b) {
  if (acc == DType::I64)
    return a + " < " + b + " ? " + b + " : " + a;
  return std::string(acc == DType::F64 ? "fusec_max_f64(" : "fusec_max_f32(") + a + ", " + b + ")";
}

std::string minExpr(DType acc, const std::string &a, const std::string &b) {
  if (acc == DType::I64)
    return b + " < " + a + " ? " + b + " : " + a;
  return std::string(acc == DType::F64 ? "fusec_min_f64(" : "fusec_min_f32(") + a + ", " + b + ")";
}

std::string lambda(DType acc,
                   std::string (*expr)(DType, const std::string &, const std::string &)) {
  std::string t(accType(acc));
  return "[](" + t + " a, " + t + " b) { return " + expr(acc, "a", "b") + "; }";
}

std::string fill(std::string_view text,
                 const std::vector<std::pair<std::string, std::string>> &values) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    if (text[i] != '$') {
      out += text[i++];
      continue;
    }
    size_t end = i + 1;
    while (end < text.size() &&
           (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_'))
      ++end;
    std::string_view name = text.substr(i + 1, end - i - 1);
    auto it =
        std::find_if(values.begin(), values.end(), [&](const auto &v) { return v.first == name; });
    FUSEC_ASSERT(it != values.end(), "kernel template names an unknown value");
    out += it->second;
    i = end;
  }
  return out;
}

std::string IndexSpace::offset(const Sizes &strides, int64_t base) {
  FUSEC_ASSERT(strides.size() == dims.size(), "strides do not match the index space");
  std::string sum = base ? lit(base) : "";
  for (size_t k = 0; k < dims.size(); ++k) {
    if (dims[k] == 1 || strides[k] == 0)
      continue;
    needed.insert(k);
    std::string term = prefix + std::to_string(k);
    if (strides[k] != 1)
      term += " * " + lit(strides[k]);
    sum += (sum.empty() ? "" : " + ") + term;
  }
  return sum.empty() ? "0" : sum;
}

std::string IndexSpace::offsetOr(const std::string &flat, const Sizes &strides, int64_t base) {
  Sizes own = contiguousStrides(dims);
  bool same = base == 0;
  for (size_t k = 0; k < dims.size() && same; ++k)
    same = dims[k] == 1 || strides[k] == own[k];
  return same ? flat : offset(strides, base);
}

std::string IndexSpace::coord(size_t k) {
  needed.insert(k);
  return prefix + std::to_string(k);
}

std::string IndexSpace::split(const std::string &flat, const std::string &indent) const {
  if (needed.empty())
    return "";
  size_t first = *needed.begin();
  if (first + 1 == dims.size()) // the innermost coordinate alone
    return indent + "const long long " + prefix + std::to_string(first) + " = " + flat +
           (first == 0 ? "" : " % " + lit(dims[first])) + ";\n";
  std::string rem = prefix + "rem", out = indent + "long long " + rem + " = " + flat + ";\n";
  for (size_t k = dims.size(); k-- > first;) {
    std::string coord = indent + "const long long " + prefix + std::to_string(k) + " = " + rem;
    if (needed.count(k))
      out += coord + (k == 0 ? "" : " % " + lit(dims[k])) + ";\n";
    if (k > first)
      out += indent + rem + " /= " + lit(dims[k]) + ";\n";
  }
  return out;
}

GroupLayout GroupLayout::choose(int64_t lines, int64_t length, bool elementsContiguous) {
  int64_t lanes = pow2Clamp(length, 1, kBlock);
  if (!elementsContiguous)
    lanes = std::min(lanes, kBlock / pow2Clamp(lines, 1, 32));
  return {kBlock / lanes, lanes, elementsContiguous};
}

std::string GroupLayout::declare() const {
  std::string g = std::to_string(groups), l = std::to_string(lanes);
  if (lanesInner)
    return "  const int group = threadIdx.x / " + l + ";\n  const int lane = threadIdx.x % " + l +
           ";\n";
  return "  const int group = threadIdx.x % " + g + ";\n  const int lane = threadIdx.x / " + g +
         ";\n";
}

std::string GroupLayout::reduce(const std::string &value, const std::string &combine) const {
  std::string groupStride = lanesInner ? std::to_string(lanes) : "1";
  std::string laneStride = lanesInner ? "1" : std::to_string(groups);
  return "fusec_group_reduce(" + value + ", red, group, lane, " + std::to_string(lanes) + ", " +
         groupStride + ", " + laneStride + ", " + combine + ")";
}

KernelBuilder::KernelBuilder(const Op &op, const std::string &entry) : theOp(op) {
  kernel.name = entry;
  Namer names;
  for (unsigned i = 0; i < op.numOperands(); ++i) {
    const Value *v = op.operand(i);
    inputs.push_back(names.fresh("in_", v->name()));
    params.push_back("const " + std::string(storageType(v->type().dtype)) + " *__restrict__ " +
                     inputs.back());
    kernel.args.push_back({KernelArg::Kind::Input, inputs.back(), i, 0, std::nullopt});
  }
  for (unsigned i = 0; i < op.numResults(); ++i) {
    const Value *v = op.result(i);
    outputs.push_back(names.fresh("out_", v->name()));
    params.push_back(std::string(storageType(v->type().dtype)) + " *__restrict__ " +
                     outputs.back());
    kernel.args.push_back({KernelArg::Kind::Output, outputs.back(), i, 0, std::nullopt});
  }
}

GeneratedKernel KernelBuilder::finish(const std::vector<std::string> &notes,
                                      const std::string &body, int64_t blocks) {
  std::string types;
  for (const Value *v : theOp.operands())
    types += (types.empty() ? "" : ", ") + v->type().str();
  std::ostringstream src;
  src << "// " << kernel.name << ": generic kernel for '" << theOp.name() << "' (" << types
      << " -> " << theOp.result()->type().str() << ")\n";
  for (const std::string &note : notes)
    src << "// " << note << "\n";
  src << "extern \"C\" __global__ void __launch_bounds__(" << kBlock << ") " << kernel.name << "(";
  for (size_t p = 0; p < params.size(); ++p)
    src << (p ? ",\n    " : "\n    ") << params[p];
  src << ") {\n" << body << "}\n";
  kernel.source = src.str();
  kernel.launch = genericLaunch(blocks);
  return std::move(kernel);
}

LaunchConfig genericLaunch(int64_t blocks) {
  LaunchConfig launch;
  launch.grid[0] = unsigned(std::clamp<int64_t>(blocks, 0, 0x7fffffff));
  launch.block[0] = unsigned(kBlock);
  return launch;
}

std::string gridStrideLoop(int64_t count, const std::string &body) {
  return "  const long long step = (long long)gridDim.x * blockDim.x;\n"
         "  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < " +
         lit(count) + "; i += step) {\n" + body + "  }\n";
}

std::string tileLoop(int64_t tiles, const std::string &body) {
  return "  for (long long tile = blockIdx.x; tile < " + lit(tiles) + "; tile += gridDim.x) {\n" +
         body + "  }\n";
}

} // namespace fusec::codegen::generic
