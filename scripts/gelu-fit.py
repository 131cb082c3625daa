#!/usr/bin/env python3
"""Derives and checks the polynomial of f16/bf16 GeLU (Note [Math of f16 and bf16 values] in
codegen/cuda/device/Pointwise.cuh; the LLVM back end's geluNarrow uses the same coefficients).

GeLU(x) = x Phi(x), Phi(x) = erfc(-x / sqrt 2) / 2. With z = |x| / sqrt 2 and t = 1 / (1 + z / 2),
erfc(z) = t exp(-z^2 + P(t)), P a polynomial fitted here to ln(erfc(z) / t) + z^2 by least squares
on Chebyshev nodes of t in [1 / (1 + ZMAX / 2), 1] (past ZMAX the result is below f32's normals).
Then the kernels' f32 evaluation (log2 e and the halving folded into P, one rcp and one ex2) is
simulated, each step rounded to f32, against a double reference.

    python3 scripts/gelu-fit.py [DEGREE]

prints P's coefficients (t^0 first), the fit's absolute error, and the relative error of the f32
evaluation where |GeLU(x)| > 1e-6.

    python3 scripts/gelu-fit.py --check ROOT

reads the coefficients both back ends use (ROOT's Pointwise.cuh and llvm/Math.cpp), checks that
they are the same and that the f32 evaluation with them keeps its relative error below 1e-5
(test/lit/tools/gelu-coefficients.test). Standard library only.
"""
import math
import os
import re
import struct
import sys

ZMAX = 9.5
LOG2E = 1.4426950408889634


def target(t):
    z = 2 * (1 - t) / t
    return math.log(math.erfc(z) / t) + z * z


def solve(m, b):
    """Gaussian elimination with partial pivoting (m is square, small)."""
    n = len(b)
    for i in range(n):
        p = max(range(i, n), key=lambda r: abs(m[r][i]))
        m[i], m[p], b[i], b[p] = m[p], m[i], b[p], b[i]
        for r in range(i + 1, n):
            f = m[r][i] / m[i][i]
            for c in range(i, n):
                m[r][c] -= f * m[i][c]
            b[r] -= f * b[i]
    x = [0.0] * n
    for i in reversed(range(n)):
        x[i] = (b[i] - sum(m[i][j] * x[j] for j in range(i + 1, n))) / m[i][i]
    return x


def fit(degree, tmin, nodes=400):
    """P's monomial coefficients in t, t^0 first."""
    xs = [math.cos(math.pi * (k + 0.5) / nodes) for k in range(nodes)]

    def chebyshev(x):
        row = [1.0, x]
        while len(row) <= degree:
            row.append(2 * x * row[-1] - row[-2])
        return row[:degree + 1]

    rows = [chebyshev(x) for x in xs]
    ys = [target(tmin + (x + 1) / 2 * (1 - tmin)) for x in xs]
    n = degree + 1
    normal = [[sum(r[i] * r[j] for r in rows) for j in range(n)] for i in range(n)]
    rhs = [sum(r[i] * y for r, y in zip(rows, ys)) for i in range(n)]
    c = solve(normal, rhs)
    # Chebyshev series in x = alpha t + beta -> monomials in x -> monomials in t.
    polys = [[1.0], [0.0, 1.0]]
    while len(polys) < n:
        a = [0.0] + [2 * v for v in polys[-1]]
        b = polys[-2] + [0.0] * (len(a) - len(polys[-2]))
        polys.append([a[j] - b[j] for j in range(len(a))])
    in_x = [0.0] * n
    for i in range(n):
        for j, v in enumerate(polys[i]):
            in_x[j] += c[i] * v
    alpha, beta = 2 / (1 - tmin), -(1 + tmin) / (1 - tmin)
    in_t = [0.0] * n
    for j in range(n):
        for k in range(j + 1):
            in_t[k] += in_x[j] * math.comb(j, k) * alpha**k * beta**(j - k)
    return in_t


def f32(v):
    return struct.unpack("f", struct.pack("f", v))[0] if abs(v) < 3e38 else v


def gelu_f32(x, folded):
    """The kernels' evaluation: fma, rcp, Horner, ex2, each rounded to f32."""
    t = f32(1 / f32(abs(x) * f32(0.5 / math.sqrt(2)) + 1))
    p = folded[-1]
    for c in reversed(folded[:-1]):
        p = f32(p * t + c)
    arg = f32(f32(x * f32(-0.5 * LOG2E)) * x + p)
    half = f32(t * f32(2.0**arg)) if arg > -126 else 0.0
    return f32(x * (half if x < 0 else f32(1 - half)))


def relative_error(p):
    """The f32 evaluation's largest relative error where |GeLU(x)| > 1e-6, P's coefficients p."""
    folded = [f32(c * LOG2E) for c in p]
    folded[0] = f32(p[0] * LOG2E - 1.0)  # the halving: erfc(z) / 2
    worst, x = 0.0, -14.0
    while x < 14.0:
        v = f32(x)
        ref = v * 0.5 * math.erfc(-v / math.sqrt(2))
        if abs(ref) > 1e-6:
            worst = max(worst, abs(gelu_f32(v, folded) - ref) / abs(ref))
        x += 0.00041
    return worst


def read_coefficients(root):
    """P's coefficients (t^0 first) as the CUDA and the LLVM back end write them."""
    with open(os.path.join(root, "codegen/cuda/device/Pointwise.cuh")) as f:
        cuda = f.read()
    body = cuda[cuda.index("float fusec_gelu_narrow_f32("):]
    body = body[:body.index("\n}\n")]
    cuda_p = [float(c) for c in re.findall(r"(?:float p = |fmaf\(p, t, )float\((-?[0-9.]+) \* kLog2e", body)][::-1]
    with open(os.path.join(root, "codegen/llvm/Math.cpp")) as f:
        llvm = f.read()
    listed = re.search(r"kP\[\] = \{([^}]*)\}", llvm).group(1)
    constant = re.search(r"fp\(x, (-?[0-9.]+) \* kLog2e - 1\.0\)", llvm).group(1)
    llvm_p = [float(constant)] + [float(c) for c in listed.replace("\n", " ").split(",")][::-1]
    return cuda_p, llvm_p


def check(root):
    cuda_p, llvm_p = read_coefficients(root)
    if cuda_p != llvm_p or len(cuda_p) < 2:
        print(f"gelu: the back ends' coefficients differ: CUDA {cuda_p}, LLVM {llvm_p}")
        return 1
    worst = relative_error(cuda_p)
    print(f"gelu: both back ends' {len(cuda_p)} coefficients agree; f32 relative error {worst:.1e}")
    return 0 if worst < 1e-5 else 1


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        return check(sys.argv[2])
    degree = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    tmin = 1 / (1 + ZMAX / 2)
    p = fit(degree, tmin)
    worst_fit = 0.0
    for i in range(20001):
        t = tmin + (1 - tmin) * i / 20000
        worst_fit = max(worst_fit, abs(sum(c * t**k for k, c in enumerate(p)) - target(t)))
    print("P (t^0 first):", ", ".join(repr(c) for c in p))
    print(f"fit's absolute error {worst_fit:.2e}; f32 GeLU's relative error "
          f"{relative_error(p):.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
