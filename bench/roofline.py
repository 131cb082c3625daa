"""Roofline pictures of the model rows' kernels (bench/run.py writes them
beside its table): each kernel at its arithmetic intensity (contraction
FLOPs per byte it must move) and its achieved rate, under the roofs of the
same run's copy bandwidth and cuBLAS rate. Kernels without contraction
FLOPs (pointwise, reductions, movement) have no place on that axis: the
right panel puts them at their bytes and achieved bandwidth under the copy
line. A marker's area is the kernel's share of the model's time."""
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def draw(ax_flops, ax_bytes, raw, name, r):
    bw, peak = raw["copy_gbs"], raw["cublas_tflops"][r["dtype"]]
    ks = r["breakdown"]
    dense = [k for k in ks if k["flops"]]
    light = [k for k in ks if not k["flops"]]
    lo, hi = 1.0, 10000.0
    xs = [lo * (hi / lo) ** (i / 200) for i in range(201)]
    ax_flops.plot(xs, [min(peak, bw * x / 1000) for x in xs], "k-", lw=1)
    for k in dense:
        ai = k["flops"] / k["bytes"]
        tf = k["flops"] / (k["us"] * 1e6)
        ax_flops.scatter(ai, tf, s=20 + 8 * k["share"], alpha=0.6)
        ax_flops.annotate(k["fuses"][:24], (ai, tf), fontsize=6)
    ax_flops.set(xscale="log", yscale="log", xlabel="FLOP / byte", ylabel="TFLOP/s",
                 title=f"{name}: contractions (roof {peak:.0f} TFLOP/s, {bw:.0f} GB/s)")
    ax_flops.title.set_fontsize(8)
    for k in light:
        gbs = k["bytes"] / (k["us"] * 1e3)
        ax_bytes.scatter(k["bytes"] / 1e6, gbs, s=20 + 8 * k["share"], alpha=0.6)
        ax_bytes.annotate(k["fuses"][:24], (k["bytes"] / 1e6, gbs), fontsize=6)
    ax_bytes.axhline(bw, color="k", lw=1)
    if light:  # at least a decade wide, so that the log axis reads plainly
        lo_mb = min(k["bytes"] for k in light) / 1e6
        hi_mb = max(k["bytes"] for k in light) / 1e6
        ax_bytes.set_xlim(lo_mb / 3, max(hi_mb * 3, lo_mb * 10))
    ax_bytes.set_ylim(0, 1.1 * bw)
    ax_bytes.set(xscale="log", xlabel="MB moved", ylabel="GB/s",
                 title=f"{name}: memory-bound kernels (copy {bw:.0f} GB/s)")
    ax_bytes.title.set_fontsize(8)


def draw_all(raw, out):
    rows = [(n, r) for n, r in raw["rows"].items() if "breakdown" in r]
    if not rows:
        return
    fig, axes = plt.subplots(len(rows), 2, figsize=(11, 3.6 * len(rows)), squeeze=False)
    for (name, r), (a, b) in zip(rows, axes):
        draw(a, b, raw, name, r)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "roofline.png"), dpi=80)
    plt.close(fig)
    for name, r in rows:
        if name.startswith("bert_fp16_b8_s512"):
            fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
            draw(a, b, raw, name, r)
            fig.tight_layout()
            fig.savefig(os.path.join(out, f"roofline-{name}.png"), dpi=80)
            plt.close(fig)
