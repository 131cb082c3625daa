#!/usr/bin/env python3
"""fusec against fusec: every scoreboard row (bench/run.py) timed with two
fusec binaries on the same GPU in one process, for a change that must not
move performance (a refactoring of code generation: within +-2% on every
row). No peers are run; each row is timed base, new, base, new (--rounds
`fusec bench` runs of 100 iterations a binary, the best kept) so that clock
drift does not favour either side.

Usage:
  bench/compare.py --base OLD/bin/fusec --new dist/bin/fusec --out DIR
                   [--only NAME|FAMILY,...] [--llvm] [--rounds N]
Writes DIR/compare.md and DIR/compare.json; exits 1 when a row moved more
than --tolerance (default 2%).
"""
import argparse
import json
import os
import sys
import tempfile

import run


def time_ms(result):
    """The time a row is judged by: graph replay where fusec made one."""
    if "error" in result:
        return None
    return result.get("graph_ms") or result.get("ms")


def interleaved(base, new, name, row, workdir, flags, rounds=2):
    """The best time of each binary over `rounds` rounds of base, then new."""
    times = {base: [], new: []}
    for attempt in range(rounds):
        for side, fusec in (("base", base), ("new", new)):
            r = run.run_fusec(fusec, f"{name}_{side}{attempt}", row.fir, workdir,
                              (*row.flags, *flags))
            t = time_ms(r)
            if t is None:
                return None, None, f"{side}: {' '.join(r['error'])}"
            times[fusec].append(t)
    return min(times[base]), min(times[new]), None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", required=True, help="the fusec binary to compare against")
    ap.add_argument("--new", required=True, help="the fusec binary under test")
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", default="", help="rows or families, comma-separated")
    ap.add_argument("--llvm", action="store_true", help="also the LLVM back end's column")
    ap.add_argument("--tolerance", type=float, default=0.02)
    ap.add_argument("--rounds", type=int, default=2, help="runs of each binary a row")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    table = run.workloads()
    wanted = set(filter(None, args.only.split(",")))
    names = [n for n in table if not wanted or n in wanted or run.family_of(n) in wanted]
    backends = [("nvrtc", ())] + ([("llvm", ("--backend=llvm",))] if args.llvm else [])
    rows, moved = [], []
    with tempfile.TemporaryDirectory() as workdir:
        for name in names:
            row = table[name]()
            for backend, flags in backends:
                if backend == "llvm" and row.family not in ("memory", "attention"):
                    continue
                base, new, error = interleaved(args.base, args.new, name, row, workdir, flags,
                                               args.rounds)
                ratio = new / base if base and new else None
                rows.append({"row": name, "backend": backend, "base_ms": base, "new_ms": new,
                             "ratio": ratio, "error": error})
                if ratio is None or abs(ratio - 1) > args.tolerance:
                    moved.append(rows[-1])
                print(f"{name:45s} {backend:6s} base {base} new {new} ratio {ratio}", flush=True)
    with open(os.path.join(args.out, "compare.json"), "w") as f:
        json.dump({"base": args.base, "new": args.new, "rows": rows}, f, indent=1)
    lines = ["| row | back end | base µs | new µs | new / base |", "| --- | --- | ---: | ---: | ---: |"]
    for r in rows:
        cell = lambda ms: f"{ms * 1000:.1f}" if ms else "error"
        ratio = f"{r['ratio']:.3f}" if r["ratio"] else "-"
        lines.append(f"| {r['row']} | {r['backend']} | {cell(r['base_ms'])} | {cell(r['new_ms'])} | {ratio} |")
    with open(os.path.join(args.out, "compare.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"{len(moved)} of {len(rows)} rows moved more than {args.tolerance:.0%}")
    return 1 if moved else 0


if __name__ == "__main__":
    sys.exit(main())
