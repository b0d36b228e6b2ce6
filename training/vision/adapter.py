"""Vision-language adapter: encoder patch features -> a fixed number of tokens in the LM's width.

    patches [B, g*g, width] -> RMSNorm -> one transformer layer (attention + SwiGLU over the patches)
    -> adaptive average pooling of the g x g grid to a k x k grid (k*k = n_tokens, row-major)
    -> RMSNorm -> Linear(width, d_lm) -> GELU -> Linear(d_lm, d_lm)   => [B, n_tokens, d_lm]

``n_tokens`` must be a square (1, 4, 9, 16, ...) so pooling keeps the image's 2-D layout: token
i*k + j summarises the (i, j) cell of the image, which is what grounding answers refer to.
"""
from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from corpus.errors import ConfigError
from training.models.layers import RMSNorm
from training.vision.config import VisionConfig
from training.vision.encoder import Block, init_by_name


class VLAdapter(nn.Module):
    def __init__(self, vcfg: VisionConfig, d_lm: int, n_tokens: int = 16):
        super().__init__()
        k = math.isqrt(n_tokens)
        if n_tokens < 1 or k * k != n_tokens:
            raise ConfigError(f"adapter n_tokens must be a square number (1, 4, 9, 16, ...), got {n_tokens}")
        self.vcfg, self.d_lm, self.n_tokens, self.side = vcfg, d_lm, n_tokens, k
        plain = vcfg.__class__(**{**vcfg.to_dict(), "window": 0, "global_blocks": [], "registers": 0,
                                  "full_global": False, "name": "adapter"})
        self.layer = Block(plain, 0)
        self.norm = RMSNorm(vcfg.width, vcfg.norm_eps, vcfg.kernels)
        self.proj_in = nn.Linear(vcfg.width, d_lm)
        self.proj_out = nn.Linear(d_lm, d_lm)
        self._seed = int(torch.randint(0, 2**62, (1,), device="cpu").item())
        init_by_name(self, self._seed, lambda name: vcfg.init_std)

    def forward(self, patches: torch.Tensor) -> torch.Tensor:
        B, N, D = patches.shape
        g = self.vcfg.grid
        x = self.layer(patches, B)                               # one window = the whole grid
        x = x.transpose(1, 2).reshape(B, D, g, g)
        x = F.adaptive_avg_pool2d(x, self.side).flatten(2).transpose(1, 2)   # [B, k*k, D]
        return self.proj_out(F.gelu(self.proj_in(self.norm(x))))
