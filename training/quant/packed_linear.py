"""A Linear that keeps its 2-bit weights packed in memory and multiplies through the fused kernel.

``PackedLinear2`` holds the packed file's codes (uint8, four weights a byte) and fp16 steps as
buffers and computes ``x @ W.T`` with ``ops.dequant2_matmul`` (Triton on CUDA, the eager reference
on CPU): an eighth of fp16's weight memory on the device. ``packed.load_packed(path,
keep_packed=True)`` builds models with these in place of the 2-bit decoder Linears.
"""
from __future__ import annotations

import torch
import torch.nn as nn

from training.kernels import ops


class PackedLinear2(nn.Module):
    def __init__(self, codes: torch.Tensor, scale: torch.Tensor, group: int, impl: str = "auto"):
        super().__init__()
        self.register_buffer("codes", codes.contiguous())
        self.register_buffer("scale", scale.contiguous())
        self.group, self.impl = group, impl
        self.out_features, self.in_features = codes.shape[0], codes.shape[1] * 4

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ops.dequant2_matmul(x, self.codes, self.scale, self.group, impl=self.impl)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bits=2, group={self.group}"
