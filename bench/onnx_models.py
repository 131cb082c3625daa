#!/usr/bin/env python3
"""Exported ONNX models: fusec on the .onnx file against PyTorch on the module.

    bench/onnx_models.py --fusec FUSEC --out DIR [--only NAME,...] [--dtype f16|f32]
                         [--budget SECONDS]

For each model of scripts/export_onnx_models.py at its real size: exports it
(fp32 weights, as users ship them), runs `fusec bench model.onnx` with the
precision asked for, and times the same PyTorch module in that dtype —
eager (cuDNN benchmark mode on), eager in channels_last for CNNs, and each
torch.compile mode, CUDA graphs included (peers.py: do_bench timing with L2
flushed, compile budget) — on the same GPU in the same run. Prints one markdown row per model and writes
DIR/onnx_models.json.
"""
import argparse
import json
import os
import subprocess
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
import export_onnx_models as exports  # noqa: E402
import peers  # noqa: E402

# fusec's dims for each export's named dims at the real size.
DIMS = {"bert_layer": "batch=8,seq=512", "gpt2_block": "batch=8,seq=512",
        "llama_layer": "batch=8,seq=512", "resnet18": "batch=8", "unet_decoder": "batch=8"}
CNNS = {"resnet18", "unet_decoder"}


def fusec_us(fusec, model, dims, dtype, workdir):
    path = os.path.join(workdir, "bench.json")
    precision = {"f16": "fp16", "bf16": "bf16", "f32": "fp32"}[dtype]
    r = subprocess.run([fusec, "bench", model, "--dim=" + dims, "--precision=" + precision,
                        "--iterations=100", "--json=" + path], capture_output=True, text=True)
    if r.returncode != 0:
        return {"error": (r.stderr or r.stdout).strip().splitlines()[-1:]}
    with open(path) as f:
        j = json.load(f)
    return {"us": j["graph_ms"] * 1000, "direct_us": j["direct_ms"] * 1000,
            "kernels": len(j["kernels"])}


# Every torch.compile mode, CUDA graphs included: fusec bench reports graph replay.
MODES = ("default", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")


def peer_us(name, dtype, budget):
    torch.backends.cudnn.benchmark = True  # cuDNN at its best for the CNNs (PERF.md)
    s = exports.SIZES["real"]
    torch.manual_seed(0)
    cls = exports.MODELS[name]
    model = cls(s).eval().to("cuda", peers.DTYPES[dtype])
    inputs = [t.to("cuda", peers.DTYPES[dtype]) for t in cls.inputs(s)]
    out = {}
    with torch.no_grad():
        out["eager"] = peers.time_ms(lambda: model(*inputs)) * 1000
        if name in CNNS:
            cl = [t.contiguous(memory_format=torch.channels_last) if t.dim() == 4 else t
                  for t in inputs]
            model_cl = model.to(memory_format=torch.channels_last)
            out["eager channels_last"] = peers.time_ms(lambda: model_cl(*cl)) * 1000
        compiled = peers.compiled_peers(lambda: (lambda: model(*inputs)), MODES, budget)
    for mode, r in compiled.items():
        if "ms" in r:
            out["compile " + mode] = r["ms"] * 1000
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--fusec", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--only", help="comma-separated model names")
    p.add_argument("--dtype", default="f16", choices=["f16", "bf16", "f32"])
    p.add_argument("--budget", type=float, default=240, help="torch.compile seconds in all")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    budget = peers.CompileBudget(args.budget)
    rows = {}
    print("| model | fusec us (kernels) | best peer us | best peer / fusec | peers us |")
    print("| --- | --- | --- | --- | --- |")
    for name in (args.only.split(",") if args.only else exports.MODELS):
        exports.export(name, "real", args.out)
        model = os.path.join(args.out, name, "model.onnx")
        mine = fusec_us(args.fusec, model, DIMS[name], args.dtype, os.path.join(args.out, name))
        theirs = peer_us(name, args.dtype, budget)
        rows[name] = {"fusec": mine, "peers": theirs}
        best = min(theirs, key=theirs.get)
        peer_text = ", ".join("%s %.1f" % (k, v) for k, v in theirs.items())
        if "us" in mine:
            print("| %s %s | %.1f (%d) | %.1f (%s) | %.2fx | %s |" % (
                name, args.dtype, mine["us"], mine["kernels"], theirs[best], best,
                theirs[best] / mine["us"], peer_text), flush=True)
        else:
            print("| %s %s | error: %s | %.1f (%s) | - | %s |" % (
                name, args.dtype, mine["error"], theirs[best], best, peer_text), flush=True)
    with open(os.path.join(args.out, "onnx_models.json"), "w") as f:
        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
