"""Undo the last tokens written to a KV cache (speculative decoding rejects drafted tokens).

Full-length layers only need their counters moved back: positions past the counter are never
read and get overwritten. Sliding-window layers are ring buffers: writing token p overwrote the
slot of token p - window, which the window still needs once p is rejected. ``savepoint(cache, n)``
copies the slots the next ``n`` writes will overwrite (keys, values and, for int8 caches, their
scales); ``rollback(cache, sp, keep)`` keeps the first ``keep`` of those writes and restores the
rest. Layers without their own cache (the on-device model's block 2 reads block 1's last layer)
need nothing: they follow the layer they read.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass
class Savepoint:
    pos: int
    n: int
    saved: dict[str, tuple[torch.Tensor, list[torch.Tensor]]]  # ring layer key -> (slot index, copies)


def savepoint(cache, n: int) -> Savepoint:
    saved = {}
    for key, layer in cache.layers.items():
        if layer.window is None:
            continue
        if n > layer.slots:
            raise ValueError(f"cannot save {n} writes of a ring buffer of {layer.slots} slots")
        idx = torch.arange(layer.seen, layer.seen + n, device=layer.k.device) % layer.slots
        saved[key] = (idx, [t.index_select(2, idx) for t in layer.tensors()])
    return Savepoint(cache.pos, n, saved)


def rollback(cache, sp: Savepoint, keep: int) -> None:
    """Return ``cache`` to the savepoint plus the first ``keep`` tokens written since."""
    if not 0 <= keep <= sp.n or cache.pos - sp.pos > sp.n:
        raise ValueError(f"rollback keeps {keep} of {cache.pos - sp.pos} tokens written after a savepoint for {sp.n}")
    written = cache.pos - sp.pos
    keep = min(keep, written)
    for key, layer in cache.layers.items():
        layer.seen = sp.pos + keep
        if key in sp.saved and written > keep:
            idx, copies = sp.saved[key]
            for buf, old in zip(layer.tensors(), copies):
                buf.index_copy_(2, idx[keep:written], old[:, :, keep:written])
    cache.pos = sp.pos + keep
