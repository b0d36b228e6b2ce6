"""Chunk checkpoints inside a wave: a crawl stopped midway keeps what it fetched.

The crawler works through each host's URLs in chunks and writes every finished chunk's page, log
and link rows as Arrow files under the wave's `partial/` folder (atomically, a marker file last).
When an interrupted wave is redone, chunks found there are read back instead of fetched again,
so a crash costs at most one unfinished chunk per host. Keys hash the chunk's URLs, so only
the very same chunk of the very same wave frontier is ever reused.
"""
from __future__ import annotations

import hashlib
import os
import uuid
from typing import Any

import pyarrow as pa

from corpus.schemas import PAGES
from crawl.log_schema import CRAWL_LOG, LINKS

KINDS = (("pages", PAGES), ("log", CRAWL_LOG), ("links", LINKS))


def chunk_key(wave: int, entries: list[dict[str, Any]]) -> str:
    h = hashlib.sha1(f"wave {wave}\n".encode())
    for e in entries:
        h.update(e["url"].encode("utf-8") + b"\n")
    return h.hexdigest()[:24]


def _atomic_write(path: str, table: pa.Table) -> None:
    tmp = f"{path}.tmp-{uuid.uuid4().hex[:8]}"
    with pa.OSFile(tmp, "wb") as sink, pa.ipc.new_file(sink, table.schema) as w:
        w.write_table(table)
    os.replace(tmp, path)


def save_chunk(directory: str, key: str, rows: dict[str, list[dict[str, Any]]]) -> None:
    os.makedirs(directory, exist_ok=True)
    for kind, schema in KINDS:
        _atomic_write(os.path.join(directory, f"{key}.{kind}.arrow"), pa.Table.from_pylist(rows[kind], schema=schema))
    with open(os.path.join(directory, f"{key}.ok"), "w", encoding="utf-8") as f:
        f.write("ok\n")


def load_chunk(directory: str, key: str) -> dict[str, list[dict[str, Any]]] | None:
    if not os.path.exists(os.path.join(directory, f"{key}.ok")):
        return None
    out = {}
    try:
        for kind, _ in KINDS:
            with pa.memory_map(os.path.join(directory, f"{key}.{kind}.arrow"), "r") as src:
                out[kind] = pa.ipc.open_file(src).read_all().to_pylist()
    except (OSError, pa.ArrowInvalid):
        return None  # damaged: fetch the chunk again
    return out
