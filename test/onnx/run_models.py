#!/usr/bin/env python3
"""Runs exported ONNX models through fusec and compares with PyTorch.

    test/onnx/run_models.py --fusec FUSEC DIR... [--device cpu|gpu] [--backend nvrtc|llvm]

Each DIR holds model.onnx, input_K.npy (the model's inputs in order) and
output_K.npy (the expected results), as scripts/export_onnx_models.py writes
them. Prints the largest error of each model; fails when an output differs
by more than rtol/atol (1e-3/1e-4 by default).
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

from node_tests import value_name


def graph_io(path):
    import onnx
    m = onnx.load(path, load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    return [i.name for i in m.graph.input if i.name not in inits], [o.name for o in m.graph.output]


def run(folder, args):
    model = os.path.join(folder, "model.onnx")
    inputs, outputs = graph_io(model)
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [args.fusec, "run", model, "--device=" + args.device, "-o", tmp]
        if args.device == "gpu":
            cmd.append("--backend=" + args.backend)
        for i, name in enumerate(inputs):
            cmd.append("--input=%s=%s" % (value_name(name), os.path.join(folder, "input_%d.npy" % i)))
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
        if r.returncode != 0:
            return False, "fusec failed: " + (r.stderr.strip().splitlines() or ["?"])[0]
        worst, largest = 0.0, 0.0
        for i, name in enumerate(outputs):
            expected = os.path.join(folder, "output_%d.npy" % i)
            if not os.path.exists(expected):
                continue
            got = np.load(os.path.join(tmp, value_name(name) + ".npy"))
            want = np.load(expected)
            if got.shape != want.shape:
                return False, "output %s: shape %s, expected %s" % (name, got.shape, want.shape)
            if want.dtype.kind in "iub" and not np.array_equal(got, want):
                return False, "output %s: %d integers differ" % (name, int(np.sum(got != want)))
            got, want = got.astype(np.float64), want.astype(np.float64)
            err = np.abs(got - want)
            if err.size:
                worst = max(worst, float(np.max(err / (args.atol + args.rtol * np.abs(want)))))
                largest = max(largest, float(err.max()))
    return worst <= 1.0, "max abs error %.3g (%.2f of the tolerance)" % (largest, worst)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--fusec", required=True)
    p.add_argument("dirs", nargs="+")
    p.add_argument("--device", default="cpu", choices=["cpu", "gpu"])
    p.add_argument("--backend", default="nvrtc", choices=["nvrtc", "llvm"])
    p.add_argument("--rtol", type=float, default=1e-3)
    p.add_argument("--atol", type=float, default=1e-4)
    p.add_argument("--timeout", type=float, default=600)
    args = p.parse_args()
    failed = 0
    for folder in args.dirs:
        ok, what = run(folder, args)
        failed += not ok
        print("%s %s: %s" % ("ok  " if ok else "FAIL", os.path.basename(folder.rstrip("/")), what))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
