"""The manifest.json of a shard dataset (the contract in docs/ARCHITECTURE.md): what a directory holds.

The manifest is written last, so a directory without one is never a complete dataset.
"""
from __future__ import annotations

import base64
import json
import os
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from corpus import objectstore
from corpus.errors import ShardError

FORMAT = "cidermill.shards/1"
MANIFEST_NAME = "_manifest.json"  # "_" prefix: pyarrow.dataset skips it


def shard_name(index: int) -> str:
    return f"part-{index:05d}.arrow"


def schema_to_json(schema: pa.Schema) -> dict[str, Any]:
    """A readable field list plus the exact IPC bytes, so the schema round-trips losslessly."""
    return {
        "fields": [
            {"name": f.name, "type": str(f.type), "nullable": f.nullable} for f in schema
        ],
        "ipc_base64": base64.b64encode(schema.serialize().to_pybytes()).decode("ascii"),
    }


def schema_from_json(obj: dict[str, Any]) -> pa.Schema:
    return pa.ipc.read_schema(pa.py_buffer(base64.b64decode(obj["ipc_base64"])))


@dataclass(frozen=True)
class ShardInfo:
    path: str
    rows: int
    bytes: int
    sha256: str

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "rows": self.rows, "bytes": self.bytes, "sha256": self.sha256}


@dataclass
class Manifest:
    kind: str
    schema: pa.Schema
    shards: list[ShardInfo]
    provenance: dict[str, Any] = field(default_factory=dict)

    @property
    def rows(self) -> int:
        return sum(s.rows for s in self.shards)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "kind": self.kind,
            "schema": schema_to_json(self.schema),
            "rows": self.rows,
            "shards": [s.to_json() for s in self.shards],
            "provenance": self.provenance,
        }

    @classmethod
    def from_json(cls, obj: dict[str, Any], where: str = "manifest") -> "Manifest":
        if not isinstance(obj, dict) or obj.get("format") != FORMAT:
            raise ShardError(f"{where}: not a {FORMAT} manifest (format={obj.get('format') if isinstance(obj, dict) else None!r})")
        try:
            shards = [ShardInfo(s["path"], int(s["rows"]), int(s["bytes"]), str(s["sha256"])) for s in obj["shards"]]
            schema = schema_from_json(obj["schema"])
            m = cls(kind=str(obj["kind"]), schema=schema, shards=shards, provenance=obj.get("provenance", {}))
        except (KeyError, TypeError, ValueError, pa.ArrowInvalid) as e:
            raise ShardError(f"{where}: malformed manifest ({type(e).__name__}: {e})") from None
        if int(obj.get("rows", -1)) != m.rows:
            raise ShardError(f"{where}: rows={obj.get('rows')} but shards add up to {m.rows}")
        for s in shards:
            if os.path.basename(s.path) != s.path or s.path.startswith("."):
                raise ShardError(f"{where}: shard path {s.path!r} must be a plain file name inside the dataset")
        return m


def manifest_path(directory: str) -> str:
    return objectstore.join(directory, MANIFEST_NAME)


def shard_file(directory: str, name: str) -> str:
    """The path of shard `name` in `directory`, refused (ShardError) when it is a symbolic link or
    resolves outside the dataset after links are followed: a manifest never makes a reader open a
    file the dataset does not hold (a link to /etc/shadow, to another user's data). On object
    storage there are no links, and `Manifest.from_json` already refused names that are not plain
    file names, so the key is simply the name under the prefix."""
    if objectstore.is_remote(directory):
        return objectstore.join(directory, name)
    path = os.path.join(directory, name)
    if os.path.islink(path):
        raise ShardError(f"{path}: shard is a symbolic link; a dataset holds its shards as plain files")
    root = os.path.realpath(directory)
    real = os.path.realpath(path)
    if os.path.commonpath([root, real]) != root or os.path.dirname(real) != root:
        raise ShardError(f"{path}: shard resolves outside the dataset directory ({real})")
    return path


def read_manifest(directory: str) -> Manifest:
    path = manifest_path(directory)
    if objectstore.is_remote(directory):
        if not objectstore.exists(path):
            objectstore.check_bucket(directory)
            raise ShardError(f"{path}: missing manifest (not a dataset, or its writer did not finish)")
        try:
            obj = json.loads(objectstore.read_bytes(path).decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise ShardError(f"{path}: unreadable manifest ({e})") from None
        return Manifest.from_json(obj, where=path)
    if not os.path.isdir(directory):
        raise ShardError(f"{directory}: no such dataset directory")
    if not os.path.exists(path):
        raise ShardError(f"{path}: missing manifest (not a dataset, or its writer did not finish)")
    if os.path.islink(path):
        raise ShardError(f"{path}: manifest is a symbolic link; a dataset holds it as a plain file")
    try:
        with open(path, "rb") as f:
            obj = json.loads(f.read().decode("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ShardError(f"{path}: unreadable manifest ({e})") from None
    return Manifest.from_json(obj, where=path)


def write_manifest(directory: str, manifest: Manifest) -> str:
    """Atomically write manifest.json (temp name, fsync, rename): the commit point of a dataset."""
    path = manifest_path(directory)
    data = json.dumps(manifest.to_json(), indent=1, sort_keys=False).encode("utf-8")
    objectstore.write_whole(path, data, fsync=True)
    return path
