"""Integrity check of a dataset: every shard present, same size, same sha256, same schema and rows."""
from __future__ import annotations

import glob
import os
from dataclasses import dataclass

import pyarrow as pa

from corpus import objectstore
from corpus.errors import ShardError
from corpus.manifest import read_manifest, shard_file
from corpus.writer import file_sha256


@dataclass(frozen=True)
class Problem:
    path: str
    what: str  # missing | truncated | altered | unreadable | schema | rows | extra | link | outside

    def __str__(self) -> str:
        return f"{self.path}: {self.what}"


def verify_dataset(directory: str, check_hashes: bool = True) -> list[Problem]:
    """Return the problems found (empty list = the dataset is intact). Raises ShardError if the
    manifest itself is missing or unreadable."""
    manifest = read_manifest(directory)
    problems: list[Problem] = []
    listed = set()
    remote = objectstore.is_remote(directory)
    present = set(objectstore.listdir(directory)) if remote else None
    for s in manifest.shards:
        path = objectstore.join(directory, s.path)
        listed.add(s.path)
        try:
            shard_file(directory, s.path)
        except ShardError as e:  # a link, or a path resolving outside DIR: never opened, never hashed
            problems.append(Problem(path, "link: " + str(e).split(": ", 1)[1]))
            continue
        if (s.path not in present) if remote else not os.path.exists(path):
            problems.append(Problem(path, "missing"))
            continue
        size = objectstore.size(path) if remote else os.path.getsize(path)
        if size != s.bytes:
            problems.append(Problem(path, f"{'truncated' if size < s.bytes else 'grown'}: {size} bytes, manifest says {s.bytes}"))
            continue
        if check_hashes:
            sha, _ = objectstore.sha256(path) if remote else file_sha256(path)
            if sha != s.sha256:
                problems.append(Problem(path, f"altered: sha256 {sha[:12]}… differs from manifest {s.sha256[:12]}…"))
                continue
        try:
            with (objectstore.open_random_access(path) if remote else pa.memory_map(path, "r")) as src:
                reader = pa.ipc.open_file(src)
                if not reader.schema.equals(manifest.schema):
                    problems.append(Problem(path, "schema does not match the manifest"))
                    continue
                rows = sum(reader.get_batch(i).num_rows for i in range(reader.num_record_batches))
        except (pa.ArrowInvalid, OSError) as e:
            problems.append(Problem(path, f"unreadable: {e}"))
            continue
        if rows != s.rows:
            problems.append(Problem(path, f"rows: {rows}, manifest says {s.rows}"))
    names = present if remote else [os.path.basename(p) for p in glob.glob(os.path.join(directory, "part-*.arrow"))]
    for name in sorted(n for n in names if n.startswith("part-") and n.endswith(".arrow")):
        p = objectstore.join(directory, name)
        if name not in listed:
            problems.append(Problem(p, "extra: shard file not listed in the manifest"))
    return problems
