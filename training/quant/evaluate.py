"""Held-out loss of a (compressed) model: one full forward, or token by token through the KV cache.

``cached_loss(..., kv_int8=True)`` is how the 8-bit KV cache is measured: every token is decoded
one at a time, attending to the keys/values of all earlier tokens as read back from the int8
cache (training/models/kv_cache.py), exactly as generation would.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F


@torch.no_grad()
def heldout_loss(model, windows: torch.Tensor, batch: int = 32) -> float:
    """Mean next-token cross-entropy (nats) over ``windows [n, T+1]`` of token ids."""
    total, count = 0.0, 0
    for i in range(0, len(windows), batch):
        w = windows[i:i + batch]
        logits = model(w[:, :-1]).logits
        total += F.cross_entropy(logits.reshape(-1, logits.shape[-1]), w[:, 1:].reshape(-1),
                                 reduction="sum").item()
        count += w[:, 1:].numel()
    return total / count


@torch.no_grad()
def cached_loss(model, windows: torch.Tensor, kv_int8: bool, batch: int = 32) -> float:
    """The same loss, decoding one token at a time through a (float or int8) KV cache."""
    total, count = 0.0, 0
    T = windows.shape[1] - 1
    for i in range(0, len(windows), batch):
        w = windows[i:i + batch]
        cache = model.allocate_kv_cache(len(w), max_len=T, kv_int8=kv_int8)
        for t in range(T):
            logits = model(w[:, t:t + 1], cache=cache).logits[:, -1]
            total += F.cross_entropy(logits, w[:, t + 1], reduction="sum").item()
            count += len(w)
    return total / count


def perplexity(loss: float) -> float:
    return math.exp(loss)
