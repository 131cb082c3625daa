"""Feeds damaged copies of a model file to `fusec convert` and checks that
each is refused cleanly: exit code 1 with a message on stderr, never a
signal, a sanitizer report, an internal error or any other exit code.

    corrupt.py MODEL WORKDIR [--prefixes N] [--strided N] [--flips N]
               [--data-flips N] [--seed S]

Damage: every proper prefix of length < N (default 4096), then N more
prefix lengths spread evenly up to the full size; with an external data
file, its proper prefixes likewise (strided); --flips copies with 1-4
random bytes overwritten (seeded), and --data-flips copies whose data file
has 1-4 random bytes overwritten. Every damaged copy must be refused: the
model file's checksum covers all of its bytes, and the data file's
checksum, recorded in the model, all of the data file's. Runs the cases in
parallel; prints a summary line.
"""
import argparse
import concurrent.futures
import os
import random
import shutil
import subprocess
import sys


def prefix_lengths(size, dense, strided):
    lengths = list(range(min(size, dense)))
    if size > dense:
        step = max(1, (size - dense) // max(1, strided))
        lengths += range(dense, size, step)
    return lengths


def run_case(name, model_bytes, data_bytes, workdir):
    """Writes one damaged case and converts it; returns a problem or None."""
    path = os.path.join(workdir, name + ".fb")
    with open(path, "wb") as f:
        f.write(model_bytes)
    if data_bytes is not None:
        with open(path + ".data", "wb") as f:
            f.write(data_bytes)
    out = os.path.join(workdir, name + ".out.fir")
    proc = subprocess.run(["fusec", "convert", path, out], capture_output=True, text=True,
                          errors="replace")
    stderr = proc.stderr.strip()
    problem = None
    if proc.returncode < 0:
        problem = f"killed by signal {-proc.returncode}"
    elif "internal error" in stderr or "Sanitizer" in stderr:
        problem = "crashed"
    elif proc.returncode == 0:
        problem = "accepted"
    elif proc.returncode not in (0, 1):
        problem = f"exit code {proc.returncode}"
    elif proc.returncode == 1 and not stderr:
        problem = "exit code 1 with nothing on stderr"
    for p in (path, path + ".data", out):
        if os.path.exists(p) and problem is None:
            os.remove(p)
    return None if problem is None else f"{name}: {problem}\n{stderr[:2000]}"


def flipped(original, rng):
    """`original` with 1-4 random bytes overwritten, at least one changed."""
    damaged = bytearray(original)
    while damaged == original:
        for _ in range(rng.randint(1, 4)):
            damaged[rng.randrange(len(damaged))] = rng.randrange(256)
    return bytes(damaged)


def cases(model, data, args):
    """(name, model bytes, data bytes) for every damaged copy."""
    for n in prefix_lengths(len(model), args.prefixes, args.strided):
        yield f"prefix-{n}", model[:n], data
    if data:
        for n in prefix_lengths(len(data), 0, args.strided):
            yield f"data-prefix-{n}", model, data[:n]
    rng = random.Random(args.seed)
    for i in range(args.flips):
        yield f"flip-{i}", flipped(model, rng), data
    for i in range(args.data_flips if data else 0):
        yield f"data-flip-{i}", model, flipped(data, rng)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("workdir")
    parser.add_argument("--prefixes", type=int, default=4096)
    parser.add_argument("--strided", type=int, default=512)
    parser.add_argument("--flips", type=int, default=300)
    parser.add_argument("--data-flips", type=int, default=0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    model = open(args.model, "rb").read()
    data = open(args.model + ".data", "rb").read() if os.path.exists(args.model + ".data") else None
    shutil.rmtree(args.workdir, ignore_errors=True)
    os.makedirs(args.workdir)
    todo = list(cases(model, data, args))
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        problems = [p for p in pool.map(lambda c: run_case(c[0], c[1], c[2], args.workdir),
                                        todo) if p]
    for p in problems[:20]:
        print(p, file=sys.stderr)
    print(f"{len(todo)} damaged copies of {args.model}: {len(problems)} mishandled")
    sys.exit(1 if problems else 0)


main()
