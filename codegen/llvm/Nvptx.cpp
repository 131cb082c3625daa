// The LLVM back end after rendering (Nvptx.h): linking, and LLVM IR -> PTX.
#include "codegen/llvm/Nvptx.h"

#include "ir/Assert.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Linker/Linker.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/Transforms/IPO/Internalize.h"

#include <memory>
#include <mutex>

extern "C" {
void LLVMInitializeNVPTXTargetInfo();
void LLVMInitializeNVPTXTarget();
void LLVMInitializeNVPTXTargetMC();
void LLVMInitializeNVPTXAsmPrinter();
}

namespace fusec::llvmir {

namespace {

constexpr const char *kNvptxTriple = "nvptx64-nvidia-cuda";

const llvm::Target *nvptxTarget(Diagnostics &diags) {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
  std::string error;
  const llvm::Target *t = llvm::TargetRegistry::lookupTarget(kNvptxTriple, error);
  if (!t)
    diags.error(Loc{}, "LLVM's NVPTX back end is not available: " + error);
  return t;
}

/// The target machine of `target`, an sm_80 or later GPU that LLVM 19's
/// NVPTX back end knows (its CPU entry sets the lowest PTX version the GPU
/// needs: 7.0 for sm_80, 7.8 for sm_90, 8.0 for sm_90a); nullptr after
/// reporting any other.
std::unique_ptr<llvm::TargetMachine> targetMachine(const std::string &target, Diagnostics &diags) {
  llvm::StringRef number(target);
  unsigned sm = 0;
  bool known = number.consume_front("sm_");
  number.consume_back("a");
  known = known && !number.getAsInteger(10, sm);
  const llvm::Target *t = known && sm >= 80 ? nvptxTarget(diags) : nullptr;
  // Asked of sm_80's subtarget: one made for an unknown GPU prints a warning.
  std::unique_ptr<llvm::MCSubtargetInfo> sm80;
  if (t)
    sm80.reset(t->createMCSubtargetInfo(kNvptxTriple, "sm_80", ""));
  if (!sm80 || !sm80->isCPUStringValid(target)) {
    diags.error(Loc{}, "unknown GPU target '" + target +
                           "' for the LLVM back end (LLVM 19 knows sm_80 to sm_90a)");
    return nullptr;
  }
  llvm::TargetOptions options;
  options.AllowFPOpFusion = llvm::FPOpFusion::Fast; // fma contraction, as NVRTC does
  return std::unique_ptr<llvm::TargetMachine>(
      t->createTargetMachine(kNvptxTriple, target, "", options, std::nullopt, std::nullopt,
                             llvm::CodeGenOptLevel::Aggressive));
}

/// libdevice.10.bc of the CUDA toolkit: $CUDA_HOME first, then
/// /usr/local/cuda.
std::optional<std::string> findLibdevice() {
  std::vector<std::string> roots;
  if (std::optional<std::string> home = llvm::sys::Process::GetEnv("CUDA_HOME"))
    roots.push_back(*home);
  roots.push_back("/usr/local/cuda");
  for (const std::string &root : roots) {
    llvm::SmallString<256> path(root);
    llvm::sys::path::append(path, "nvvm", "libdevice", "libdevice.10.bc");
    if (llvm::sys::fs::exists(path))
      return std::string(path);
  }
  return std::nullopt;
}

bool callsLibdevice(const llvm::Module &m) {
  for (const llvm::Function &f : m)
    if (f.isDeclaration() && f.getName().starts_with("__nv_"))
      return true;
  return false;
}

/// The bytes of libdevice.10.bc, read once per process; an error message
/// when it cannot be read.
struct LibdeviceFile {
  std::string path;
  std::unique_ptr<llvm::MemoryBuffer> bytes;
  std::string error;
};

const LibdeviceFile &libdeviceFile() {
  static const LibdeviceFile file = [] {
    LibdeviceFile f;
    std::optional<std::string> path = findLibdevice();
    if (!path) {
      f.error = "libdevice not found: set CUDA_HOME to a CUDA toolkit (looked for "
                "nvvm/libdevice/libdevice.10.bc under $CUDA_HOME and /usr/local/cuda)";
      return f;
    }
    f.path = *path;
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer = llvm::MemoryBuffer::getFile(*path);
    if (buffer)
      f.bytes = std::move(*buffer);
    else
      f.error = "cannot read " + *path + ": " + buffer.getError().message();
    return f;
  }();
  return file;
}

/// Links the libdevice functions `m` declares (read lazily from the file's
/// bytes, which are loaded once per process), then makes everything but
/// the kernels internal so that the optimizer inlines and drops the rest.
bool linkLibdevice(llvm::Module &m, Diagnostics &diags) {
  const LibdeviceFile &file = libdeviceFile();
  if (!file.bytes) {
    diags.error(Loc{}, file.error);
    return false;
  }
  llvm::Expected<std::unique_ptr<llvm::Module>> lib =
      llvm::getLazyBitcodeModule(file.bytes->getMemBufferRef(), m.getContext());
  if (!lib) {
    diags.error(Loc{}, file.path + " is not LLVM bitcode: " + llvm::toString(lib.takeError()));
    return false;
  }
  (*lib)->setTargetTriple(m.getTargetTriple());
  (*lib)->setDataLayout(m.getDataLayout());
  if (llvm::Linker::linkModules(m, std::move(*lib), llvm::Linker::Flags::LinkOnlyNeeded)) {
    diags.error(Loc{}, "linking " + file.path + " failed");
    return false;
  }
  llvm::internalizeModule(m, [](const llvm::GlobalValue &gv) {
    const auto *f = llvm::dyn_cast<llvm::Function>(&gv);
    return f && f->getCallingConv() == llvm::CallingConv::PTX_Kernel;
  });
  return true;
}

// O3 without the SLP vectorizer: on the row_reduction kernels (rows unrolled
// into straight code) it took 68% of the optimizer's time (47 of 69 ms for
// LayerNorm + GeLU f16 rows of 8192) and changed no instruction of the PTX:
// NVPTX has no f32 vector arithmetic for it to form.
void optimize(llvm::Module &m, llvm::TargetMachine &tm) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  tuning.SLPVectorization = false;
  llvm::PassBuilder pb(&tm, tuning);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3).run(m, mam);
}

/// A module of llvm/Render.cpp's text (never the user's: a failure is a bug).
std::unique_ptr<llvm::Module> parse(const std::string &ir, llvm::LLVMContext &ctx) {
  llvm::SMDiagnostic error;
  std::unique_ptr<llvm::Module> m = llvm::parseAssemblyString(ir, error, ctx);
  if (!m) {
    std::string message;
    llvm::raw_string_ostream os(message);
    error.print("fusec", os, false);
    FUSEC_ASSERT(false, ("generated LLVM IR does not parse: " + message).c_str());
  }
  return m;
}

} // namespace

void prepareNvptxModule(llvm::Module &m) {
  // The data layout does not depend on the GPU: take sm_80's.
  static const std::string layout = [] {
    Diagnostics ignored;
    std::unique_ptr<llvm::TargetMachine> tm = targetMachine("sm_80", ignored);
    FUSEC_ASSERT(tm, "LLVM's NVPTX back end is not linked in");
    return tm->createDataLayout().getStringRepresentation();
  }();
  m.setTargetTriple(kNvptxTriple);
  m.setDataLayout(layout);
  // libdevice asks __nvvm_reflect("__CUDA_FTZ"): f32 subnormals are kept.
  m.addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz", uint32_t(0));
}

std::optional<std::string> emitPtx(llvm::Module &m, const std::string &target, Diagnostics &diags) {
  std::unique_ptr<llvm::TargetMachine> tm = targetMachine(target, diags);
  if (!tm)
    return std::nullopt;
  std::string broken;
  llvm::raw_string_ostream why(broken);
  bool invalid = llvm::verifyModule(m, &why); // the emitters' bug, never the user's
  FUSEC_ASSERT(!invalid, ("generated LLVM IR does not verify: " + broken).c_str());
  if (callsLibdevice(m) && !linkLibdevice(m, diags))
    return std::nullopt;
  optimize(m, *tm);
  llvm::SmallString<0> ptx;
  llvm::raw_svector_ostream os(ptx);
  llvm::legacy::PassManager pm;
  if (tm->addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::AssemblyFile)) {
    diags.error(Loc{}, "LLVM's NVPTX back end cannot emit PTX for " + target);
    return std::nullopt;
  }
  pm.run(m);
  return std::string(ptx.str());
}

std::string linkKernels(const std::vector<GeneratedKernel> &kernels) {
  llvm::LLVMContext ctx;
  auto all = std::make_unique<llvm::Module>("fusec", ctx);
  prepareNvptxModule(*all);
  for (const GeneratedKernel &k : kernels) {
    bool clash = llvm::Linker::linkModules(*all, parse(k.source, ctx));
    FUSEC_ASSERT(!clash, ("cannot link the LLVM IR of kernel " + k.name).c_str());
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  all->print(os, nullptr);
  return text;
}

std::optional<std::string> compileToPtx(const std::string &ir, const std::string &target,
                                        Diagnostics &diags) {
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> m = parse(ir, ctx);
  return emitPtx(*m, target, diags);
}

} // namespace fusec::llvmir
