// What a kernel template's kir builder returns: the kernel, the meaning of its parameters and, for
// static shapes, its launch. Codegen.cpp verifies it and has the chosen back end render it into a
// GeneratedKernel.
#pragma once

#include "codegen/GeneratedKernel.h"
#include "codegen/kir/Kir.h"
#include "ir/Graph.h"

#include <array>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace fusec::templates {

struct KirKernel {
  kir::Kernel kernel;
  std::vector<KernelArg> args; ///< one per kir parameter, in order
  std::optional<LaunchConfig> launch;
  std::string schedule;     ///< KernelFacts::schedule
  int64_t scratchBytes = 0; ///< GeneratedKernel::scratchBytes
};

/// One kir parameter per entry of `args`, in order: an index for a scalar, a tensor map for a
/// tensor map, a global pointer to its dtype for a scratch, else a global pointer to the storage
/// type of `kernel`'s operand or result it names, read-only for an operand.
inline std::vector<kir::ValueId> declareParams(kir::Builder &b, const Op &kernel,
                                               const std::vector<KernelArg> &args) {
  std::vector<kir::ValueId> params;
  for (const KernelArg &a : args) {
    if (a.kind == KernelArg::Kind::TensorMap) {
      params.push_back(b.tensorMapParam(a.name));
      continue;
    }
    if (!a.isPointer()) {
      params.push_back(b.param(a.name, kir::Type::index()));
      continue;
    }
    if (a.kind == KernelArg::Kind::Scratch) {
      params.push_back(b.param(a.name, kir::Type::pointer(a.dtype, kir::Space::Global)));
      continue;
    }
    bool in = a.kind == KernelArg::Kind::Input;
    DType t = (in ? kernel.operand(a.index) : kernel.result(a.index))->type().dtype;
    params.push_back(
        b.param(a.name, kir::Type::pointer(kir::storageType(t), kir::Space::Global), in));
  }
  return params;
}

/// A pointwise body's constants in kir: a splat as a literal into `splats`, any other as a table
/// in global memory, named `<entry>_table_<value>`, into `tables`.
inline void declareConstants(kir::Builder &b, const Graph &body, const std::string &entry,
                             std::map<const Value *, kir::ValueId> &splats,
                             std::map<const Value *, unsigned> &tables) {
  Namer tableNames;
  for (const auto &op : body.ops()) {
    if (op->kind() != OpKind::Const)
      continue;
    const DenseData &d = op->getDense("value");
    if (d.isSplat())
      splats[op->result()] = b.literal(d, "v_" + op->result()->name());
    else
      tables[op->result()] = b.table(tableNames.fresh(entry + "_table_", op->result()->name()), d);
  }
}

/// batch_norm of one element whose result type is `t`, from its operands widened to their
/// compute types (x, scale, bias, mean, var): (x - mean) * (scale * rsqrt(var + epsilon)) + bias
/// in t's compute type, the op's one definition on the GPU, in every template that runs it. The
/// channel's factor depends on the parameters alone, so a loop over one channel's elements
/// computes it once (the gemm epilogue's Note [Epilogue columns]); where an epilogue's threads
/// meet each column only a few times (wgmma's accumulators), rsqrt (one approximate instruction
/// for f32, relative error below 2^-22) keeps it cheap, where a correctly rounded sqrt and
/// division cost some twenty.
/// batch_norm's factor of a channel: scale * rsqrt(var + epsilon) (batchNormValue).
inline kir::ValueId batchNormFactor(kir::Builder &b, DType t, kir::ValueId scale, kir::ValueId var,
                                    double epsilon) {
  DType wide = t == DType::F64 ? DType::F64 : DType::F32;
  kir::ValueId eps = b.literal(wide, epsilon, "eps");
  kir::ValueId shifted = b.math({OpKind::Add, t, t}, {var, eps}, "");
  kir::ValueId inverse = b.math({OpKind::Rsqrt, t, t}, {shifted}, "");
  return b.math({OpKind::Mul, t, t}, {scale, inverse}, "factor");
}

/// batch_norm of element x of a channel with `factor` (batchNormFactor): (x - mean) * factor +
/// bias.
inline kir::ValueId batchNormApply(kir::Builder &b, DType t, kir::ValueId x, kir::ValueId factor,
                                   kir::ValueId mean, kir::ValueId bias) {
  kir::ValueId centered = b.math({OpKind::Sub, t, t}, {x, mean}, "");
  kir::ValueId scaled = b.math({OpKind::Mul, t, t}, {centered, factor}, "");
  return b.math({OpKind::Add, t, t}, {scaled, bias}, "y");
}

inline kir::ValueId batchNormValue(kir::Builder &b, DType t, const std::array<kir::ValueId, 5> &v,
                                   double epsilon) {
  kir::ValueId factor = batchNormFactor(b, t, v[1], v[4], epsilon);
  return batchNormApply(b, t, v[0], factor, v[3], v[2]);
}

/// Reads a kernel's `config` attribute, "key=value key=value ...": `item(key, value)` takes each
/// entry and says whether it is good. Returns what is wrong with the first bad one, or "".
inline std::string
readConfig(const std::string &text,
           const std::function<bool(const std::string &, const std::string &)> &item) {
  std::istringstream in(text);
  std::string entry;
  while (in >> entry) {
    size_t eq = entry.find('=');
    std::string value = eq == std::string::npos ? "" : entry.substr(eq + 1);
    if (!item(entry.substr(0, eq), value))
      return "cannot read '" + entry + "'";
  }
  return "";
}

} // namespace fusec::templates
