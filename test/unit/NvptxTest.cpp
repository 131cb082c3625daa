// The NVPTX driver of the LLVM back end: a kernel built with IRBuilder that
// calls libdevice comes out as PTX for the requested GPU, with libdevice
// linked and inlined, and ptxas (where the toolkit has it) assembles it.
#include "codegen/llvm/Nvptx.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace fusec;

namespace {

/// y[i] = exp(x[i]) for i = the thread's global index, through __nv_expf.
void buildExpKernel(llvm::Module &m) {
  llvm::LLVMContext &ctx = m.getContext();
  llvm::Type *f32 = llvm::Type::getFloatTy(ctx);
  llvm::Type *ptr = llvm::PointerType::get(ctx, 1);
  auto *fnTy = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr, ptr}, false);
  auto *f = llvm::Function::Create(fnTy, llvm::Function::ExternalLinkage, "fusec_exp_kernel", m);
  f->setCallingConv(llvm::CallingConv::PTX_Kernel);
  llvm::FunctionCallee expf = m.getOrInsertFunction("__nv_expf", f32, f32);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", f));
  llvm::Value *tid = b.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x, {}, {});
  llvm::Value *ctaid = b.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x, {}, {});
  llvm::Value *ntid = b.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x, {}, {});
  llvm::Value *i = b.CreateZExt(b.CreateAdd(b.CreateMul(ctaid, ntid), tid), b.getInt64Ty());
  llvm::Value *x = b.CreateLoad(f32, b.CreateGEP(f32, f->getArg(0), i));
  b.CreateStore(b.CreateCall(expf, {x}), b.CreateGEP(f32, f->getArg(1), i));
  b.CreateRetVoid();
}

std::optional<std::string> ptxFor(const std::string &target, Diagnostics &diags) {
  llvm::LLVMContext ctx;
  llvm::Module m("exp", ctx);
  llvmir::prepareNvptxModule(m);
  buildExpKernel(m);
  return llvmir::emitPtx(m, target, diags);
}

} // namespace

TEST(NvptxTest, EmitsPtxWithLibdeviceInlined) {
  Diagnostics diags;
  std::optional<std::string> ptx = ptxFor("sm_90a", diags);
  if (!ptx && diags.str().find("libdevice not found") != std::string::npos)
    GTEST_SKIP() << diags.str();
  ASSERT_TRUE(ptx) << diags.str();
  EXPECT_NE(ptx->find(".target sm_90a"), std::string::npos);
  EXPECT_NE(ptx->find(".visible .entry fusec_exp_kernel"), std::string::npos);
  EXPECT_NE(ptx->find("ex2.approx"), std::string::npos) << *ptx;
  EXPECT_EQ(ptx->find("__nv_expf"), std::string::npos) << "libdevice was not inlined";

  // ptxas assembles it, where the toolkit is installed.
  std::string home = llvm::sys::Process::GetEnv("CUDA_HOME").value_or("/usr/local/cuda");
  llvm::ErrorOr<std::string> ptxas =
      llvm::sys::findProgramByName("ptxas", {home + "/bin", "/usr/local/cuda/bin"});
  if (!ptxas)
    return;
  llvm::SmallString<128> path;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("fusec-nvptx", "ptx", path));
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    ASSERT_FALSE(ec);
    os << *ptx;
  }
  std::string error;
  int rc =
      llvm::sys::ExecuteAndWait(*ptxas, {*ptxas, "-arch=sm_90a", path.str(), "-o", "/dev/null"},
                                std::nullopt, {}, 0, 0, &error);
  llvm::sys::fs::remove(path);
  EXPECT_EQ(rc, 0) << error << "\n" << *ptx;
}

TEST(NvptxTest, TargetsSm80) {
  Diagnostics diags;
  std::optional<std::string> ptx = ptxFor("sm_80", diags);
  if (!ptx && diags.str().find("libdevice not found") != std::string::npos)
    GTEST_SKIP() << diags.str();
  ASSERT_TRUE(ptx) << diags.str();
  EXPECT_NE(ptx->find(".target sm_80"), std::string::npos);
}

TEST(NvptxTest, RefusesUnknownTargets) {
  for (const char *target : {"sm_75", "gfx90a", "sm_", "sm_90b", "sm_100", "sm_120"}) {
    Diagnostics diags;
    EXPECT_FALSE(ptxFor(target, diags)) << target;
    EXPECT_NE(diags.str().find("unknown GPU target"), std::string::npos) << diags.str();
  }
}
