"""The model rows' PyTorch twins: each computes what its examples/*.fir
computes, as a PyTorch user would write it (F.scaled_dot_product_attention,
F.layer_norm, F.rms_norm, F.conv2d, ...), from the same named weights and
inputs. `make_inputs` draws them once (seeded, fp32); the twin runs them in
its dtype, an fp32 copy is the reference both are compared against, and
fusec reads the same values from .npy files (`fusec run --input`).

fusec runs the example with its f32 types written as the row's dtype (the
weights and activations are stored in fp16 or bf16, as the twin's are) and
`--precision` of that dtype (contractions accumulate in f32).
"""
import math
import re

import numpy as np
import torch
import torch.nn.functional as F

# name: (example, its symbolic dims, dtype); launch-bound rows (B1 S128)
# also meet torch.compile's reduce-overhead mode.
LAUNCH_BOUND = {"bert_fp16_b1_s128"}
MODELS = {
    "bert_fp16_b8_s512": ("bert_layer", {"batch": 8, "seq": 512}, "f16"),
    "bert_fp16_b1_s128": ("bert_layer", {"batch": 1, "seq": 128}, "f16"),
    "gpt2_fp16_b8_s1024": ("gpt2_block", {"batch": 8, "seq": 1024}, "f16"),
    "llama_bf16_t2048": ("llama_layer", {"batch": 1, "seq": 2048}, "bf16"),
    "resnet_fp16_n32_56": ("resnet_block", {"n": 32}, "f16"),
    # The same block handed over channels-last (NHWC activations, OHWI filters), against
    # PyTorch on the same memory (its channels_last tensors).
    "resnet_nhwc_fp16_n32_56": ("resnet_block_nhwc", {"n": 32}, "f16"),
}

# The channels-last examples: their inputs and result are their NCHW twin's, permuted.
CHANNELS_LAST = {"resnet_block_nhwc": "resnet_block"}

TORCH_DTYPE = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}


def fir_in_dtype(text, dtype):
    """The example's text with its f32 tensors stored as `dtype`."""
    return re.sub(r"\bf32\[", dtype + "[", text)


def _weight(g, *shape, fan_in):
    return torch.randn(*shape, generator=g) / math.sqrt(fan_in)


def _affine(g, n, center):
    return center + 0.1 * torch.randn(n, generator=g)


def make_inputs(example, dims, seed=0):
    """The example's inputs, by parameter name, fp32 on the CPU."""
    if example in CHANNELS_LAST:  # NCHW -> NHWC, OIHW -> OHWI
        return {name: t.permute(0, 2, 3, 1).contiguous() if t.dim() == 4 else t
                for name, t in make_inputs(CHANNELS_LAST[example], dims, seed).items()}
    g = torch.Generator().manual_seed(seed)
    if example == "bert_layer":
        b, s, d, f = dims["batch"], dims["seq"], 768, 3072
        # Padding mask: sequence i keeps its first s - i*s/16 positions.
        keep = torch.tensor([max(1, s - (i * s) // 16) for i in range(b)])
        mask = torch.where(torch.arange(s)[None, :] < keep[:, None], 0.0, -10000.0)
        x = {"x": torch.randn(b, s, d, generator=g), "mask": mask.reshape(b, 1, 1, s)}
        for n in ("q", "k", "v", "o"):
            x["w" + n] = _weight(g, d, d, fan_in=d)
            x["b" + n] = _affine(g, d, 0.0)
        x.update(ln1_g=_affine(g, d, 1.0), ln1_b=_affine(g, d, 0.0),
                 w1=_weight(g, d, f, fan_in=d), b1=_affine(g, f, 0.0),
                 w2=_weight(g, f, d, fan_in=f), b2=_affine(g, d, 0.0),
                 ln2_g=_affine(g, d, 1.0), ln2_b=_affine(g, d, 0.0))
        return x
    if example == "gpt2_block":
        b, s, d = dims["batch"], dims["seq"], 768
        return {"x": torch.randn(b, s, d, generator=g),
                "ln1_g": _affine(g, d, 1.0), "ln1_b": _affine(g, d, 0.0),
                "w_qkv": _weight(g, d, 3 * d, fan_in=d), "b_qkv": _affine(g, 3 * d, 0.0),
                "w_proj": _weight(g, d, d, fan_in=d), "b_proj": _affine(g, d, 0.0),
                "ln2_g": _affine(g, d, 1.0), "ln2_b": _affine(g, d, 0.0),
                "w_fc": _weight(g, d, 4 * d, fan_in=d), "b_fc": _affine(g, 4 * d, 0.0),
                "w_out": _weight(g, 4 * d, d, fan_in=4 * d), "b_out": _affine(g, d, 0.0)}
    if example == "llama_layer":
        b, s, d, f, hd = dims["batch"], dims["seq"], 4096, 14336, 128
        inv = 1.0 / (10000.0 ** (torch.arange(0, hd, 2).float() / hd))
        angles = torch.outer(torch.arange(s).float(), inv)
        angles = torch.cat([angles, angles], dim=-1)
        return {"x": torch.randn(b, s, d, generator=g), "cos": angles.cos(), "sin": angles.sin(),
                "attn_norm": _affine(g, d, 1.0),
                "wq": _weight(g, d, d, fan_in=d), "wk": _weight(g, d, 1024, fan_in=d),
                "wv": _weight(g, d, 1024, fan_in=d), "wo": _weight(g, d, d, fan_in=d),
                "ffn_norm": _affine(g, d, 1.0),
                "w_gate": _weight(g, d, f, fan_in=d), "w_up": _weight(g, d, f, fan_in=d),
                "w_down": _weight(g, f, d, fan_in=f)}
    if example == "resnet_block":
        n, c, h, w = dims["n"], 64, 56, 56
        x = {"x": torch.randn(n, c, h, w, generator=g)}
        for i in (1, 2):
            x[f"w{i}"] = _weight(g, c, c, 3, 3, fan_in=c * 9)
            x[f"bn{i}_scale"] = _affine(g, c, 1.0)
            x[f"bn{i}_bias"] = _affine(g, c, 0.0)
            x[f"bn{i}_mean"] = 0.1 * torch.randn(c, generator=g)
            x[f"bn{i}_var"] = 0.5 + torch.rand(c, generator=g)
        return x
    raise KeyError(example)


def twin(example, channels_last=False):
    """The PyTorch function of `example`: f(**inputs) -> output."""
    if example in CHANNELS_LAST:
        # NHWC memory seen as NCHW tensors is PyTorch's channels_last: its kernels run on the
        # same bytes, and the result's permute back is its memory as it is.
        nchw = twin(CHANNELS_LAST[example])
        def channels_last_twin(**inputs):
            seen = {k: t.permute(0, 3, 1, 2) if t.dim() == 4 else t for k, t in inputs.items()}
            return nchw(**seen).permute(0, 2, 3, 1)
        return channels_last_twin
    if example == "bert_layer":
        def bert(x, mask, wq, bq, wk, bk, wv, bv, wo, bo, ln1_g, ln1_b, w1, b1, w2, b2,
                 ln2_g, ln2_b):
            b, s, d = x.shape
            heads = lambda t: t.view(b, s, 12, 64).transpose(1, 2)
            q, k, v = heads(x @ wq + bq), heads(x @ wk + bk), heads(x @ wv + bv)
            a = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
            a = a.transpose(1, 2).reshape(b, s, d)
            h = F.layer_norm(a @ wo + bo + x, (d,), ln1_g, ln1_b, eps=1e-12)
            f = F.gelu(h @ w1 + b1) @ w2 + b2
            return F.layer_norm(f + h, (d,), ln2_g, ln2_b, eps=1e-12)
        return bert
    if example == "gpt2_block":
        def gpt2(x, ln1_g, ln1_b, w_qkv, b_qkv, w_proj, b_proj, ln2_g, ln2_b, w_fc, b_fc,
                 w_out, b_out):
            b, s, d = x.shape
            h = F.layer_norm(x, (d,), ln1_g, ln1_b)
            q, k, v = (h @ w_qkv + b_qkv).view(b, s, 3, 12, 64).permute(2, 0, 3, 1, 4)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + a.transpose(1, 2).reshape(b, s, d) @ w_proj + b_proj
            m = F.layer_norm(x, (d,), ln2_g, ln2_b)
            return x + F.gelu(m @ w_fc + b_fc, approximate="tanh") @ w_out + b_out
        return gpt2
    if example == "llama_layer":
        def rotate(t, cos, sin):
            t1, t2 = t.chunk(2, dim=-1)
            return t * cos + torch.cat([-t2, t1], dim=-1) * sin

        def llama(x, cos, sin, attn_norm, wq, wk, wv, wo, ffn_norm, w_gate, w_up, w_down):
            b, s, d = x.shape
            h = F.rms_norm(x, (d,), attn_norm, eps=1e-5)
            q = (h @ wq).view(b, s, 32, 128).transpose(1, 2)
            k = (h @ wk).view(b, s, 8, 128).transpose(1, 2)
            v = (h @ wv).view(b, s, 8, 128).transpose(1, 2)
            q, k = rotate(q, cos, sin), rotate(k, cos, sin)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
            x = x + a.transpose(1, 2).reshape(b, s, d) @ wo
            m = F.rms_norm(x, (d,), ffn_norm, eps=1e-5)
            return x + (F.silu(m @ w_gate) * (m @ w_up)) @ w_down
        return llama
    if example == "resnet_block":
        def resnet(x, w1, bn1_scale, bn1_bias, bn1_mean, bn1_var, w2, bn2_scale, bn2_bias,
                   bn2_mean, bn2_var):
            y = F.conv2d(x, w1, padding=1)
            y = F.relu(F.batch_norm(y, bn1_mean, bn1_var, bn1_scale, bn1_bias, eps=1e-5))
            y = F.conv2d(y, w2, padding=1)
            y = F.batch_norm(y, bn2_mean, bn2_var, bn2_scale, bn2_bias, eps=1e-5)
            return F.relu(y + x)
        return resnet
    raise KeyError(example)


def to_device(inputs, dtype, channels_last=False):
    out = {}
    for name, t in inputs.items():
        t = t.to("cuda", TORCH_DTYPE[dtype])
        if channels_last and t.dim() == 4:
            t = t.contiguous(memory_format=torch.channels_last)
        out[name] = t
    return out


def save_npy(t, path, dtype):
    """`t` as fusec reads it: f16 as '<f2', bf16 as its raw bits ('<u2')."""
    t = t.to(TORCH_DTYPE[dtype]).contiguous().cpu()
    if dtype == "bf16":
        np.save(path, t.view(torch.int16).numpy().view(np.uint16))
    else:
        np.save(path, t.numpy())


def load_npy(path, dtype):
    a = np.load(path)
    if dtype == "bf16" and a.dtype == np.uint16:
        return torch.from_numpy(a.view(np.int16)).view(torch.bfloat16).float()
    return torch.from_numpy(a).float()


def relative_error(got, want):
    """max |got - want| / RMS(want)."""
    got, want = got.float(), want.float()
    rms = want.pow(2).mean().sqrt().item()
    return (got - want).abs().max().item() / rms if rms else float("inf")
