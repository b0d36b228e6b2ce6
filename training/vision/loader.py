"""Mixed text + image-text batches: token shards, pairs and interleaved documents by weight.

Every batch row comes from one source, drawn by the mixture weights from a seeded generator
indexed by the row's global position (like training.data.loader.PackedLoader):

- a token source gives a packed row of ``seq_len + 1`` tokens (documents separated by doc_ids,
  exactly as the text loader packs them; it reuses that loader's stream);
- an image-text source gives one sample (training.vision.samples), padded with EOS to
  ``seq_len + 1``; padding targets are -100.

Sources of image-text samples are built once, at construction (every image decoded and checked,
drops recorded in ``report()``). Per source, samples are visited in a per-epoch permutation.
``state_dict()`` holds the global row index and each source's cursor: loading it continues with
exactly the batches an uninterrupted run would have produced.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import torch

from corpus.errors import ConfigError
from training.data.loader import IGNORE, _Cursor, _Stream
from training.data.token_source import TokenSource
from training.vision.samples import Sample

_BLOCK = 4096


class SampleSource:
    """A fixed list of samples (from pairs and/or interleaved datasets)."""

    def __init__(self, samples: list[Sample]):
        if not samples:
            raise ConfigError("an image-text source has no usable samples (see the loader report)")
        self.samples = samples

    def __len__(self) -> int:
        return len(self.samples)


class _SampleCursor:
    def __init__(self, src: SampleSource, seed: int, index: int):
        self.src, self.seed, self.index = src, seed, index
        self.epoch, self.pos = 0, 0
        self._perm_epoch, self._perm = -1, np.zeros(0, np.int64)

    def next(self) -> Sample:
        if self._perm_epoch != self.epoch:
            self._perm = np.random.default_rng([self.seed, 7919, self.index, self.epoch]).permutation(len(self.src))
            self._perm_epoch = self.epoch
        s = self.src.samples[int(self._perm[self.pos])]
        self.pos += 1
        if self.pos >= len(self._perm):
            self.epoch, self.pos = self.epoch + 1, 0
        return s


class MultimodalLoader:
    """Batches ``{"input_ids", "targets", "doc_ids", "images" (tensor or None), "sources"}``."""

    def __init__(self, sources: list[tuple[str, TokenSource | SampleSource, float]], seq_len: int, batch_size: int,
                 eos: int, seed: int = 0):
        if not sources:
            raise ConfigError("multimodal mixture is empty")
        w = np.array([x for _, _, x in sources], np.float64)
        if (w < 0).any() or w.sum() <= 0:
            raise ConfigError(f"mixture weights must be >= 0 and not all 0: {w.tolist()}")
        self.names = [n for n, _, _ in sources]
        self.cdf = np.cumsum(w / w.sum())
        self.cursors: list[Any] = [(_Stream(s, seed, i) if isinstance(s, TokenSource) else _SampleCursor(s, seed, i))
                                   for i, (_, s, _) in enumerate(sources)]
        self.seq_len, self.batch_size, self.eos, self.seed = seq_len, batch_size, eos, seed
        self.g = 0
        self._block_id, self._block = -1, np.zeros(0, np.int64)

    def _choice(self, g: int) -> int:
        b = g // _BLOCK
        if b != self._block_id:
            u = np.random.default_rng([self.seed, 1_000_033, b]).random(_BLOCK)
            self._block = np.searchsorted(self.cdf, u, side="right").clip(0, len(self.cdf) - 1)
            self._block_id = b
        return int(self._block[g % _BLOCK])

    def _row(self, i: int):
        """(tokens [T+1], doc ids [T+1], valid [T+1] (targets kept), images)."""
        n = self.seq_len + 1
        c = self.cursors[i]
        if isinstance(c, _Stream):
            pieces, lens = c.take(n, copy=True)
            toks = np.concatenate(pieces).astype(np.int64)
            return toks, np.repeat(np.arange(len(lens)), lens), np.ones(n, bool), []
        s = c.next()
        L = len(s.ids)
        toks = np.full(n, self.eos, np.int64)
        toks[:L] = s.ids
        docs = np.zeros(n, np.int64)
        docs[L:] = 1
        valid = np.arange(n) < L
        return toks, docs, valid, s.images

    def next_batch(self) -> dict[str, Any]:
        T, B = self.seq_len, self.batch_size
        toks = np.empty((B, T + 1), np.int64)
        docs = np.empty((B, T + 1), np.int64)
        valid = np.empty((B, T + 1), bool)
        images, srcs = [], []
        for b in range(B):
            i = self._choice(self.g)
            self.g += 1
            toks[b], docs[b], valid[b], ims = self._row(i)
            images.extend(ims)
            srcs.append(self.names[i])
        targets = toks[:, 1:].copy()
        targets[(docs[:, 1:] != docs[:, :-1]) | ~valid[:, 1:]] = IGNORE
        return {"input_ids": torch.from_numpy(toks[:, :-1].copy()), "targets": torch.from_numpy(targets),
                "doc_ids": torch.from_numpy(docs[:, :-1].copy()),
                "images": torch.from_numpy(np.stack(images)) if images else None, "sources": srcs}

    def state_dict(self) -> dict[str, Any]:
        cur = []
        for c in self.cursors:
            cur.append([c.cur.epoch, c.cur.pos, c.cur.offset] if isinstance(c, _Stream) else [c.epoch, c.pos])
        return {"g": self.g, "seed": self.seed, "names": self.names, "cursors": cur}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if state.get("names") != self.names or state.get("seed") != self.seed:
            raise ConfigError(f"loader state is for mixture {state.get('names')} seed {state.get('seed')}, "
                              f"not {self.names} seed {self.seed}")
        self.g = int(state["g"])
        for c, v in zip(self.cursors, state["cursors"]):
            if isinstance(c, _Stream):
                c.cur = _Cursor(*(int(x) for x in v))
            else:
                c.epoch, c.pos = int(v[0]), int(v[1])
