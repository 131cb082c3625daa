// fusec-kir-sample: a kir kernel built by hand (KirSamples.h) in one of its forms, for the lit
// tests of primitives that no template uses yet: its text (--emit=kir), either renderer's source
// (cuda: the whole NVRTC translation unit; llvm: the module) or PTX (--emit=ptx) from either back
// end (--backend) for a target (--target). Exit codes as fusec's: 1 when a compile fails, 2 for
// bad usage.
#include "codegen/GeneratedKernel.h"
#include "codegen/cuda/Render.h"
#include "codegen/llvm/Nvptx.h"
#include "codegen/llvm/Render.h"
#include "runtime/gpu/Nvrtc.h"
#include "test/kir/KirSamples.h"
#include "tools/ToolSupport.h"

#include "llvm/Support/raw_ostream.h"

#include <iostream>

using namespace fusec;
namespace cl = llvm::cl;

namespace {

enum class Emit { Kir, Cuda, Llvm, Ptx };

cl::OptionCategory category("fusec-kir-sample options");
cl::opt<std::string> sample(cl::Positional, cl::desc("<sample: hopper, cluster, store>"),
                            cl::Required, cl::cat(category));
cl::opt<Emit> emit("emit", cl::desc("What to write"), cl::init(Emit::Kir),
                   cl::values(clEnumValN(Emit::Kir, "kir", "the text form"),
                              clEnumValN(Emit::Cuda, "cuda", "CUDA C++ for NVRTC"),
                              clEnumValN(Emit::Llvm, "llvm", "LLVM IR"),
                              clEnumValN(Emit::Ptx, "ptx", "PTX from --backend")),
                   cl::cat(category));
cl::opt<Backend> backend("backend", cl::desc("The back end of --emit=ptx"),
                         cl::init(Backend::Nvrtc), backendValues(), cl::cat(category));
cl::opt<std::string> target("target", cl::desc("The GPU of --emit=ptx"), cl::init("sm_90a"),
                            cl::cat(category));

/// `k` rendered for NVRTC, as the translation unit takes it.
GeneratedKernel forNvrtc(const kir::Kernel &k) {
  GeneratedKernel g;
  g.name = k.name;
  g.source = cuda::render(k);
  return g;
}

/// What --emit asks of `k`, or nullopt after reporting why not.
std::optional<std::string> text(const kir::Kernel &k, Diagnostics &diags) {
  if (emit == Emit::Kir)
    return kir::print(k);
  if (emit == Emit::Cuda)
    return cuda::translationUnit({forNvrtc(k)});
  if (emit == Emit::Llvm)
    return llvmir::render(k);
  if (backend == Backend::Llvm)
    return llvmir::compileToPtx(llvmir::render(k), target, diags);
  return compileToPtx({cuda::translationUnit({forNvrtc(k)}), k.name, target}, diags);
}

} // namespace

int main(int argc, char **argv) {
  cl::HideUnrelatedOptions(category);
  if (!cl::ParseCommandLineOptions(argc, argv, "fusec-kir-sample: a hand-built kir kernel\n"))
    return kExitUsage;
  std::optional<kir::Kernel> k = test::kirSample(sample);
  if (!k) {
    llvm::errs() << "fusec-kir-sample: no sample '" << sample
                 << "' (samples: hopper, cluster, store)\n";
    return kExitUsage;
  }
  std::vector<std::string> errors = kir::verify(*k);
  for (const std::string &e : errors)
    llvm::errs() << "fusec-kir-sample: invalid kir: " << e << "\n";
  if (!errors.empty())
    return kExitUserError;
  Diagnostics diags;
  std::optional<std::string> out = text(*k, diags);
  if (!out)
    return reportAndExit(diags, kExitUserError);
  std::cout << *out;
  return kExitOk;
}
