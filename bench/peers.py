"""The peers, each at its best and measured fairly (../shared/PERF.md, Method).

- Timing as triton.testing.do_bench does: L2 flushed before each run, CUDA
  events, the median; fusec bench times its kernels the same way
  (runtime/gpu/DeviceTimer.cpp).
- torch.compile is compiled fresh for every shape: `torch._dynamo.reset()`
  first and `dynamic=False`, so a second shape through the same Python
  function never recompiles with dynamic shapes (which once ran up to 2x
  slower and overstated fusec's ratios). Each mode asked for is compiled and
  timed; the best is reported with its name and every mode's cold compile
  time. A compile budget (seconds, for the whole run) skips a mode with a
  note once it is spent, rather than dropping the row.
- The copy bandwidth (device-to-device, bytes read plus written) and the
  cuBLAS rate are measured in the same run: they are the floors every
  kernel is placed against.
"""
import time

import torch
from triton.testing import do_bench

DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}
SIZE = {"f16": 2, "bf16": 2, "f32": 4}

# The modes compared for kernels and whole models; `reduce-overhead` (CUDA
# graphs) too for launch-bound models, where it is the peer to beat.
KERNEL_MODES = ("default", "max-autotune-no-cudagraphs")
MODEL_MODES = KERNEL_MODES
LAUNCH_BOUND_MODEL_MODES = ("default", "reduce-overhead", "max-autotune-no-cudagraphs")


def time_ms(fn):
    """Median device time of `fn` in ms, as do_bench measures it."""
    return do_bench(fn, warmup=25, rep=100, return_mode="median")


def copy_gbs(total_bytes=2 << 30):
    """GB/s of a device-to-device copy moving `total_bytes` (read + write)."""
    n = max(total_bytes // 4, 1)
    x = torch.empty(n, device="cuda", dtype=torch.float16)
    y = torch.empty_like(x)
    ms = do_bench(lambda: y.copy_(x), warmup=25, rep=200, return_mode="median")
    del x, y
    return 2 * n * 2 / (ms * 1e6)


def cublas_tflops(dtype="f16", size=8192):
    """TFLOP/s of torch.matmul on size^3: the tensor-core rate a
    contraction is placed against."""
    t = DTYPES[dtype]
    a = torch.randn(size, size, device="cuda", dtype=t)
    b = torch.randn(size, size, device="cuda", dtype=t)
    ms = time_ms(lambda: a @ b)
    return 2 * size ** 3 / (ms * 1e9)


class CompileBudget:
    """Seconds of torch.compile left for the run (None: no limit). `default`
    is always compiled (seconds, and the baseline torch.compile peer); once
    the budget is spent, the other modes are skipped with a note."""

    def __init__(self, seconds):
        self.left = seconds

    def spent(self):
        return self.left is not None and self.left <= 0

    def charge(self, seconds):
        if self.left is not None:
            self.left -= seconds


def compiled_peers(make_fn, modes, budget):
    """Each mode of torch.compile on a fresh function from `make_fn()`:
    {mode: {"ms", "cold_s"} or {"skipped": why} or {"error": why}}."""
    out = {}
    for mode in modes:
        if budget.spent() and mode != "default":
            out[mode] = {"skipped": "compile budget spent (--budget)"}
            continue
        torch._dynamo.reset()
        fn = make_fn()
        start = time.perf_counter()
        try:
            compiled = torch.compile(fn, mode=mode, dynamic=False)
            compiled()
            torch.cuda.synchronize()
        except Exception as e:  # a mode that cannot compile the case is a row note
            budget.charge(time.perf_counter() - start)
            out[mode] = {"error": f"{type(e).__name__}: {str(e).splitlines()[0][:120]}"}
            continue
        cold = time.perf_counter() - start
        budget.charge(cold)
        out[mode] = {"ms": time_ms(compiled), "cold_s": cold}
        del compiled
    torch._dynamo.reset()
    return out
