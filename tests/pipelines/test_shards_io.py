"""Beam sink/source for shard datasets: deterministic whatever the runner or worker count."""
import os

import apache_beam as beam
import pyarrow as pa
import pytest

from corpus.manifest import read_manifest
from corpus.reader import open_dataset
from corpus.verify import verify_dataset
from pipelines.beam_options import beam_job, pipeline_options
from pipelines.shards_io import ReadShards, WriteShards, _WriteShard

SCHEMA = pa.schema([("id", pa.string()), ("text", pa.string()), ("n", pa.int64())])
ROWS = [{"id": f"d{i:05d}", "text": "lorem " * (i % 50), "n": i} for i in range(3000)]


def _write(out, args, rows=ROWS):
    with beam_job(args) as p:  # as every cidermill verb runs its Beam job
        _ = p | beam.Create(rows) | WriteShards(out, "documents", SCHEMA, target_bytes=100_000)


def test_same_shards_single_and_multiprocess(tmp_path):
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    _write(a, [])
    _write(b, ["--direct_running_mode=multi_processing", "--direct_num_workers=2"])
    ma, mb = read_manifest(a), read_manifest(b)
    assert len(ma.shards) > 2
    assert [(s.path, s.rows, s.sha256) for s in ma.shards] == [(s.path, s.rows, s.sha256) for s in mb.shards]
    assert verify_dataset(a) == [] and ma.rows == 3000
    assert not os.path.exists(os.path.join(a, ".staging")) and not os.path.exists(os.path.join(b, ".staging"))
    assert sorted(r["id"] for r in open_dataset(a).iter_rows(["id"])) == [r["id"] for r in ROWS]
    # rerun of the same job (no provenance: treated as a different dataset unless overwrite) is refused
    from corpus.errors import ShardError
    with pytest.raises(ShardError):
        _write(a, [])


def test_writer_blobs_are_staged_by_content_and_gone_after_the_manifest(tmp_path):
    """The rows reach the shard writer as files of OUT/.staging named by their content: a task that
    runs twice writes the same file; a failed run's leftovers go when the output is prepared again,
    and a finished dataset holds none."""
    from corpus.writer import stage_bytes, staged_bytes, staging_dir
    out = tmp_path / "a"
    first = stage_bytes(str(out), b"rows of a bundle")
    assert stage_bytes(str(out), b"rows of a bundle") == first != stage_bytes(str(out), b"other rows")
    assert staged_bytes(str(out), first) == b"rows of a bundle"
    assert sorted(os.listdir(staging_dir(str(out)))) == sorted([first, stage_bytes(str(out), b"other rows")])
    _write(str(out), ["--direct_running_mode=multi_processing", "--direct_num_workers=2"])  # over the leftovers
    assert not os.path.exists(staging_dir(str(out))) and verify_dataset(str(out)) == []
    assert sorted(r["id"] for r in open_dataset(str(out)).iter_rows(["id"])) == [r["id"] for r in ROWS]


def test_a_shard_writer_run_again_after_the_manifest_step_finds_its_rows(tmp_path):
    """Dask recomputes what a killed worker held that the driver had not fetched yet: the manifest
    step's result, and with it the shard writers before it. So the job's manifest step leaves the
    staged blobs in place; a writer run again then writes the same shard bytes, and the blobs go
    once the job has run (beam_job, or the command's end)."""
    from corpus.writer import (
        drop_finished_staging,
        end_job_outputs,
        note_job_output,
        staging_dir,
    )
    out = str(tmp_path / "a")
    with beam.Pipeline(options=pipeline_options([])) as p:  # the job alone, without beam_job's cleanup
        _ = p | beam.Create(ROWS) | WriteShards(out, "documents", SCHEMA, target_bytes=100_000)
    m = read_manifest(out)
    assert len(m.shards) > 2 and verify_dataset(out) == []
    staged = sorted(os.listdir(staging_dir(out)))
    shard = m.shards[1]
    index = int(shard.path[5:10])
    before = open(os.path.join(out, shard.path), "rb").read()
    # the blobs of that shard: the ones whose rows all hash to it
    from corpus.keyed_shards import HASH
    from corpus.writer import staged_bytes
    from corpus.keyed_shards import blob_table
    names = [n for n in staged if set(int(h) % len(m.shards) for h in blob_table(staged_bytes(out, n)).column(HASH).to_pylist())
             == {index}]
    again = list(_WriteShard(out, SCHEMA).process((index, names)))
    assert [i.path for i in again] == [shard.path] and open(os.path.join(out, shard.path), "rb").read() == before
    assert names and verify_dataset(out) == []
    assert drop_finished_staging(out) == [staging_dir(out)] and not os.path.exists(staging_dir(out))
    assert drop_finished_staging(out) == []
    # an unfinished output keeps its staging area for end_job_outputs(failed=True) to judge
    unfinished = str(tmp_path / "b")
    os.makedirs(staging_dir(unfinished))
    assert drop_finished_staging(unfinished) == [] and os.path.isdir(staging_dir(unfinished))
    # the command's end drops a finished output's staging area too (a job run without beam_job)
    with beam.Pipeline(options=pipeline_options([])) as p:
        _ = p | beam.Create(ROWS[:100]) | WriteShards(str(tmp_path / "c"), "documents", SCHEMA)
    assert os.path.isdir(staging_dir(str(tmp_path / "c")))
    note_job_output(str(tmp_path / "c"))
    assert staging_dir(str(tmp_path / "c")) in end_job_outputs(failed=False)
    assert not os.path.exists(staging_dir(str(tmp_path / "c"))) and verify_dataset(str(tmp_path / "c")) == []


def test_read_shards_roundtrip(tmp_path):
    a = str(tmp_path / "a")
    _write(a, [], ROWS[:500])
    from apache_beam.testing.util import assert_that, equal_to
    with beam.Pipeline(options=pipeline_options([])) as p:
        got = p | ReadShards(a, columns=["id", "n"]) | beam.Map(lambda r: (r["id"], r["n"]))
        assert_that(got, equal_to([(r["id"], r["n"]) for r in ROWS[:500]]))


def test_duplicate_keys_fail_loudly(tmp_path):
    rows = ROWS[:10] + ROWS[:1]
    with pytest.raises(Exception, match="duplicate row key"):
        _write(str(tmp_path / "dup"), [], rows)


def test_what_a_failed_job_left_is_taken_away_and_finished_outputs_stay(tmp_path):
    """end_job_outputs(failed=True), which the cidermill command calls when it fails: an output of the
    job with no manifest loses its staged rows, any shard written before the failure (pyarrow.dataset
    would read those as a dataset) and its temporary files; a finished output of the same process
    is left as it is."""
    from corpus.writer import end_job_outputs
    done, bad = str(tmp_path / "done"), str(tmp_path / "bad")
    _write(done, [])
    before = sorted(os.listdir(done))
    with pytest.raises(Exception, match="duplicate row key"):
        _write(bad, [], ROWS + ROWS[-1:])   # several shards: the last one holds the duplicate
    os.makedirs(os.path.join(bad, ".staging"), exist_ok=True)
    open(os.path.join(bad, "part-00007.arrow"), "wb").close()   # as a shard finished before the failure
    gone = end_job_outputs(failed=True)
    assert os.listdir(bad) == [] and any(g.endswith("part-00007.arrow") for g in gone)
    assert sorted(os.listdir(done)) == before and verify_dataset(done) == []
    assert end_job_outputs(failed=True) == []   # forgotten once the command ended


def test_a_failed_job_takes_its_staged_rows_away(tmp_path, capsys):
    """A Beam job that fails after its writer staged rows (here: two input pages with one id, so
    the shard writer refuses the second row) exits with a one-line error and leaves nothing in its
    output: the staged blobs held as many bytes as the output would have, and the report described
    rows that were never written."""
    from corpus.schemas import PAGES
    from corpus.writer import write_dataset
    from pipelines.cli import main
    text = "Plain words that make a sentence of ordinary prose for the filters. " * 20
    rows = [{"id": f"p{i % 40}", "url": f"http://a.test/{i}", "text": text + str(i)} for i in range(80)]
    write_dataset(str(tmp_path / "pages"), "pages", pa.Table.from_pylist(rows, schema=PAGES))
    (tmp_path / "t.yaml").write_text("stages: [input]\n")
    out = tmp_path / "out"
    rc = main(["text", "--in", str(tmp_path / "pages"), "--out", str(out), "--config", str(tmp_path / "t.yaml"),
               "--no-rejected", "--runner=FnApiRunner"])
    assert rc == 1
    assert "duplicate row key" in capsys.readouterr().err
    assert out.is_dir() and os.listdir(out) == []   # no staged rows, no shards, no report, no manifest
    # the same job on pages with distinct ids then writes its dataset in the same place
    rows = [dict(r, id=f"p{i}") for i, r in enumerate(rows)]
    write_dataset(str(tmp_path / "pages2"), "pages", pa.Table.from_pylist(rows, schema=PAGES))
    assert main(["text", "--in", str(tmp_path / "pages2"), "--out", str(out), "--config", str(tmp_path / "t.yaml"),
                 "--no-rejected", "--runner=FnApiRunner"]) == 0
    assert verify_dataset(str(out)) == [] and read_manifest(str(out)).rows == 80
