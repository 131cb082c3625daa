#!/usr/bin/env python3
"""Writes the small ONNX models test/lit/onnx imports: models.py NAME OUT.

Each is built with onnx.helper, as exporters build theirs; the hostile ones
are damaged on purpose after the checker would have passed them (or before,
where the damage is what the checker must catch)."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

rng = np.random.default_rng(0)


def weights(name, *shape):
    return nh.from_array(rng.standard_normal(shape).astype(np.float32), name)


def ints(name, values):
    return nh.from_array(np.array(values, dtype=np.int64), name)


def model(nodes, inputs, outputs, inits=(), opset=13, name="m"):
    g = h.make_graph(nodes, name, inputs, outputs, list(inits))
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)])


def f32(name, shape):
    return h.make_tensor_value_info(name, T.FLOAT, shape)


def linear():
    """nn.Linear + ReLU with a symbolic batch."""
    return model([h.make_node("Gemm", ["x", "w", "b"], ["y"], transB=1, name="fc"),
                  h.make_node("Relu", ["y"], ["out"], name="act")],
                 [f32("x", ["batch", 8])], [f32("out", ["batch", 16])],
                 [weights("w", 16, 8), weights("b", 16)])


def attention():
    """The head split of an exported attention block: Shape -> Gather ->
    Unsqueeze -> Concat -> Reshape, Transpose, scores, mask, Softmax."""
    nodes = [
        h.make_node("MatMul", ["x", "wq"], ["q0"]),
        h.make_node("Shape", ["x"], ["xs"]),
        h.make_node("Gather", ["xs", "zero"], ["b"], axis=0),
        h.make_node("Gather", ["xs", "one"], ["s"], axis=0),
        h.make_node("Unsqueeze", ["b", "axes0"], ["b1"]),
        h.make_node("Unsqueeze", ["s", "axes0"], ["s1"]),
        h.make_node("Concat", ["b1", "s1", "heads"], ["qshape"], axis=0),
        h.make_node("Reshape", ["q0", "qshape"], ["q1"]),
        h.make_node("Transpose", ["q1"], ["q"], perm=[0, 2, 1, 3]),
        h.make_node("Transpose", ["q1"], ["kt"], perm=[0, 2, 3, 1]),
        h.make_node("MatMul", ["q", "kt"], ["s0"]),
        h.make_node("Div", ["s0", "scale"], ["s1s"]),
        h.make_node("Add", ["s1s", "mask"], ["s2"]),
        h.make_node("Softmax", ["s2"], ["p"], axis=-1),
        h.make_node("MatMul", ["p", "q"], ["c0"]),
        h.make_node("Transpose", ["c0"], ["c1"], perm=[0, 2, 1, 3]),
        h.make_node("Concat", ["b1", "s1", "hidden"], ["cshape"], axis=0),
        h.make_node("Reshape", ["c1", "cshape"], ["out"]),
    ]
    inits = [weights("wq", 8, 8), ints("zero", 0), ints("one", 1), ints("axes0", [0]),
             ints("heads", [2, 4]), ints("hidden", [8]),
             nh.from_array(np.array(2.0, dtype=np.float32), "scale")]
    return model(nodes, [f32("x", ["batch", "seq", 8]), f32("mask", ["batch", 1, 1, "seq"])],
                 [f32("out", ["batch", "seq", 8])], inits)


def conv_block():
    """Conv + BatchNormalization + Relu + MaxPool + GlobalAveragePool +
    Flatten + Gemm, as torchvision exports a small CNN."""
    nodes = [
        h.make_node("Conv", ["x", "w", "cb"], ["c"], pads=[1, 1, 1, 1], strides=[1, 1],
                    kernel_shape=[3, 3]),
        h.make_node("BatchNormalization", ["c", "g", "beta", "mean", "var"], ["bn"],
                    epsilon=1e-5),
        h.make_node("Relu", ["bn"], ["r"]),
        h.make_node("MaxPool", ["r"], ["mp"], kernel_shape=[2, 2], strides=[2, 2]),
        h.make_node("GlobalAveragePool", ["mp"], ["gap"]),
        h.make_node("Flatten", ["gap"], ["flat"], axis=1),
        h.make_node("Gemm", ["flat", "fw", "fb"], ["out"], transB=1),
    ]
    inits = [weights("w", 4, 3, 3, 3), weights("cb", 4), weights("g", 4), weights("beta", 4),
             weights("mean", 4), nh.from_array(np.full(4, 0.5, np.float32), "var"),
             weights("fw", 5, 4), weights("fb", 5)]
    return model(nodes, [f32("x", ["n", 3, 8, 8])], [f32("out", ["n", 5])], inits)


def layernorm():
    return model([h.make_node("LayerNormalization", ["x", "g", "b"], ["out"], axis=-1,
                              epsilon=1e-6)],
                 [f32("x", [2, 3, 8])], [f32("out", [2, 3, 8])],
                 [weights("g", 8), weights("b", 8)], opset=17)


def softmax11():
    """Softmax before opset 13: over the input flattened at `axis`."""
    return model([h.make_node("Softmax", ["x"], ["out"], axis=1)],
                 [f32("x", [2, 3, 4])], [f32("out", [2, 3, 4])], opset=11)


def einsum():
    """Attention scores as an einsum over named dims, and a contraction of
    two dims into a batched matmul."""
    return model([h.make_node("Einsum", ["q", "k"], ["s"], equation="bhqd,bhkd->bhqk"),
                  h.make_node("Einsum", ["x", "w"], ["out"], equation="bsij,ijk->bsk")],
                 [f32("q", ["b", 2, "seq", 8]), f32("k", ["b", 2, "seq", 8]),
                  f32("x", ["b", "seq", 2, 4]), f32("w", [2, 4, 6])],
                 [f32("s", ["b", 2, "seq", "seq"]), f32("out", ["b", "seq", 6])])


def decoder():
    """A segmentation decoder's upsampling: ConvTranspose(k2, s2), a nearest
    2x Resize (nn.Upsample) and a bilinear one (align_corners = False)."""
    scales = nh.from_array(np.array([1, 1, 2, 2], np.float32), "scales")
    return model([h.make_node("ConvTranspose", ["x", "w", "b"], ["up"], strides=[2, 2]),
                  h.make_node("Resize", ["up", "", "scales"], ["near"], mode="nearest",
                              coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
                  h.make_node("Resize", ["x", "", "scales"], ["lin"], mode="linear",
                              coordinate_transformation_mode="pytorch_half_pixel")],
                 [f32("x", ["n", 4, 5, 5])],
                 [f32("near", ["n", 3, 20, 20]), f32("lin", ["n", 4, 10, 10])],
                 [weights("w", 4, 3, 2, 2), weights("b", 3), scales])


def unsupported():
    nodes = [h.make_node("NonZero", ["x"], ["nz%d" % i], name="nonzero%d" % i)
             for i in range(4)]
    nodes += [h.make_node("Mod", ["x", "x"], ["m"], name="mod"),
              h.make_node("Frobnicate", ["x"], ["f"], domain="com.example", name="custom")]
    m = model(nodes, [f32("x", [4])], [f32("m", [4])])
    m.opset_import.append(h.make_opsetid("com.example", 1))
    return m


def checker():
    """A node with too few inputs: the ONNX checker's to refuse."""
    return model([h.make_node("Add", ["x"], ["out"], name="lonely_add")],
                 [f32("x", [4])], [f32("out", [4])])


def short_initializer():
    w = weights("w", 2, 2)
    w.dims[:] = [1000, 1000]  # claims 10^6 floats, carries 4
    return model([h.make_node("Add", ["x", "w"], ["out"])],
                 [f32("x", [1000, 1000])], [f32("out", [1000, 1000])], [w])


def huge_dims():
    w = onnx.TensorProto()
    w.name, w.data_type = "w", T.FLOAT
    w.dims.extend([1 << 40, 1 << 40])
    return model([h.make_node("Add", ["x", "w"], ["out"])],
                 [f32("x", [1])], [f32("out", [1])], [w])


def external(location, length=16):
    w = onnx.TensorProto()
    w.name, w.data_type = "w", T.FLOAT
    w.dims.extend([4])
    w.data_location = T.EXTERNAL
    for k, v in [("location", location), ("offset", "0"), ("length", str(length))]:
        e = w.external_data.add()
        e.key, e.value = k, v
    return model([h.make_node("Add", ["x", "w"], ["out"])],
                 [f32("x", [4])], [f32("out", [4])], [w])


def new_opset():
    return model([h.make_node("Relu", ["x"], ["out"])], [f32("x", [4])], [f32("out", [4])],
                 opset=18)


def uint8_input():
    return model([h.make_node("Identity", ["x"], ["out"])],
                 [h.make_tensor_value_info("x", T.UINT8, [4])],
                 [h.make_tensor_value_info("out", T.UINT8, [4])])


MODELS = {
    "linear": linear, "attention": attention, "conv_block": conv_block,
    "layernorm": layernorm, "softmax11": softmax11, "einsum": einsum, "decoder": decoder,
    "unsupported": unsupported,
    "checker": checker, "short_initializer": short_initializer, "huge_dims": huge_dims,
    "external_ok": lambda: external("w.bin"), "external_up": lambda: external("../w.bin"),
    "external_absolute": lambda: external("/etc/passwd"),
    "external_link": lambda: external("link.bin"), "external_long": lambda: external("w.bin", 64),
    "new_opset": new_opset, "uint8_input": uint8_input,
}


def main():
    name, out = sys.argv[1], sys.argv[2]
    m = MODELS[name]()
    with open(out, "wb") as f:
        f.write(m.SerializeToString())
    if name.startswith("external"):
        # The data file beside the model: four floats 1, 2, 3, 4.
        folder = os.path.dirname(os.path.abspath(out))
        np.arange(1, 5, dtype=np.float32).tofile(os.path.join(folder, "w.bin"))


if __name__ == "__main__":
    main()
