#!/usr/bin/env python3
"""ONNX's own backend node tests through fusec.

Generates the cases with ONNX's generator (`backend-test-tools generate-data`,
shipped by Debian's python3-onnx) when DATA has none, then runs every case:
imports model.onnx, runs it with `fusec run` on test_data_set_0's inputs and
compares each output with the expected one (ONNX's tolerances: rtol 1e-3,
atol 1e-7; 1e-2 and 1e-3 for f16 and bf16 results and on the GPU).

Each case ends as
  pass         every output matches
  fail         an output differs (or has another dtype or shape)
  unsupported  fusec's import refuses an op or a form of it ("unsupported",
               "not supported")
  error        anything else (a crash, a timeout, a wrong error)
and the run prints the count per op. EXPECTED lists the cases that pass: a
listed case that does not pass fails the run (a regression); a passing case
not listed is printed as newly passing (add it with --update).
"""
import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile

import numpy as np


def generate(data):
    # Debian's numpy 1.24 dropped aliases ONNX 1.12's generator still uses.
    for alias, value in [("float", float), ("int", int), ("bool", bool), ("object", object),
                         ("complex", complex), ("str", str)]:
        if not hasattr(np, alias):
            setattr(np, alias, value)
    from onnx.backend.test.cmd_tools import main
    saved = sys.argv
    sys.argv = ["backend-test-tools", "generate-data", "-o", data]
    try:
        main()
    finally:
        sys.argv = saved


def value_name(name):
    """The name fusec gives an ONNX tensor (frontend/onnx/Importer.cpp)."""
    return re.sub(r"[^A-Za-z0-9_.$]", "_", name)


def read_pb(path):
    import onnx
    from onnx import numpy_helper
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def is_shape_like(model, input_name):
    """An integer or bool input of rank 0 or 1 (a shape, axes, a count), any
    scalar (a pad value, a range's bounds, a training flag), or the scales
    and region of interest of a Resize or Upsample."""
    for node in model.graph.node:
        if node.op_type in ("Resize", "Upsample") and input_name in node.input[1:]:
            return True
    for v in model.graph.input:
        if v.name == input_name:
            t = v.type.tensor_type
            rank = len(t.shape.dim)
            return rank == 0 or (t.elem_type in (6, 7, 9) and rank <= 1)  # INT32, INT64, BOOL
    return False


def freeze(model, inputs, data_dir, tmp):
    """The model with its shape-like inputs made initializers of the test
    data's values, written to tmp; None when it has none."""
    import onnx
    from onnx import numpy_helper
    frozen = onnx.ModelProto()
    frozen.CopyFrom(model)
    names = [i for i in inputs if is_shape_like(model, i)]
    if not names:
        return None
    for i, input_name in enumerate(inputs):
        if input_name in names:
            pb = os.path.join(data_dir, "input_%d.pb" % i)
            frozen.graph.initializer.append(numpy_helper.from_array(read_pb(pb), input_name))
    kept = [v for v in frozen.graph.input if v.name not in names]
    del frozen.graph.input[:]
    frozen.graph.input.extend(kept)
    path = os.path.join(tmp, "frozen.onnx")
    onnx.save(frozen, path)
    return path


def run_case(case_dir, fusec, device, backend, timeout):
    try:
        return run_case_checked(case_dir, fusec, device, backend, timeout)
    except Exception as e:  # data the harness cannot read (sequences, optionals)
        return os.path.basename(case_dir), ["(unreadable)"], "unsupported", str(e)[:200]


def run_case_checked(case_dir, fusec, device, backend, timeout):
    import onnx
    name = os.path.basename(case_dir)
    model_path = os.path.join(case_dir, "model.onnx")
    model = onnx.load(model_path, load_external_data=False)
    ops = sorted({n.op_type for n in model.graph.node}) or ["(none)"]
    for v in list(model.graph.input) + list(model.graph.output):
        if not v.type.HasField("tensor_type"):
            return name, ops, "unsupported", "%s is not a tensor" % v.name
    inits = {i.name for i in model.graph.initializer}
    inputs = [i.name for i in model.graph.input if i.name not in inits]
    outputs = [o.name for o in model.graph.output]
    data_dir = os.path.join(case_dir, "test_data_set_0")
    with tempfile.TemporaryDirectory() as tmp:
        args = [fusec, "run", model_path, "--device=" + device, "-o", tmp]
        if device == "gpu":
            args.append("--backend=" + backend)
        for i, input_name in enumerate(inputs):
            pb = os.path.join(data_dir, "input_%d.pb" % i)
            if not os.path.exists(pb):
                continue  # an optional input left out
            npy = os.path.join(tmp, "in_%d.npy" % i)
            np.save(npy, read_pb(pb))
            args.append("--input=%s=%s" % (value_name(input_name), npy))
        try:
            r = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
            if r.returncode != 0 and "must be known when the model is imported" in r.stderr:
                # An input that gives a shape, axes or a count: fusec takes
                # those at import, so the case runs with them frozen into
                # the model as initializers.
                frozen = freeze(model, inputs, data_dir, tmp)
                if frozen:
                    args[2] = frozen
                    args = [a for a in args if not any(
                        a.startswith("--input=%s=" % value_name(i)) for i in inputs
                        if is_shape_like(model, i))]
                    r = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return name, ops, "error", "timed out"
        message = (r.stderr or r.stdout).strip().splitlines()
        first = next((l for l in message if "error" in l), message[0] if message else "")
        if r.returncode != 0:
            if r.returncode > 128 or r.returncode < 0:
                return name, ops, "error", "crashed (%d): %s" % (r.returncode, first)
            kind = ("unsupported" if re.search(r"unsupported|not supported|does not support", first)
                    else "error")
            return name, ops, kind, first
        for i, output_name in enumerate(outputs):
            expected = read_pb(os.path.join(data_dir, "output_%d.pb" % i))
            got_path = os.path.join(tmp, value_name(output_name) + ".npy")
            if not os.path.exists(got_path):
                return name, ops, "error", "no output %s" % output_name
            got = np.load(got_path)
            if got.shape != expected.shape:
                return name, ops, "fail", "output %s: shape %s, expected %s" % (
                    output_name, got.shape, expected.shape)
            if expected.dtype.kind in "fc":
                narrow = expected.dtype == np.float16 or got.dtype == np.uint16
                rtol, atol = (1e-2, 1e-3) if narrow or device == "gpu" else (1e-3, 1e-7)
                ok = np.allclose(got.astype(np.float64), expected.astype(np.float64), rtol=rtol,
                                 atol=atol, equal_nan=True)
            else:
                ok = np.array_equal(got.astype(expected.dtype), expected)
            if not ok:
                return name, ops, "fail", "output %s differs" % output_name
    return name, ops, "pass", ""


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--fusec", help="the fusec binary (needed unless --generate-only)")
    p.add_argument("--data", required=True, help="generated cases (made when missing)")
    p.add_argument("--expected", help="the list of cases that pass")
    p.add_argument("--update", action="store_true", help="rewrite EXPECTED with this run's passes")
    p.add_argument("--device", default="cpu", choices=["cpu", "gpu"])
    p.add_argument("--backend", default="nvrtc", choices=["nvrtc", "llvm"])
    p.add_argument("--only", help="a regular expression cases must match")
    p.add_argument("--jobs", type=int, default=os.cpu_count())
    p.add_argument("--timeout", type=float, default=120)
    p.add_argument("--report", help="write each case's result to this file")
    p.add_argument("--generate-only", action="store_true", help="make the cases in DATA, run none")
    args = p.parse_args()

    node_dir = os.path.join(args.data, "node")
    if not os.path.isdir(node_dir):
        generate(args.data)
    if args.generate_only:
        return 0
    if not args.fusec:
        p.error("--fusec is required")
    cases = sorted(os.path.join(node_dir, c) for c in os.listdir(node_dir))
    if args.only:
        cases = [c for c in cases if re.search(args.only, os.path.basename(c))]

    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(run_case, c, args.fusec, args.device, args.backend, args.timeout)
                   for c in cases]
        for f in futures:
            results.append(f.result())

    per_op = {}
    for name, ops, kind, _ in results:
        for op in ops:
            per_op.setdefault(op, {"pass": 0, "fail": 0, "unsupported": 0, "error": 0})[kind] += 1
    print("%-28s %5s %5s %5s %5s" % ("op", "pass", "fail", "unsup", "error"))
    for op in sorted(per_op):
        c = per_op[op]
        print("%-28s %5d %5d %5d %5d" % (op, c["pass"], c["fail"], c["unsupported"], c["error"]))
    totals = {k: sum(1 for r in results if r[2] == k) for k in ["pass", "fail", "unsupported", "error"]}
    print("cases: %d  pass %d  fail %d  unsupported %d  error %d" % (
        len(results), totals["pass"], totals["fail"], totals["unsupported"], totals["error"]))
    # The bar: cases whose every op fusec imports.
    listed = subprocess.run([args.fusec, "import", "--list-ops"], capture_output=True, text=True)
    supported = set(listed.stdout.split())
    ours = [r for r in results if set(r[1]) <= supported]
    ours_passed = sum(1 for r in ours if r[2] == "pass")
    print("cases of supported ops: %d  pass %d (%.1f%%)" % (
        len(ours), ours_passed, 100.0 * ours_passed / max(len(ours), 1)))
    if args.report:
        with open(args.report, "w") as f:
            for name, ops, kind, why in results:
                f.write("%s\t%s\t%s\t%s\n" % (kind, name, ",".join(ops), why))

    passed = {r[0] for r in results if r[2] == "pass"}
    if not args.expected:
        return 0
    if args.update:
        with open(args.expected, "w") as f:
            f.write("# ONNX backend node tests fusec passes (test/onnx/node_tests.py --update).\n")
            for name in sorted(passed):
                f.write(name + "\n")
        return 0
    with open(args.expected) as f:
        expected = {l.strip() for l in f if l.strip() and not l.startswith("#")}
    ran = {r[0] for r in results}
    regressed = sorted((expected & ran) - passed)
    for name, _, kind, why in results:
        if name in regressed:
            print("REGRESSION %s: %s %s" % (name, kind, why))
    for name in sorted(passed - expected):
        print("newly passing: %s (add it with --update)" % name)
    return 1 if regressed else 0


if __name__ == "__main__":
    sys.exit(main())
