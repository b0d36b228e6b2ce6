"""Token-level long-context probes: a learnable filler language with key-value pairs to retrieve.

Used to measure length generalisation on tiny models: train at length T, then evaluate held-out
loss and retrieval accuracy at 2T, 4T, 8T on documents drawn the same way.

- Filler: a noisy bigram chain over ``FILLER`` ids (next = a fixed successor of the previous token
  with probability ``1 - noise``, else uniform), so held-out loss has a floor a model can reach
  and a long document is no harder per token than a short one.
- Pairs: ``KEY k v`` triples (k, v from disjoint id ranges) spread uniformly over the document,
  keys distinct within a document. The document ends ``QUERY k``; the target after it is that
  key's ``v``, placed anywhere earlier (a needle when there is one pair, key-value retrieval
  with several).

Everything is drawn from ``numpy.random.default_rng([seed, index])``: document i is the same
whatever else is drawn.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

PAD, KEY, QUERY = 0, 1, 2
KEYS = range(10, 60)
VALUES = range(60, 110)
FILLER = range(110, 256)
VOCAB = 256


@dataclass
class Probe:
    tokens: np.ndarray   # [T] the document, ending with QUERY k
    answer: int          # the v stored with k
    needle_at: int       # position of the KEY marker of the queried pair


def _successors(seed: int) -> np.ndarray:
    return np.random.default_rng([seed, 7]).permutation(len(FILLER)) + FILLER.start


def filler(rng: np.random.Generator, n: int, succ: np.ndarray, noise: float) -> np.ndarray:
    out = np.empty(n, np.int64)
    t = int(rng.integers(FILLER.start, FILLER.stop))
    for i in range(n):
        out[i] = t
        t = int(rng.integers(FILLER.start, FILLER.stop)) if rng.random() < noise else int(succ[t - FILLER.start])
    return out


def make_probe(length: int, index: int, seed: int = 0, pairs: int = 4, noise: float = 0.2) -> Probe:
    """One document of exactly ``length`` tokens (>= 3 * pairs + 8)."""
    if length < 3 * pairs + 8:
        raise ValueError(f"length {length} too short for {pairs} pairs")
    rng = np.random.default_rng([seed, index, length])
    succ = _successors(seed)
    body = length - 2
    doc = filler(rng, body, succ, noise)
    keys = rng.choice(np.arange(KEYS.start, KEYS.stop), pairs, replace=False)
    vals = rng.integers(VALUES.start, VALUES.stop, pairs)
    slots = np.sort(rng.choice(body // 3, pairs, replace=False)) * 3   # non-overlapping triples
    for p, k, v in zip(slots, keys, vals):
        doc[p:p + 3] = (KEY, k, v)
    q = int(rng.integers(pairs))
    tokens = np.concatenate([doc, [QUERY, keys[q]]]).astype(np.int64)
    return Probe(tokens, int(vals[q]), int(slots[q]))


def batch(length: int, start: int, n: int, seed: int = 0, pairs: int = 4, noise: float = 0.2):
    """``n`` probes from index ``start``: (tokens [n, length], answers [n])."""
    ps = [make_probe(length, start + i, seed, pairs, noise) for i in range(n)]
    return np.stack([p.tokens for p in ps]), np.array([p.answer for p in ps])
