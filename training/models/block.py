"""The transformer layer every architecture stacks: attention then an MLP that is SwiGLU or MoE.

It lives apart from layers.py (the building blocks) because it combines them with moe.py, which
itself builds on layers.py: keeping it here leaves the imports a straight line, layers -> moe -> block.
"""
from __future__ import annotations

import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

from training.models.config import ModelConfig
from training.models.layers import Attention, RMSNorm, SwiGLU
from training.models.moe import MoE


class TransformerLayer(nn.Module):
    """Pre-norm block: ``x += attn(norm(x)); x += mlp(norm(x))``; mlp is SwiGLU or MoE."""

    def __init__(self, cfg: ModelConfig, i: int, has_kv: bool = True):
        super().__init__()
        self.index = i
        self.attn_norm = RMSNorm(cfg.d_model, cfg.norm_eps, cfg.kernels)
        self.attn = Attention(cfg, window=cfg.layer_window(i), use_rope=cfg.layer_uses_rope(i),
                              has_kv=has_kv)
        self.mlp_norm = RMSNorm(cfg.d_model, cfg.norm_eps, cfg.kernels)
        self.mlp = MoE(cfg) if cfg.is_moe_layer(i) else SwiGLU(cfg.d_model, cfg.ffn_hidden, cfg.kernels)
        # activation checkpointing (LanguageModel.set_activation_checkpointing): keep only this
        # layer's input for backward and recompute the rest, trading one more forward for memory
        self.activation_checkpointing = False

    def forward(self, x, rope=None, doc_ids=None, cache=None, shared_kv=None):
        """Returns ``(x, (k, v), aux_loss or None)``."""
        if self.activation_checkpointing and self.training and torch.is_grad_enabled() and cache is None:
            return checkpoint(self._forward, x, rope, doc_ids, cache, shared_kv, use_reentrant=False)
        return self._forward(x, rope, doc_ids, cache, shared_kv)

    def _forward(self, x, rope, doc_ids, cache, shared_kv):
        h, kv = self.attn(self.attn_norm(x), rope, doc_ids, cache, shared_kv)
        x = x + h
        h, aux = self.mlp(self.mlp_norm(x))
        return x + h, kv, aux
