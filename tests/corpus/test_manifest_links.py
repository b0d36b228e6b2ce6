"""A dataset holds its shards as plain files: a shard that is a symbolic link, or a manifest that
is one, is refused by the reader and reported by verify, even when the bytes behind the link match
the manifest's hash (a link to another dataset, or to any file the reader's user can open)."""
import os
import shutil

import pyarrow as pa
import pytest

from corpus.errors import ShardError
from corpus.manifest import MANIFEST_NAME
from corpus.reader import open_dataset
from corpus.verify import verify_dataset
from corpus.writer import write_dataset
from pipelines.cli import main as cli_main


def _dataset(d):
    write_dataset(str(d), "documents", pa.table({"id": [f"d{i}" for i in range(20)], "text": ["x"] * 20}))
    return str(d)


def test_symlinked_shard_is_refused_by_reader_and_verify(tmp_path, capsys):
    ds = _dataset(tmp_path / "ds")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shard = os.path.join(ds, "part-00000.arrow")
    shutil.move(shard, elsewhere / "part-00000.arrow")  # same bytes, same sha256: only the link is wrong
    os.symlink(elsewhere / "part-00000.arrow", shard)
    with pytest.raises(ShardError, match="symbolic link"):
        open_dataset(ds)
    problems = verify_dataset(ds)
    assert len(problems) == 1 and "symbolic link" in str(problems[0])
    assert cli_main(["shards", "verify", ds]) != 0
    capsys.readouterr()

    # a relative link that stays inside DIR is still a link: refused the same way
    os.remove(shard)
    shutil.copy(elsewhere / "part-00000.arrow", os.path.join(ds, "real.arrow"))
    os.symlink("real.arrow", shard)
    with pytest.raises(ShardError, match="symbolic link"):
        open_dataset(ds)
    assert "symbolic link" in str(verify_dataset(ds)[0])


def test_a_link_swapped_in_after_opening_is_refused_at_read(tmp_path):
    ds = _dataset(tmp_path / "ds")
    d = open_dataset(ds)
    shard = os.path.join(ds, "part-00000.arrow")
    shutil.move(shard, tmp_path / "moved.arrow")
    os.symlink(tmp_path / "moved.arrow", shard)
    with pytest.raises(ShardError, match="symbolic link"):
        list(d.iter_rows())


def test_symlinked_manifest_is_refused(tmp_path):
    ds = _dataset(tmp_path / "ds")
    m = os.path.join(ds, MANIFEST_NAME)
    shutil.move(m, tmp_path / "m.json")
    os.symlink(tmp_path / "m.json", m)
    with pytest.raises(ShardError, match="symbolic link"):
        open_dataset(ds)
    with pytest.raises(ShardError, match="symbolic link"):
        verify_dataset(ds)


def test_plain_dataset_and_a_linked_dataset_directory_still_read(tmp_path):
    ds = _dataset(tmp_path / "ds")
    os.symlink(ds, tmp_path / "alias")  # linking the whole directory is the user's choice, not the manifest's
    assert len(open_dataset(str(tmp_path / "alias"))) == 20 and verify_dataset(str(tmp_path / "alias")) == []
