#!/usr/bin/env python3
"""The scoreboard: fusec against every peer at its best, on the same GPU, in
one process (bench/README.md says how to run it and how long it takes).

Four families of rows:
  memory     LayerNorm+GeLU, softmax, a pointwise chain, bias+GeLU: GB/s
             against the copy bandwidth of the same bytes, eager and
             torch.compile
  gemm       the GEMM shapes BERT, a LLaMA layer and decoding meet, f16 and
             bf16, against cuBLAS (torch.matmul) and torch.compile; a GEMM
             with a bias+GeLU epilogue
  attention  fusec's attention op against SDPA's flash, efficient and cuDNN
             back ends, each where it supports the case
  models     whole models (examples/*.fir and their twins in models.py): the
             outputs compared with an fp32 reference, then fusec's graph
             replay and direct launches against eager and each
             torch.compile mode, with cold compile times, and where fusec's
             time goes kernel by kernel (roofline.py draws it)

Peers are timed as peers.py says (fresh static compiles per shape, every
mode, the best named). fusec is timed by `fusec bench` the same way
(runtime/gpu/DeviceTimer.cpp) and checked by `fusec run --device=gpu`.

Usage:
  bench/run.py --fusec dist/bin/fusec --out DIR [--only NAME|FAMILY,...]
               [--budget SECONDS] [--no-llvm] [--tune]
  bench/run.py --render DIR/results.json --out DIR     (no GPU needed)
Writes DIR/results.md, DIR/results.json and the roofline pictures.
"""
import argparse
import datetime
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

try:
    import torch
    import torch.nn.functional as F
    import peers
    import models
except ImportError:  # --render needs no GPU stack
    torch = peers = models = None

SIZE = {"f16": 2, "bf16": 2, "f32": 4}
TORCH_NAME = {"f16": "float16", "bf16": "bfloat16", "f32": "float32"}


def tensor(dt, *shape):
    return torch.randn(*shape, device="cuda", dtype=getattr(torch, TORCH_NAME[dt]))


# ---------------------------------------------------------------------------
# Workloads. Each returns a Row: the .fir fusec runs, its --flags, a
# factory of fresh PyTorch callables (one per peer compile), the bytes and
# FLOPs the work must do.

class Row:
    def __init__(self, family, fir, make_fn, bytes_=0, flops=0, flags=(), peers_=None):
        self.family, self.fir, self.make_fn = family, fir, make_fn
        self.bytes, self.flops, self.flags = bytes_, flops, list(flags)
        self.peers = peers_  # attention: {name: callable or why not}


def ln_gelu(dt, rows, n):
    fir = f"""func @ln_gelu(%x: {dt}[{rows},{n}], %g: {dt}[{n}], %b: {dt}[{n}]) -> {dt}[{rows},{n}] {{
  %y = layer_norm(%x, %g, %b) : {dt}[{rows},{n}]
  %z = gelu(%y) : {dt}[{rows},{n}]
  return %z
}}
"""
    x, g, b = tensor(dt, rows, n), tensor(dt, n), tensor(dt, n)
    make = lambda: (lambda: F.gelu(F.layer_norm(x, (n,), g, b)))
    return Row("memory", fir, make, 2 * rows * n * SIZE[dt])


def softmax(dt, rows, n):
    fir = f"""func @softmax(%x: {dt}[{rows},{n}]) -> {dt}[{rows},{n}] {{
  %y = softmax(%x) : {dt}[{rows},{n}]
  return %y
}}
"""
    x = tensor(dt, rows, n)
    return Row("memory", fir, lambda: (lambda: torch.softmax(x, -1)), 2 * rows * n * SIZE[dt])


def chain5(dt, n):
    fir = f"""func @chain5(%x: {dt}[{n}]) -> {dt}[{n}] {{
  %two = const() {{value = dense<2.0>}} : {dt}[]
  %one = const() {{value = dense<1.0>}} : {dt}[]
  %a = mul(%x, %two) : {dt}[{n}]
  %b = add(%a, %one) : {dt}[{n}]
  %c = sigmoid(%b) : {dt}[{n}]
  %d = mul(%c, %x) : {dt}[{n}]
  %e = relu(%d) : {dt}[{n}]
  return %e
}}
"""
    x = tensor(dt, n)
    make = lambda: (lambda: torch.relu(torch.sigmoid(x * 2.0 + 1.0) * x))
    return Row("memory", fir, make, 2 * n * SIZE[dt])


def bias_gelu(dt, rows, n):
    """A broadcast operand and GeLU: the pointwise template's strided path."""
    fir = f"""func @bias_gelu(%x: {dt}[{rows},{n}], %b: {dt}[{n}]) -> {dt}[{rows},{n}] {{
  %y = add(%x, %b) : {dt}[{rows},{n}]
  %z = gelu(%y) : {dt}[{rows},{n}]
  return %z
}}
"""
    x, b = tensor(dt, rows, n), tensor(dt, n)
    return Row("memory", fir, lambda: (lambda: F.gelu(x + b)), (2 * rows * n + n) * SIZE[dt])


def gemm(dt, m, n, k):
    fir = f"""func @gemm(%a: {dt}[{m},{k}], %b: {dt}[{k},{n}]) -> {dt}[{m},{n}] {{
  %c = matmul(%a, %b) {{acc = f32}} : {dt}[{m},{n}]
  return %c
}}
"""
    a, b = tensor(dt, m, k), tensor(dt, k, n)
    return Row("gemm", fir, lambda: (lambda: a @ b), (m * k + k * n + m * n) * SIZE[dt],
               2 * m * n * k)


def gemm_bias_gelu(dt, m, n, k):
    fir = f"""func @gemm_bias_gelu(%a: {dt}[{m},{k}], %b: {dt}[{k},{n}], %bias: {dt}[{n}]) -> {dt}[{m},{n}] {{
  %c = matmul(%a, %b) {{acc = f32}} : {dt}[{m},{n}]
  %d = add(%c, %bias) : {dt}[{m},{n}]
  %e = gelu(%d) : {dt}[{m},{n}]
  return %e
}}
"""
    a, b, bias = tensor(dt, m, k), tensor(dt, k, n), tensor(dt, n)
    return Row("gemm", fir, lambda: (lambda: F.gelu(torch.addmm(bias, a, b))),
               (m * k + k * n + m * n + n) * SIZE[dt], 2 * m * n * k)


def attention(dt, b, hq, hkv, sq, sk, d, causal=False, mask=False):
    """fusec's attention op; grouped-query heads as [b, hkv, hq/hkv, s, d]
    queries over [b, hkv, 1, s, d] keys and values (batch dims broadcast)."""
    g = hq // hkv
    qs = f"[{b},{hkv},{g},{sq},{d}]" if g > 1 else f"[{b},{hq},{sq},{d}]"
    ks = f"[{b},{hkv},1,{sk},{d}]" if g > 1 else f"[{b},{hkv},{sk},{d}]"
    mask_param = f", %m: {dt}[{b},1,1,{sk}]" if mask else ""
    fir = f"""func @attention(%q: {dt}{qs}, %k: {dt}{ks}, %v: {dt}{ks}{mask_param}) -> {dt}{qs} {{
  %o = attention(%q, %k, %v{', %m' if mask else ''}) {{causal = {str(causal).lower()}, acc = f32}} : {dt}{qs}
  return %o
}}
"""
    q, k, v = tensor(dt, b, hq, sq, d), tensor(dt, b, hkv, sk, d), tensor(dt, b, hkv, sk, d)
    m = None
    if mask:  # padding: sequence i keeps its first sk - i*sk/16 keys
        keep = torch.tensor([max(1, sk - i * sk // 16) for i in range(b)], device="cuda")
        m = torch.where(torch.arange(sk, device="cuda")[None, :] < keep[:, None], 0.0, -10000.0)
        m = m.to(q.dtype).reshape(b, 1, 1, sk)
    from torch.nn.attention import SDPBackend, sdpa_kernel
    backends = {"flash": SDPBackend.FLASH_ATTENTION, "efficient": SDPBackend.EFFICIENT_ATTENTION,
                "cudnn": SDPBackend.CUDNN_ATTENTION}
    peers_ = {}
    for name, backend in backends.items():
        def fn(backend=backend):
            with sdpa_kernel(backend):
                return F.scaled_dot_product_attention(q, k, v, attn_mask=m, is_causal=causal,
                                                      enable_gqa=hq != hkv)
        try:
            fn()
            torch.cuda.synchronize()
            peers_[name] = fn
        except RuntimeError as e:
            peers_[name] = "no kernel: " + str(e).strip().splitlines()[0][:80]
    bytes_ = (2 * b * hq * sq * d + 2 * b * hkv * sk * d) * SIZE[dt]
    flops = 4 * b * hq * sq * sk * d // (2 if causal else 1)
    return Row("attention", fir, None, bytes_, flops, peers_=peers_)


def model(name):
    example, dims, dt = models.MODELS[name]
    with open(os.path.join(ROOT, "examples", example + ".fir")) as f:
        fir = models.fir_in_dtype(f.read(), dt)
    flags = ["--dim=" + ",".join(f"{k}={v}" for k, v in dims.items()),
             "--precision=" + {"f16": "fp16", "bf16": "bf16"}[dt]]
    return Row("models", fir, None, flags=flags)


def workloads():
    w = {
        "ln_gelu_f16_16384x1024": lambda: ln_gelu("f16", 16384, 1024),
        "ln_gelu_f16_8192x8192": lambda: ln_gelu("f16", 8192, 8192),
        "ln_gelu_bf16_16384x4096": lambda: ln_gelu("bf16", 16384, 4096),
        "softmax_f16_16384x1024": lambda: softmax("f16", 16384, 1024),
        "softmax_f16_8192x8192": lambda: softmax("f16", 8192, 8192),
        "softmax_bf16_16384x4096": lambda: softmax("bf16", 16384, 4096),
        "chain5_f16_2^28": lambda: chain5("f16", 1 << 28),
        "bias_gelu_bf16_16384x4096": lambda: bias_gelu("bf16", 16384, 4096),
    }
    shapes = [(4096, 2304, 768), (4096, 768, 768), (4096, 3072, 768), (4096, 768, 3072),
              (128, 2304, 768), (128, 768, 768), (128, 3072, 768), (128, 768, 3072),
              (2048, 6144, 4096), (2048, 4096, 4096), (2048, 28672, 4096), (2048, 4096, 14336),
              (8, 4096, 4096), (1, 14336, 4096), (4096, 4096, 4096), (8192, 8192, 8192)]
    for dt in ("f16", "bf16"):
        for m, n, k in shapes:
            w[f"gemm_{dt}_{m}x{n}x{k}"] = lambda dt=dt, m=m, n=n, k=k: gemm(dt, m, n, k)
    w["gemm_bias_gelu_f16_8192x4096x1024"] = lambda: gemm_bias_gelu("f16", 8192, 4096, 1024)
    w.update({
        "attn_f16_b8_h12_s512_d64_mask": lambda: attention("f16", 8, 12, 12, 512, 512, 64, mask=True),
        "attn_f16_b1_h12_s128_d64": lambda: attention("f16", 1, 12, 12, 128, 128, 64),
        "attn_f16_b4_h16_s4096_d128": lambda: attention("f16", 4, 16, 16, 4096, 4096, 128),
        "attn_f16_b4_h16_s4096_d128_causal":
            lambda: attention("f16", 4, 16, 16, 4096, 4096, 128, causal=True),
        "attn_f16_b8_h16_s2048_d64": lambda: attention("f16", 8, 16, 16, 2048, 2048, 64),
        "attn_f16_gqa_b1_hq32_hkv8_s2048_d128_causal":
            lambda: attention("f16", 1, 32, 8, 2048, 2048, 128, causal=True),
        "attn_f16_decode_b8_hq32_hkv8_sq1_sk4096_d128":
            lambda: attention("f16", 8, 32, 8, 1, 4096, 128),
    })
    for name in models.MODELS:
        w[name] = lambda name=name: model(name)
    return w


# ---------------------------------------------------------------------------
# Measuring.

def run_fusec(fusec, name, fir, workdir, flags=()):
    """`fusec bench` on `fir` (text): its JSON, or {"error": [message]}. Its caches are the
    run's own: empty but for what earlier `--tune` runs of the board tuned (a run without
    `--tune` reads a cache of its own, which stays empty: the template's choices)."""
    base = os.path.join(workdir, name.replace("^", "p"))
    with open(base + ".fir", "w") as f:
        f.write(fir)
    cache = os.path.join(workdir, "cache-tuned" if "--tune" in flags else "cache")
    r = subprocess.run([fusec, "bench", base + ".fir", "--iterations=100",
                        "--json=" + base + ".json", *flags], capture_output=True, text=True,
                       env={**os.environ, "FUSEC_CACHE_DIR": cache})
    if r.returncode != 0:
        lines = (r.stderr or r.stdout).strip().splitlines()
        errors = [l[l.index("error:") + 7:] for l in lines if "error:" in l]
        return {"error": errors[:1] or lines[-1:]}
    with open(base + ".json") as f:
        return json.load(f)


def model_agreement(fusec, name, row, inputs, workdir):
    """Both sides' outputs against the fp32 reference (max abs error over
    the reference's RMS): fusec's from `fusec run --device=gpu` on the
    row's inputs, PyTorch's from its twin in the row's dtype."""
    example, _, dt = models.MODELS[name]
    fn = models.twin(example)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    with torch.no_grad():
        want = fn(**models.to_device(inputs, "f32")).float()
        mine = fn(**models.to_device(inputs, dt)).float()
    torch.backends.cudnn.allow_tf32 = True
    out = {"pytorch_error": models.relative_error(mine, want)}
    del mine
    folder = os.path.join(workdir, name + "-io")
    os.makedirs(folder, exist_ok=True)
    args = []
    for key, t in inputs.items():
        path = os.path.join(folder, key + ".npy")
        models.save_npy(t, path, dt)
        args.append(f"--input={key}={path}")
    fir_path = os.path.join(folder, "model.fir")
    with open(fir_path, "w") as f:
        f.write(row.fir)
    r = subprocess.run([fusec, "run", fir_path, "--device=gpu", row.flags[1], "-o", folder, *args],
                       capture_output=True, text=True)
    if r.returncode != 0:
        out["fusec_error"] = ((r.stderr or r.stdout).strip().splitlines() or ["?"])[-1][:160]
    else:
        got = models.load_npy(os.path.join(folder, "y.npy"), dt).to("cuda")
        out["fusec_error"] = models.relative_error(got, want)
    return out


def model_peers(name, inputs, budget):
    """Eager and every torch.compile mode on the twin in the row's dtype
    (ResNet also in channels_last)."""
    example, _, dt = models.MODELS[name]
    layouts = [False, True] if example == "resnet_block" else [False]
    out = {}
    for cl in layouts:
        suffix = " (channels_last)" if cl else ""
        x = models.to_device(inputs, dt, channels_last=cl)
        fn = models.twin(example)
        with torch.no_grad():
            out["eager" + suffix] = {"ms": peers.time_ms(lambda: fn(**x))}
            modes = (peers.LAUNCH_BOUND_MODEL_MODES if name in models.LAUNCH_BOUND
                     else peers.MODEL_MODES)
            for mode, r in peers.compiled_peers(
                    lambda: (lambda f=models.twin(example): f(**x)), modes, budget).items():
                out[mode + suffix] = r
        del x
        torch.cuda.empty_cache()
    return out


def measure_row(name, row, args, workdir, budget):
    r = {"family": row.family, "bytes": row.bytes, "flops": row.flops,
         "fusec": run_fusec(args.fusec, name, row.fir, workdir, row.flags)}
    if row.family in ("gemm", "models") and args.tune:
        r["fusec_tuned"] = run_fusec(args.fusec, name + "_tuned", row.fir, workdir,
                                     (*row.flags, "--tune"))
    if row.family in ("memory", "attention") and not args.no_llvm:
        r["fusec_llvm"] = run_fusec(args.fusec, name + "_llvm", row.fir, workdir,
                                    (*row.flags, "--backend=llvm"))
    # A memory-bound row (decode attention: a few FLOPs a byte) is placed against a copy too.
    if row.family == "memory" or (row.family == "attention" and row.flops < 16 * row.bytes):
        r["copy_same_size_gbs"] = peers.copy_gbs(row.bytes)
    if row.family in ("memory", "gemm"):
        fn = row.make_fn()
        r["peers"] = {"cuBLAS" if row.family == "gemm" and "bias" not in name else "eager":
                      {"ms": peers.time_ms(fn)}}
        r["peers"].update(peers.compiled_peers(row.make_fn, peers.KERNEL_MODES, budget))
    if row.family == "attention":
        r["peers"] = {n: {"ms": peers.time_ms(fn)} if callable(fn) else {"skipped": fn}
                      for n, fn in row.peers.items()}
    if row.family == "models":
        r["dtype"] = models.MODELS[name][2]
        example, dims, _ = models.MODELS[name]
        inputs = models.make_inputs(example, dims)  # once: LLaMA's weights are 218M values
        r["agreement"] = model_agreement(args.fusec, name, row, inputs, workdir)
        r["peers"] = model_peers(name, inputs, budget)
    return r


def measure(names, args):
    raw = {"device": torch.cuda.get_device_name(), "date": str(datetime.date.today()),
           "torch": torch.__version__, "commit": args.commit, "copy_gbs": peers.copy_gbs(),
           "cublas_tflops": {dt: peers.cublas_tflops(dt) for dt in ("f16", "bf16")},
           "rows": {}}
    budget = peers.CompileBudget(args.budget)
    table = workloads()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as workdir:
        for name in names:
            row = table[name]()
            raw["rows"][name] = measure_row(name, row, args, workdir, budget)
            del row
            torch.cuda.empty_cache()
            print(f"{name} done ({time.perf_counter() - started:.0f} s)", flush=True)
            if args.out:  # what is measured so far survives a stopped run
                with open(os.path.join(args.out, "results.json"), "w") as f:
                    json.dump(raw, f, indent=1)
    raw["seconds"] = time.perf_counter() - started
    return raw


# ---------------------------------------------------------------------------
# Rendering (no GPU needed).

def rate(bytes_, flops, ms):
    if flops:
        return f"{flops / (ms * 1e9):.0f} TFLOP/s"
    return f"{bytes_ / (ms * 1e6):.0f} GB/s"


def us(ms):
    return f"{ms * 1000:.1f} us"


def err_text(fus):
    return "error: " + " ".join(fus["error"]).replace("|", "/")[:100]


def kernel_ms(fus):
    return sum(k["device_ms"] for k in fus["kernels"])


def best_compile(r):
    timed = {m: p for m, p in r["peers"].items()
             if "ms" in p and m not in ("eager", "cuBLAS")}
    name, ms = peers_best(timed)
    return name, ms


def peers_best(timed):
    pairs = [(p["ms"], n) for n, p in timed.items() if "ms" in p]
    if not pairs:
        return None, None
    ms, n = min(pairs)
    return n, ms


def notes(r):
    """Peers that did not run, and why."""
    out = [f"{m}: {p.get('skipped') or p.get('error')}" for m, p in r.get("peers", {}).items()
           if "ms" not in p]
    return "; ".join(out).replace("|", "/")


def llvm_cell(r, nvrtc_ms):
    fus = r.get("fusec_llvm")
    if not fus:
        return ""
    if "error" in fus:
        return "not rendered: " + " ".join(fus["error"]).replace("|", "/")[:90]
    ms = kernel_ms(fus)
    return f"{us(ms)} ({ms / nvrtc_ms:.2f}x NVRTC's)"


def render_memory(raw, rows):
    out = ["| workload | fusec (kernels) | % of copy: 1 GiB / same size | eager | best "
           "torch.compile (mode) | fusec speedup vs best compile | fusec cold / disk hit | "
           "LLVM back end | notes |", "| --- " * 9 + "|"]
    for name, r in rows:
        fus = r["fusec"]
        eager = r["peers"]["eager"]["ms"]
        mode, cms = best_compile(r)
        comp = f"{rate(r['bytes'], 0, cms)} ({mode})" if cms else "-"
        if "error" in fus:
            out.append(f"| {name} | {err_text(fus)} | | {rate(r['bytes'], 0, eager)} | {comp} "
                       f"| | | | {notes(r)} |")
            continue
        ms = kernel_ms(fus)
        gbs = r["bytes"] / (ms * 1e6)
        cold = max(k["compile_cold_ms"] for k in fus["kernels"])
        disk = max(k["compile_disk_ms"] for k in fus["kernels"])
        out.append(f"| {name} | {us(ms)}, {gbs:.0f} GB/s | {100 * gbs / raw['copy_gbs']:.0f}% / "
                   f"{100 * gbs / r['copy_same_size_gbs']:.0f}% | {rate(r['bytes'], 0, eager)} | "
                   f"{comp} | {cms / ms:.2f}x | {cold:.0f} / {disk:.2f} ms | "
                   f"{llvm_cell(r, ms)} | {notes(r)} |")
    return out


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def gemm_tiles(fus):
    """Each gemm kernel's tile, stages and split of K, from the schedule `fusec bench`
    reports ("128x256x64, 4 stages, K split 2"); "-" for results without one."""
    out = []
    for k in fus["kernels"]:
        s = k.get("schedule", "")
        tile = re.search(r"tile (\d+x\d+x\d+)", s)
        if not tile:
            continue
        stages = re.search(r"(\d+) stages", s)
        split = re.search(r"K split (\d+) ways", s)
        out.append(tile.group(1) + (f", {stages.group(1)} stages" if stages else "")
                   + (f", K split {split.group(1)}" if split else ""))
    return "; ".join(out) or "-"


def render_gemm(raw, rows):
    tuned = any("fusec_tuned" in r for _, r in rows)
    out = ["| GEMM M×N×K | fusec | cuBLAS / eager | best torch.compile (mode) | fusec / cuBLAS "
           "| fusec / best compile | fusec cold | fusec tiles | "
           + ("tuned: fusec / cuBLAS, tiles | " if tuned else "") + "notes |",
           "| --- " * (10 if tuned else 9) + "|"]
    ratios, tuned_ratios = {}, {}
    for name, r in rows:
        fus, flops = r["fusec"], r["flops"]
        base_name = "cuBLAS" if "cuBLAS" in r["peers"] else "eager"
        base = r["peers"][base_name]["ms"]
        mode, cms = best_compile(r)
        comp = f"{rate(0, flops, cms)} ({mode})" if cms else "-"
        tuned_cell = ""
        if tuned:
            t = r.get("fusec_tuned", {"error": ["not run"]})
            if "error" in t:
                tuned_cell = err_text(t) + " | "
            else:
                if base_name == "cuBLAS":
                    tuned_ratios.setdefault(name.split("_")[1], []).append(base / kernel_ms(t))
                tuned_cell = (f"{us(kernel_ms(t))}, {base / kernel_ms(t):.2f}x, "
                              f"{gemm_tiles(t)} | ")
        if "error" in fus:
            out.append(f"| {name} | {err_text(fus)} | {rate(0, flops, base)} | {comp} | | | | | "
                       f"{tuned_cell}{notes(r)} |")
            continue
        ms = kernel_ms(fus)
        cold = max(k["compile_cold_ms"] for k in fus["kernels"])
        ratio = base / ms
        if base_name == "cuBLAS":
            ratios.setdefault(name.split("_")[1], []).append(ratio)
        out.append(f"| {name} | {us(ms)}, {rate(0, flops, ms)} | {rate(0, flops, base)} "
                   f"({base_name}) | {comp} | {ratio:.2f}x | "
                   f"{(cms / ms) if cms else float('nan'):.2f}x | {cold:.0f} ms | "
                   f"{gemm_tiles(fus)} | {tuned_cell}{notes(r)} |")
    out.append("")
    for label, rs in (("", ratios), ("tuned (`fusec bench --tune`) ", tuned_ratios)):
        if rs:
            summary = ", ".join(f"{dt} {geomean(v):.2f}x over {len(v)} shapes"
                                for dt, v in rs.items())
            out.append(f"Geomean of fusec's {label}speed over cuBLAS's (cuBLAS time / fusec "
                       f"time): {summary}.")
    return out


def render_attention(raw, rows):
    out = ["| attention (GB/s: q, k, v read, o written) | fusec | SDPA flash | SDPA efficient | "
           "SDPA cuDNN | best SDPA | "
           "fusec speedup vs best / vs flash | LLVM back end |", "| --- " * 8 + "|"]
    for name, r in rows:
        fus, flops = r["fusec"], r["flops"]
        cells = []
        for b in ("flash", "efficient", "cudnn"):
            p = r["peers"][b]
            cells.append(f"{us(p['ms'])}, {rate(0, flops, p['ms'])}, "
                         f"{rate(r['bytes'], 0, p['ms'])}" if "ms" in p
                         else p["skipped"].replace("|", "/")[:60])
        bname, bms = peers_best(r["peers"])
        best_cell = f"{bname}" if bname else "-"
        if "error" in fus:
            out.append(f"| {name} | {err_text(fus)} | {' | '.join(cells)} | {best_cell} | | |")
            continue
        ms = kernel_ms(fus)
        flash = r["peers"]["flash"].get("ms")
        vs = f"{bms / ms:.3f}x / " + (f"{flash / ms:.3f}x" if flash else "-")
        copy = ""
        if "copy_same_size_gbs" in r:  # memory-bound: % of a copy, 1 GiB / the same bytes
            gbs = r["bytes"] / (ms * 1e6)
            copy = (f" ({100 * gbs / raw['copy_gbs']:.0f}% / "
                    f"{100 * gbs / r['copy_same_size_gbs']:.0f}% of copy)")
        out.append(f"| {name} | {us(ms)}, {rate(0, flops, ms)}, {rate(r['bytes'], 0, ms)}{copy} | "
                   f"{' | '.join(cells)} | "
                   f"{best_cell} | {vs} | {llvm_cell(r, ms)} |")
    return out


def breakdown(raw, name, r):
    """Per-kernel rows: (kernel, template, fuses, us, bytes, flops, floor
    us, % of floor, share)."""
    fus = r["fusec"]
    tflops = raw["cublas_tflops"][r["dtype"]]
    total = kernel_ms(fus)
    out = []
    for k in fus["kernels"]:
        floor_ms = max(k["bytes"] / (raw["copy_gbs"] * 1e6), k.get("flops", 0) / (tflops * 1e9))
        out.append({"kernel": k["name"], "template": k["template"], "fuses": k.get("fuses", ""),
                    "us": k["device_ms"] * 1000, "bytes": k["bytes"], "flops": k.get("flops", 0),
                    "floor_us": floor_ms * 1000,
                    "pct_of_floor": 100 * floor_ms / k["device_ms"] if k["device_ms"] else 0,
                    "share": 100 * k["device_ms"] / total if total else 0})
    return out


def render_models(raw, rows):
    out = ["| model | fusec graph replay / direct | eager | default | reduce-overhead | "
           "max-autotune-no-cudagraphs | best peer | fusec speedup vs best | error vs fp32: "
           "fusec / PyTorch | cold compile: fusec / default / reduce-overhead / max-autotune |",
           "| --- " * 10 + "|"]
    details, tuned = [], []
    for name, r in rows:
        fus, p = r["fusec"], r["peers"]
        cells = []
        for m in ("eager", "default", "reduce-overhead", "max-autotune-no-cudagraphs"):
            variants = [v for v in p if v.split(" ")[0] == m]
            if not variants:
                cells.append("-")
                continue
            cells.append("; ".join(
                (f"{us(p[v]['ms'])}" if "ms" in p[v] else (p[v].get("skipped") or "error"))
                + (" (channels_last)" if "channels_last" in v else "") for v in variants))
        bname, bms = peers_best(p)
        a = r["agreement"]
        fe = a["fusec_error"]
        agree = (f"{fe:.2e}" if isinstance(fe, float) else str(fe).replace("|", "/")) + \
            f" / {a['pytorch_error']:.2e}"
        colds = " / ".join(
            [f"{(fus.get('first_use_ms', 0) + sum(k['compile_cold_ms'] for k in fus['kernels'])) / 1000:.1f} s"
             if "error" not in fus else "-"] +
            [f"{p[m]['cold_s']:.1f} s" if "cold_s" in p.get(m, {}) else "-"
             for m in ("default", "reduce-overhead", "max-autotune-no-cudagraphs")])
        if "error" in fus:
            out.append(f"| {name} | {err_text(fus)} | {' | '.join(cells)} | {bname} | | {agree} "
                       f"| {colds} |")
            continue
        out.append(f"| {name} | {us(fus['graph_ms'])} / {us(fus['direct_ms'])}, "
                   f"{len(fus['kernels'])} kernels | {' | '.join(cells)} | {bname} "
                   f"({us(bms)}) | {bms / fus['graph_ms']:.2f}x | {agree} | {colds} |")
        t = r.get("fusec_tuned")
        if t and "error" not in t:
            tuned.append(f"{name} {us(t['graph_ms'])} ({bms / t['graph_ms']:.2f}x {bname})")
        details += ["", f"**{name}**: where fusec's {us(kernel_ms(fus))} of kernel time goes "
                    f"(floor: the bytes at {raw['copy_gbs']:.0f} GB/s or the FLOPs at the "
                    f"cuBLAS 8192³ rate, whichever is longer).", "",
                    "| kernel | template | fuses | time | bytes | GFLOP | floor | % of floor | "
                    "share |", "| --- " * 9 + "|"]
        for k in sorted(r["breakdown"], key=lambda k: -k["us"]):
            details.append(f"| {k['kernel']} | {k['template']} | {k['fuses'][:60]} | "
                           f"{k['us']:.1f} us | {k['bytes'] / 1e6:.2f} MB | "
                           f"{k['flops'] / 1e9:.2f} | {k['floor_us']:.1f} us | "
                           f"{k['pct_of_floor']:.0f}% | {k['share']:.1f}% |")
    if tuned:
        out += ["", "Tuned (`fusec bench --tune`, graph replay): " + "; ".join(tuned) + "."]
    return out + details


def render(raw):
    by_family = {}
    for name, r in raw["rows"].items():
        by_family.setdefault(r["family"], []).append((name, r))
    head = [f"Device: {raw['device']}; date {raw['date']}; commit {raw.get('commit', '?')}; torch "
            f"{raw['torch']}; copy {raw['copy_gbs']:.0f} GB/s (1 GiB, read+write); cuBLAS 8192³ "
            + ", ".join(f"{dt} {v:.0f} TFLOP/s" for dt, v in raw["cublas_tflops"].items())
            + (f"; the run took {raw['seconds']:.0f} s" if "seconds" in raw else "") + "."]
    renderers = [("memory", "Memory-bound kernels", render_memory),
                 ("gemm", "GEMM", render_gemm),
                 ("attention", "Attention (FLOPs 4·B·H·Sq·Sk·D, halved for causal)",
                  render_attention),
                 ("models", "Whole models (speedup: best peer time / fusec graph replay)",
                  render_models)]
    for family, title, fn in renderers:
        if family in by_family:
            head += ["", f"### {title}", ""] + fn(raw, by_family[family])
    return "\n".join(head) + "\n"


def add_breakdowns(raw):
    for name, r in raw["rows"].items():
        if r["family"] == "models" and "error" not in r["fusec"]:
            r["breakdown"] = breakdown(raw, name, r)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fusec", help="the fusec binary (to measure)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", default="", help="rows or families, comma-separated")
    ap.add_argument("--budget", type=float, default=None,
                    help="seconds of torch.compile for the whole run; modes past it are skipped "
                         "with a note")
    ap.add_argument("--no-llvm", action="store_true", help="skip the LLVM back end's column")
    ap.add_argument("--tune", action="store_true",
                    help="also run the GEMM and model rows with `fusec bench --tune`")
    ap.add_argument("--commit", default=os.environ.get("FUSEC_COMMIT", "?"))
    ap.add_argument("--render", help="a results.json to render again instead of measuring")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if args.render:
        with open(args.render) as f:
            raw = json.load(f)
    else:
        if not args.fusec:
            ap.error("--fusec is required to measure")
        table = workloads()
        wanted = set(filter(None, args.only.split(",")))
        names = [n for n in table if not wanted or n in wanted or family_of(n) in wanted]
        # The most telling rows first, should the compile budget run out.
        order = ["models", "attention", "memory", "gemm"]
        names.sort(key=lambda n: order.index(family_of(n)))
        unknown = wanted - set(table) - {"memory", "gemm", "attention", "models"}
        if unknown:
            ap.error("unknown rows or families: " + ", ".join(sorted(unknown)))
        raw = measure(names, args)
    add_breakdowns(raw)
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(raw, f, indent=1)
    table = render(raw)
    with open(os.path.join(args.out, "results.md"), "w") as f:
        f.write(table)
    try:
        import roofline
        roofline.draw_all(raw, args.out)
    except ImportError as e:
        print("no roofline pictures:", e)
    print(table)


def family_of(name):
    if name.startswith("gemm"):
        return "gemm"
    if name.startswith("attn"):
        return "attention"
    if name in getattr(models, "MODELS", {}):
        return "models"
    return "memory"


if __name__ == "__main__":
    sys.exit(main())
