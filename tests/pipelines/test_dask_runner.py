"""`--runner dask` against a real `dask scheduler` + 2 `dask worker` processes on 127.0.0.1:
text, tokenize and crawl write the same bytes as the in-process runner; a worker killed
with SIGKILL mid-job changes nothing; bad clusters are one-line errors."""
from __future__ import annotations

import os
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
                             if any("run_bundle" in str(k) for k in keys)), None)
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
