"""`--runner dask` against a real `dask scheduler` + 2 `dask worker` processes on 127.0.0.1:
text, tokenize and crawl write the same bytes as the in-process runner; a worker killed
with SIGKILL mid-job changes nothing; bad clusters are one-line errors."""
from __future__ import annotations

import os
import shutil
import signal
import threading

import pyarrow as pa
import pytest

from corpus.manifest import read_manifest
from corpus.reader import ShardDataset
from corpus.report import read_report
from corpus.writer import write_dataset
from pipelines.cli import main

pytestmark = pytest.mark.slow


def digests(d):
    return [(s.path, s.rows, s.sha256) for s in read_manifest(d).shards]


def on(address, *extra):
    return ["--runner", "dask", f"--dask_client_address={address}", "--dask_npartitions=2", *extra]


@pytest.fixture(scope="module")
def text_job(tmp_path_factory):
    """The labelled demo pages through the whole text chain, once in-process (the reference)."""
    from test_text_pipeline import build_pages  # tests/pipelines/ is on sys.path
    from pipelines.text_job import run_text

    d = tmp_path_factory.mktemp("text")
    pages, cfg, _ = build_pages(d)
    run_text(pages, str(d / "ref"), cfg)
    return d, pages, cfg


def test_text_same_bytes_on_dask(text_job, dask_cluster):
    import json
    d, pages, cfg = text_job
    out = str(d / "dask")
    traffic = d / "traffic.json"
    assert main(["text", "--in", pages, "--out", out, "--config", cfg,
                 *on(dask_cluster, f"--dask_traffic_json={traffic}")]) == 0
    assert digests(out) == digests(str(d / "ref"))
    # this job's tasks and inter-worker fetches, per worker (counters of long-lived workers, as deltas)
    per_worker = json.loads(traffic.read_text())
    assert len(per_worker) == 2 and sum(w["executed"] for w in per_worker.values()) > 0
    for w in per_worker.values():
        assert all(n > 0 and b >= 0 for n, b in w["fetched"].values())
    assert digests(out + ".rejected") == digests(str(d / "ref.rejected"))
    assert read_report(out).to_json()["stages"] == read_report(str(d / "ref")).to_json()["stages"]


def test_text_on_a_local_cluster_the_command_starts_early_and_closes(text_job, tmp_path):
    """`--runner dask` without an address: the command starts its local cluster before building
    the job (cli._start_local_dask), writes the same bytes, and leaves no cluster behind, also
    when it stops at a bad option."""
    from pipelines.runners import dask_client

    d, pages, cfg = text_job
    out = str(tmp_path / "local")
    assert main(["text", "--in", pages, "--out", out, "--config", cfg, "--runner", "dask", "--dask_workers", "1"]) == 0
    assert digests(out) == digests(str(d / "ref"))
    assert not dask_client._LOCAL and not dask_client._STARTING
    assert main(["text", "--in", str(tmp_path / "absent"), "--out", str(tmp_path / "o2"), "--runner", "dask",
                 "--dask_workers", "1"]) == 1
    assert not dask_client._LOCAL and not dask_client._STARTING


def test_worker_killed_mid_text_job_changes_nothing(text_job, dask_cluster):
    from tests_dask import worker_pids
    from dask.distributed import Client

    d, pages, cfg = text_job
    out = str(d / "killed")
    rc: list[int] = []
    job = threading.Thread(target=lambda: rc.append(main(["text", "--in", pages, "--out", out, "--config", cfg,
                                                          *on(dask_cluster)])))
    victim = sorted(worker_pids(dask_cluster).items())[0]
    with Client(f"tcp://{dask_cluster}", timeout=30) as c:
        job.start()
        # kill once the worker holds results or runs tasks of this job (mid-job, not before it)
        busy = lambda: bool(c.processing().get(victim[0])) or bool(c.has_what().get(victim[0]))  # noqa: E731
        from tests_dask import wait_until
        assert wait_until(busy, timeout=60)
        os.kill(victim[1], signal.SIGKILL)
        job.join(timeout=300)
        assert wait_until(lambda: len(c.scheduler_info()["workers"]) == 2, timeout=60)  # the nanny restarts it
    assert rc == [0]
    assert digests(out) == digests(str(d / "ref"))
    assert digests(out + ".rejected") == digests(str(d / "ref.rejected"))


def test_tokenize_same_bytes_on_dask(tmp_path, dask_cluster):
    """(synth on Dask: tests/corpus/test_s3_datasets.py, writing to s3://)"""
    from pipelines.tokenize_pipeline import run_tokenize
    from training.tokenizer import save_tokenizer, train_tokenizer

    texts = [f"document {i} about cider, apples and pressing number {i * 7}" for i in range(60)]
    docs = str(tmp_path / "docs")
    write_dataset(docs, "documents", pa.table({"id": [f"d{i}" for i in range(60)], "text": texts}))
    tok = save_tokenizer(train_tokenizer(texts, 300), str(tmp_path / "tok"))
    run_tokenize(docs, str(tmp_path / "t1"), tok, target_bytes=2_000)
    run_tokenize(docs, str(tmp_path / "t2"), tok, beam_args=on(dask_cluster), target_bytes=2_000)
    assert len(digests(str(tmp_path / "t1"))) > 1 and digests(str(tmp_path / "t1")) == digests(str(tmp_path / "t2"))


def test_local_cluster_is_kept_for_the_next_job_and_replaced_after_a_failure(tmp_path):
    """A process's local cluster (`--runner dask` without an address) serves every job after the
    one that started it (a crawl runs one pipeline per wave); a job that fails gives it up."""
    from dask.distributed import Client

    from pipelines.runners import dask_client
    from pipelines.tokenize_pipeline import run_tokenize
    from training.tokenizer import save_tokenizer, train_tokenizer

    texts = [f"document {i} about cider and apples, pressed in batch {i * 3}" for i in range(40)]
    docs = str(tmp_path / "docs")
    write_dataset(docs, "documents", pa.table({"id": [f"d{i}" for i in range(40)], "text": texts}))
    tok = save_tokenizer(train_tokenizer(texts, 300), str(tmp_path / "tok"))
    local = ["--runner", "dask", "--dask_workers=1", "--dask_npartitions=2"]

    def worker_pids():
        client, cluster = dask_client._LOCAL[1]
        assert isinstance(client, Client) and dask_client.is_shared(cluster)
        return set(client.run(os.getpid).values())

    try:
        run_tokenize(docs, str(tmp_path / "t1"), tok, beam_args=local, target_bytes=2_000)
        first = worker_pids()
        run_tokenize(docs, str(tmp_path / "t2"), tok, beam_args=local, target_bytes=2_000)
        assert worker_pids() == first  # the same worker process ran the second job
        assert digests(str(tmp_path / "t1")) == digests(str(tmp_path / "t2"))
        broken = str(tmp_path / "broken")
        shutil.copytree(docs, broken)
        shard = os.path.join(broken, read_manifest(broken).shards[0].path)
        with open(shard, "r+b") as f:  # a shard that fails where a worker reads it, not before
            f.truncate(os.path.getsize(shard) // 2)
        with pytest.raises(Exception, match="part-00000"):
            run_tokenize(broken, str(tmp_path / "tb"), tok, beam_args=local, target_bytes=2_000)
        assert 1 not in dask_client._LOCAL  # given up
        run_tokenize(docs, str(tmp_path / "t3"), tok, beam_args=local, target_bytes=2_000)
        assert worker_pids().isdisjoint(first)  # a fresh cluster
        assert digests(str(tmp_path / "t3")) == digests(str(tmp_path / "t1"))
    finally:
        dask_client.close_local_clusters()
    assert not dask_client._LOCAL


def _crawl(out, beam_args, during=None):
    """Crawl the demo site (no rendering); `during(site)` runs beside the crawl. -> sorted page tuples."""
    from pipelines.crawl_pipeline import run_crawl
    from pipelines.demo_site.server import DemoSite

    with DemoSite(slow_seconds=1) as site:
        side = threading.Thread(target=during, args=(site,)) if during else None
        if side:
            side.start()
        pages, _ = run_crawl([site.url + "/"], out, allow_private=True, render="never", delay=0.05, max_pages=30,
                             max_depth=2, progress=False, beam_args=beam_args, read_timeout=2.0,
                             total_timeout=3.0, retries=0)
        if side:
            side.join(timeout=60)
        base = site.url
    rows = ShardDataset(pages).to_table(["url", "status", "text", "title"]).to_pylist()
    return sorted((r["url"].replace(base, ""), r["status"], r["text"], r["title"]) for r in rows)


def test_crawl_same_pages_on_dask_even_with_a_worker_killed_mid_wave(tmp_path, dask_cluster):
    from dask.distributed import Client
    from tests_dask import wait_until, worker_pids

    ref = _crawl(str(tmp_path / "a"), [])
    assert len(ref) >= 10
    assert _crawl(str(tmp_path / "b"), on(dask_cluster)) == ref

    killed = []

    def kill_the_crawling_worker(site):
        pids = worker_pids(dask_cluster)
        with Client(f"tcp://{dask_cluster}", timeout=30) as c:
            def crawling():
                if len(site.requests()) < 5:
                    return None
                return next((w for w, keys in c.processing().items()
                             if any("beam:" in str(k) for k in keys)), None)  # a Beam step running
            assert wait_until(lambda: crawling() is not None, timeout=60)
            w = crawling()
            os.kill(pids[w], signal.SIGKILL)
            killed.append(w)
            assert wait_until(lambda: len(c.scheduler_info()["workers"]) == 2, timeout=60)

    assert _crawl(str(tmp_path / "c"), on(dask_cluster), during=kill_the_crawling_worker) == ref
    assert len(killed) == 1


def test_unreachable_scheduler_is_one_line(tmp_path, capsys):
    from tests_dask import free_port

    pages = str(tmp_path / "pages")
    write_dataset(pages, "pages", pa.table({"id": ["a"], "url": ["http://x.test/"], "text": ["hello"]}))
    rc = main(["text", "--in", pages, "--out", str(tmp_path / "o"), "--runner", "dask",
               f"--dask_client_address=127.0.0.1:{free_port()}", "--dask_connection_timeout=2"])
    err = capsys.readouterr().err.strip()
    assert rc == 1 and "cannot reach the Dask scheduler" in err and "\n" not in err
    assert not os.path.exists(os.path.join(tmp_path, "o", "_manifest.json"))


def test_worker_missing_a_dependency_is_one_line(tmp_path, capsys):
    """A worker whose `xxhash` cannot be imported (shadowed by a module that raises ImportError)."""
    from tests_dask import start_cluster

    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "xxhash.py").write_text("raise ImportError('No module named xxhash')\n")
    pages = str(tmp_path / "pages")
    write_dataset(pages, "pages", pa.table({"id": ["a"], "url": ["http://x.test/"], "text": ["hello"]}))
    with start_cluster(str(tmp_path), nworkers=1, extra_path=str(shadow)) as address:
        rc = main(["text", "--in", pages, "--out", str(tmp_path / "o"), "--runner", "dask",
                   f"--dask_client_address={address}"])
    err = capsys.readouterr().err.strip()
    assert rc == 1 and "cannot import xxhash" in err and "\n" not in err
    assert not os.path.exists(os.path.join(tmp_path, "o", "_manifest.json"))


def test_worker_that_does_not_see_a_local_dataset_is_refused(tmp_path, capsys):
    """A worker that sees another disk at the output's path (here: its own mount namespace, where the
    folder is an empty tmpfs, as on another machine) would write the shards there: refused in one
    line before any work; an output the worker does see runs on the same cluster."""
    from tests_dask import can_hide, start_cluster
    if not can_hide():
        pytest.skip("this machine does not allow a private mount namespace (unshare -m)")
    hidden, shown = tmp_path / "hidden", tmp_path / "shown"
    hidden.mkdir()
    shown.mkdir()
    with start_cluster(str(tmp_path), nworkers=1, hide=str(hidden)) as address:
        bad = main(["synth", "tables", "--n", "3", "--out", str(hidden / "tables"), *on(address)])
        err = capsys.readouterr().err.strip()
        good = main(["synth", "tables", "--n", "3", "--out", str(shown / "tables"), *on(address)])
    assert bad == 1 and "does not see" in err and str(hidden / "tables") in err and "\n" not in err
    assert not os.path.exists(hidden / "tables" / "_manifest.json") and os.listdir(hidden / "tables") == []
    assert good == 0 and len(ShardDataset(str(shown / "tables"))) == 3


def test_worker_without_the_jobs_model_file_is_refused(tmp_path, capsys):
    """A text job whose quality model lies in a folder a worker sees as another, empty disk (its own
    mount namespace, as on another machine): refused in one line naming the worker and the file,
    before any work; the same job with the model where the worker sees it runs on that cluster
    (the language-ID model, left at its default, is resolved and checked on the worker itself)."""
    import shutil

    import yaml

    from filters.quality_model import DEFAULT_MODEL
    from tests_dask import can_hide, start_cluster
    if not can_hide():
        pytest.skip("this machine does not allow a private mount namespace (unshare -m)")
    hidden, shown = tmp_path / "hidden", tmp_path / "shown"
    hidden.mkdir()
    shown.mkdir()
    pages = str(tmp_path / "pages")
    write_dataset(pages, "pages", pa.table({"id": ["a"], "url": ["http://x.test/"],
                                            "text": ["Apples are pressed into cider in the autumn. " * 20]}))
    configs = {}
    for name, d in (("bad", hidden), ("good", shown)):
        shutil.copy(DEFAULT_MODEL, d / "quality.ftz")  # the cheapest model there is: the shipped one
        configs[name] = tmp_path / f"{name}.yaml"
        configs[name].write_text(yaml.safe_dump({"quality": {"model": str(d / "quality.ftz")}}))
    bad_out, good_out = tmp_path / "bad_out", tmp_path / "good_out"
    with start_cluster(str(tmp_path), nworkers=1, hide=str(hidden)) as address:
        bad = main(["text", "--in", pages, "--out", str(bad_out), "--config", str(configs["bad"]), *on(address)])
        err = capsys.readouterr().err.strip()
        good = main(["text", "--in", pages, "--out", str(good_out), "--config", str(configs["good"]), *on(address)])
    assert bad == 1 and "\n" not in err, err
    assert "Dask worker tcp://127.0.0.1:" in err and f"cannot read {hidden / 'quality.ftz'}" in err, err
    assert "same path on every worker" in err, err
    for d in (bad_out, tmp_path / "bad_out.rejected"):  # nothing written
        assert not [f for _, _, fs in os.walk(d) for f in fs], d
    assert good == 0 and os.path.exists(good_out / "_manifest.json")


class _Opens:
    """A function that opens `paths` on its workers."""

    def __init__(self, *paths):
        self.paths = list(paths)

    def file_paths(self):
        return self.paths


class _FakeClient:
    """client.run on one pretend worker, after `before()` (which plays that worker's disk)."""

    def __init__(self, before=lambda: None):
        self.before = before

    def run(self, fn, *args):
        self.before()
        return {"tcp://10.0.0.9:1234": fn(*args)}


def test_check_files_compares_size_and_both_ends_of_each_file(tmp_path):
    from corpus.errors import CidermillError
    from pipelines.runners.dask_client import DIGEST_SPAN, check_files

    small, big = tmp_path / "small.bin", tmp_path / "big.bin"
    small.write_bytes(b"model v1")
    big.write_bytes(b"\x00" * (3 * DIGEST_SPAN))
    fns = [_Opens(str(small)), _Opens(str(big), "s3://bucket/model.bin", str(tmp_path / "not-here-either"))]
    check_files(_FakeClient(), fns)  # same bytes; s3:// and files this machine lacks are not compared
    check_files(_FakeClient(), [])

    def rewrite(path, data):
        def go():
            path.write_bytes(data)
        return go

    cases = [(small, b"model v2", "has other bytes at"),                        # same size, other bytes
             (small, b"model v1.1", "10 bytes there, 8 here"),
             (big, b"\x00" * (3 * DIGEST_SPAN - 1) + b"\x01", "has other bytes at")]  # the last byte
    for path, data, want in cases:
        keep = path.read_bytes()
        with pytest.raises(CidermillError) as e:
            check_files(_FakeClient(rewrite(path, data)), fns)
        path.write_bytes(keep)
        msg = str(e.value)
        assert want in msg and str(path) in msg and "tcp://10.0.0.9:1234" in msg and "\n" not in msg
    with pytest.raises(CidermillError, match="cannot read .*small.bin"):
        check_files(_FakeClient(small.unlink), fns)
    small.write_bytes(b"model v1")
    broken = _Opens(str(small))  # e.g. a default model's package missing on the worker
    with pytest.raises(CidermillError, match="cannot name the files _Opens opens .TypeError"):
        check_files(_FakeClient(lambda: setattr(broken, "paths", None)), [broken])
    # documented limit: bytes between the first and the last MiB are not read
    big.write_bytes(b"\x00" * (3 * DIGEST_SPAN))
    check_files(_FakeClient(rewrite(big, b"\x00" * DIGEST_SPAN + b"\x01" + b"\x00" * (2 * DIGEST_SPAN - 1))), fns)


def test_jobs_name_the_files_their_workers_open(tmp_path):
    """What each job's functions declare (file_paths()), without a cluster."""
    from filters.chain import input_files, load_config
    from filters.langid import lid_model_path
    from filters.quality_model import DEFAULT_MODEL
    from imagetext.config import ImagesConfig
    from pipelines.images_fetch import _WarcRecords
    from pipelines.images_pipeline import ClipScoreDoFn
    from pipelines.text_pipeline import _Score

    assert input_files(load_config()) == [lid_model_path(), DEFAULT_MODEL]
    cfg = load_config(overrides={"langid": {"model": "/m/lid.bin"}, "quality": {"model": "/m/q.ftz"},
                                 "safety": {"wordlists": {"fr": "/w/fr.txt"}, "blocked_domains_file": "/w/d.txt"},
                                 "decontam": {"eval_sets": ["/e/a.jsonl"]}})
    assert _Score(cfg).file_paths() == ["/m/lid.bin", "/w/fr.txt", "/w/d.txt", "/m/q.ftz", "/e/a.jsonl"]
    cfg["stages"] = ["input", "quality"]
    assert _Score(cfg).file_paths() == ["/m/q.ftz"]
    assert ClipScoreDoFn(ImagesConfig(clip_checkpoint="/c/clip.safetensors"), str).file_paths() == [
        "/c/clip.safetensors"]
    assert ClipScoreDoFn(ImagesConfig(clip_model="ViT-B-32"), str).file_paths() == []
    assert _WarcRecords(["/w/a.warc.gz"], ImagesConfig().fetch).file_paths() == ["/w/a.warc.gz"]


def test_a_created_collection_splits_into_partitions_within_one_item_of_each_other():
    """dask.bag.from_sequence cuts 194 items into 8 partitions of 24 and a ninth of 2: two workers
    then run 5 and 4 partitions. The runner's split has exactly min(items, N) partitions."""
    from pipelines.runners.dask_runner import _even_bag
    for n_items, n in [(194, 8), (7, 8), (8, 8), (1000, 3), (1, 4)]:
        bag = _even_bag(list(range(n_items)), n)
        parts = bag.map_partitions(lambda p: [len(p)]).compute(scheduler="sync")
        assert len(parts) == min(n_items, n) and max(parts) - min(parts) <= 1 and sum(parts) == n_items
        assert sorted(bag.compute(scheduler="sync")) == list(range(n_items))


def test_a_union_of_branches_keeps_each_partition_with_its_own_rows():
    """Flatten of bags with as many partitions each (kept and dropped rows of one collection) joins
    partition i with partition i: every partition holds its share of each branch, and none is
    merged with a neighbour (which moved rows between workers). Other unions still concatenate."""
    import dask.bag as db

    from pipelines.runners.dask_runner import _flatten
    rows = db.from_sequence(range(80), npartitions=8)
    kept, dropped = rows.filter(lambda x: x % 3), rows.filter(lambda x: not x % 3)
    union = _flatten([kept, dropped], 8)
    parts = union.map_partitions(lambda p: [sorted(p)]).compute(scheduler="sync")
    assert parts == [list(range(10 * i, 10 * i + 10)) for i in range(8)]
    other = _flatten([rows, db.from_sequence(range(80, 83), npartitions=3)], 8)
    assert other.npartitions == 8 and sorted(other.compute(scheduler="sync")) == list(range(83))
    assert _flatten([], 8).compute(scheduler="sync") == []


def test_tasks_are_named_after_their_beam_steps():
    """A task's name starts with its Beam step's label, so the Dask dashboard and task stream say
    which step of the pipeline a slow or failing task belongs to; the graph still computes."""
    import apache_beam as beam
    from apache_beam.options.pipeline_options import PipelineOptions

    from pipelines.runners.dask_runner import _overrides, _Translate
    p = beam.Pipeline(options=PipelineOptions([]))
    _ = (p | "Numbers" >> beam.Create(list(range(10))) | "Double it" >> beam.Map(lambda x: 2 * x)
         | "Keep/Small" >> beam.Filter(lambda x: x < 10))
    p.replace_all(_overrides())
    visitor = _Translate(2)
    p.visit(visitor)
    (leaf,) = visitor.leaves()
    names = {k[0] if isinstance(k, tuple) else k for k in leaf.__dask_graph__()}
    assert any(n.startswith("beam:Double_it-") for n in names), names
    assert any(n.startswith("beam:Keep/Small-") for n in names), names
    assert sum(leaf.compute(scheduler="sync")) == 5


def test_a_bundle_wraps_elements_as_beams_global_window_does():
    """run_bundle builds each element's WindowedValue from one cached windows tuple instead of
    calling GlobalWindows.windowed_value (2 us an element, dask_tasks._windowing): a DoFn must
    still see Beam's own value, timestamp, window and pane."""
    import apache_beam as beam
    from apache_beam.internal import pickler
    from apache_beam.transforms.window import GlobalWindow, GlobalWindows
    from apache_beam.utils.timestamp import MIN_TIMESTAMP

    from pipelines.runners.dask_tasks import _windowing, run_bundle
    windowed, start, windows = _windowing()
    for v in (1, "x", {"id": "a"}):
        mine, beams = windowed(v, start, windows), GlobalWindows.windowed_value(v)
        assert mine == beams and mine.pane_info == beams.pane_info and mine.windows == beams.windows

    class Seen(beam.DoFn):
        def process(self, x, ts=beam.DoFn.TimestampParam, w=beam.DoFn.WindowParam):
            yield (x, ts, w)

    spec = pickler.dumps((Seen(), (), {}, "seen"))
    assert run_bundle([1, 2], spec, []) == [(None, (x, MIN_TIMESTAMP, GlobalWindow())) for x in (1, 2)]
