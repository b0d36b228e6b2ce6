"""The shard dataset contract: atomic writer, manifest, mmap reader, verify, third-party readers."""
import json
import os

import pyarrow as pa
import pyarrow.dataset as pds
import pytest

from corpus.errors import ShardError
from corpus.manifest import MANIFEST_NAME, read_manifest
from corpus.provenance import make_provenance
from corpus.reader import open_dataset
from corpus.verify import verify_dataset
from corpus.writer import DatasetWriter, write_dataset


def _table(n=500):
    return pa.table({"id": [f"doc-{i:04d}" for i in range(n)],
                     "text": [("word " * (i % 37)) + f"#{i}" for i in range(n)],
                     "score": [i / n for i in range(n)]})


def test_roundtrip_shards_and_random_access(tmp_path):
    d = str(tmp_path / "ds")
    m = write_dataset(d, "documents", _table(), make_provenance("documents", {"a": 1}, []), target_bytes=5000)
    assert len(m.shards) > 3, "target size must split the data into several shards"
    assert m.rows == 500
    ds = open_dataset(d)
    assert len(ds) == 500
    assert ds[0]["id"] == "doc-0000" and ds[499]["id"] == "doc-0499" and ds[-1]["id"] == "doc-0499"
    assert ds.take([3, 250, 498]).column("id").to_pylist() == ["doc-0003", "doc-0250", "doc-0498"]
    assert [r["id"] for r in ds.iter_rows(["id"])] == [f"doc-{i:04d}" for i in range(500)]
    with pytest.raises(IndexError):
        ds[500]
    assert verify_dataset(d) == []
    man = json.load(open(os.path.join(d, MANIFEST_NAME)))
    assert man["format"] == "cidermill.shards/1" and man["kind"] == "documents" and man["rows"] == 500
    assert {"command", "config", "version", "git", "created", "inputs"} <= set(man["provenance"])


def test_third_party_readers(tmp_path):
    d = str(tmp_path / "ds")
    write_dataset(d, "documents", _table(300), target_bytes=4000)
    os.makedirs(os.path.join(d, "_report"), exist_ok=True)
    assert pds.dataset(d, format="ipc").to_table().num_rows == 300
    datasets = pytest.importorskip("datasets")
    hf = datasets.load_dataset("arrow", data_files=os.path.join(d, "part-*.arrow"), split="train",
                               cache_dir=str(tmp_path / "hf"))
    assert hf.num_rows == 300 and set(hf["id"]) == {f"doc-{i:04d}" for i in range(300)}


def test_verify_names_altered_truncated_missing(tmp_path):
    d = str(tmp_path / "ds")
    m = write_dataset(d, "documents", _table(), target_bytes=5000)
    a, b, c = (os.path.join(d, s.path) for s in m.shards[:3])
    with open(a, "r+b") as f:  # flip one byte in the middle
        f.seek(os.path.getsize(a) // 2)
        byte = f.read(1)
        f.seek(-1, 1)
        f.write(bytes([byte[0] ^ 0xFF]))
    with open(b, "r+b") as f:
        f.truncate(os.path.getsize(b) - 10)
    os.remove(c)
    problems = {os.path.basename(p.path): p.what for p in verify_dataset(d)}
    assert problems[os.path.basename(a)].startswith("altered")
    assert problems[os.path.basename(b)].startswith("truncated")
    assert problems[os.path.basename(c)] == "missing"
    assert len(problems) == 3
    with pytest.raises(ShardError, match="missing"):
        open_dataset(d)


def test_no_manifest_means_no_dataset(tmp_path):
    d = tmp_path / "ds"
    w = DatasetWriter(str(d), "documents", _table().schema)
    w.write_table(_table())
    # writer not closed: simulate a crash before the commit point
    with pytest.raises(ShardError, match="missing manifest"):
        open_dataset(str(d))
    (d / MANIFEST_NAME).write_text("{not json")
    with pytest.raises(ShardError, match="unreadable manifest"):
        read_manifest(str(d))


def test_output_dir_rules(tmp_path):
    d = str(tmp_path / "ds")
    prov = make_provenance("documents", {"x": 1}, [])
    write_dataset(d, "documents", _table(50), prov)
    # same job again: a rerun, replaced with identical shards
    first = [s.sha256 for s in read_manifest(d).shards]
    write_dataset(d, "documents", _table(50), make_provenance("documents", {"x": 1}, []))
    assert [s.sha256 for s in read_manifest(d).shards] == first
    # a different dataset: refused, nothing touched
    with pytest.raises(ShardError, match="already holds a different dataset"):
        write_dataset(d, "pages", _table(10), make_provenance("pages", {}, []))
    assert read_manifest(d).rows == 50
    # a directory with foreign files: refused, nothing deleted
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    with pytest.raises(ShardError, match="not empty"):
        write_dataset(str(other), "documents", _table(10))
    assert (other / "notes.txt").read_text() == "mine"


def test_schema_mismatch_is_named(tmp_path):
    d = str(tmp_path / "ds")
    m = write_dataset(d, "documents", _table(20))
    other = str(tmp_path / "other")
    m2 = write_dataset(other, "documents", pa.table({"id": ["a"], "n": [1]}))
    os.replace(os.path.join(other, m2.shards[0].path), os.path.join(d, m.shards[0].path))
    probs = verify_dataset(d, check_hashes=False)
    assert probs and "part-00000.arrow" in probs[0].path
    with pytest.raises(ShardError, match="schema does not match"):
        list(open_dataset(d).iter_batches())


def test_random_access_into_a_truncated_shard_is_a_shard_error(tmp_path):
    d = str(tmp_path / "ds")
    m = write_dataset(d, "documents", _table(), target_bytes=5000)
    first = os.path.join(d, m.shards[0].path)
    with open(first, "r+b") as f:
        f.truncate(os.path.getsize(first) - 10)
    ds = open_dataset(d)
    assert ds[m.shards[0].rows]["id"] == f"doc-{m.shards[0].rows:04d}"  # other shards still read
    with pytest.raises(ShardError, match="unreadable shard"):
        ds[0]


def test_read_items_hold_about_equal_bytes_whatever_the_rows(tmp_path):
    """Work items are cut by bytes: a shard of long documents gives more, shorter items than one of
    short documents, so items cost about the same to score; every row is in exactly one item."""
    from corpus.reader import ShardDataset, read_items
    schema = pa.schema([("id", pa.string()), ("text", pa.string())])
    from corpus.writer import finalize_dataset, prepare_output_dir, write_shard_file
    d = str(tmp_path / "d")
    prepare_output_dir(d, "pages")
    infos = [write_shard_file(d, 0, pa.Table.from_pylist([{"id": f"long{i}", "text": "word " * 2000}
                                                         for i in range(200)], schema=schema)),
             write_shard_file(d, 1, pa.Table.from_pylist([{"id": f"short{i}", "text": "word " * 20}
                                                         for i in range(2000)], schema=schema))]
    finalize_dataset(d, "pages", schema, infos, {})
    ds = ShardDataset(d)
    shards = ds.manifest.shards
    assert len(shards) == 2 and shards[0].bytes > 5 * shards[1].bytes
    items = read_items(ds, item_bytes=200_000)
    per_shard = {k: [b - a for kk, a, b in items if kk == k] for k in (0, 1)}
    assert len(per_shard[0]) > len(per_shard[1]) >= 1 and max(per_shard[0]) < min(per_shard[1])
    for k, info in enumerate(shards):  # contiguous, complete, sizes within one row of each other
        spans = [(a, b) for kk, a, b in items if kk == k]
        assert spans[0][0] == 0 and spans[-1][1] == info.rows
        assert all(b1 == a2 for (_, b1), (a2, _) in zip(spans, spans[1:]))
        assert max(b - a for a, b in spans) - min(b - a for a, b in spans) <= 1
        bytes_per_item = info.bytes * max(b - a for a, b in spans) / info.rows
        assert 100_000 < bytes_per_item < 400_000
    assert read_items(ds, rows_per_item=64) == [(k, s, min(s + 64, i.rows)) for k, i in enumerate(shards)
                                                for s in range(0, i.rows, 64)]
