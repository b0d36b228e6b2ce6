"""Building blocks: RMSNorm, RoPE positions, SwiGLU, grouped-query attention, the transformer layer.

Every numerical op goes through ``training.kernels.ops`` with ``impl=cfg.kernels`` (Triton on
CUDA, eager reference on CPU by default). Tensors: activations ``[B, T, d]``; attention heads
``[B, H, T, head_dim]``.
"""
from __future__ import annotations

import torch
import torch.nn as nn

from training.kernels import ops
from training.models.config import ModelConfig


class Linear(nn.Linear):
    """Bias-free ``nn.Linear``. Its default init is skipped on the meta device (where it would pull
    in torch's Python reference ops, seconds of imports); models re-initialise every weight
    in ``LanguageModel.init_weights`` anyway."""

    def __init__(self, d_in: int, d_out: int, **kw):
        super().__init__(d_in, d_out, bias=False, **kw)

    def reset_parameters(self) -> None:
        if not self.weight.is_meta:
            super().reset_parameters()


class Embedding(nn.Embedding):
    """``nn.Embedding`` with the same meta-device shortcut as ``Linear``."""

    def reset_parameters(self) -> None:
        if not self.weight.is_meta:
            super().reset_parameters()


class RMSNorm(nn.Module):
    """``x / rms(x) * weight`` over the last dimension (no bias, weight starts at 1)."""

    def __init__(self, dim: int, eps: float, impl: str = "auto"):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps
        self.impl = impl

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ops.rms_norm(x, self.weight, self.eps, impl=self.impl)


def positions_from_doc_ids(doc_ids: torch.Tensor) -> torch.Tensor:
    """Position of each token inside its document: restarts at 0 wherever ``doc_ids`` changes.

    ``doc_ids [B, T]`` -> ``[B, T]``. A document is a run of equal consecutive ids, so give every
    packed document a different id from its neighbours (e.g. 0, 0, 0, 1, 1, 2, ...).
    """
    B, T = doc_ids.shape
    idx = torch.arange(T, device=doc_ids.device).expand(B, T)
    start = torch.ones_like(doc_ids, dtype=torch.bool)
    start[:, 1:] = doc_ids[:, 1:] != doc_ids[:, :-1]
    start_idx = torch.where(start, idx, torch.zeros_like(idx)).cummax(dim=1).values
    return idx - start_idx


def rope_tables(positions: torch.Tensor, cfg: ModelConfig) -> tuple[torch.Tensor, torch.Tensor]:
    """cos/sin ``[T, hd/2]`` (1-D positions) or ``[B, T, hd/2]`` (per-row positions)."""
    return ops.rope_cos_sin(positions, cfg.attn_head_dim, cfg.rope_theta)


class SwiGLU(nn.Module):
    """``w_down(silu(w_gate x) * w_up x)``; weights ``w_gate/w_up [hidden, d]``, ``w_down [d, hidden]``."""

    def __init__(self, d: int, hidden: int, impl: str = "auto"):
        super().__init__()
        self.w_gate = Linear(d, hidden)
        self.w_up = Linear(d, hidden)
        self.w_down = Linear(hidden, d)
        self.impl = impl

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, None]:
        return self.w_down(ops.swiglu(self.w_gate(x), self.w_up(x), impl=self.impl)), None


class Attention(nn.Module):
    """Grouped-query causal attention with optional QK-norm, RoPE and a sliding window.

    ``has_kv=False`` (on-device block 2): no K/V projections; ``forward`` must be given
    ``shared_kv`` (keys already normed and rotated) from the layer that owns them.
    """

    def __init__(self, cfg: ModelConfig, window: int | None = None, use_rope: bool = True,
                 has_kv: bool = True):
        super().__init__()
        d, H, Hkv, hd = cfg.d_model, cfg.n_heads, cfg.n_kv_heads, cfg.attn_head_dim
        self.n_heads, self.n_kv_heads, self.head_dim = H, Hkv, hd
        self.window, self.use_rope, self.has_kv = window, use_rope, has_kv
        self.impl = cfg.kernels
        self.wq = Linear(d, H * hd)
        if has_kv:
            self.wk = Linear(d, Hkv * hd)
            self.wv = Linear(d, Hkv * hd)
        self.wo = Linear(H * hd, d)
        self.q_norm = RMSNorm(hd, cfg.norm_eps, cfg.kernels) if cfg.qk_norm else None
        self.k_norm = RMSNorm(hd, cfg.norm_eps, cfg.kernels) if cfg.qk_norm and has_kv else None

    def forward(self, x, rope=None, doc_ids=None, cache=None, shared_kv=None):
        """Returns ``(output [B,T,d], (k, v))``; ``(k, v)`` are the keys/values attended to
        (past cache + new tokens when a cache is given), for layers that share them."""
        B, T, _ = x.shape
        q = self.wq(x).view(B, T, self.n_heads, self.head_dim).transpose(1, 2)
        if self.q_norm is not None:
            q = self.q_norm(q)
        if self.has_kv:
            k = self.wk(x).view(B, T, self.n_kv_heads, self.head_dim).transpose(1, 2)
            v = self.wv(x).view(B, T, self.n_kv_heads, self.head_dim).transpose(1, 2)
            if self.k_norm is not None:
                k = self.k_norm(k)
            if self.use_rope:
                q, k = ops.apply_rope(q, k, *rope, impl=self.impl)
            if cache is not None:
                k, v = cache.update(k, v)
        else:
            if shared_kv is None:
                raise ValueError("a layer without K/V projections needs shared_kv")
            k, v = shared_kv
            if self.use_rope:
                q = ops.apply_rope(q, q, *rope, impl=self.impl)[0]
        y = ops.attention(q, k, v, causal=True, window=self.window,
                          doc_ids=doc_ids if cache is None else None, impl=self.impl)
        y = y.transpose(1, 2).reshape(B, T, self.n_heads * self.head_dim)
        return self.wo(y), (k, v)
