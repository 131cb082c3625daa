#!/usr/bin/env python3
# The fastest read of the decode row's K/V bytes (134.2 MB) the device's libraries reach, next to
# a copy moving the same bytes: what bounds a decode kernel that must read them once.
import torch, triton, triton.language as tl
from triton.testing import do_bench
n = 2 * 8 * 8 * 4096 * 128  # K and V elements, f16: 134,217,728 bytes
x = torch.randn(n, device="cuda", dtype=torch.float16)
def gbs(ms, b): return b / (ms * 1e6)
B = 2 * n
@triton.jit
def readk(x_ptr, out_ptr, n, BLOCK: tl.constexpr, ITERS: tl.constexpr):
    pid = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    base = pid * BLOCK * ITERS
    for i in range(ITERS):
        offs = base + i * BLOCK + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float32)
    tl.store(out_ptr + pid, tl.sum(acc))
res = {}
half = torch.empty(n // 2, device="cuda", dtype=torch.float16); y = torch.empty_like(half)
res["copy moving the same bytes (67 MB read + 67 MB written)"] = do_bench(lambda: y.copy_(half), warmup=25, rep=200, return_mode="median")
res["torch.sum (f32 accumulate)"] = do_bench(lambda: x.sum(dtype=torch.float32), warmup=25, rep=200, return_mode="median")
res["torch.amax"] = do_bench(lambda: x.amax(), warmup=25, rep=200, return_mode="median")
best = None
for block, iters, warps in [(4096, 8, 8), (8192, 4, 8), (2048, 16, 4), (8192, 8, 16), (4096, 16, 8), (16384, 2, 16), (2048, 32, 8)]:
    grid = triton.cdiv(n, block * iters)
    out = torch.empty(grid, device="cuda", dtype=torch.float32)
    ms = do_bench(lambda: readk[(grid,)](x, out, n, BLOCK=block, ITERS=iters, num_warps=warps), warmup=25, rep=200, return_mode="median")
    res[f"triton read, block {block} x {iters}, {warps} warps, grid {grid}"] = ms
for k, ms in res.items():
    print(f"{k}: {ms*1e3:.1f} us, {gbs(ms, B):.0f} GB/s")
big = torch.empty(1 << 29, device="cuda", dtype=torch.float16); big2 = torch.empty_like(big)
ms = do_bench(lambda: big2.copy_(big), warmup=25, rep=200, return_mode="median")
print(f"1 GiB copy: {gbs(ms, 2 * 2 * (1 << 29)):.0f} GB/s")
