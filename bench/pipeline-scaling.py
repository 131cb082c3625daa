#!/usr/bin/env python3
"""Compile time of the default pass pipeline against graph size (no GPU needed).

Writes generated graphs and times `fusec-opt FILE --passes=default` on each:

  chain N     N pointwise ops in one chain, cycling relu, add, mul, exp (the
              binary ones read a second graph input): one pointwise kernel
  diamond N   about N ops in stages of four branches (relu, exp, neg, tanh of
              the previous stage) summed back by adds, each stage also adding
              the value of eight stages before: many fan-out and fan-in edges
  bert L      examples/bert_layer.fir stacked L times (each layer its own
              weights): anchors, prologues, epilogues and grouped GEMMs
  gemm N      N ops in a chain of matmul, bias add, relu: N/3 gemm kernels
              with epilogues and as many arena buffers
  norm N      N ops in a chain of layer_norm then mul: row-reduction kernels
  ladder N    N ops: v = add(exp(x_i), v) over N/2 graph inputs, each exp a
              new small group that then takes in the big one
  wide N      one pointwise group reading N distinct graph inputs
  rowwide N   a row reduction whose prologue and epilogue each read N/2
              distinct graph inputs
  concat N    one concat of N graph inputs

Usage:
  bench/pipeline-scaling.py [--fusec-opt build/tools/fusec-opt] [--timeout 300]
                            [--repeat 3] [--flags "--precision=fp16"]
                            [CASE ...]        # e.g. chain:2000 diamond:15000 bert:24
  bench/pipeline-scaling.py --write CASE FILE # only write the graph (tests use it)

With no CASE it runs the issue's set: chain 2k, 5k, 10k, 20k, 100k, diamond 15k
and bert 24. Prints a markdown table: ops, wall seconds of the whole command
(parse, verify, passes, print) and the --time-passes split, median of --repeat
runs (one run when a run takes seconds). CPU s is the child's user + system
time: on a shared machine it moves less than wall time. Exits 1 when a case
fails or runs past --timeout (CTest's pipeline-scaling test is that check).
"""
import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHAPE = "f32[64,64]"
DEFAULT_CASES = ["chain:2000", "chain:5000", "chain:10000", "chain:20000", "chain:100000",
                 "diamond:15000", "bert:24"]


def chain(n):
    lines = [f"func @chain(%x: {SHAPE}, %b: {SHAPE}) -> {SHAPE} {{"]
    prev = "%x"
    for i in range(n):
        kind = ("relu", "add", "mul", "exp")[i % 4]
        args = prev if kind in ("relu", "exp") else f"{prev}, %b"
        lines.append(f"  %v{i} = {kind}({args}) : {SHAPE}")
        prev = f"%v{i}"
    lines += [f"  return {prev}", "}"]
    return "\n".join(lines) + "\n"


def diamond(n):
    lines = [f"func @diamond(%x: {SHAPE}) -> {SHAPE} {{"]
    stages, count, s = [], 0, 0
    prev = "%x"
    while count < n:
        branches = []
        for j, kind in enumerate(("relu", "exp", "neg", "tanh")):
            lines.append(f"  %s{s}b{j} = {kind}({prev}) : {SHAPE}")
            branches.append(f"%s{s}b{j}")
        acc = branches[0]
        for j, b in enumerate(branches[1:]):
            lines.append(f"  %s{s}a{j} = add({acc}, {b}) : {SHAPE}")
            acc = f"%s{s}a{j}"
        skip = stages[-8] if len(stages) >= 8 else "%x"
        lines.append(f"  %s{s} = add({acc}, {skip}) : {SHAPE}")
        count += 8
        stages.append(f"%s{s}")
        prev = f"%s{s}"
        s += 1
    lines += [f"  return {prev}", "}"]
    return "\n".join(lines) + "\n"


def bert(layers):
    text = open(os.path.join(ROOT, "examples", "bert_layer.fir")).read()
    header = re.search(r"^func @bert_layer\((.*)\) -> (.*) \{$", text, re.M)
    body = text[header.end():text.rindex("}")].strip("\n").splitlines()
    weights = [p for p in header.group(1).split(", ") if p.split(":")[0] not in ("%x", "%mask")]
    inputs = ["%x: f32[batch,seq,768]", "%mask: f32[batch,1,1,seq]"]
    lines, x = [], "%x"
    for layer in range(layers):
        inputs += [f"%l{layer}_{w[1:]}" for w in weights]
        def rename(m):
            name = m.group(1)
            if name == "x":
                return x
            if name == "mask":
                return "%mask"
            return f"%l{layer}_{name}"
        for line in body:
            if line.strip().startswith("return"):
                x = rename(re.match(r"\s*return %(\w+)", line))
                continue
            if line.strip().startswith("//") or not line.strip():
                continue
            lines.append(re.sub(r"%(\w+)", rename, line))
    out = [f"func @bert{layers}({', '.join(inputs)}) -> {header.group(2)} {{"] + lines
    out += [f"  return {x}", "}"]
    return "\n".join(out) + "\n"


def concat(n):
    ins = ", ".join(f"%x{i}: f32[2,3]" for i in range(n))
    operands = ", ".join(f"%x{i}" for i in range(n))
    return (f"func @concat{n}({ins}) -> f32[{2 * n},3] {{\n"
            f"  %y = concat({operands}) {{axis = 0}} : f32[{2 * n},3]\n"
            f"  return %y\n}}\n")


def gemm(n):
    lines = [f"func @gemm(%x: {SHAPE}, %w: {SHAPE}, %b: f32[64]) -> {SHAPE} {{"]
    prev = "%x"
    for i in range(n // 3):
        lines += [f"  %m{i} = matmul({prev}, %w) : {SHAPE}",
                  f"  %a{i} = add(%m{i}, %b) : {SHAPE}",
                  f"  %r{i} = relu(%a{i}) : {SHAPE}"]
        prev = f"%r{i}"
    lines += [f"  return {prev}", "}"]
    return "\n".join(lines) + "\n"


def norm(n):
    lines = [f"func @norm(%x: {SHAPE}, %s: {SHAPE}) -> {SHAPE} {{"]
    prev = "%x"
    for i in range(n // 2):
        lines += [f"  %n{i} = layer_norm({prev}) : {SHAPE}", f"  %m{i} = mul(%n{i}, %s) : {SHAPE}"]
        prev = f"%m{i}"
    lines += [f"  return {prev}", "}"]
    return "\n".join(lines) + "\n"


def ladder(n):
    k = max(1, n // 2)
    ins = ", ".join(f"%x{i}: {SHAPE}" for i in range(k))
    lines = [f"func @ladder({ins}) -> {SHAPE} {{", f"  %v0 = exp(%x0) : {SHAPE}"]
    for i in range(1, k):
        lines += [f"  %e{i} = exp(%x{i}) : {SHAPE}", f"  %v{i} = add(%e{i}, %v{i - 1}) : {SHAPE}"]
    lines += [f"  return %v{k - 1}", "}"]
    return "\n".join(lines) + "\n"


def wide(n):
    ins = ", ".join(f"%x{i}: {SHAPE}" for i in range(n))
    lines = [f"func @wide({ins}) -> {SHAPE} {{", f"  %v0 = relu(%x0) : {SHAPE}"]
    for i in range(1, n):
        lines.append(f"  %v{i} = add(%v{i - 1}, %x{i}) : {SHAPE}")
    lines += [f"  return %v{n - 1}", "}"]
    return "\n".join(lines) + "\n"


def rowwide(n):
    half = max(1, n // 2)
    ins = ", ".join(f"%x{i}: f32[8,64]" for i in range(2 * half))
    lines = [f"func @rowwide(%a: f32[8,64], {ins}) -> (f32[8,64], f32[8,1]) {{"]
    prev = "%a"
    for i in range(half):
        lines.append(f"  %p{i} = add({prev}, %x{i}) : f32[8,64]")
        prev = f"%p{i}"
    lines += [f"  %s = reduce_sum({prev}) {{axes = [-1], keepdims = true}} : f32[8,1]",
              f"  %e{half - 1} = div({prev}, %s) : f32[8,64]"]
    prev = f"%e{half - 1}"
    for i in range(half, 2 * half):
        lines.append(f"  %e{i} = mul({prev}, %x{i}) : f32[8,64]")
        prev = f"%e{i}"
    lines += ["  %r = exp(%s) : f32[8,1]", f"  return {prev}, %r", "}"]
    return "\n".join(lines) + "\n"


GENERATORS = {"chain": chain, "diamond": diamond, "bert": bert, "gemm": gemm, "norm": norm,
              "ladder": ladder, "wide": wide, "rowwide": rowwide, "concat": concat}


def generate(case):
    kind, _, size = case.partition(":")
    if kind not in GENERATORS or not size.isdigit():
        sys.exit(f"pipeline-scaling: bad case '{case}' (want KIND:N, KIND one of "
                 f"{', '.join(GENERATORS)})")
    return GENERATORS[kind](int(size))


def cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_case(fusec_opt, path, flags, timeout, repeat):
    """Median wall and CPU seconds of the command, and its --time-passes split."""
    walls, cpus, split = [], [], ""
    while len(walls) < repeat and sum(walls) < 10:  # one run when runs are slow
        start, cpu = time.monotonic(), cpu_seconds()
        try:
            r = subprocess.run([fusec_opt, path, "--passes=default", "--time-passes", "-o",
                                os.devnull] + flags, capture_output=True, text=True,
                               timeout=timeout)
        except subprocess.TimeoutExpired:
            return None, None, f"did not finish in {timeout:.0f} s"
        walls.append(time.monotonic() - start)
        cpus.append(cpu_seconds() - cpu)
        if r.returncode != 0:
            return None, None, f"failed (exit {r.returncode}): " + r.stderr.strip()[-200:]
        passes = re.findall(r"^\s*([\d.]+) ms\s+(\S+)", r.stderr, re.M)
        split = ", ".join(f"{name} {float(ms):.0f}" for ms, name in passes if name != "total")
    return statistics.median(walls), statistics.median(cpus), split


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fusec-opt", default=os.path.join(ROOT, "build", "tools", "fusec-opt"))
    ap.add_argument("--flags", default="", help="more fusec-opt flags, e.g. --precision=fp16")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--write", nargs=2, metavar=("CASE", "FILE"))
    ap.add_argument("cases", nargs="*")
    args = ap.parse_args()
    if args.write:
        with open(args.write[1], "w") as f:
            f.write(generate(args.write[0]))
        return
    print("| graph | ops | wall s | CPU s | --time-passes, ms |")
    print("| --- | --- | --- | --- | --- |")
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for case in args.cases or DEFAULT_CASES:
            text = generate(case)
            path = os.path.join(tmp, case.replace(":", "-") + ".fir")
            with open(path, "w") as f:
                f.write(text)
            ops = sum(1 for line in text.splitlines() if re.match(r"\s*%[\w.]+ = ", line))
            wall, cpu, split = time_case(args.fusec_opt, path, args.flags.split(), args.timeout,
                                         args.repeat)
            if wall is None:
                print(f"| {case} | {ops} | {split} | | |", flush=True)
                failed = True
            else:
                print(f"| {case} | {ops} | {wall:.2f} | {cpu:.2f} | {split} |", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
