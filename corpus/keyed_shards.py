"""Rows -> shards by key: the one rule that makes a dataset's bytes independent of how it was made.

The number of shards comes from the rows' total approximate size and the target shard size; a row
goes to shard key_hash(key) % n; rows inside a shard are sorted by key. pipelines/shards_io.py
applies the rule across Beam workers (rows travel as Arrow IPC blobs) and `write_keyed_rows` in
one process; both build the shard tables with `keyed_table` and `shard_table`, so they write the
same bytes.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Iterable, Iterator

import numpy as np
import pyarrow as pa

from corpus.arrow_rows import int64_array, string_array, table_from_rows, uint64_array, uint64_values
from corpus.buckets import key_hash
from corpus.errors import ShardError
from corpus.manifest import Manifest
from corpus.writer import DEFAULT_TARGET_BYTES, finalize_dataset, write_shard_file

KEY, HASH = "__key", "__hash"  # columns a keyed table carries beside the schema's, dropped before writing


def approx_size(value: Any) -> int:
    """Cheap estimate of a row's bytes in Arrow, used only to choose the number of shards."""
    if value is None:
        return 1
    if isinstance(value, (bytes, str)):
        return len(value) + 4
    if isinstance(value, dict):  # a row: one loop over its fields, recursing only into nested values
        total = 0
        for v in value.values():
            if v is None:
                total += 1
            elif isinstance(v, (bytes, str)):
                total += len(v) + 4
            elif isinstance(v, (dict, list, tuple)):
                total += approx_size(v)
            else:
                total += 8
        return total
    if isinstance(value, (list, tuple)):
        return 4 + sum(approx_size(v) for v in value)
    return 8


def shard_count(total_bytes: int, target_bytes: int) -> int:
    return max(1, math.ceil(total_bytes / max(1, int(target_bytes))))


def keyed_table(rows: list[dict], schema: pa.Schema, keys: list[str]) -> pa.Table:
    """Rows as an Arrow table of `schema` plus their key and key hash."""
    table = table_from_rows(rows, schema)  # = pa.Table.from_pylist, without importing pandas
    hashes = [key_hash(k) for k in keys]
    return table.append_column(KEY, string_array(keys)).append_column(HASH, uint64_array(hashes))


def table_blob(table: pa.Table) -> bytes:
    """A (keyed) table as one Arrow IPC stream: how keyed rows travel between a job's workers."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    return sink.getvalue().to_pybytes()


def blob_table(blob: bytes) -> pa.Table:
    return pa.ipc.open_stream(pa.py_buffer(blob)).read_all()


def split_by_shard(table: pa.Table, n: int) -> Iterator[tuple[int, pa.Table]]:
    """A keyed table -> (shard index, its rows for that shard), shard = key hash % n."""
    if n == 1:  # every row is shard 0's: no copy
        if table.num_rows:
            yield 0, table
        return
    shard = uint64_values(table.column(HASH)) % np.uint64(n)
    for s in np.unique(shard):
        yield int(s), table.take(int64_array(np.flatnonzero(shard == s)))


def shard_table(parts: Iterable[pa.Table], schema: pa.Schema, index: int) -> pa.Table:
    """One shard's keyed tables -> the table to write: sorted by key, the schema's columns, one
    chunk. Two rows with one key are a stage's bug (a row emitted twice): a ShardError."""
    import pyarrow.compute as pc  # here: a one-process writer sorts rows in Python (rows_by_shard)

    table = pa.concat_tables(list(parts))
    table = table.take(pc.sort_indices(table.column(KEY)))  # UTF-8 byte order = str order
    keys = table.column(KEY).combine_chunks()
    if len(keys) > 1:
        same = pc.equal(keys.slice(1), keys.slice(0, len(keys) - 1))
        if pc.any(same).as_py():
            k = keys[int(np.flatnonzero(same.to_numpy(zero_copy_only=False))[0])].as_py()
            raise ShardError(f"duplicate row key {k!r} in shard {index}: a stage emitted a row twice")
    return table.select(schema.names).combine_chunks()


def write_keyed_rows(out_dir: str, kind: str, schema: pa.Schema, rows: list[dict],
                     key: Callable[[dict], str] = lambda r: r["id"], target_bytes: int = DEFAULT_TARGET_BYTES,
                     provenance: dict[str, Any] | None = None) -> Manifest:
    """Every row in one process -> the dataset at `out_dir` (made ready by prepare_output_dir), as
    the Beam writer would write it; the manifest last. The rows are put in shard and key order
    here, so each shard's table is built once in its final order (no Arrow sort and copy)."""
    provenance = provenance or {}
    infos = []
    if rows:
        n = shard_count(sum(approx_size(r) for r in rows), target_bytes)
        for index, part in rows_by_shard(rows, [key(r) for r in rows], n):
            infos.append(write_shard_file(out_dir, index, table_from_rows(part, schema)))
    return finalize_dataset(out_dir, kind, schema, infos, provenance)


def rows_by_shard(rows: list[dict], keys: list[str], n: int) -> Iterator[tuple[int, list[dict]]]:
    """(shard index, its rows sorted by key) for each shard that gets rows, as `split_by_shard` and
    `shard_table` order them (str order is UTF-8 byte order), with the same error for a key
    that occurs twice in a shard."""
    order = sorted(range(len(rows)), key=keys.__getitem__)
    if n == 1:
        groups = {0: order}
    else:
        groups = {}
        for i in order:
            groups.setdefault(key_hash(keys[i]) % n, []).append(i)
    for index in sorted(groups):
        idx = groups[index]
        for a, b in zip(idx, idx[1:]):
            if keys[a] == keys[b]:
                raise ShardError(f"duplicate row key {keys[a]!r} in shard {index}: a stage emitted a row twice")
        yield index, [rows[i] for i in idx]
