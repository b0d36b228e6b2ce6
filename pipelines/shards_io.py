"""Beam transforms that read and write cidermill shard datasets (format in corpus/).

Writing is deterministic whatever the runner or worker count: every row has a key; the number of
shards comes from the total size and the target shard size; a row goes to shard
hash(key) % n and rows inside a shard are sorted by key. Shards are written under temporary
names and renamed; the manifest is written last, in one final step, after every shard exists.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Iterable

import apache_beam as beam
import pyarrow as pa

from corpus.buckets import bucket_of
from corpus.errors import ShardError
from corpus.reader import ShardDataset
from corpus.writer import DEFAULT_TARGET_BYTES, finalize_dataset, prepare_output_dir, write_shard_file


def approx_size(value: Any) -> int:
    """Cheap estimate of a row's bytes in Arrow, used only to choose the number of shards."""
    if value is None:
        return 1
    if isinstance(value, (bytes, str)):
        return len(value) + 4
    if isinstance(value, dict):
        return sum(approx_size(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return 4 + sum(approx_size(v) for v in value)
    return 8


class _WriteShard(beam.DoFn):
    def __init__(self, out_dir: str, schema: pa.Schema):
        self.out_dir = out_dir
        self.schema = schema

    def process(self, element: tuple[int, Iterable[tuple[str, dict]]]):
        index, keyed = element
        rows = sorted(keyed, key=lambda kv: kv[0])
        seen = set()
        for k, _ in rows:
            if k in seen:
                raise ShardError(f"duplicate row key {k!r} in shard {index}: a stage emitted a row twice")
            seen.add(k)
        table = pa.Table.from_pylist([r for _, r in rows], schema=self.schema)
        yield write_shard_file(self.out_dir, index, table)


class WriteShards(beam.PTransform):
    """PCollection[dict] -> dataset at `out_dir`; outputs one element, the written Manifest.

    `key(row)` must be unique per row and deterministic (e.g. the row's id)."""

    def __init__(self, out_dir: str, kind: str, schema: pa.Schema, key: Callable[[dict], str] = lambda r: r["id"],
                 target_bytes: int = DEFAULT_TARGET_BYTES, provenance: dict[str, Any] | None = None,
                 overwrite: bool = False):
        super().__init__()
        self.out_dir, self.kind, self.schema, self.key = out_dir, kind, schema, key
        self.target_bytes = max(1, int(target_bytes))
        self.provenance = provenance or {}
        self.overwrite = overwrite

    def expand(self, rows):
        prepare_output_dir(self.out_dir, self.kind, job=self.provenance.get("job"), overwrite=self.overwrite)
        key, target = self.key, self.target_bytes
        keyed = rows | "Key" >> beam.Map(lambda r: (key(r), r))
        n_shards = (keyed
                    | "Size" >> beam.Map(lambda kv: approx_size(kv[1]))
                    | "Total" >> beam.CombineGlobally(sum)
                    | "NShards" >> beam.Map(lambda total: max(1, math.ceil(total / target))))
        infos = (keyed
                 | "Assign" >> beam.Map(lambda kv, n: (bucket_of(kv[0], n), kv), n=beam.pvalue.AsSingleton(n_shards))
                 | "Group" >> beam.GroupByKey()
                 | "Write" >> beam.ParDo(_WriteShard(self.out_dir, self.schema)))
        out_dir, kind, schema, prov = self.out_dir, self.kind, self.schema, self.provenance
        return (infos
                | "Collect" >> beam.combiners.ToList()
                | "Manifest" >> beam.Map(lambda shards: finalize_dataset(out_dir, kind, schema, shards, prov)))


class _ReadShard(beam.DoFn):
    def __init__(self, directory: str, columns):
        self.directory, self.columns = directory, columns

    def process(self, shard_index: int):
        ds = ShardDataset(self.directory)
        for batch in ds.iter_batches(self.columns, shards=[shard_index]):
            yield from batch.to_pylist()


class ReadShards(beam.PTransform):
    """dataset directory -> PCollection[dict], one shard per work item."""

    def __init__(self, directory: str, columns: list[str] | None = None):
        super().__init__()
        self.directory, self.columns = directory, columns
        self.dataset = ShardDataset(directory)  # validates now: a clear error before the job starts

    def expand(self, pbegin):
        n = len(self.dataset.manifest.shards)
        return (pbegin
                | "Shards" >> beam.Create(list(range(n)))
                | "Reshuffle" >> beam.Reshuffle()
                | "Read" >> beam.ParDo(_ReadShard(self.directory, self.columns)))


__all__ = ["WriteShards", "ReadShards", "approx_size"]
