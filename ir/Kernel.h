// Facts about `kernel` ops shared by the verifier, the fusion pass and
// codegen: the templates a kernel may name. A kernel's body is an ordinary
// graph (Op::body); docs/ir.md "Kernels" gives the text form.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace fusec {

/// The code template that runs a kernel, named by its `template` attribute.
enum class KernelTemplate {
  Pointwise,    ///< pointwise ops over one index space, broadcast operands allowed
  RowReduction, ///< one reduction or normalization over trailing dims, with prologue and epilogue
  Gemm,         ///< matmul/linear (several sharing their A operand) with epilogue
  Attention,    ///< one attention op, with cast prologue and pointwise epilogue
};

/// The attribute spelling: "pointwise", "row_reduction", "gemm", "attention".
std::string_view kernelTemplateName(KernelTemplate t);
/// The template named `name`, or nullopt when there is none.
std::optional<KernelTemplate> lookupKernelTemplate(std::string_view name);
/// "\"pointwise\", \"row_reduction\", \"gemm\" or \"attention\"" for messages.
std::string kernelTemplateNames();

class Op;
/// What a message calls a top-level op the code generators run:
/// "kernel '%y' (template pointwise)" or "'transpose' '%t'".
std::string describeLaunchedOp(const Op &op);

/// Why the gemm template cannot run `conv`, a conv2d, as an implicit gemm, or "" when it can: it
/// runs NHWC convolutions of one group whose sizes are static but for the batch (a phrase: "the
/// gemm template runs NHWC convolutions of one group"). Fusion anchors a gemm kernel on a float
/// conv2d only where this is ""; the template reports it otherwise.
std::string implicitGemmProblem(const Op &conv);

/// Whether `op` is a transpose a convolution's gemm kernel writes as its result: an NHWC value
/// to NCHW (perm [0, 3, 1, 2] of a rank-4 value), each channel's pixels stored as a plane (Note
/// [Planar results] in codegen/templates/gemm/Gemm.cpp). Fusion puts one in the epilogue of the
/// conv2d whose result it alone reads; the kernel's result is then NCHW.
bool isPlanarStore(const Op &op);

/// `kernel`'s structure as text, without its names, locations or `config`: its template, operand
/// and result types, and each op of its body with its operands (by position), attributes (a dense
/// one by dtype and shape) and result types. What a tuned config is chosen for
/// (runtime/gpu/TuningCache.h): two kernels of one signature generate the same code.
std::string kernelSignature(const Op &kernel);

} // namespace fusec
