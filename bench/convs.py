#!/usr/bin/env python3
"""Convolution layers, one at a time: fusec against cuDNN on the same GPU.

Each layer is one NHWC conv2d (OHWI filter) in fp16, timed by `fusec bench`
(its kernels' device time, L2 flushed before each run, the median) and by
torch.nn.functional.conv2d on channels_last tensors with cudnn.benchmark on,
timed the same way (peers.time_ms). The ResNet-50 rows are issue 16's bar
(geomean of fusec/cuDNN speed >= 0.9); the depthwise rows are memory-bound
and are placed against the same run's copy bandwidth of their bytes (input
and output once, the filter). Needs a GPU, PyTorch and Triton.

  bench/convs.py --fusec dist/bin/fusec --out DIR [--only NAME,...]
Writes DIR/convs.md and DIR/convs.json.
"""
import argparse
import json
import math
import os
import subprocess

import torch
import torch.nn.functional as F

import peers

# name: (n, c, h, w, out channels, kernel, stride, pad, groups)
LAYERS = {
    "r50_stem_7x7s2_3to64_224": (32, 3, 224, 224, 64, 7, 2, 3, 1),
    "r50_1x1_64to64_56": (32, 64, 56, 56, 64, 1, 1, 0, 1),
    "r50_3x3_64_56": (32, 64, 56, 56, 64, 3, 1, 1, 1),
    "r50_1x1_64to256_56": (32, 64, 56, 56, 256, 1, 1, 0, 1),
    "r50_3x3s2_128_56": (32, 128, 56, 56, 128, 3, 2, 1, 1),
    "r50_3x3_256_14": (32, 256, 14, 14, 256, 3, 1, 1, 1),
    "r50_3x3_512_7": (32, 512, 7, 7, 512, 3, 1, 1, 1),
    "r50_1x1_2048to512_7": (32, 2048, 7, 7, 512, 1, 1, 0, 1),
    # Beside the issue's list (out of the geomean): ResNet-50's 3x3 at 28^2.
    "x_3x3_128_28": (32, 128, 28, 28, 128, 3, 1, 1, 1),
    "dw_3x3_384_56": (32, 384, 56, 56, 384, 3, 1, 1, 384),
    "dw_3x3s2_144_56": (32, 144, 56, 56, 144, 3, 2, 1, 144),
    "dw_5x5_240_28": (32, 240, 28, 28, 240, 5, 1, 2, 240),
}


def out_size(size, k, stride, pad):
    return (size + 2 * pad - k) // stride + 1


def fir(name, n, c, h, w, o, k, stride, pad, groups):
    oh, ow = out_size(h, k, stride, pad), out_size(w, k, stride, pad)
    return (f"func @{name}(%x: f16[{n},{h},{w},{c}]{{nhwc}}, %w: f16[{o},{k},{k},{c // groups}]) "
            f"-> f16[{n},{oh},{ow},{o}]{{nhwc}} {{\n"
            f"  %y = conv2d(%x, %w) {{strides = [{stride}, {stride}], "
            f"pads = [{pad}, {pad}, {pad}, {pad}], groups = {groups}, acc = f32}} "
            f": f16[{n},{oh},{ow},{o}]{{nhwc}}\n  return %y\n}}\n")


def fusec_ms(fusec, name, text, workdir):
    """The kernels' device time of `fusec bench` on `text`, and the kernels' names."""
    base = os.path.join(workdir, name)
    with open(base + ".fir", "w") as f:
        f.write(text)
    r = subprocess.run([fusec, "bench", base + ".fir", "--iterations=200", "--json=" + base + ".json"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{name}: {(r.stderr or r.stdout).strip()}")
    with open(base + ".json") as f:
        kernels = json.load(f)["kernels"]
    return sum(k["device_ms"] for k in kernels), [k["schedule"] for k in kernels]


def cudnn_ms(n, c, h, w, o, k, stride, pad, groups):
    torch.backends.cudnn.benchmark = True
    x = torch.randn(n, c, h, w, device="cuda", dtype=torch.float16)
    x = x.to(memory_format=torch.channels_last)
    wt = torch.randn(o, c // groups, k, k, device="cuda", dtype=torch.float16)
    wt = wt.to(memory_format=torch.channels_last)
    with torch.no_grad():
        return peers.time_ms(lambda: F.conv2d(x, wt, stride=stride, padding=pad, groups=groups))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--fusec", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", help="comma-separated layer names")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    names = args.only.split(",") if args.only else list(LAYERS)
    rows = []
    for name in names:
        n, c, h, w, o, k, stride, pad, groups = LAYERS[name]
        oh, ow = out_size(h, k, stride, pad), out_size(w, k, stride, pad)
        flops = 2 * n * oh * ow * o * (c // groups) * k * k
        nbytes = 2 * (n * h * w * c + n * oh * ow * o + o * (c // groups) * k * k)
        ours, schedules = fusec_ms(args.fusec, name, fir(name, *LAYERS[name]), args.out)
        theirs = cudnn_ms(*LAYERS[name])
        row = {"layer": name, "fusec_us": ours * 1e3, "cudnn_us": theirs * 1e3,
               "speed_vs_cudnn": theirs / ours, "tflops": flops / ours / 1e9,
               "gbs": nbytes / ours / 1e6, "bytes": nbytes, "flops": flops,
               "schedules": schedules}
        if groups == c:
            row["copy_same_size_gbs"] = peers.copy_gbs(nbytes)
        rows.append(row)
        print(json.dumps(row), flush=True)
    dense = [r["speed_vs_cudnn"] for r in rows if r["layer"].startswith("r50_")]
    summary = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
               "cudnn": torch.backends.cudnn.version(), "copy_gbs": peers.copy_gbs(), "rows": rows,
               "r50_geomean_vs_cudnn": math.exp(sum(map(math.log, dense)) / len(dense)) if dense else None}
    with open(os.path.join(args.out, "convs.json"), "w") as f:
        json.dump(summary, f, indent=1)
    out = [f"{summary['device']}, torch {summary['torch']}, cuDNN {summary['cudnn']}, "
           f"copy {summary['copy_gbs']:.0f} GB/s (1 GiB)", "",
           "| layer | fusec us | cuDNN us | fusec / cuDNN speed | fusec TFLOP/s | fusec GB/s | % of copy (same size) |",
           "|---|---|---|---|---|---|---|"]
    for r in rows:
        copy = f"{100 * r['gbs'] / r['copy_same_size_gbs']:.0f}%" if "copy_same_size_gbs" in r else ""
        out.append(f"| {r['layer']} | {r['fusec_us']:.1f} | {r['cudnn_us']:.1f} | "
                   f"{r['speed_vs_cudnn']:.2f}x | {r['tflops']:.0f} | {r['gbs']:.0f} | {copy} |")
    if dense:
        out.append(f"\nResNet-50 layers: geomean {summary['r50_geomean_vs_cudnn']:.2f}x cuDNN")
    with open(os.path.join(args.out, "convs.md"), "w") as f:
        f.write("\n".join(out) + "\n")
    print("\n".join(out))


if __name__ == "__main__":
    main()
