"""corpus/keyed_shards.py: the row-to-shard rule written in one process (the Beam writer's twin is
compared byte for byte in tests/pipelines/test_text_local.py)."""
import pyarrow as pa
import pytest

from corpus.buckets import key_hash
from corpus.errors import ShardError
from corpus.keyed_shards import approx_size, write_keyed_rows
from corpus.reader import ShardDataset
from corpus.writer import prepare_output_dir

SCHEMA = pa.schema([("id", pa.string()), ("text", pa.string()), ("n", pa.int64()), ("tags", pa.list_(pa.string()))])


def _size(value):
    """The plain recursive definition the row fast path must equal."""
    if value is None:
        return 1
    if isinstance(value, (bytes, str)):
        return len(value) + 4
    if isinstance(value, dict):
        return sum(_size(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return 4 + sum(_size(v) for v in value)
    return 8


def test_approx_size_of_rows_equals_the_recursive_definition():
    cases = [{"a": None, "b": "xé", "c": b"12", "d": 3, "e": 1.5, "f": True, "g": ["a", None, {"x": "y"}],
              "h": {"k": [1, 2]}, "i": (1, "z")}, {}, "abc", None, [1, {"a": "b"}], 7]
    assert [approx_size(c) for c in cases] == [_size(c) for c in cases]


def test_rows_go_to_hash_shards_sorted_by_key(tmp_path):
    rows = [{"id": f"doc-{i:03d}", "text": "word " * (i % 7), "n": i, "tags": ["a"] * (i % 3)} for i in range(200)]
    out = str(tmp_path / "ds")
    prepare_output_dir(out, "documents")
    manifest = write_keyed_rows(out, "documents", SCHEMA, rows[::-1], target_bytes=2000)
    n = len(manifest.shards)
    assert n >= 3 and manifest.rows == 200
    ds = ShardDataset(out)
    for k in range(n):
        ids = [r["id"] for b in ds.iter_batches(shards=[k]) for r in b.to_pylist()]
        assert ids == sorted(ids) and all(key_hash(i) % n == k for i in ids)
    again = str(tmp_path / "again")
    prepare_output_dir(again, "documents")
    assert [s.sha256 for s in write_keyed_rows(again, "documents", SCHEMA, rows, target_bytes=2000).shards] == \
        [s.sha256 for s in manifest.shards]  # row order in does not matter


def test_a_key_twice_is_an_error_and_no_rows_is_an_empty_dataset(tmp_path):
    out = str(tmp_path / "dup")
    prepare_output_dir(out, "documents")
    with pytest.raises(ShardError, match="duplicate row key 'x'"):
        write_keyed_rows(out, "documents", SCHEMA, [{"id": "x", "text": "a"}, {"id": "x", "text": "b"}])
    empty = str(tmp_path / "empty")
    prepare_output_dir(empty, "documents")
    assert write_keyed_rows(empty, "documents", SCHEMA, []).rows == 0 and len(ShardDataset(empty)) == 0
