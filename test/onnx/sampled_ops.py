#!/usr/bin/env python3
"""ONNX ops at sampled attributes and sizes, against NumPy references.

    test/onnx/sampled_ops.py --fusec FUSEC [--count N] [--seed S] [--only RE]
                             [--device cpu|gpu] [--backend nvrtc|llvm] [--keep DIR]

ONNX's node tests hold a few small cases per op. The ops whose import is a
decomposition (ConvTranspose by phases, Resize by taps: docs/onnx.md) and
the selections (TopK, ArgMax/ArgMin, GatherElements, ReduceProd) get more
here: each case draws its attributes and sizes from a seeded generator (odd
sizes, every mode, long lines, many ties), builds a one-node model with
onnx.helper, computes the expected outputs with an independent NumPy
reference (ONNX's own interpolation for Resize, a direct scatter for
ConvTranspose, stable sorts for TopK), and runs the model with `fusec run`
(run_models.py compares). Fails when any case differs; prints each failing
case's attributes.
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
    return node, [("X", x)], inits, [y], attrs


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
    return node, [("X", x)], inits, [y], described


def selection_input(rng, shape):
    """Floats with many ties (small integers) or without (normal)."""
    g = np.random.default_rng(rng.randint(0, 2**31))
    if rng.random() < 0.5:
        return g.integers(-4, 5, shape).astype(np.float32)
    return g.standard_normal(shape).astype(np.float32)


def case_top_k(rng):
    from onnx import helper
    rank = rng.randint(1, 3)
    shape = [rng.choice([1, 3, 7, 33, 1000, 4097]) if d == rank - 1 else rng.randint(1, 5)
             for d in range(rank)]
    axis = rng.randint(-rank, rank - 1)
    size = shape[axis]
    k = rng.choice([1, 1, min(size, 5), min(size, 50), size])
    largest = rng.choice([0, 1])
    x = selection_input(rng, shape)
    order = np.argsort(-x if largest else x, axis=axis, kind="stable")
    indices = np.take(order, np.arange(k), axis=axis)
    values = np.take_along_axis(x, indices, axis=axis)
    node = helper.make_node("TopK", ["X", "K"], ["Y", "I"], axis=axis, largest=largest)
    return (node, [("X", x)], [("K", np.array([k], np.int64))], [values, indices],
            dict(shape=shape, axis=axis, k=k, largest=largest))


def case_arg_extreme(rng):
    from onnx import helper
    rank = rng.randint(1, 4)
    shape = [rng.choice([1, 2, 5, 21, 50257]) if rng.random() < 0.3 else rng.randint(1, 9)
             for _ in range(rank)]
    if np.prod(shape) > 200000:
        shape = [min(d, 3) if i != rank - 1 else d for i, d in enumerate(shape)]
    axis = rng.randint(-rank, rank - 1)
    op = rng.choice(["ArgMax", "ArgMin"])
    keep, last = rng.choice([0, 1]), rng.choice([0, 1])
    x = selection_input(rng, shape)
    y = x if op == "ArgMax" else -x
    if last:
        flipped = np.flip(y, axis=axis)
        index = y.shape[axis] - 1 - np.argmax(flipped, axis=axis)
    else:
        index = np.argmax(y, axis=axis)
    if keep:
        index = np.expand_dims(index, axis)
    node = helper.make_node(op, ["X"], ["Y"], axis=axis, keepdims=keep, select_last_index=last)
    return (node, [("X", x)], [], [index.astype(np.int64)],
            dict(op=op, shape=shape, axis=axis, keepdims=keep, select_last_index=last))


def case_gather_elements(rng):
    from onnx import helper
    rank = rng.randint(1, 3)
    shape = [rng.randint(1, 40) for _ in range(rank)]
    axis = rng.randint(-rank, rank - 1)
    ishape = [rng.randint(1, d) if i != axis % rank else rng.randint(1, 60)
              for i, d in enumerate(shape)]
    g = np.random.default_rng(rng.randint(0, 2**31))
    x = g.standard_normal(shape).astype(np.float32)
    size = shape[axis]
    indices = g.integers(-size, size, ishape).astype(np.int64)
    where = list(np.indices(ishape))
    where[axis] = np.where(indices < 0, indices + size, indices)
    y = x[tuple(where)]
    node = helper.make_node("GatherElements", ["X", "I"], ["Y"], axis=axis)
    return (node, [("X", x), ("I", indices)], [], [y],
            dict(shape=shape, indices=ishape, axis=axis))


def case_reduce_prod(rng):
    from onnx import helper
    rank = rng.randint(1, 4)
    shape = [rng.randint(1, 9) if rng.random() < 0.8 else rng.choice([33, 300]) for _ in range(rank)]
    axes = sorted(rng.sample(range(rank), rng.randint(1, rank)))
    keep = rng.choice([0, 1])
    g = np.random.default_rng(rng.randint(0, 2**31))
    # Factors near 1 keep long products in range.
    x = (g.uniform(0.9, 1.1, shape) * g.choice([-1, 1], shape)).astype(np.float32)
    y = np.prod(x.astype(np.float64), axis=tuple(axes), keepdims=bool(keep))
    node = helper.make_node("ReduceProd", ["X"], ["Y"], axes=axes, keepdims=keep)
    return node, [("X", x)], [], [y], dict(shape=shape, axes=axes, keepdims=keep)


CASES = {"ConvTranspose": case_conv_transpose, "Resize": case_resize, "TopK": case_top_k,
         "ArgMax/ArgMin": case_arg_extreme, "GatherElements": case_gather_elements,
         "ReduceProd": case_reduce_prod}


def write_case(folder, node, inputs, inits, outputs):
    import onnx
    from onnx import helper, numpy_helper
    def elem(dtype):
        if hasattr(helper, "np_dtype_to_tensor_dtype"):  # onnx >= 1.13
            return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
        from onnx.mapping import NP_TYPE_TO_TENSOR_TYPE  # Debian's 1.12
        return NP_TYPE_TO_TENSOR_TYPE[np.dtype(dtype)]
    graph = helper.make_graph(
        [node], "sampled",
        [helper.make_tensor_value_info(name, elem(v.dtype), list(v.shape)) for name, v in inputs],
        [helper.make_tensor_value_info(name, elem(np.float32 if v.dtype == np.float64 else v.dtype),
                                       list(v.shape))
         for name, v in zip(node.output, outputs)],
        [numpy_helper.from_array(v, name) for name, v in inits])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    os.makedirs(folder, exist_ok=True)
    onnx.save(model, os.path.join(folder, "model.onnx"))
    for i, (_, v) in enumerate(inputs):
        np.save(os.path.join(folder, "input_%d.npy" % i), v)
    for i, v in enumerate(outputs):
        np.save(os.path.join(folder, "output_%d.npy" % i),
                v.astype(np.float32) if v.dtype == np.float64 else v)


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
    p.add_argument("--replay", help="run the cases a --keep run wrote here, making none (a GPU "
                   "machine whose onnx has another reference)")
    args = p.parse_args()
    args.rtol, args.atol, args.timeout = 1e-4, 1e-4, 300
    if args.device == "gpu":
        args.rtol, args.atol = 1e-3, 1e-3
    if args.replay:
        failed = 0
        cases = sorted(c for c in os.listdir(args.replay) if not args.only or re.search(args.only, c))
        for c in cases:
            ok, what = run(os.path.join(args.replay, c), args)
            if not ok:
                failed += 1
                print("FAIL %s: %s" % (c, what))
        print("%d of %d cases pass" % (len(cases) - failed, len(cases)))
        return 1 if failed else 0
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
            node, inputs, inits, outputs, attrs = case
            folder = os.path.join(root, "%s_%d" % (op.replace("/", "_"), done))
            write_case(folder, node, inputs, inits, outputs)
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
