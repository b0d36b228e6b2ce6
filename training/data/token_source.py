"""A token dataset (corpus.schemas.TOKENS) opened as memory-mapped numpy views, one per record batch.

Token shards hold one document per row (`tokens: list<uint32>`), so the values buffer of each
record batch is a contiguous uint32 array and its offsets give document boundaries: nothing is
copied or decoded to read tokens.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa

from corpus.buckets import bucket_of
from corpus.errors import ShardError
from corpus.reader import ShardDataset
from corpus.verify import verify_dataset


class TokenSource:
    """All documents of a token dataset: `doc_tokens(i)` is a zero-copy uint32 view."""

    def __init__(self, directory: str, check: bool = True, holdout_permille: int = 0, split: str = "train"):
        if check:
            problems = verify_dataset(directory, check_hashes=False)
            if problems:
                raise ShardError(f"{problems[0]} (token dataset {directory}; run `cidermill shards verify`)")
        self.directory = directory
        self.ds = ShardDataset(directory)
        if "tokens" not in self.ds.schema.names:
            raise ShardError(f"{directory}: not a token dataset (no `tokens` column; kind={self.ds.kind})")
        self._values: list[np.ndarray] = []
        chunk_ids, starts, lengths = [], [], []
        for batch in self.ds.iter_batches(["tokens", "doc_id"]):
            col = batch.column(0)
            if isinstance(col, pa.ChunkedArray):
                col = col.combine_chunks()
            offsets = col.offsets.to_numpy()
            values = col.values.to_numpy(zero_copy_only=False)
            if values.dtype != np.uint32:
                values = values.astype(np.uint32)
            keep = np.ones(len(offsets) - 1, dtype=bool)
            if holdout_permille:
                ids = batch.column(1).to_pylist()
                held = np.array([bucket_of(d, 1000) < holdout_permille for d in ids])
                keep = held if split == "eval" else ~held
            lens = np.diff(offsets)
            keep &= lens > 0
            k = len(self._values)
            self._values.append(values)
            idx = np.nonzero(keep)[0]
            chunk_ids.append(np.full(len(idx), k, dtype=np.int32))
            starts.append(offsets[:-1][idx].astype(np.int64))
            lengths.append(lens[idx].astype(np.int64))
        self.chunk = np.concatenate(chunk_ids) if chunk_ids else np.zeros(0, np.int32)
        self.start = np.concatenate(starts) if starts else np.zeros(0, np.int64)
        self.length = np.concatenate(lengths) if lengths else np.zeros(0, np.int64)
        if len(self.length) == 0:
            raise ShardError(f"{directory}: no documents with tokens{' in the ' + split + ' split' if holdout_permille else ''}")

    @property
    def num_docs(self) -> int:
        return int(len(self.length))

    @property
    def num_tokens(self) -> int:
        return int(self.length.sum())

    def max_token(self) -> int:
        """The largest token id in the dataset (to check it against the model's vocabulary)."""
        return max((int(v.max()) for v in self._values if len(v)), default=-1)

    def doc_tokens(self, i: int) -> np.ndarray:
        s = self.start[i]
        return self._values[self.chunk[i]][s:s + self.length[i]]
