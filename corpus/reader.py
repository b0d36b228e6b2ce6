"""Reading a shard dataset: streaming record batches and memory-mapped random access.

Shards are Arrow IPC files, so `pyarrow.memory_map` gives zero-copy access; the reader checks
every shard against the manifest (present, same schema) before handing out rows.
"""
from __future__ import annotations

import bisect
import os
from collections import OrderedDict
from typing import Any, Iterator, Sequence

import pyarrow as pa

from corpus import objectstore
from corpus.errors import ShardError
from corpus.manifest import Manifest, read_manifest, shard_file


class _OpenShard:
    """One memory-mapped shard with the row offset of each record batch (for random access)."""

    def __init__(self, path: str, reader: pa.ipc.RecordBatchFileReader):
        self.reader = reader
        try:
            counts = [reader.get_batch(i).num_rows for i in range(reader.num_record_batches)]
        except (pa.ArrowInvalid, OSError) as e:
            raise ShardError(f"{path}: corrupt record batch ({e}); run `cidermill shards verify`") from None
        self.batch_starts = [0]
        for c in counts:
            self.batch_starts.append(self.batch_starts[-1] + c)

    def row(self, i: int) -> pa.RecordBatch:
        b = bisect.bisect_right(self.batch_starts, i) - 1
        return self.reader.get_batch(b).slice(i - self.batch_starts[b], 1)


class ShardDataset:
    """A dataset directory opened for reading. Raises ShardError naming any missing/foreign shard."""

    def __init__(self, directory: str, max_open: int = 16):
        self.directory = directory
        self.manifest: Manifest = read_manifest(directory)
        self._starts = [0]
        remote = objectstore.is_remote(directory)
        present = set(objectstore.listdir(directory)) if remote else None
        for s in self.manifest.shards:
            path = shard_file(directory, s.path)  # refuses links and paths resolving outside DIR
            if (s.path not in present) if remote else not os.path.exists(path):
                raise ShardError(f"{path}: shard listed in the manifest is missing")
            self._starts.append(self._starts[-1] + s.rows)
        self._open: OrderedDict[int, _OpenShard] = OrderedDict()
        self._max_open = max_open

    # -- metadata -----------------------------------------------------------------------------
    @property
    def kind(self) -> str:
        return self.manifest.kind

    @property
    def schema(self) -> pa.Schema:
        return self.manifest.schema

    @property
    def shard_paths(self) -> list[str]:
        return [objectstore.join(self.directory, s.path) for s in self.manifest.shards]

    def __len__(self) -> int:
        return self.manifest.rows

    # -- streaming ----------------------------------------------------------------------------
    def _open_file(self, path: str) -> pa.ipc.RecordBatchFileReader:
        shard_file(self.directory, path.rsplit("/", 1)[-1])  # again at open: a link swapped in later is refused too
        try:
            src = objectstore.open_random_access(path) if objectstore.is_remote(path) else pa.memory_map(path, "r")
            reader = pa.ipc.open_file(src)
        except (pa.ArrowInvalid, OSError) as e:
            raise ShardError(f"{path}: unreadable shard ({e}); run `cidermill shards verify`") from None
        if not reader.schema.equals(self.schema):
            raise ShardError(f"{path}: shard schema does not match the manifest schema")
        return reader

    def iter_batches(self, columns: Sequence[str] | None = None, shards: Sequence[int] | None = None
                     ) -> Iterator[pa.RecordBatch]:
        """Yield record batches shard by shard (optionally a subset of shards and columns)."""
        idx = range(len(self.manifest.shards)) if shards is None else shards
        for i in idx:
            path = self.shard_paths[i]
            reader = self._open_file(path)
            for b in range(reader.num_record_batches):
                try:
                    batch = reader.get_batch(b)
                except (pa.ArrowInvalid, OSError) as e:
                    raise ShardError(f"{path}: corrupt record batch {b} ({e})") from None
                yield batch.select(list(columns)) if columns else batch

    def iter_slice(self, shard: int, start: int, stop: int, columns: Sequence[str] | None = None
                   ) -> Iterator[pa.RecordBatch]:
        """Rows [start, stop) of one shard, as record batches: a work item smaller than a shard,
        so a few large shards still spread over every worker. Only the batches the range
        overlaps are read (random access, so an object store serves just those byte ranges)."""
        path = self.shard_paths[shard]
        reader = self._open_file(path)
        offset = 0
        for b in range(reader.num_record_batches):
            if offset >= stop:
                break
            try:
                batch = reader.get_batch(b)
            except (pa.ArrowInvalid, OSError) as e:
                raise ShardError(f"{path}: corrupt record batch {b} ({e})") from None
            lo, hi = max(start - offset, 0), min(stop - offset, batch.num_rows)
            offset += batch.num_rows
            if lo < hi:
                part = batch.slice(lo, hi - lo)
                yield part.select(list(columns)) if columns else part

    def iter_rows(self, columns: Sequence[str] | None = None) -> Iterator[dict[str, Any]]:
        for batch in self.iter_batches(columns):
            yield from batch.to_pylist()

    def to_table(self, columns: Sequence[str] | None = None) -> pa.Table:
        batches = list(self.iter_batches(columns))
        schema = pa.schema([self.schema.field(c) for c in columns]) if columns else self.schema
        return pa.Table.from_batches(batches, schema=schema)

    # -- random access ------------------------------------------------------------------------
    def _shard(self, k: int) -> _OpenShard:
        if k in self._open:
            self._open.move_to_end(k)
            return self._open[k]
        path = self.shard_paths[k]
        sh = _OpenShard(path, self._open_file(path))  # _open_file validates the schema with a clear error
        self._open[k] = sh
        if len(self._open) > self._max_open:
            self._open.popitem(last=False)
        return sh

    def _locate(self, i: int) -> tuple[int, int]:
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"row {i} out of range for dataset of {n} rows")
        k = bisect.bisect_right(self._starts, i) - 1
        return k, i - self._starts[k]

    def __getitem__(self, i: int) -> dict[str, Any]:
        k, j = self._locate(i)
        return self._shard(k).row(j).to_pylist()[0]

    def take(self, indices: Sequence[int]) -> pa.Table:
        rows = []
        for i in indices:
            k, j = self._locate(int(i))
            rows.append(self._shard(k).row(j))
        return pa.Table.from_batches(rows, schema=self.schema)


def open_dataset(directory: str) -> ShardDataset:
    return ShardDataset(directory)


# Bytes of shard file one read work item covers (a shard is cut into several). Work items are cut
# by bytes, not rows: the per-document work of a job grows with a document's length, and the shards
# of a real dataset differ in it (12,000 Debian chunks: 64-row items held 0.1 to 0.6 MB of text, and
# a Dask partition of 24 such items took 1.5 s or 5.8 s by its bytes). Beam's multi_processing runner
# splits a stage's input among its workers by element count and a Dask partition holds whole items,
# so items of equal cost are what balances them; a static split evens out only over many items, hence
# small ones (1,024-row items once left one of two workers 36.8 CPU-s against the other's 19.3).
ITEM_BYTES = 256 << 10
MAX_ROWS_PER_ITEM = 4096  # a dataset of tiny rows still gets several items per shard


def read_items(dataset: ShardDataset, rows_per_item: int | None = None,
               item_bytes: int = ITEM_BYTES) -> list[tuple[int, int, int]]:
    """(shard, start, stop) row ranges covering the dataset: each about `item_bytes` of its shard
    file (the shard's bytes per row, from the manifest, times its rows), or `rows_per_item` rows
    each when given. Work items smaller than a shard let a dataset of a few large shards spread
    over every worker (Beam's, or the local engine's processes); the order of rows never matters,
    writers sort by key."""
    items = []
    for k, info in enumerate(dataset.manifest.shards):
        step = rows_per_item or _rows_for(info.rows, info.bytes, item_bytes)
        for start in range(0, info.rows, step):
            items.append((k, start, min(start + step, info.rows)))
    return items


def _rows_for(rows: int, nbytes: int, item_bytes: int) -> int:
    """Rows of a shard of `rows` rows and `nbytes` bytes that make about `item_bytes`, cut into
    equal items (so a shard never ends in a sliver)."""
    if rows <= 0:
        return 1
    n_items = max(1, round(nbytes / max(1, item_bytes)), -(-rows // MAX_ROWS_PER_ITEM))
    return max(1, -(-rows // n_items))
