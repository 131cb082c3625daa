// Device helpers of kir's sm_90 primitives (codegen/cuda/Render.cpp), after
// those of Gemm.cuh. TMA loads, mbarriers, named barriers and setmaxnreg are
// inline PTX in the kernel itself (kir::hopperPtx, the text the LLVM back end
// emits too); what C++ needs declared is the tensor map's type.

// A TMA tensor map (the driver's CUtensorMap, cuTensorMapEncodeTiled's
// output): 128 opaque bytes, 64-byte aligned. A kernel takes it as a
// `const __grid_constant__` parameter, so that its address is that of the
// parameter itself, which cp.async.bulk.tensor reads, not that of a copy in
// local memory.
struct alignas(64) fusec_tensor_map {
  unsigned long long words[16];
};
