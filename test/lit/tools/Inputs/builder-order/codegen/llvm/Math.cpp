// A fixture for builder-order.test: IRBuilder calls and our emitting helpers
// count, LLVM constants (uniqued, not emitted) do not.
llvm::Value *fp(llvm::Value *like, double v) { return llvm::ConstantFP::get(like->getType(), v); }
llvm::Value *twice(llvm::IRBuilder<> &b, llvm::Value *x) { return b.CreateFAdd(x, x); }

llvm::Value *sample(llvm::IRBuilder<> &b, llvm::Value *x) {
  llvm::Value *bad = b.CreateSelect(b.CreateFCmpOLT(x, fp(x, 0.0)), x, twice(b, x));
  llvm::Value *good = b.CreateFMul(fp(x, 2.0), b.CreateFNeg(x));
  return b.CreateFAdd(bad, good);
}
