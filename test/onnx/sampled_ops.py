#!/usr/bin/env python3
"""ONNX ops fusec spells in its own ops, at sampled attributes and sizes.

    test/onnx/sampled_ops.py --fusec FUSEC [--count N] [--seed S] [--only RE]
                             [--device cpu|gpu] [--backend nvrtc|llvm] [--keep DIR]

ONNX's node tests hold a few small cases per op. The ops whose import is a
decomposition (ConvTranspose by phases, Resize by taps: docs/onnx.md) get
more here: each case draws its attributes and sizes from a seeded generator
(odd sizes, every mode), builds a one-node model with onnx.helper, computes
the expected output with an independent NumPy reference (ONNX's own
interpolation for Resize, a direct scatter for ConvTranspose), and runs the
model with `fusec run` (run_models.py compares). Fails when any case
differs; prints each failing case's attributes.
"""
import argparse
import os
import random
import re
import sys
import tempfile

import numpy as np

from run_models import run


def conv_transpose_reference(x, w, b, strides, dilations, group, pads_begin, out_shape):
    """Direct scatter: y[q - pad] += x[i] * w[k] at q = i * s + k * d."""
    n, cin = x.shape[:2]
    spatial = x.shape[2:]
    cout_g = w.shape[1]
    cin_g = cin // group
    y = np.zeros((n, cout_g * group) + tuple(out_shape), np.float64)
    for idx in np.ndindex(*spatial):
        for kidx in np.ndindex(*w.shape[2:]):
            q = [idx[a] * strides[a] + kidx[a] * dilations[a] - pads_begin[a] for a in range(len(idx))]
            if any(v < 0 or v >= out_shape[a] for a, v in enumerate(q)):
                continue
            for g in range(group):
                xs = x[(slice(None), slice(g * cin_g, (g + 1) * cin_g)) + idx]  # [n, cin_g]
                ws = w[(slice(g * cin_g, (g + 1) * cin_g), slice(None)) + kidx]  # [cin_g, cout_g]
                y[(slice(None), slice(g * cout_g, (g + 1) * cout_g)) + tuple(q)] += xs @ ws
    if b is not None:
        y += b.reshape((1, -1) + (1,) * len(spatial))
    return y


def case_conv_transpose(rng):
    from onnx import helper
    spatial = rng.choice([1, 2, 2])
    group = rng.choice([1, 1, 2, 3])
    cin, cout_g = group * rng.randint(1, 4), rng.randint(1, 4)
    n = rng.randint(1, 2)
    ins = [rng.randint(1, 7) for _ in range(spatial)]
    kernel = [rng.randint(1, 5) for _ in range(spatial)]
    strides = [rng.randint(1, 3) for _ in range(spatial)]
    dilations = [rng.choice([1, 1, 2, 3]) for _ in range(spatial)]
    out_pad = [rng.randint(0, max(s, d) - 1) for s, d in zip(strides, dilations)]
    attrs = dict(strides=strides, dilations=dilations, group=group)
    full = [s * (i - 1) + op + (k - 1) * d + 1
            for i, k, s, d, op in zip(ins, kernel, strides, dilations, out_pad)]
    form = rng.choice(["pads", "pads", "output_shape", "same_upper", "same_lower"])
    if form == "pads":
        pads = [rng.randint(0, (k - 1) * d) for k, d in zip(kernel, dilations) for _ in range(1)]
        pads_end = [rng.randint(0, (k - 1) * d) for k, d in zip(kernel, dilations)]
        attrs.update(pads=pads + pads_end, output_padding=out_pad)
        begin, out = pads, [f - p - e for f, p, e in zip(full, pads, pads_end)]
    else:
        if form == "output_shape":
            out = [f + rng.randint(-2, 2) for f in full]
            out = [max(o, 1) for o in out]
            attrs.update(output_shape=out, output_padding=out_pad)
        else:
            out = [i * s for i, s in zip(ins, strides)]
            attrs.update(auto_pad=form.upper(), output_padding=out_pad)
        begin = []
        for f, o in zip(full, out):
            total = f - o
            half = total // 2
            begin.append(half if form == "same_upper" else total - half)
    if any(o < 1 for o in out):
        return None
    bias = rng.random() < 0.5
    x = np.random.default_rng(rng.randint(0, 2**31)).standard_normal([n, cin] + ins).astype(np.float32)
    w = np.random.default_rng(rng.randint(0, 2**31)).standard_normal(
        [cin, cout_g] + kernel).astype(np.float32)
    b = np.random.default_rng(rng.randint(0, 2**31)).standard_normal(cout_g * group).astype(
        np.float32) if bias else None
    y = conv_transpose_reference(x.astype(np.float64), w.astype(np.float64),
                                 None if b is None else b.astype(np.float64), strides, dilations,
                                 group, begin, out)
    inits = [("W", w)] + ([("B", b)] if bias else [])
    node = helper.make_node("ConvTranspose", ["X", "W"] + (["B"] if bias else []), ["Y"], **attrs)
    return node, [("X", x)], inits, y, attrs


def case_resize(rng):
    from onnx import helper
    from onnx.backend.test.case.node import resize as onnx_resize
    mode = rng.choice(["nearest", "linear", "cubic"])
    transform = rng.choice(["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                            "tf_crop_and_resize"])
    nearest = rng.choice(["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"])
    shape = [rng.randint(1, 2), rng.randint(1, 3), rng.randint(1, 9), rng.randint(1, 9)]
    attrs = dict(mode=mode, coordinate_transformation_mode=transform)
    if mode == "nearest":
        attrs["nearest_mode"] = nearest
    if mode == "cubic":
        attrs["cubic_coeff_a"] = rng.choice([-0.75, -0.5])
        attrs["exclude_outside"] = rng.choice([0, 1])
    if transform == "tf_crop_and_resize":
        attrs["extrapolation_value"] = rng.choice([0.0, 10.0])
    x = np.random.default_rng(rng.randint(0, 2**31)).standard_normal(shape).astype(np.float32)
    roi = None
    if transform == "tf_crop_and_resize":
        starts = [0, 0] + [round(rng.uniform(-0.2, 0.5), 2) for _ in range(2)]
        ends = [1, 1] + [round(rng.uniform(0.5, 1.2), 2) for _ in range(2)]
        roi = np.array(starts + ends, np.float32)
    if rng.random() < 0.5:
        scales = np.array([1, 1] + [rng.choice([0.5, 0.6, 0.8, 1.0, 1.5, 2.0, 2.5, 3.0])
                                    for _ in range(2)], np.float32)
        out_size = (scales * np.array(shape)).astype(int)
        if (out_size < 1).any():
            return None
        sizes = None
    else:
        sizes = np.array(shape[:2] + [rng.randint(1, 13) for _ in range(2)], np.int64)
        scales = None
    coeffs = {"nearest": lambda r: onnx_resize.nearest_coeffs(r, mode=nearest),
              "linear": onnx_resize.linear_coeffs,
              "cubic": lambda r: onnx_resize.cubic_coeffs(r, A=attrs.get("cubic_coeff_a", -0.75))}[mode]
    y = onnx_resize.interpolate_nd(
        x, coeffs, output_size=sizes, scale_factors=scales, roi=roi,
        coordinate_transformation_mode=transform,
        exclude_outside=bool(attrs.get("exclude_outside", 0)),
        extrapolation_value=attrs.get("extrapolation_value", 0.0))
    inits = [("roi", roi if roi is not None else np.zeros(0, np.float32)),
             ("scales", scales if scales is not None else np.zeros(0, np.float32))]
    if sizes is not None:
        inits.append(("sizes", sizes))
    node = helper.make_node("Resize", ["X"] + [n for n, _ in inits], ["Y"], **attrs)
    described = dict(attrs, shape=shape, scales=None if scales is None else scales.tolist(),
                     sizes=None if sizes is None else sizes.tolist(),
                     roi=None if roi is None else roi.tolist())
    return node, [("X", x)], inits, y, described


CASES = {"ConvTranspose": case_conv_transpose, "Resize": case_resize}


def write_case(folder, node, inputs, inits, y):
    import onnx
    from onnx import helper, numpy_helper
    graph = helper.make_graph(
        [node], "sampled",
        [helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, list(v.shape))
         for name, v in inputs],
        [helper.make_tensor_value_info("Y", onnx.TensorProto.FLOAT, list(y.shape))],
        [numpy_helper.from_array(v, name) for name, v in inits])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    os.makedirs(folder, exist_ok=True)
    onnx.save(model, os.path.join(folder, "model.onnx"))
    for i, (_, v) in enumerate(inputs):
        np.save(os.path.join(folder, "input_%d.npy" % i), v)
    np.save(os.path.join(folder, "output_0.npy"), y.astype(np.float32))


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--fusec", required=True)
    p.add_argument("--count", type=int, default=40, help="cases per op")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--only", help="a regular expression op types must match")
    p.add_argument("--device", default="cpu", choices=["cpu", "gpu"])
    p.add_argument("--backend", default="nvrtc", choices=["nvrtc", "llvm"])
    p.add_argument("--keep", help="write the cases here (default: a temporary folder)")
    args = p.parse_args()
    args.rtol, args.atol, args.timeout = 1e-4, 1e-4, 300
    if args.device == "gpu":
        args.rtol, args.atol = 1e-3, 1e-3
    root = args.keep or tempfile.mkdtemp(prefix="fusec-sampled-")
    failed = total = 0
    for op, make in CASES.items():
        if args.only and not re.search(args.only, op):
            continue
        rng = random.Random("%s-%d" % (op, args.seed))
        done = 0
        while done < args.count:
            case = make(rng)
            if case is None:
                continue
            node, inputs, inits, y, attrs = case
            folder = os.path.join(root, "%s_%d" % (op, done))
            write_case(folder, node, inputs, inits, y)
            ok, what = run(folder, args)
            done += 1
            total += 1
            if not ok:
                failed += 1
                print("FAIL %s_%d %s: %s" % (op, done - 1, attrs, what))
        print("%s: %d cases" % (op, done))
    print("%d of %d cases pass" % (total - failed, total))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
