#!/usr/bin/env python3
"""fusec benchmarks against PyTorch eager and torch.compile, in one process
run on the GPU machine (see bench/README.md).

For each workload it writes a .fir model, times it with `fusec bench`
(device time per kernel, median of event-timed launches, plus compile and
cache times), times the same computation in PyTorch eager and under
torch.compile with triton.testing.do_bench (median; fusec bench times its
runs the same way, runtime/DeviceTimer.cpp), and measures the copy bandwidth
of the device (device-to-device copies, bytes read plus bytes written): once
at 1 GiB, the memory ceiling, and at each workload's own size, since a
kernel moving 64 MiB cannot reach the 1 GiB rate (a copy of that size does
not either). Bytes count each input read once and each output written once;
GEMM FLOPs are 2*M*N*K.

Usage: python3 bench/run.py --fusec dist/bin/fusec --out DIR [--only NAME,...]
Writes DIR/results.md (a table to paste into bench/RESULTS.md) and
DIR/results.json; --render results.json --out DIR renders a run's table
again (no GPU needed).
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile

try:
    import torch
    import torch.nn.functional as F
    from triton.testing import do_bench
except ImportError:  # --render needs no GPU stack
    torch = None

DTYPES = {"f16": "float16", "bf16": "bfloat16", "f32": "float32"}
SIZE = {"f16": 2, "bf16": 2, "f32": 4}


def ln_gelu(dt, rows, n):
    fir = f"""func @ln_gelu(%x: {dt}[{rows},{n}], %g: {dt}[{n}], %b: {dt}[{n}]) -> {dt}[{rows},{n}] {{
  %y = layer_norm(%x, %g, %b) : {dt}[{rows},{n}]
  %z = gelu(%y) : {dt}[{rows},{n}]
  return %z
}}
"""
    t = getattr(torch, DTYPES[dt])
    x = torch.randn(rows, n, device="cuda", dtype=t)
    g = torch.randn(n, device="cuda", dtype=t)
    b = torch.randn(n, device="cuda", dtype=t)
    fn = lambda: F.gelu(F.layer_norm(x, (n,), g, b))
    return fir, fn, 2 * rows * n * SIZE[dt], 0


def softmax(dt, rows, n):
    fir = f"""func @softmax(%x: {dt}[{rows},{n}]) -> {dt}[{rows},{n}] {{
  %y = softmax(%x) : {dt}[{rows},{n}]
  return %y
}}
"""
    x = torch.randn(rows, n, device="cuda", dtype=getattr(torch, DTYPES[dt]))
    fn = lambda: torch.softmax(x, -1)
    return fir, fn, 2 * rows * n * SIZE[dt], 0


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
    x = torch.randn(n, device="cuda", dtype=getattr(torch, DTYPES[dt]))
    fn = lambda: torch.relu(torch.sigmoid(x * 2.0 + 1.0) * x)
    return fir, fn, 2 * n * SIZE[dt], 0


def bias_gelu(dt, rows, n):
    """A broadcast operand and GeLU: the pointwise template's strided path."""
    fir = f"""func @bias_gelu(%x: {dt}[{rows},{n}], %b: {dt}[{n}]) -> {dt}[{rows},{n}] {{
  %y = add(%x, %b) : {dt}[{rows},{n}]
  %z = gelu(%y) : {dt}[{rows},{n}]
  return %z
}}
"""
    t = getattr(torch, DTYPES[dt])
    x = torch.randn(rows, n, device="cuda", dtype=t)
    b = torch.randn(n, device="cuda", dtype=t)
    fn = lambda: F.gelu(x + b)
    return fir, fn, (2 * rows * n + n) * SIZE[dt], 0


def gemm(dt, m, n, k):
    fir = f"""func @gemm(%a: {dt}[{m},{k}], %b: {dt}[{k},{n}]) -> {dt}[{m},{n}] {{
  %c = matmul(%a, %b) {{acc = f32}} : {dt}[{m},{n}]
  return %c
}}
"""
    t = getattr(torch, DTYPES[dt])
    a = torch.randn(m, k, device="cuda", dtype=t)
    b = torch.randn(k, n, device="cuda", dtype=t)
    fn = lambda: a @ b
    return fir, fn, (m * k + k * n + m * n) * SIZE[dt], 2 * m * n * k


def bert_layer(batch, seq):
    """The BERT-shaped example at fp16 autocast: fusec only (its PyTorch twin
    is a later benchmark); what matters here is compile time and the host
    cost of a graph replay per kernel."""
    return ("@examples/bert_layer.fir", ["--dim=batch=%d,seq=%d" % (batch, seq), "--precision=fp16"],
            None, 0, 0)


WORKLOADS = {
    "ln_gelu_f16_16384x1024": lambda: ln_gelu("f16", 16384, 1024),
    "ln_gelu_f16_8192x8192": lambda: ln_gelu("f16", 8192, 8192),
    "ln_gelu_bf16_16384x4096": lambda: ln_gelu("bf16", 16384, 4096),
    "softmax_f16_16384x1024": lambda: softmax("f16", 16384, 1024),
    "softmax_f16_8192x8192": lambda: softmax("f16", 8192, 8192),
    "softmax_bf16_16384x4096": lambda: softmax("bf16", 16384, 4096),
    "chain5_f16_2^28": lambda: chain5("f16", 1 << 28),
    "bias_gelu_bf16_16384x4096": lambda: bias_gelu("bf16", 16384, 4096),
    "gemm_f16_4096^3": lambda: gemm("f16", 4096, 4096, 4096),
    "bert_layer_fp16_b1_s128": lambda: bert_layer(1, 128),
    "bert_layer_fp16_b8_s512": lambda: bert_layer(8, 512),
}


def copy_bandwidth(total_bytes=2 << 30):
    """GB/s of a device-to-device copy moving `total_bytes` (read + write)."""
    x = torch.empty(total_bytes // 4, device="cuda", dtype=torch.float16)
    y = torch.empty_like(x)
    ms = do_bench(lambda: y.copy_(x), warmup=25, rep=200, return_mode="median")
    return 2 * x.numel() * 2 / (ms * 1e6)


def time_peer(fn):
    return do_bench(fn, warmup=25, rep=100, return_mode="median")


def run_fusec(fusec, name, fir, workdir, extra=()):
    """fusec bench on `fir` (text, or "@path" of a model file)."""
    out = os.path.join(workdir, name.replace("^", "p") + ".json")
    if fir.startswith("@"):
        path = fir[1:]
    else:
        path = out[:-5] + ".fir"
        with open(path, "w") as f:
            f.write(fir)
    r = subprocess.run([fusec, "bench", path, "--iterations=100", "--json=" + out, *extra],
                       capture_output=True, text=True)
    if r.returncode != 0:
        lines = (r.stderr or r.stdout).strip().splitlines()
        errors = [l[l.index("error:") + 7:] for l in lines if "error:" in l]
        return {"error": errors[:1] or lines[-1:]}
    with open(out) as f:
        return json.load(f)


def model_row(name, fus, llvm=None):
    """A whole model: end-to-end time, kernels, compile and host cost; on
    the LLVM back end its graph replay against the NVRTC back end's."""
    ks = fus["kernels"]
    cold = sum(k["compile_cold_ms"] for k in ks)
    disk = max(k["compile_disk_ms"] for k in ks)
    other = ""
    if llvm and "error" in llvm:
        other = "error: " + " ".join(llvm["error"]).replace("|", "/")[:90]
    elif llvm:
        other = (f"{llvm['graph_ms'] * 1000:.1f} us graph replay "
                 f"({llvm['graph_ms'] / fus['graph_ms']:.2f}x NVRTC's), "
                 f"{len(llvm['kernels'])} kernels; cold "
                 f"{sum(k['compile_cold_ms'] for k in llvm['kernels']):.0f} ms (sum)")
    return (f"| {name} | {fus['graph_ms'] * 1000:.1f} us graph replay, "
            f"{fus['direct_ms'] * 1000:.1f} us direct; {len(ks)} kernels, "
            f"host {fus['host_us_per_kernel']:.2f} us/kernel under replay | | | | | | "
            f"{cold:.0f} (sum) / {disk:.2f} ms | {other} |")


def rate(bytes_, flops, ms):
    if flops:
        return f"{flops / (ms * 1e9):.0f} TFLOP/s"
    return f"{bytes_ / (ms * 1e6):.0f} GB/s"


def workload_row(name, r, copy):
    """One kernel's workload. fusec's time is its kernels' device time, timed
    as do_bench times the peers' single launch; the graph replay, which adds
    the graph launch (about 1-2 us), is shown beside it."""
    fus, bytes_, flops = r["fusec"], r["bytes"], r["flops"]
    eager, compiled = rate(bytes_, flops, r["eager_ms"]), rate(bytes_, flops, r["compile_ms"])
    if "error" in fus:
        return f"| {name} | error: {fus['error']} | | | {eager} | {compiled} | | | |"
    ms = sum(k["device_ms"] for k in fus["kernels"])
    cold = max(k["compile_cold_ms"] for k in fus["kernels"])
    disk = max(k["compile_disk_ms"] for k in fus["kernels"])
    pct = ""
    if not flops:
        gbs = bytes_ / (ms * 1e6)
        pct = f"{100 * gbs / copy:.0f}% / {100 * gbs / r['copy_same_size_gbs']:.0f}%"
    return (f"| {name} | {ms * 1000:.1f} us, {rate(bytes_, flops, ms)} | "
            f"{fus['graph_ms'] * 1000:.1f} us | {pct} | {eager} | {compiled} | "
            f"{r['compile_ms'] / ms:.2f}x | {cold:.0f} / {disk:.2f} ms | "
            f"{llvm_cell(r, ms, bytes_, flops)} |")


def llvm_cell(r, nvrtc_ms, bytes_, flops):
    """The LLVM back end's kernel time against the NVRTC back end's, and its
    cold compile; why not, where it does not render the workload yet."""
    fus = r.get("fusec_llvm")
    if not fus:
        return ""
    if "error" in fus:
        return "not rendered: " + " ".join(fus["error"]).replace("|", "/")[:90]
    ms = sum(k["device_ms"] for k in fus["kernels"])
    cold = max(k["compile_cold_ms"] for k in fus["kernels"])
    return (f"{ms * 1000:.1f} us, {rate(bytes_, flops, ms)} ({ms / nvrtc_ms:.2f}x NVRTC's time); "
            f"cold {cold:.0f} ms")


def render(raw):
    copy = raw["copy_gbs"]
    rows = []
    for name, r in raw.items():
        if name in ("copy_gbs", "device", "date", "torch"):
            continue
        fus = r["fusec"]
        if "eager_ms" not in r:
            rows.append(model_row(name, fus, r.get("fusec_llvm")) if "error" not in fus
                        else f"| {name} | error: {fus['error']} | | | | | | | |")
        else:
            rows.append(workload_row(name, r, copy))
    head = (f"Device: {raw['device']}; date {raw['date']}; torch {raw['torch']}; "
            f"copy bandwidth {copy:.0f} GB/s (1 GiB device-to-device, read+write).\n\n"
            "| workload | fusec (kernels, median) | fusec (graph replay) | "
            "% of copy: 1 GiB / same size | eager | torch.compile | fusec vs compile | "
            "fusec compile cold / disk hit (slowest kernel) | LLVM back end (kernels; cold "
            "compile) |\n"
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
    return head + "\n".join(rows) + "\n"


def measure(names, fusec):
    raw = {"copy_gbs": copy_bandwidth(), "device": torch.cuda.get_device_name(),
           "date": str(datetime.date.today()), "torch": torch.__version__}
    with tempfile.TemporaryDirectory() as workdir:
        for name in names:
            spec = WORKLOADS[name]()
            if len(spec) == 5:
                fir, extra, fn, bytes_, flops = spec
            else:
                (fir, fn, bytes_, flops), extra = spec, ()
            r = raw[name] = {"fusec": run_fusec(fusec, name, fir, workdir, extra),
                             "fusec_llvm": run_fusec(fusec, name + "_llvm", fir, workdir,
                                                     (*extra, "--backend=llvm")),
                             "bytes": bytes_, "flops": flops}
            if fn is not None:
                r["eager_ms"] = time_peer(fn)
                r["compile_ms"] = time_peer(torch.compile(fn))
                if not flops:
                    r["copy_same_size_gbs"] = copy_bandwidth(bytes_)
            print(name, "done", flush=True)
            torch.cuda.empty_cache()
    return raw


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fusec", help="the fusec binary (to measure)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", default="")
    ap.add_argument("--render", help="a results.json to render again instead of measuring")
    args = ap.parse_args()
    if args.render:
        with open(args.render) as f:
            raw = json.load(f)
    else:
        if not args.fusec:
            ap.error("--fusec is required to measure")
        names = [n for n in WORKLOADS if not args.only or n in args.only.split(",")]
        raw = measure(names, args.fusec)
    table = render(raw)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "results.md"), "w") as f:
        f.write(table)
    if not args.render:
        with open(os.path.join(args.out, "results.json"), "w") as f:
            json.dump(raw, f, indent=1)
    print(table)


if __name__ == "__main__":
    sys.exit(main())
