"""KV cache for generation: preallocated per layer, ring buffers for sliding-window layers, int8 option.

- Global layers keep every position: buffers ``[B, Hkv, max_len, hd]``.
- Sliding-window layers keep a ring buffer of ``window`` slots; position p lives in slot
  ``p % window``. Keys are stored after RoPE, so their slot order does not matter; they are read
  back in position order.
- Layers that own no K/V (the on-device model's block 2) get no cache at all.
- ``int8=True`` stores int8 values with one float32 scale per head vector (per token and head,
  ``ops.quantize_kv_int8``), read back dequantised: about half the bytes of bf16.

``LayerKVCache.update(k_new, v_new)`` returns the keys/values the new queries attend to: the
cached past (in position order) followed by the new ones, then stores the new ones. An int8
cache returns the new ones as stored (quantised and back), so running T tokens in one call reads
the same values as T single steps (speculative decoding verifies drafts in one call). Queries are end-aligned with those keys, as ``ops.attention`` expects.
"""
from __future__ import annotations

import torch

from training.kernels import ops


class LayerKVCache:
    def __init__(self, batch: int, n_kv_heads: int, head_dim: int, max_len: int,
                 window: int | None = None, int8: bool = False, dtype=torch.float32, device=None,
                 impl: str = "auto"):
        self.window = window
        self.slots = max_len if window is None else min(window, max_len)
        self.int8, self.dtype, self.impl = int8, dtype, impl
        self.seen = 0  # tokens written so far
        shape = (batch, n_kv_heads, self.slots, head_dim)
        store = torch.int8 if int8 else dtype
        self.k = torch.zeros(shape, dtype=store, device=device)
        self.v = torch.zeros(shape, dtype=store, device=device)
        if int8:
            self.k_scale = torch.zeros(shape[:3] + (1,), dtype=torch.float32, device=device)
            self.v_scale = torch.zeros(shape[:3] + (1,), dtype=torch.float32, device=device)

    def tensors(self) -> list[torch.Tensor]:
        return [self.k, self.v] + ([self.k_scale, self.v_scale] if self.int8 else [])

    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in self.tensors())

    def _slot_index(self, start: int, stop: int) -> torch.Tensor:
        return torch.arange(start, stop, device=self.k.device) % self.slots

    def read(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Cached keys/values in position order: the last ``min(seen, slots)`` positions."""
        n = min(self.seen, self.slots)
        if self.window is None:
            idx = slice(0, n)
            k, v = self.k[:, :, idx], self.v[:, :, idx]
            ks, vs = (self.k_scale[:, :, idx], self.v_scale[:, :, idx]) if self.int8 else (None, None)
        else:
            idx = self._slot_index(self.seen - n, self.seen)
            k, v = self.k.index_select(2, idx), self.v.index_select(2, idx)
            ks, vs = ((self.k_scale.index_select(2, idx), self.v_scale.index_select(2, idx))
                      if self.int8 else (None, None))
        if self.int8:
            k = ops.dequantize_kv_int8(k, ks, self.dtype, impl=self.impl)
            v = ops.dequantize_kv_int8(v, vs, self.dtype, impl=self.impl)
        return k, v

    def write(self, k_new: torch.Tensor, v_new: torch.Tensor, quantized=None) -> None:
        """Store new K/V; ``quantized``: their int8 ``((kq, ks), (vq, vs))`` when the caller has them."""
        T = k_new.shape[2]
        if self.window is None and self.seen + T > self.slots:
            raise ValueError(f"KV cache holds {self.slots} positions; cannot add {T} after {self.seen}")
        keep = min(T, self.slots)  # a ring buffer only needs the last `slots` of a long chunk
        k_new, v_new = k_new[:, :, T - keep:], v_new[:, :, T - keep:]
        idx = self._slot_index(self.seen + T - keep, self.seen + T)
        if self.int8:
            (kq, ks), (vq, vs) = quantized or (ops.quantize_kv_int8(k_new, impl=self.impl),
                                               ops.quantize_kv_int8(v_new, impl=self.impl))
            kq, ks, vq, vs = (t[:, :, t.shape[2] - keep:] for t in (kq, ks, vq, vs))
            pairs = [(self.k, kq), (self.v, vq), (self.k_scale, ks), (self.v_scale, vs)]
        else:
            pairs = [(self.k, k_new), (self.v, v_new)]
        for buf, new in pairs:
            buf.index_copy_(2, idx, new.to(buf.dtype))
        self.seen += T

    def update(self, k_new: torch.Tensor, v_new: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        k_past, v_past = self.read()
        if self.int8:  # attend to the new tokens as stored: one chunk of T tokens == T single steps
            kqs = ops.quantize_kv_int8(k_new, impl=self.impl)
            vqs = ops.quantize_kv_int8(v_new, impl=self.impl)
            self.write(k_new, v_new, quantized=(kqs, vqs))  # quantised once, stored and attended to
            k_new = ops.dequantize_kv_int8(*kqs, k_new.dtype, impl=self.impl)
            v_new = ops.dequantize_kv_int8(*vqs, v_new.dtype, impl=self.impl)
        else:
            self.write(k_new, v_new)
        return (torch.cat([k_past.to(k_new.dtype), k_new], dim=2),
                torch.cat([v_past.to(v_new.dtype), v_new], dim=2))


class KVCache:
    """All layers' caches of one model for one batch of sequences, plus the position counter.

    ``layers`` maps a layer key (``"3"``; ``"track.layer"`` for PT-MoE) to its ``LayerKVCache``;
    layers that read another layer's K/V have no entry.
    """

    def __init__(self, specs: dict[str, int | None], batch: int, n_kv_heads: int, head_dim: int,
                 max_len: int, int8: bool = False, dtype=torch.float32, device=None,
                 impl: str = "auto"):
        self.max_len = max_len
        self.pos = 0  # tokens already in the cache (the next token's position)
        self.layers = {key: LayerKVCache(batch, n_kv_heads, head_dim, max_len, window, int8, dtype,
                                         device, impl)
                       for key, window in specs.items()}

    def layer(self, key: str) -> LayerKVCache | None:
        return self.layers.get(key)

    def nbytes(self) -> int:
        """Bytes allocated for keys, values and scales, summed over the cache tensors."""
        return sum(c.nbytes() for c in self.layers.values())
