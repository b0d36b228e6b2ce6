"""Packing by length buckets for long-context stages, with document-boundary masks.

The stream packer (loader.py) cuts one endless token stream into rows, so a long document is split
wherever a row ends and a short one shares a row with whatever comes next. A long-context stage
wants whole documents instead:

- every document goes to the smallest bucket length that holds it (e.g. 4K, 16K, 65K);
- inside a bucket, documents are packed first-fit-decreasing into rows of exactly that length
  (the tail of a row is padding: its targets are ignored and it is its own document);
- a document longer than the largest bucket is split at sentence boundaries (the last sentence
  end that fits; a hard cut only when a whole bucket has none) and every split is recorded in
  ``splits`` (source, document, length, piece lengths, how it was cut);
- ``doc_ids`` mark the documents of a row, so the model restarts positions at each document
  and attention never crosses one (training.models.base); the last token of a document predicts
  nothing (its target is ignored).

Batches: batch ``g`` takes its source from the mixture weights and then a bucket of that source
(weighted by the tokens it holds), and holds ``max(1, tokens_per_batch // L)`` rows of that
bucket's length ``L``, so a batch has about the same tokens whatever its bucket. Each (source,
bucket) walks its rows in a per-epoch permutation. State is a few integers; resuming yields the
batches an uninterrupted run would have (``state_dict`` / ``load_state_dict``), and the tokens seen
per source travel with it.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from corpus.errors import ConfigError
from training.data.loader import IGNORE
from training.data.token_source import TokenSource

PAD = 0


def split_at_sentences(tokens: np.ndarray, limit: int, sentence_end: np.ndarray) -> tuple[list[int], str]:
    """Piece lengths (each <= limit) cutting after sentence-end tokens; and "sentence" or "hard"."""
    n, start, pieces, how = len(tokens), 0, [], "sentence"
    ends = np.nonzero(np.isin(tokens, sentence_end))[0] + 1 if len(sentence_end) else np.zeros(0, np.int64)
    while n - start > limit:
        ok = ends[(ends > start) & (ends <= start + limit)]
        cut = int(ok[-1]) if len(ok) else start + limit
        if not len(ok):
            how = "hard"
        pieces.append(cut - start)
        start = cut
    pieces.append(n - start)
    return pieces, how


def pack_first_fit(lengths: list[int], capacity: int) -> list[list[int]]:
    """Indices of ``lengths`` packed into bins of ``capacity``, first-fit over decreasing length."""
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    room: list[int] = []
    bins: list[list[int]] = []
    for i in order:
        for b, r in enumerate(room):
            if r >= lengths[i]:
                room[b] -= lengths[i]
                bins[b].append(i)
                break
        else:
            room.append(capacity - lengths[i])
            bins.append([i])
    return bins


class _Bucket:
    """Rows of one (source, bucket length): each row a list of (doc, offset, length) pieces."""

    def __init__(self, length: int, rows: list[list[tuple[int, int, int]]]):
        self.length, self.rows = length, rows
        self.tokens = sum(n for row in rows for _, _, n in row)
        self.epoch, self.pos = 0, 0

    def perm(self, seed: int, key: tuple[int, int]) -> np.ndarray:
        return np.random.default_rng([seed, *key, self.epoch]).permutation(len(self.rows))

    def take(self, seed: int, key: tuple[int, int]) -> list[tuple[int, int, int]]:
        row = self.rows[int(self.perm(seed, key)[self.pos])]
        self.pos += 1
        if self.pos >= len(self.rows):
            self.pos, self.epoch = 0, self.epoch + 1
        return row


class BucketLoader:
    """Batches ``{"input_ids", "targets", "doc_ids", "sources"}`` of whole documents by length bucket."""

    def __init__(self, sources: list[tuple[str, TokenSource, float]], buckets: list[int], tokens_per_batch: int,
                 seed: int = 0, sentence_end_ids: list[int] | None = None, rank: int = 0, world_size: int = 1):
        if not sources:
            raise ConfigError("data mixture is empty")
        if not buckets or any(b < 2 for b in buckets) or sorted(set(buckets)) != list(buckets):
            raise ConfigError(f"data.buckets must be increasing lengths >= 2, got {buckets}")
        weights = np.array([w for _, _, w in sources], dtype=np.float64)
        if (weights < 0).any() or weights.sum() <= 0:
            raise ConfigError(f"mixture weights must be >= 0 and not all 0: {weights.tolist()}")
        self.names = [n for n, _, _ in sources]
        self.srcs = [s for _, s, _ in sources]
        self.cdf = np.cumsum(weights / weights.sum())
        self.buckets, self.tokens_per_batch, self.seed = list(buckets), tokens_per_batch, seed
        self.rank, self.world = rank, world_size
        self.sentence_end = np.array(sorted(set(sentence_end_ids or [])), dtype=np.uint32)
        self.splits: list[dict[str, Any]] = []
        self.tables = [self._pack(i) for i in range(len(sources))]
        self.g = 0
        self.seen = {n: 0 for n in self.names}

    # -- packing ------------------------------------------------------------------------------
    def _pack(self, si: int) -> list[_Bucket]:
        src, top = self.srcs[si], self.buckets[-1]
        pieces: list[tuple[int, int, int]] = []   # (doc, offset, length)
        for d in range(src.num_docs):
            n = int(src.length[d])
            if n <= top:
                pieces.append((d, 0, n))
                continue
            lens, how = split_at_sentences(src.doc_tokens(d), top, self.sentence_end)
            self.splits.append({"source": self.names[si], "doc": d, "length": n, "pieces": lens, "cut": how})
            off = 0
            for k in lens:
                pieces.append((d, off, k))
                off += k
        by_bucket: list[list[tuple[int, int, int]]] = [[] for _ in self.buckets]
        for p in pieces:
            by_bucket[int(np.searchsorted(self.buckets, p[2]))].append(p)
        out = []
        for L, ps in zip(self.buckets, by_bucket):
            bins = pack_first_fit([p[2] for p in ps], L)
            out.append(_Bucket(L, [[ps[i] for i in b] for b in bins]))
        return out

    # -- batches ------------------------------------------------------------------------------
    def _pick(self, g: int) -> tuple[int, int]:
        u = np.random.default_rng([self.seed, 1_000_033, g]).random(2)
        si = int(np.searchsorted(self.cdf, u[0], side="right").clip(0, len(self.cdf) - 1))
        mass = np.array([b.tokens for b in self.tables[si]], dtype=np.float64)
        bi = int(np.searchsorted(np.cumsum(mass / mass.sum()), u[1], side="right").clip(0, len(mass) - 1))
        return si, bi

    def _row(self, si: int, bucket: _Bucket) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        L = bucket.length
        ids = np.full(L, PAD, np.int64)
        tgt = np.full(L, IGNORE, np.int64)
        doc = np.zeros(L, np.int64)
        at = 0
        row = bucket.take(self.seed, (si, self.buckets.index(L)))
        for k, (d, off, n) in enumerate(row):
            toks = self.srcs[si].doc_tokens(d)[off:off + n].astype(np.int64)
            ids[at:at + n] = toks
            tgt[at:at + n - 1] = toks[1:]
            doc[at:at + n] = k
            at += n
        doc[at:] = len(row)   # padding: a document of its own, attended by nothing else
        return ids, tgt, doc, at

    def next_batch(self) -> dict[str, Any]:
        import torch
        while True:
            g = self.g
            self.g += 1
            si, bi = self._pick(g)
            bucket = self.tables[si][bi]
            n_rows = max(1, self.tokens_per_batch // bucket.length)
            rows = [self._row(si, bucket) for _ in range(n_rows)]
            if g % self.world == self.rank:
                break
        ids, tgt, doc, real = zip(*rows)
        ids, tgt, doc = np.stack(ids), np.stack(tgt), np.stack(doc)
        self.seen[self.names[si]] += int(sum(real))
        return {"input_ids": torch.from_numpy(ids), "targets": torch.from_numpy(tgt),
                "doc_ids": torch.from_numpy(doc), "sources": [self.names[si]] * n_rows}

    # -- resume -------------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        return {"g": self.g, "seed": self.seed, "names": self.names, "buckets": self.buckets,
                "rank": self.rank, "world": self.world, "seen": dict(self.seen),
                "cursors": [[[b.epoch, b.pos] for b in t] for t in self.tables]}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if (state.get("names"), state.get("seed"), state.get("buckets")) != (self.names, self.seed, self.buckets):
            raise ConfigError(f"loader state is for mixture {state.get('names')} seed {state.get('seed')} "
                              f"buckets {state.get('buckets')}, not {self.names} seed {self.seed} buckets {self.buckets}")
        if (state.get("rank"), state.get("world")) != (self.rank, self.world):
            raise ConfigError("loader state was saved with a different rank/world size")
        self.g = int(state["g"])
        self.seen = {n: int(state["seen"].get(n, 0)) for n in self.names}
        for t, cur in zip(self.tables, state["cursors"]):
            for b, (e, p) in zip(t, cur):
                b.epoch, b.pos = int(e), int(p)
