"""Per-item random streams: item i of a run depends only on (seed, kind, i), never on order.

That is what makes output identical whatever the worker count or runner: any worker can
generate any item on its own.
"""
from __future__ import annotations

import zlib

import numpy as np


def item_rng(seed: int, kind: str, index: int) -> np.random.Generator:
    """A numpy Generator for item `index` of `kind` in a run seeded with `seed`."""
    tag = zlib.crc32(kind.encode("utf-8"))
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([int(seed) & 0xFFFFFFFF, tag, int(index)])))


def item_id(kind: str, seed: int, index: int) -> str:
    """Stable row id; sorts in generation order within one kind and seed."""
    return f"synth-{kind}-{int(seed)}-{int(index):08d}"


def choice(rng: np.random.Generator, seq):
    """One element of a sequence (numpy's choice would turn strings into numpy scalars)."""
    return seq[int(rng.integers(len(seq)))]


def sample(rng: np.random.Generator, seq, k: int) -> list:
    """k distinct elements of seq, in random order."""
    idx = rng.permutation(len(seq))[:k]
    return [seq[int(i)] for i in idx]
