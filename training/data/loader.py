"""Packed, mixed, deterministic and exactly resumable batches of token sequences.

- Packing: each sequence is `seq_len + 1` tokens cut from a stream of documents (each document
  ends with EOS). Document boundaries are respected by `doc_ids`: the model blocks attention
  across documents and restarts RoPE positions at each document start; targets that would predict
  the next document's first token are masked (-100).
- Mixture: sequence g comes from dataset `choose(seed, g)` drawn by the mixture weights; each
  dataset has its own cursor over a per-epoch permutation of its documents.
- Ranks: every rank walks the same global stream and keeps sequences g with g % world == rank, so
  ranks never overlap and together cover the stream exactly.
- Resume: `state_dict()` is a few integers (global sequence index and each cursor); loading it
  continues with exactly the batches an uninterrupted run would have produced. `seen` (tokens
  yielded per source) travels with it, so a run's report counts each source exactly.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

import numpy as np
import torch

from corpus.errors import ConfigError
from training.data.token_source import TokenSource

IGNORE = -100
_BLOCK = 4096  # mixture choices are drawn in blocks of this many sequences


@dataclass
class _Cursor:
    epoch: int = 0
    pos: int = 0      # index into this epoch's permutation
    offset: int = 0   # tokens already consumed from the current document


class _Stream:
    def __init__(self, src: TokenSource, seed: int, index: int):
        self.src, self.seed, self.index = src, seed, index
        self.cur = _Cursor()
        self._perm_epoch = -1
        self._perm = np.zeros(0, np.int64)

    def perm(self) -> np.ndarray:
        if self._perm_epoch != self.cur.epoch:
            self._perm = np.random.default_rng([self.seed, self.index, self.cur.epoch]).permutation(self.src.num_docs)
            self._perm_epoch = self.cur.epoch
        return self._perm

    def take(self, n: int, copy: bool) -> tuple[list[np.ndarray], list[int]]:
        """Consume n tokens; return the pieces (if copy) and their lengths (one per document segment)."""
        pieces, lens = [], []
        while n > 0:
            perm = self.perm()
            doc = int(perm[self.cur.pos])
            length = int(self.src.length[doc])
            k = min(n, length - self.cur.offset)
            if copy:
                pieces.append(self.src.doc_tokens(doc)[self.cur.offset:self.cur.offset + k])
            lens.append(k)
            n -= k
            self.cur.offset += k
            if self.cur.offset >= length:
                self.cur.offset = 0
                self.cur.pos += 1
                if self.cur.pos >= len(perm):
                    self.cur.pos = 0
                    self.cur.epoch += 1
        return pieces, lens


class PackedLoader:
    """Iterate batches of `{"input_ids", "targets", "doc_ids"}` (torch LongTensors [B, T])."""

    def __init__(self, sources: list[tuple[str, TokenSource, float]], seq_len: int, batch_size: int, seed: int = 0,
                 rank: int = 0, world_size: int = 1):
        if not sources:
            raise ConfigError("data mixture is empty")
        if seq_len < 1 or batch_size < 1:
            raise ConfigError(f"seq_len ({seq_len}) and batch_size ({batch_size}) must be positive")
        if not 0 <= rank < world_size:
            raise ConfigError(f"rank {rank} not in world of size {world_size}")
        weights = np.array([w for _, _, w in sources], dtype=np.float64)
        if (weights < 0).any() or weights.sum() <= 0:
            raise ConfigError(f"mixture weights must be >= 0 and not all 0: {weights.tolist()}")
        self.names = [n for n, _, _ in sources]
        self.cdf = np.cumsum(weights / weights.sum())
        self.streams = [_Stream(src, seed, i) for i, (_, src, _) in enumerate(sources)]
        self.seq_len, self.batch_size, self.seed = seq_len, batch_size, seed
        self.rank, self.world = rank, world_size
        self.g = 0  # next global sequence index
        self.seen = {n: 0 for n in self.names}  # tokens this rank has yielded, per source
        self._block_id, self._block = -1, np.zeros(0, np.int64)

    # -- mixture ------------------------------------------------------------------------------
    def _choice(self, g: int) -> int:
        b = g // _BLOCK
        if b != self._block_id:
            u = np.random.default_rng([self.seed, 1_000_003, b]).random(_BLOCK)
            self._block = np.searchsorted(self.cdf, u, side="right").clip(0, len(self.cdf) - 1)
            self._block_id = b
        return int(self._block[g % _BLOCK])

    # -- sequences ----------------------------------------------------------------------------
    def _next_sequence(self) -> tuple[np.ndarray, np.ndarray, int] | None:
        """Advance the global stream by one sequence; return it only if it belongs to this rank."""
        g = self.g
        self.g += 1
        mine = g % self.world == self.rank
        ds = self._choice(g)
        pieces, lens = self.streams[ds].take(self.seq_len + 1, copy=mine)
        if not mine:
            return None
        tokens = np.concatenate(pieces) if len(pieces) > 1 else pieces[0]
        doc = np.repeat(np.arange(len(lens), dtype=np.int64), lens)
        return tokens, doc, ds

    def sequences(self) -> Iterator[tuple[np.ndarray, np.ndarray, int]]:
        while True:
            s = self._next_sequence()
            if s is not None:
                yield s

    def next_batch(self) -> dict[str, Any]:
        T = self.seq_len
        toks = np.empty((self.batch_size, T + 1), dtype=np.int64)
        docs = np.empty((self.batch_size, T + 1), dtype=np.int64)
        srcs = []
        it = self.sequences()
        for b in range(self.batch_size):
            t, d, ds = next(it)
            toks[b], docs[b] = t, d
            srcs.append(self.names[ds])
            self.seen[self.names[ds]] += T
        targets = toks[:, 1:].copy()
        targets[docs[:, 1:] != docs[:, :-1]] = IGNORE
        return {"input_ids": torch.from_numpy(toks[:, :-1].copy()), "targets": torch.from_numpy(targets),
                "doc_ids": torch.from_numpy(docs[:, :-1].copy()), "sources": srcs}

    def __iter__(self):
        while True:
            yield self.next_batch()

    # -- resume -------------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        return {"g": self.g, "seed": self.seed, "rank": self.rank, "world": self.world, "names": self.names,
                "seen": dict(self.seen), "cursors": [[s.cur.epoch, s.cur.pos, s.cur.offset] for s in self.streams]}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if state.get("names") != self.names or state.get("seed") != self.seed:
            raise ConfigError(f"loader state is for mixture {state.get('names')} seed {state.get('seed')}, "
                              f"not {self.names} seed {self.seed}")
        if state.get("world") != self.world or state.get("rank") != self.rank:
            raise ConfigError("loader state was saved with a different rank/world size")
        self.g = int(state["g"])
        self.seen = {n: int((state.get("seen") or {}).get(n, 0)) for n in self.names}
        for s, (e, p, o) in zip(self.streams, state["cursors"]):
            s.cur = _Cursor(int(e), int(p), int(o))
