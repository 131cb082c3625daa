#!/usr/bin/env python3
"""Exports the real-model ONNX fixtures of issue 17 with PyTorch, random weights.

    scripts/export_onnx_models.py OUT [--size small|real] [--only NAME,...]

Writes OUT/NAME/model.onnx (opset 17, the TorchScript exporter, batch and
sequence dims named), OUT/NAME/input_K.npy for the model's inputs in order
and OUT/NAME/output_0.npy, PyTorch's result on those inputs, for:

  bert_layer   transformers' BertLayer (self-attention with an additive mask,
               GeLU(erf) FFN, two post-LayerNorms)
  gpt2_block   transformers' GPT2Block (causal attention, GeLU(tanh))
  llama_layer  transformers' LlamaDecoderLayer (RMSNorm, rotary embeddings,
               grouped-query attention, SwiGLU)
  resnet18     torchvision's ResNet-18 layout in plain torch (conv, batch
               norm, ReLU, max pool, residual blocks, global pool, fc)
  unet_decoder a UNet decoder stage (ConvTranspose2d, concat with the skip,
               conv + batch norm + ReLU) and a segmentation head after a
               bilinear upsample

Small sizes are the CI fixtures (test/onnx/models); real sizes are exported
and compared on the GPU machine (PyTorch is not part of `make setup`: it
pulls hundreds of packages). Needs torch, transformers and onnx.
"""
import argparse
import os

import numpy as np
import torch
from torch import nn

SIZES = {
    "small": dict(batch=2, seq=16, hidden=64, heads=4, kv_heads=2, ffn=128, image=32,
                  width=8),
    "real": dict(batch=8, seq=512, hidden=768, heads=12, kv_heads=4, ffn=3072, image=224,
                 width=64),
}


class BertLayer(nn.Module):
    def __init__(self, s):
        super().__init__()
        from transformers import BertConfig
        from transformers.models.bert.modeling_bert import BertLayer as HfBertLayer
        cfg = BertConfig(hidden_size=s["hidden"], num_attention_heads=s["heads"],
                         intermediate_size=s["ffn"], hidden_act="gelu",
                         attn_implementation="eager")
        self.layer = HfBertLayer(cfg)

    def forward(self, x, mask):
        out = self.layer(x, attention_mask=mask)
        return out[0] if isinstance(out, tuple) else out

    @staticmethod
    def inputs(s):
        mask = torch.zeros(s["batch"], 1, 1, s["seq"])
        mask[:, :, :, -3:] = -10000.0  # padding at the end of each sequence
        return [torch.randn(s["batch"], s["seq"], s["hidden"]), mask]

    names = ["x", "mask"]
    dynamic = {"x": {0: "batch", 1: "seq"}, "mask": {0: "batch", 3: "seq"}}


class Gpt2Block(nn.Module):
    def __init__(self, s):
        super().__init__()
        from transformers import GPT2Config
        from transformers.models.gpt2.modeling_gpt2 import GPT2Block as HfBlock
        cfg = GPT2Config(n_embd=s["hidden"], n_head=s["heads"], n_inner=s["ffn"],
                         attn_implementation="eager", n_positions=max(1024, s["seq"]))
        self.block = HfBlock(cfg)

    def forward(self, x):
        out = self.block(x)
        return out[0] if isinstance(out, tuple) else out

    @staticmethod
    def inputs(s):
        return [torch.randn(s["batch"], s["seq"], s["hidden"])]

    names = ["x"]
    dynamic = {"x": {0: "batch", 1: "seq"}}


class LlamaLayer(nn.Module):
    def __init__(self, s):
        super().__init__()
        from transformers import LlamaConfig
        from transformers.models.llama.modeling_llama import (LlamaDecoderLayer,
                                                              LlamaRotaryEmbedding)
        cfg = LlamaConfig(hidden_size=s["hidden"], num_attention_heads=s["heads"],
                          num_key_value_heads=s["kv_heads"], intermediate_size=s["ffn"],
                          attn_implementation="eager", max_position_embeddings=4096)
        self.layer = LlamaDecoderLayer(cfg, layer_idx=0)
        self.rotary = LlamaRotaryEmbedding(cfg)

    def forward(self, x, mask):
        positions = torch.arange(x.shape[1], device=x.device).unsqueeze(0)
        cos, sin = self.rotary(x, positions)
        out = self.layer(x, attention_mask=mask, position_embeddings=(cos, sin),
                         position_ids=positions)
        return out[0] if isinstance(out, tuple) else out

    @staticmethod
    def inputs(s):
        causal = torch.triu(torch.full((s["seq"], s["seq"]), -10000.0), diagonal=1)
        return [torch.randn(s["batch"], s["seq"], s["hidden"]),
                causal.expand(s["batch"], 1, s["seq"], s["seq"]).contiguous()]

    names = ["x", "mask"]
    dynamic = {"x": {0: "batch", 1: "seq"}, "mask": {0: "batch", 2: "seq", 3: "seq"}}


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                      nn.BatchNorm2d(cout))

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return torch.relu(y + (self.down(x) if self.down is not None else x))


class ResNet18(nn.Module):
    def __init__(self, s):
        super().__init__()
        w = s["width"]
        self.stem = nn.Sequential(nn.Conv2d(3, w, 7, 2, 3, bias=False), nn.BatchNorm2d(w),
                                  nn.ReLU(), nn.MaxPool2d(3, 2, 1))
        blocks, cin = [], w
        for i, cout in enumerate([w, 2 * w, 4 * w, 8 * w]):
            blocks += [BasicBlock(cin, cout, 1 if i == 0 else 2), BasicBlock(cout, cout, 1)]
            cin = cout
        self.blocks = nn.Sequential(*blocks)
        self.fc = nn.Linear(cin, 1000)
        for m in self.modules():  # statistics that are not the identity
            if isinstance(m, nn.BatchNorm2d):
                nn.init.uniform_(m.running_mean, -0.1, 0.1)
                nn.init.uniform_(m.running_var, 0.5, 1.5)
                nn.init.uniform_(m.weight, 0.5, 1.5)

    def forward(self, x):
        y = self.blocks(self.stem(x))
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(y, 1), 1))

    @staticmethod
    def inputs(s):
        return [torch.randn(s["batch"], 3, s["image"], s["image"])]

    names = ["x"]
    dynamic = {"x": {0: "batch"}}


class UnetDecoder(nn.Module):
    """A UNet decoder stage and a segmentation head: ConvTranspose2d(k2, s2)
    up from the bottleneck, concatenated with the skip, two 3x3 conv + batch
    norm + ReLU, a bilinear 2x upsample (align_corners = False) and a 1x1
    conv to 21 classes."""

    def __init__(self, s):
        super().__init__()
        w = s["width"]
        self.up = nn.ConvTranspose2d(4 * w, 2 * w, 2, stride=2)
        self.convs = nn.Sequential(
            nn.Conv2d(4 * w, 2 * w, 3, padding=1, bias=False), nn.BatchNorm2d(2 * w), nn.ReLU(),
            nn.Conv2d(2 * w, 2 * w, 3, padding=1, bias=False), nn.BatchNorm2d(2 * w), nn.ReLU())
        self.head = nn.Conv2d(2 * w, 21, 1)
        for m in self.modules():
            if isinstance(m, nn.BatchNorm2d):
                nn.init.uniform_(m.running_mean, -0.1, 0.1)
                nn.init.uniform_(m.running_var, 0.5, 1.5)

    def forward(self, x, skip):
        y = self.convs(torch.cat([self.up(x), skip], dim=1))
        y = nn.functional.interpolate(y, scale_factor=2, mode="bilinear", align_corners=False)
        return self.head(y)

    @staticmethod
    def inputs(s):
        w, side = s["width"], s["image"] // 4
        return [torch.randn(s["batch"], 4 * w, side // 2, side // 2),
                torch.randn(s["batch"], 2 * w, side, side)]

    names = ["x", "skip"]
    dynamic = {"x": {0: "batch"}, "skip": {0: "batch"}}


MODELS = {"bert_layer": BertLayer, "gpt2_block": Gpt2Block, "llama_layer": LlamaLayer,
          "resnet18": ResNet18, "unet_decoder": UnetDecoder}


def export(name, size, out):
    torch.manual_seed(0)
    s = SIZES[size]
    cls = MODELS[name]
    model = cls(s).eval()
    inputs = cls.inputs(s)
    folder = os.path.join(out, name)
    os.makedirs(folder, exist_ok=True)
    with torch.no_grad():
        expected = model(*inputs)
        path = os.path.join(folder, "model.onnx")
        torch.onnx.export(model, tuple(inputs), path, input_names=cls.names,
                          output_names=["out"], dynamic_axes=dict(cls.dynamic, out={0: "batch"}),
                          opset_version=17, dynamo=False)
    for i, t in enumerate(inputs):
        np.save(os.path.join(folder, "input_%d.npy" % i), t.numpy())
    np.save(os.path.join(folder, "output_0.npy"), expected.numpy())
    print("%s: %s, %d bytes" % (name, path, os.path.getsize(path)))


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out")
    p.add_argument("--size", default="small", choices=sorted(SIZES))
    p.add_argument("--only", help="comma-separated model names")
    args = p.parse_args()
    for name in (args.only.split(",") if args.only else MODELS):
        try:
            export(name, args.size, args.out)
        except Exception as e:  # report and go on to the next model
            print("%s: export failed: %s: %s" % (name, type(e).__name__, e))


if __name__ == "__main__":
    main()
