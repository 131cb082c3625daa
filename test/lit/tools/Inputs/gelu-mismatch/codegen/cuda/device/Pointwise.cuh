// test/lit/tools/gelu-coefficients.test: the lines of GeLU's polynomial that scripts/gelu-fit.py
// reads, here of degree 2.
__device__ __forceinline__ float fusec_gelu_narrow_f32(float x) {
  float p = float(0.25 * kLog2e);
  p = fmaf(p, t, float(-0.75 * kLog2e));
  p = fmaf(p, t, float(-1.25 * kLog2e - 1.0));
}
