"""Chunk checkpoints inside a wave: a crawl stopped midway keeps what it fetched.

The crawler works through each host's URLs in chunks and writes every finished chunk's page, log
and link rows as Arrow files under the wave's `partial/` folder, each file atomically (a rename on
disk, one PUT on an object store) and the `.ok` marker last. That folder is the local wave's
(WORKDIR/waves/NNNNN/partial) or, for a crawl into an s3:// OUT, the store's
(OUT/_work/waves/NNNNN/partial, pipelines/crawl_publish.py), so Dask workers on other machines
write it without a shared disk. When an interrupted wave is redone, chunks found there are read
back instead of fetched again, so a crash costs at most one unfinished chunk per host; a chunk
whose marker or files are missing or damaged is fetched again. Keys hash the chunk's URLs, so only
the very same chunk of the very same wave frontier is ever reused.
"""
from __future__ import annotations

import hashlib
import os
import uuid
from typing import Any

import pyarrow as pa

from corpus import objectstore
from corpus.errors import ShardError
from corpus.schemas import PAGES
from crawl.log_schema import CRAWL_LOG, LINKS

KINDS = (("pages", PAGES), ("log", CRAWL_LOG), ("links", LINKS))
OK = b"ok\n"


def chunk_key(wave: int, entries: list[dict[str, Any]]) -> str:
    h = hashlib.sha1(f"wave {wave}\n".encode())
    for e in entries:
        h.update(e["url"].encode("utf-8") + b"\n")
    return h.hexdigest()[:24]


def _put(path: str, data: bytes) -> None:
    """All of `data` at `path` or nothing: one PUT on a store, a temporary file renamed on disk."""
    if objectstore.is_remote(path):
        objectstore.write_bytes(path, data)
        return
    tmp = f"{path}.tmp-{uuid.uuid4().hex[:8]}"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def _get(path: str) -> bytes | None:
    try:
        if objectstore.is_remote(path):
            return objectstore.read_bytes(path)
        with open(path, "rb") as f:
            return f.read()
    except (OSError, ShardError):
        return None


def _ipc(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, table.schema) as w:
        w.write_table(table)
    return sink.getvalue().to_pybytes()


def save_chunk(directory: str, key: str, rows: dict[str, list[dict[str, Any]]]) -> None:
    if not objectstore.is_remote(directory):
        os.makedirs(directory, exist_ok=True)
    for kind, schema in KINDS:
        _put(objectstore.join(directory, f"{key}.{kind}.arrow"), _ipc(pa.Table.from_pylist(rows[kind], schema=schema)))
    _put(objectstore.join(directory, f"{key}.ok"), OK)


def load_chunk(directory: str, key: str) -> dict[str, list[dict[str, Any]]] | None:
    """The chunk's rows, or None when it must be fetched (again): no chunk, or a damaged one."""
    if _get(objectstore.join(directory, f"{key}.ok")) != OK:
        return None
    out = {}
    for kind, schema in KINDS:
        data = _get(objectstore.join(directory, f"{key}.{kind}.arrow"))
        try:
            table = pa.ipc.open_file(pa.py_buffer(data)).read_all() if data is not None else None
        except (OSError, pa.ArrowInvalid):
            table = None
        if table is None or not table.schema.equals(schema):
            return None  # damaged: fetch the chunk again
        out[kind] = table.to_pylist()
    return out
