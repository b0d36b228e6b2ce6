"""Atomic writing of Arrow IPC shards and of the dataset that holds them.

Every shard is written under a temporary name and renamed into place; the manifest is written
last. A run that dies midway leaves no manifest, so the directory never looks complete.
Beam pipelines use `write_shard_file` + `finalize_dataset` (see pipelines/shards_io.py);
plain Python code uses `DatasetWriter`.
"""
from __future__ import annotations

import glob
import hashlib
import os
import re
import shutil
import uuid
from typing import Any, Iterable

import pyarrow as pa

from corpus import objectstore
from corpus.errors import ShardError
from corpus.report import REPORT_DIR
from corpus.manifest import (MANIFEST_NAME, Manifest, ShardInfo, manifest_path, read_manifest,
                             shard_name, write_manifest)

DEFAULT_TARGET_BYTES = 64 * 1024 * 1024
_PART_RE = re.compile(r"^part-\d{5}\.arrow$")
_STAGING = ".staging"


def file_sha256(path: str) -> tuple[str, int]:
    h = hashlib.sha256()
    size = 0
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
            size += len(chunk)
    return h.hexdigest(), size


def staging_dir(directory: str) -> str:
    """Where a distributed writer keeps its intermediate files (pipelines/shards_io.py); removed
    once the job that wrote the dataset has finished (drop_finished_staging), when the dataset is
    prepared again, or by the command whose job failed (end_job_outputs)."""
    return objectstore.join(directory, _STAGING)


def stage_bytes(directory: str, data: bytes, name: str | None = None) -> str:
    """`data` as a file of the dataset's staging area, named by its content (a task that runs
    twice writes the same file) unless the caller names it, written whole or not at all -> its name."""
    name = name or hashlib.sha256(data).hexdigest()[:40]
    if not objectstore.is_remote(directory):
        os.makedirs(staging_dir(directory), exist_ok=True)
    objectstore.write_whole(objectstore.join(staging_dir(directory), name), data)
    return name


# output directories this process's Beam jobs write (their drivers' writers note them), so that a
# command that fails can take away what its job left in the ones it did not finish
_NOTED: set[str] = set()


def note_job_output(directory: str) -> None:
    """Called where a job is built (the driver): `directory` is an output of this job."""
    _NOTED.add(directory)


def noted_outputs() -> set[str]:
    """The outputs noted so far by this process's jobs (a copy)."""
    return set(_NOTED)


def end_job_outputs(failed: bool) -> list[str]:
    """When a command ends: forget the noted outputs. If it failed, first take away what its job
    left in each one that has no manifest (so it did not finish): the staging area (rows that no
    manifest names, as many bytes as the output), shard files written before the failure (a reader
    that globs part-*.arrow, as pyarrow.dataset does, would take them for a dataset), temporary
    shard files and the report. An output with a manifest is a finished dataset: only its staging
    area goes, if still there (drop_finished_staging). -> the paths removed."""
    gone: list[str] = []
    for d in sorted(_NOTED):
        try:
            gone += remove_unfinished(d) if failed else drop_finished_staging(d)
        except Exception:  # noqa: BLE001  (best effort; a rerun's prepare removes them too)
            continue
    _NOTED.clear()
    return gone


def drop_finished_staging(directory: str) -> list[str]:
    """The staging area of a dataset whose manifest exists, once the job that wrote it has finished
    -> the paths removed. Not earlier, in the job's own manifest step: a distributed runner may run
    a shard's writer again after that step (Dask recomputes the results a killed worker held that
    the driver had not fetched yet: the manifest step's, and with it the writer's), and the writer
    reads its rows from the staged blobs."""
    remote = objectstore.is_remote(directory)
    if not (objectstore.exists(manifest_path(directory)) if remote else os.path.isfile(manifest_path(directory))):
        return []
    st = staging_dir(directory)
    if remote:
        if _STAGING not in objectstore.listdir(directory):
            return []
        objectstore.remove(st, recursive=True)
    else:
        if not os.path.isdir(st):
            return []
        shutil.rmtree(st, ignore_errors=True)
    return [st]


def remove_unfinished(directory: str) -> list[str]:
    """What a writer left in `directory` when it holds no manifest (a job that failed part-way)
    -> the paths removed; a finished dataset is left alone."""
    remote = objectstore.is_remote(directory)
    if not remote and not os.path.isdir(directory):
        return []
    entries = objectstore.listdir(directory) if remote else os.listdir(directory)
    return [] if MANIFEST_NAME in entries else _remove_written(directory, entries)


def _remove_written(directory: str, entries: list[str]) -> list[str]:
    """Remove, of `entries` (names in `directory`), what a dataset writer puts there besides the
    manifest: shard files, temporary shard files, the staging area and the report -> their paths."""
    remote = objectstore.is_remote(directory)
    gone = []
    for e in entries:
        if _PART_RE.match(e) or e.startswith(".part-") or e in (_STAGING, REPORT_DIR):
            p = objectstore.join(directory, e)
            if remote:
                objectstore.remove(p, recursive=e in (_STAGING, REPORT_DIR))
            elif os.path.isdir(p):
                shutil.rmtree(p)
            else:
                os.remove(p)
            gone.append(p)
    return gone


def staged_bytes(directory: str, name: str) -> bytes:
    path = objectstore.join(staging_dir(directory), name)
    if objectstore.is_remote(directory):
        return objectstore.read_bytes(path)
    with open(path, "rb") as f:
        return f.read()


def _ipc_bytes(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, table.schema) as writer:
        for batch in table.to_batches(max_chunksize=8192):
            writer.write_batch(batch)
    return sink.getvalue().to_pybytes()


def _write_shard_remote(directory: str, index: int, table: pa.Table) -> ShardInfo:
    name = shard_name(index)
    data = _ipc_bytes(table)
    objectstore.put_via_temp(objectstore.join(directory, name), data, f".{name}.tmp-{uuid.uuid4().hex[:12]}")
    return ShardInfo(path=name, rows=table.num_rows, bytes=len(data), sha256=hashlib.sha256(data).hexdigest())


def write_shard_file(directory: str, index: int, table: pa.Table) -> ShardInfo:
    """Write one shard atomically as `part-NNNNN.arrow` in `directory`; return its manifest entry."""
    if objectstore.is_remote(directory):
        return _write_shard_remote(directory, index, table)
    os.makedirs(directory, exist_ok=True)
    name = shard_name(index)
    final = os.path.join(directory, name)
    tmp = os.path.join(directory, f".{name}.tmp-{uuid.uuid4().hex[:12]}")
    try:
        with pa.OSFile(tmp, "wb") as sink:
            with pa.ipc.new_file(sink, table.schema) as writer:
                # Batches of bounded size keep memory-mapped random access cheap.
                for batch in table.to_batches(max_chunksize=8192):
                    writer.write_batch(batch)
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        sha, size = file_sha256(tmp)
        os.replace(tmp, final)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return ShardInfo(path=name, rows=table.num_rows, bytes=size, sha256=sha)


def place_shard_file(src: str, directory: str, index: int, info: ShardInfo) -> ShardInfo:
    """A finished local shard file as shard `index` of `directory`, its bytes unchanged: hard-linked
    (or copied) on disk, uploaded under a temporary key and moved into place on an object store.
    Its manifest entry keeps the checksum and size it had (the bytes are the same)."""
    name = shard_name(index)
    if objectstore.is_remote(directory):
        with open(src, "rb") as f:
            objectstore.put_via_temp(objectstore.join(directory, name), f.read(),
                                     f".{name}.tmp-{uuid.uuid4().hex[:12]}")
    else:
        dst = os.path.join(directory, name)
        if os.path.exists(dst):
            os.remove(dst)
        try:
            os.link(src, dst)
        except OSError:
            shutil.copyfile(src, dst)
    return ShardInfo(name, info.rows, info.bytes, info.sha256)


def upload_dataset(src: str, uri: str) -> Manifest:
    """A finished local dataset, its shards and its report, to `uri` on an object store, bytes
    unchanged: shards and report first, the manifest last, as any writer commits."""
    m = read_manifest(src)
    prepare_output_dir(uri, m.kind, job=m.provenance.get("job"), overwrite=True)
    infos = [place_shard_file(os.path.join(src, s.path), uri, i, s) for i, s in enumerate(m.shards)]
    objectstore.upload_dir(os.path.join(src, REPORT_DIR), objectstore.join(uri, REPORT_DIR))
    return finalize_dataset(uri, m.kind, m.schema, infos, m.provenance)


def download_dataset(uri: str, local_dir: str) -> Manifest:
    """A finished dataset on an object store to the local directory `local_dir`, bytes unchanged
    and checked against its manifest: shards first, the manifest last (its report is not copied)."""
    m = read_manifest(uri)
    prepare_output_dir(local_dir, m.kind, job=m.provenance.get("job"), overwrite=True)
    for s in m.shards:
        sha, size = objectstore.download(objectstore.join(uri, s.path), os.path.join(local_dir, s.path))
        if (sha, size) != (s.sha256, s.bytes):
            raise ShardError(f"{objectstore.join(uri, s.path)}: {size} bytes with sha256 {sha[:12]}..., "
                             f"the manifest says {s.bytes} bytes with {s.sha256[:12]}...")
    write_manifest(local_dir, m)
    return m


def prepare_output_dir(directory: str, kind: str, job: str | None = None, overwrite: bool = False) -> None:
    """Make `directory` ready for a new dataset without ever clobbering a different one.

    - empty or missing: fine;
    - holds a dataset from the same job (same kind, config, inputs): a rerun, replaced in place;
    - holds a different dataset: error unless `overwrite`;
    - holds files that are not ours: error (nothing is deleted).
    The old manifest is removed first, so an interrupted rerun never looks complete.
    """
    if objectstore.is_remote(directory):
        return _prepare_remote(directory, kind, job, overwrite)
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise ShardError(f"{directory}: output path exists and is not a directory")
    os.makedirs(directory, exist_ok=True)
    entries = [e for e in os.listdir(directory)]
    if not entries:
        return
    if _check_existing(directory, entries, kind, job, overwrite):
        os.remove(manifest_path(directory))
    _remove_written(directory, entries)


def _check_existing(directory: str, entries: list[str], kind: str, job: str | None, overwrite: bool) -> bool:
    """Raise unless `directory` may be (re)written; True when it holds a manifest to remove."""
    if MANIFEST_NAME in entries:
        old = read_manifest(directory)
        same = job is not None and old.provenance.get("job") == job and old.kind == kind
        if not same and not overwrite:
            raise ShardError(
                f"{directory}: already holds a different dataset (kind={old.kind}, rows={old.rows}); "
                "pass --overwrite to replace it or choose another output directory")
        return True
    foreign = [e for e in entries if not (_PART_RE.match(e) or e.startswith(".") or e == REPORT_DIR)]
    if foreign and not overwrite:
        raise ShardError(f"{directory}: output directory is not empty and holds no dataset "
                         f"(found {sorted(foreign)[:3]}); choose an empty directory")
    return False


def _prepare_remote(directory: str, kind: str, job: str | None, overwrite: bool) -> None:
    objectstore.check_bucket(directory)
    entries = objectstore.listdir(directory)
    if not entries:
        return
    if _check_existing(directory, entries, kind, job, overwrite):
        objectstore.remove(manifest_path(directory))
    _remove_written(directory, entries)


def finalize_dataset(directory: str, kind: str, schema: pa.Schema, shards: Iterable[ShardInfo],
                     provenance: dict[str, Any], drop_staging: bool = True) -> Manifest:
    """Fill gaps with empty shards, drop stale part files, then write the manifest (commit point).
    `drop_staging=False` (a Beam job's manifest step) leaves the staging area to
    drop_finished_staging, after the job."""
    shards = sorted(shards, key=lambda s: s.path)
    by_index = {int(s.path[5:10]): s for s in shards}
    n = (max(by_index) + 1) if by_index else 1
    empty = pa.Table.from_batches([], schema)  # = schema.empty_table(), which imports pandas
    full = [by_index[i] if i in by_index else write_shard_file(directory, i, empty) for i in range(n)]
    keep = {s.path for s in full}
    if objectstore.is_remote(directory):
        for e in objectstore.listdir(directory):
            if (_PART_RE.match(e) and e not in keep) or e.startswith(".part-"):
                objectstore.remove(objectstore.join(directory, e))
            elif e == _STAGING and drop_staging:
                objectstore.remove(staging_dir(directory), recursive=True)
        manifest = Manifest(kind=kind, schema=schema, shards=full, provenance=provenance)
        write_manifest(directory, manifest)
        return manifest
    for p in glob.glob(os.path.join(directory, "part-*.arrow")):
        if os.path.basename(p) not in keep:
            os.remove(p)
    st = staging_dir(directory)
    if drop_staging and os.path.isdir(st):
        shutil.rmtree(st, ignore_errors=True)
    manifest = Manifest(kind=kind, schema=schema, shards=full, provenance=provenance)
    write_manifest(directory, manifest)
    return manifest


class DatasetWriter:
    """Stream rows or batches into a dataset, rolling to a new shard at `target_bytes`.

    >>> with DatasetWriter(out, "documents", schema, provenance) as w:
    ...     w.write_rows([{"id": "a", "text": "..."}])
    """

    def __init__(self, directory: str, kind: str, schema: pa.Schema, provenance: dict[str, Any] | None = None,
                 target_bytes: int = DEFAULT_TARGET_BYTES, overwrite: bool = False):
        self.directory = directory
        self.kind = kind
        self.schema = schema
        self.provenance = provenance or {}
        self.target_bytes = max(1, int(target_bytes))
        prepare_output_dir(directory, kind, job=self.provenance.get("job"), overwrite=overwrite)
        self._pending: list[pa.RecordBatch] = []
        self._pending_bytes = 0
        self._shards: list[ShardInfo] = []
        self.manifest: Manifest | None = None

    def write_rows(self, rows: list[dict[str, Any]]) -> None:
        if rows:
            self.write_batch(pa.RecordBatch.from_pylist(rows, schema=self.schema))

    def write_table(self, table: pa.Table) -> None:
        for b in table.to_batches():
            self.write_batch(b)

    def write_batch(self, batch: pa.RecordBatch) -> None:
        if not batch.schema.equals(self.schema):
            try:
                batch = pa.Table.from_batches([batch]).cast(self.schema).to_batches()[0] if batch.num_rows else None
            except (pa.ArrowInvalid, ValueError, TypeError) as e:
                raise ShardError(f"{self.directory}: batch schema does not match dataset schema ({e})") from None
            if batch is None:
                return
        # Split big batches so shards stay near the target size.
        offset = 0
        per_row = max(1, batch.nbytes // max(1, batch.num_rows))
        while offset < batch.num_rows:
            room = max(1, (self.target_bytes - self._pending_bytes) // per_row)
            part = batch.slice(offset, room)
            offset += part.num_rows
            self._pending.append(part)
            self._pending_bytes += part.num_rows * per_row
            if self._pending_bytes >= self.target_bytes:
                self._flush()

    def _flush(self) -> None:
        if not self._pending:
            return
        table = pa.Table.from_batches(self._pending, schema=self.schema)
        self._shards.append(write_shard_file(self.directory, len(self._shards), table))
        self._pending, self._pending_bytes = [], 0

    def close(self) -> Manifest:
        if self.manifest is None:
            self._flush()
            self.manifest = finalize_dataset(self.directory, self.kind, self.schema, self._shards, self.provenance)
        return self.manifest

    def __enter__(self) -> "DatasetWriter":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()


def write_dataset(directory: str, kind: str, table: pa.Table, provenance: dict[str, Any] | None = None,
                  target_bytes: int = DEFAULT_TARGET_BYTES, overwrite: bool = False) -> Manifest:
    """Write a whole in-memory table as a dataset (small outputs, tests)."""
    with DatasetWriter(directory, kind, table.schema, provenance, target_bytes, overwrite) as w:
        w.write_table(table)
    return w.manifest  # type: ignore[return-value]


__all__ = ["DatasetWriter", "write_dataset", "write_shard_file", "finalize_dataset", "prepare_output_dir",
           "file_sha256", "MANIFEST_NAME", "DEFAULT_TARGET_BYTES"]
