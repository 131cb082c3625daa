#!/usr/bin/env python3
"""The tile sweep behind the sm_90a gemm's cost model (Note [Specialized tiles] in
codegen/templates/gemm/Tiles.cpp, docs/codegen-gemm.md "Choosing the tiles"): each shape's
matmul (f16, [M, K] x [K, N]) as fusec's default and under each tile config, timed by
`fusec bench` (graph replay), beside cuBLAS (torch.matmul under do_bench) in the same process.

  bench/gemm-tiles.py --fusec dist/bin/fusec --out DIR 4096x768x768,128x768x3072
  bench/gemm-tiles.py ... --configs "bm=64 bn=128;bn=256" --gelu 8192x4096x1024

Without --configs it tries every bn (64, 128, 192, 256) with the splits of K (1-16) that leave at
most two waves of 132 blocks, and for products of 2048 rows or more two stage counts. Each
result is a line of DIR/tiles.jsonl; the summary prints each shape's default, cuBLAS and the
four fastest configs.
"""
import argparse
import json
import os
import subprocess
import sys

import torch
from triton.testing import do_bench


def fir(m, n, k, config, gelu):
    """The product (with a bias and GeLU when `gelu`) as fusec IR; a gemm kernel op with
    `config` when one is given, else the plain ops the fusion pass groups itself."""
    args = f"%a: f16[{m},{k}], %b: f16[{k},{n}]" + (f", %bias: f16[{n}]" if gelu else "")
    ops = f"    %c = matmul(%a, %b) {{acc = f32}} : f16[{m},{n}]\n"
    if gelu:
        ops += f"    %s = add(%c, %bias) : f16[{m},{n}]\n    %d = gelu(%s) : f16[{m},{n}]\n"
    res = "%d" if gelu else "%c"
    if config is None:
        return f"func @g({args}) -> f16[{m},{n}] {{\n{ops}    return {res}\n}}\n"
    names = "%a, %b" + (", %bias" if gelu else "")
    return (f"func @g({args}) -> f16[{m},{n}] {{\n"
            f"  {res} = kernel({names}) {{template = \"gemm\", config = \"{config}\"}} : "
            f"f16[{m},{n}] {{\n  body({args}):\n{ops}    return {res}\n  }}\n"
            f"  return {res}\n}}\n")


def time_fusec(fusec, workdir, m, n, k, config, gelu):
    """fusec's graph replay in ms and the kernel's schedule, or (None, error)."""
    tag = (config or "default").replace(" ", "_").replace("=", "")
    base = os.path.join(workdir, f"g{m}x{n}x{k}_{tag}")
    with open(base + ".fir", "w") as f:
        f.write(fir(m, n, k, config, gelu))
    r = subprocess.run([fusec, "bench", base + ".fir", "--iterations=100", "--json=" + base + ".json"],
                       capture_output=True, text=True)
    if r.returncode:
        return None, " ".join((r.stderr or r.stdout).strip().splitlines()[-1:])
    with open(base + ".json") as f:
        j = json.load(f)
    return j["graph_ms"], j["kernels"][0].get("schedule", "")


def sweep_configs(m, n, k):
    """Every bn with the splits of K that leave at most two waves of 132 blocks."""
    steps = (k + 63) // 64
    out = []
    for bn in (64, 128, 192, 256):
        tiles = ((m + 127) // 128) * ((n + bn - 1) // bn)
        for s in (1, 2, 3, 4, 6, 8, 12, 16):
            if s == 1 or (s <= steps and tiles * s <= 264 and tiles < 132):
                out.append(f"bn={bn} splitk={s}")
    if m >= 2048:
        out += ["bn=128 stages=4", "bn=256 stages=3"]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("shapes", help="MxNxK,MxNxK,...")
    ap.add_argument("--fusec", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--configs", help="';'-separated configs instead of the sweep")
    ap.add_argument("--gelu", action="store_true", help="add a bias and GeLU after the product")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    workdir = os.path.join(args.out, "tiles")
    os.makedirs(workdir, exist_ok=True)
    with open(os.path.join(args.out, "tiles.jsonl"), "a") as log:
        for shape in args.shapes.split(","):
            m, n, k = map(int, shape.split("x"))
            a = torch.randn(m, k, device="cuda", dtype=torch.float16)
            b = torch.randn(k, n, device="cuda", dtype=torch.float16)
            cublas = do_bench(lambda: a @ b, warmup=25, rep=100, return_mode="median")
            configs = args.configs.split(";") if args.configs else sweep_configs(m, n, k)
            rows = []
            for config in [None] + configs:
                ms, schedule = time_fusec(args.fusec, workdir, m, n, k, config, args.gelu)
                row = {"shape": shape, "config": config or "default", "ms": ms,
                       "cublas_ms": cublas, "schedule": schedule, "gelu": args.gelu}
                log.write(json.dumps(row) + "\n")
                log.flush()
                rows.append(row)
            default = rows[0]
            timed = sorted((r for r in rows if r["ms"]), key=lambda r: r["ms"])
            best = ", ".join(f"{r['config']} {r['ms'] * 1000:.1f}" for r in timed[:4])
            dms = default["ms"]
            print(f"{shape}: cuBLAS {cublas * 1000:.1f} us; default "
                  + (f"{dms * 1000:.1f} us ({cublas / dms:.3f}x)" if dms else default["schedule"])
                  + f"; fastest {best}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
