"""Rows held by the local engine's workers (pipelines/text_held.py): the same shards and report as
one process, whichever process scored which work item, and nothing left behind when a worker is
killed part-way."""
import glob
import logging
import os
import shutil
import signal

import pytest
import yaml

from corpus.errors import CidermillError
from corpus.reader import ShardDataset, read_items
from corpus.report import read_report, read_samples
from corpus.writer import write_dataset
from pipelines import local_workers, text_held
from pipelines.text_job import run_text
from tests.pipelines.test_text_local import _shards, _spawned_workers
from tests.pipelines.test_text_pipeline import build_pages

EXCHANGE = "/dev/shm/cidermill-exchange-*"


def _split_pages(tmp_path) -> tuple[str, str]:
    """build_pages's pages rewritten as small shards, so a job has many work items."""
    pages, cfg, _ = build_pages(tmp_path)
    out = str(tmp_path / "pages-split")
    write_dataset(out, "pages", ShardDataset(pages).to_table(), target_bytes=20_000)
    assert len(read_items(ShardDataset(out))) >= 6
    return out, cfg


def _dedup_config(tmp_path) -> str:
    cfg = tmp_path / "dedup.yaml"
    cfg.write_text(yaml.safe_dump({"input": {"max_chars": 200_000}, "stages": ["input", "c4_lines", "dedup"],
                                   "dedup": {"near": True}}))
    return str(cfg)


def _same_output(a: str, b: str) -> None:
    for suffix in ("", ".rejected"):
        assert _shards(a + suffix) == _shards(b + suffix)
    got, want = read_report(a), read_report(b)
    assert {n: (s.rows_in, s.kept, s.dropped, {k: h.counts for k, h in s.histograms.items()})
            for n, s in got.stages.items()} == \
        {n: (s.rows_in, s.kept, s.dropped, {k: h.counts for k, h in s.histograms.items()})
         for n, s in want.stages.items()}
    assert read_samples(a) == read_samples(b)


def _left_behind(*outs: str) -> list[str]:
    return [p for o in outs for s in ("", ".rejected") for p in glob.glob(os.path.join(o + s, ".staging"))]


@pytest.mark.slow
def test_held_rows_write_what_one_process_writes(tmp_path, monkeypatch, caplog):
    pages, _ = _split_pages(tmp_path)
    cfg = _dedup_config(tmp_path)
    one = run_text(pages, str(tmp_path / "one"), cfg, target_bytes=20_000, workers=1)
    assert one["dropped"].get("dedup:exact_duplicate") and len(_shards(str(tmp_path / "one"))[0]) >= 3
    exchanges = set(glob.glob(EXCHANGE))
    caplog.set_level(logging.INFO)
    two = run_text(pages, str(tmp_path / "two"), cfg, target_bytes=20_000, workers=2)
    assert "the rows stay in the workers" in caplog.text  # the path under test
    assert two["kept"] == one["kept"] and two["dropped"] == one["dropped"]
    _same_output(str(tmp_path / "two"), str(tmp_path / "one"))
    # `auto` with a pool: the first item is scored (and held) in this process, the rest in workers
    monkeypatch.setattr(local_workers, "WORK_PER_WORKER_S", 1e-9)
    caplog.clear()
    run_text(pages, str(tmp_path / "auto"), cfg, target_bytes=20_000)
    assert "2 worker processes for the rest" in caplog.text and "the rows stay in the workers" in caplog.text
    _same_output(str(tmp_path / "auto"), str(tmp_path / "one"))
    # a rerun in place is idempotent; nothing is left in staging areas or shared memory
    run_text(pages, str(tmp_path / "two"), cfg, target_bytes=20_000, workers=2)
    _same_output(str(tmp_path / "two"), str(tmp_path / "one"))
    assert not _left_behind(str(tmp_path / "two"), str(tmp_path / "auto"))
    assert set(glob.glob(EXCHANGE)) == exchanges


def test_a_dead_jobs_exchange_directory_is_swept(tmp_path):
    """A job killed with SIGKILL cleans nothing up: the next job removes the exchange directory of
    a process that no longer exists, and leaves a live process's alone."""
    import subprocess
    import sys

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    dead = f"/dev/shm/{text_held.EXCHANGE_PREFIX}{gone.pid}-test"
    live = f"/dev/shm/{text_held.EXCHANGE_PREFIX}{os.getpid()}-test"
    for d in (dead, live):
        os.makedirs(d)
        with open(os.path.join(d, "rows"), "wb") as f:
            f.write(b"x" * 1000)
    place = ""
    try:
        place = text_held.exchange_place(str(tmp_path / "out"), 1000)
        assert place.startswith(f"/dev/shm/{text_held.EXCHANGE_PREFIX}{os.getpid()}-")
        assert not os.path.exists(dead) and os.path.exists(live)
    finally:
        for d in (dead, live, place):
            if d:
                shutil.rmtree(d, ignore_errors=True)


@pytest.mark.slow
def test_held_rows_with_quality_and_decontamination_and_no_dedup(tmp_path, monkeypatch):
    """Top-p% quality and decontamination decided in the parent from the workers' partial counts;
    on a machine without /dev/shm the exchange goes through the output's staging area on disk."""
    pages, cfg_path = _split_pages(tmp_path)
    with open(cfg_path, encoding="utf-8") as f:
        cfg = yaml.safe_load(f)
    cfg["stages"] = ["input", "c4_lines", "gopher", "quality", "decontam"]
    path = tmp_path / "nodedup.yaml"
    path.write_text(yaml.safe_dump(cfg))
    one = run_text(pages, str(tmp_path / "one"), str(path), target_bytes=20_000, workers=1)
    assert any(r.startswith("quality:below_top_percent") for r in one["dropped"])
    assert one["dropped"].get("decontam:eval_ngram_overlap")
    run_text(pages, str(tmp_path / "two"), str(path), target_bytes=20_000, workers=2)
    _same_output(str(tmp_path / "two"), str(tmp_path / "one"))
    monkeypatch.setattr(text_held, "SHM", str(tmp_path / "no-shm"))
    exchanges = set(glob.glob(EXCHANGE))
    run_text(pages, str(tmp_path / "disk"), str(path), target_bytes=20_000, workers=2)
    _same_output(str(tmp_path / "disk"), str(tmp_path / "one"))
    assert set(glob.glob(EXCHANGE)) == exchanges and not _left_behind(str(tmp_path / "disk"))


@pytest.mark.slow
def test_a_worker_killed_after_the_exchange_leaves_nothing_behind(tmp_path, monkeypatch):
    """kill -9 of a worker once the rows sit in the exchange files, before the shards are written:
    one clear error, no manifest, no shard, no staging area, no exchange directory."""
    pages, _ = _split_pages(tmp_path)
    cfg = _dedup_config(tmp_path)
    out = str(tmp_path / "docs")
    exchanges = set(glob.glob(EXCHANGE))
    before = set(_spawned_workers())
    real = text_held.shard_groups
    killed: list[int] = []

    def kill_then_group(n, processes):
        if not killed:
            workers = [p for p in _spawned_workers() if p not in before]
            assert workers and set(glob.glob(EXCHANGE)) - exchanges  # the exchange files exist now
            os.kill(workers[0], signal.SIGKILL)
            killed.append(workers[0])
        return real(n, processes)

    monkeypatch.setattr(text_held, "shard_groups", kill_then_group)
    with pytest.raises(CidermillError, match="worker process died"):
        run_text(pages, out, cfg, target_bytes=20_000, workers=2)
    assert killed
    for d in (out, out + ".rejected"):
        assert sorted(os.listdir(d)) == [], os.listdir(d)
    assert set(glob.glob(EXCHANGE)) == exchanges
