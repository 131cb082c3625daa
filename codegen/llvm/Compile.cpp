// The LLVM back end's steps after rendering (codegen/llvm/Render.cpp):
// kernels' modules linked into one, and LLVM IR -> PTX.
#include "codegen/llvm/Compile.h"

#include "codegen/llvm/Nvptx.h"
#include "ir/Assert.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Linker/Linker.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

namespace fusec::llvmir {

namespace {

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
