// test/lit/tools/gelu-coefficients.test: the lines of GeLU's polynomial that scripts/gelu-fit.py
// reads, here of degree 2, its t^1 coefficient not the CUDA side's.
static const double kP[] = {0.25, -0.5};
p = fma(p, t, fp(x, -1.25 * kLog2e - 1.0));
