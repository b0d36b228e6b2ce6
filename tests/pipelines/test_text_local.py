"""The local text engine (pipelines/text_local.py) writes what the Beam pipeline writes: the same
shards byte for byte, the same funnel and samples, with one process or two, on the demo pages
plus bad input with every corpus-wide step on (quality top-p%, decontamination, exact + near
dedup)."""
import json
import os

import pytest
import yaml

from corpus.errors import CidermillError
from corpus.report import read_report, read_samples
from pipelines.beam_options import uses_local_engine
from pipelines.cli import main
from pipelines.text_job import run_text
from tests.pipelines.test_text_pipeline import build_pages


def _shards(directory):
    with open(os.path.join(directory, "_manifest.json"), encoding="utf-8") as f:
        m = json.load(f)
    return [(s["path"], s["rows"], s["sha256"]) for s in m["shards"]], m["schema"]


def test_engine_choice_from_the_options():
    assert uses_local_engine([]) and uses_local_engine(None)
    assert uses_local_engine(["--runner", "local"]) and uses_local_engine(["--runner=LOCAL"])
    assert not uses_local_engine(["--runner=FnApiRunner"])
    assert not uses_local_engine(["--direct_num_workers=2", "--direct_running_mode=multi_processing"])
    assert not uses_local_engine(["--runner", "dask", "--dask_workers", "2"])
    with pytest.raises(CidermillError, match="--runner local .* takes no other Beam options"):
        uses_local_engine(["--runner=local", "--direct_num_workers=2"])


@pytest.mark.slow
def test_local_engine_writes_the_beam_pipelines_bytes(tmp_path):
    pages, cfg, _ = build_pages(tmp_path)
    # small shards: several per dataset, so shard assignment is compared too
    local = run_text(pages, str(tmp_path / "local"), cfg, target_bytes=20_000)
    beam = run_text(pages, str(tmp_path / "beam"), cfg, ["--runner=FnApiRunner"], target_bytes=20_000)
    for suffix in ("", ".rejected"):
        got, want = _shards(str(tmp_path / "local") + suffix), _shards(str(tmp_path / "beam") + suffix)
        assert got == want
        assert len(got[0]) >= 2 and sum(rows for _, rows, _ in got[0]) > 0
    assert {k: v for k, v in local.items() if k not in ("out_dir", "rejected_dir", "report")} == \
        {k: v for k, v in beam.items() if k not in ("out_dir", "rejected_dir", "report")}
    assert local["dropped"].get("dedup:exact_duplicate") and local["dropped"].get("decontam:eval_ngram_overlap")
    assert any(r.startswith("quality:below_top_percent") for r in local["dropped"])
    got_stats, want_stats = read_report(str(tmp_path / "local")), read_report(str(tmp_path / "beam"))
    assert {n: (s.rows_in, s.kept, s.dropped) for n, s in got_stats.stages.items()} == \
        {n: (s.rows_in, s.kept, s.dropped) for n, s in want_stats.stages.items()}
    assert got_stats.info["stages"] == want_stats.info["stages"]
    assert read_samples(str(tmp_path / "local")) == read_samples(str(tmp_path / "beam"))

    # two worker processes (scoring and dedup preparation spread over them): the same bytes
    two = run_text(pages, str(tmp_path / "two"), cfg, target_bytes=20_000, workers=2)
    assert two["kept"] == local["kept"] and two["dropped"] == local["dropped"]
    for suffix in ("", ".rejected"):
        assert _shards(str(tmp_path / "two") + suffix) == _shards(str(tmp_path / "beam") + suffix)

    # a rerun into the same place is idempotent; another job there is refused without --overwrite
    run_text(pages, str(tmp_path / "local"), cfg, target_bytes=20_000)
    assert _shards(str(tmp_path / "local")) == _shards(str(tmp_path / "beam"))
    other = tmp_path / "other.yaml"
    other.write_text(yaml.safe_dump({"stages": ["input", "dedup"]}))
    with pytest.raises(CidermillError, match="already holds a different dataset"):
        run_text(pages, str(tmp_path / "local"), str(other))


@pytest.mark.slow
def test_dedup_prepared_while_scoring_writes_the_beam_pipelines_bytes(tmp_path):
    """Without a corpus-wide step before dedup (no top-p% quality, no decontamination) each work
    item's dedup entries are prepared in the process that scored it (local_workers.score_and_prepare):
    the same shards as Beam's, with one process or two, and the duplicates are found."""
    from filters.chain import TextChain, load_config
    from pipelines.text_local import _dedup_params, _prepare_while_scoring

    pages, _, _ = build_pages(tmp_path)
    cfg = tmp_path / "dedup.yaml"
    cfg.write_text(yaml.safe_dump({"input": {"max_chars": 200_000}, "stages": ["input", "c4_lines", "dedup"],
                                   "dedup": {"near": True}}))
    loaded = load_config(str(cfg))
    assert _prepare_while_scoring(TextChain(loaded), _dedup_params(loaded)) is not None  # the path under test
    beam = run_text(pages, str(tmp_path / "beam"), str(cfg), ["--runner=FnApiRunner"], target_bytes=20_000)
    assert beam["dropped"].get("dedup:exact_duplicate")
    for workers in (1, 2):
        out = run_text(pages, str(tmp_path / f"w{workers}"), str(cfg), target_bytes=20_000, workers=workers)
        assert out["kept"] == beam["kept"] and out["dropped"] == beam["dropped"]
        for suffix in ("", ".rejected"):
            assert _shards(str(tmp_path / f"w{workers}") + suffix) == _shards(str(tmp_path / "beam") + suffix)


def test_local_engine_cli_errors_are_one_line(tmp_path, capsys):
    pages, _, _ = build_pages(tmp_path)
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"stages": ["input", "dedup"], "dedup": {"bandz": 3}}))
    assert main(["text", "--in", pages, "--out", str(tmp_path / "o"), "--config", str(bad)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "dedup" in err[0] and "bandz" in err[0], err
    assert not os.path.exists(tmp_path / "o" / "_manifest.json")
    assert main(["text", "--in", pages, "--out", str(tmp_path / "o"), "--runner", "local",
                 "--direct_num_workers=2"]) == 1
    assert "takes no other Beam options" in capsys.readouterr().err
    assert main(["text", "--in", pages, "--out", str(tmp_path / "o"), "--workers", "2", "--runner", "dask"]) == 1
    assert "--workers sets the local engine's processes" in capsys.readouterr().err
    assert main(["text", "--in", pages, "--out", str(tmp_path / "o"), "--workers", "0"]) == 1
    assert "--workers must be auto or in 1.." in capsys.readouterr().err
    assert main(["text", "--in", pages, "--out", str(tmp_path / "o"), "--workers", "many"]) == 1
    assert "--workers must be auto or in 1..256, got many" in capsys.readouterr().err


def test_an_input_too_large_for_memory_is_refused_before_anything_is_written(tmp_path, capsys, monkeypatch):
    from pipelines import memory_fit

    assert memory_fit.available_memory() > 0  # this machine's /proc/meminfo (and cgroup, if limited)
    # a container limited to 4 GiB that uses 3.9 GiB, 3.5 GiB of it page cache: 3.6 GiB left
    gib = 1 << 30
    (tmp_path / "cg").mkdir()
    (tmp_path / "meminfo").write_text("MemTotal: 99999999 kB\nMemAvailable: 50000000 kB\n")
    (tmp_path / "cg" / "memory.max").write_text(f"{4 * gib}\n")
    (tmp_path / "cg" / "memory.current").write_text(f"{39 * gib // 10}\n")
    (tmp_path / "cg" / "memory.stat").write_text(f"anon {4 * gib // 10}\nfile {35 * gib // 10}\nkernel 0\n")
    got = memory_fit.available_memory(str(tmp_path / "meminfo"), str(tmp_path / "cg"))
    assert got == 4 * gib - (39 * gib // 10 - 35 * gib // 10)
    (tmp_path / "cg" / "memory.max").write_text("max\n")  # no limit: MemAvailable
    assert memory_fit.available_memory(str(tmp_path / "meminfo"), str(tmp_path / "cg")) == 50000000 * 1024
    assert memory_fit.available_memory(str(tmp_path / "none"), str(tmp_path / "none")) is None
    assert memory_fit.local_peak_estimate(65 << 20) > 327 << 20  # above the peak measured on 65 MB of shards
    assert memory_fit.local_peak_estimate(1 << 30, workers=2) > memory_fit.local_peak_estimate(1 << 30)
    pages, _, _ = build_pages(tmp_path)
    from corpus.reader import ShardDataset
    ds = ShardDataset(pages)
    text_only, with_ids = memory_fit.input_bytes(ds, ["text"]), memory_fit.input_bytes(ds, ["text", "id"])
    assert 0 < text_only < with_ids <= sum(s.bytes for s in ds.manifest.shards)  # only the columns read count
    monkeypatch.setattr(memory_fit, "available_memory", lambda: 100 << 20)  # a machine with 100 MB free
    out = tmp_path / "o"
    assert main(["text", "--in", pages, "--out", str(out)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "holds every row in memory" in err[0] and "--no-memory-check" in err[0], err
    assert not out.exists()
    assert main(["text", "--in", pages, "--out", str(out), "--no-memory-check"]) == 0
    assert os.path.exists(out / "_manifest.json")


def _spawned_workers() -> list[int]:
    """Pids of this process's multiprocessing workers (not its resource tracker), from /proc."""
    pids = []
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/children") as f:
                pids += [int(p) for p in f.read().split()]
        except OSError:  # a thread that ended after the listing (a pool's or Dask's helper thread)
            continue
    out = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read()
        except OSError:
            continue
        if b"spawn_main" in cmd and b"resource_tracker" not in cmd:
            out.append(pid)
    return out


def test_a_killed_worker_is_one_clear_error_and_nothing_is_written(tmp_path):
    import signal
    import threading
    import time

    pages, cfg, _ = build_pages(tmp_path)
    out = str(tmp_path / "docs")
    result: dict = {}

    def job():
        try:
            run_text(pages, out, cfg, workers=2)
        except CidermillError as e:
            result["error"] = str(e)

    before = set(_spawned_workers())  # earlier tests' spawned processes (a Dask cluster) are not this job's
    t = threading.Thread(target=job)
    t.start()
    deadline = time.time() + 60
    workers: list[int] = []
    while not workers and time.time() < deadline:  # workers need seconds to import and load
        workers = [p for p in _spawned_workers() if p not in before]
        time.sleep(0.005)
    assert workers, "no worker process appeared"
    os.kill(workers[0], signal.SIGKILL)
    t.join(120)
    assert not t.is_alive()
    assert "worker process died" in result.get("error", ""), result
    assert not os.path.exists(os.path.join(out, "_manifest.json"))


def test_a_pool_broken_before_its_work_is_handed_out_is_the_same_clear_error():
    """A worker that dies while map() is still handing items out (and starting workers) breaks the
    pool there, before any result is read: the same one error, not a bare BrokenProcessPool or the
    OSError of a closed queue."""
    import multiprocessing
    import signal
    import time
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    from pipelines.local_workers import _Pool

    before = set(_spawned_workers())
    pool = _Pool.__new__(_Pool)   # the engine's pool around a plain spawned executor (no chain to load)
    pool.processes, pool.owner = 1, {}
    pool.executors = [ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))]
    try:
        assert list(pool(abs, [-1, -2])) == [1, 2]
        workers = [p for p in _spawned_workers() if p not in before]
        assert workers
        os.kill(workers[0], signal.SIGKILL)
        deadline = time.time() + 30
        while time.time() < deadline:   # until the executor has noticed its dead worker
            try:
                pool.executors[0].submit(abs, 1).result(timeout=5)
            except BrokenProcessPool:
                break
            time.sleep(0.05)
        with pytest.raises(CidermillError, match="worker process died"):
            pool(abs, [-3])
    finally:
        pool.close()


@pytest.mark.slow
def test_workers_auto_starts_a_pool_only_when_the_measured_work_pays_for_it(tmp_path, monkeypatch, caplog):
    """`--workers auto` scores the first work item here, timed, then either keeps the rest here or
    spreads it over spawned workers; either way the rows are the ones one process gives."""
    import logging

    from corpus.reader import ShardDataset, read_items
    from filters.chain import TextChain, load_config
    from pipelines import local_workers
    from pipelines.text_rows import page_columns

    pages, cfg_path, _ = build_pages(tmp_path)
    cfg = load_config(str(cfg_path))
    chain, ds = TextChain(cfg), ShardDataset(pages)
    columns = page_columns(ds)
    items = read_items(ds, rows_per_item=4)
    assert len(items) >= 3

    def scored(pmap):
        return json.dumps([r for part in pmap(local_workers.score_item, items) for r in part],
                          sort_keys=True, default=str)

    with local_workers.worker_map(1, chain, ds, columns, cfg) as pmap:
        want = scored(pmap)
    caplog.set_level(logging.INFO, logger="pipelines.local_workers")
    monkeypatch.setattr(local_workers, "WORK_PER_WORKER_S", 1e9)  # nothing pays: one process
    with local_workers.worker_map("auto", chain, ds, columns, cfg, most=2) as pmap:
        assert scored(pmap) == want and pmap.processes == 1
    assert "one process" in caplog.text
    monkeypatch.setattr(local_workers, "WORK_PER_WORKER_S", 1e-9)  # everything pays: a pool of 2 for the rest
    with local_workers.worker_map("auto", chain, ds, columns, cfg, most=2) as pmap:
        assert scored(pmap) == want and pmap.processes == 2
        again = json.dumps([r for part in pmap(local_workers.score_item, items) for r in part],
                           sort_keys=True, default=str)  # a later map (dedup preparation) reuses the pool
        assert again == want
    assert "2 worker processes for the rest" in caplog.text
    with local_workers.worker_map("auto", chain, ds, columns, cfg, most=1) as pmap:  # memory or CPUs allow one
        assert scored(pmap) == want and pmap.processes == 1


def test_usable_cpus_follow_affinity_and_a_container_quota(tmp_path):
    from corpus.cpus import usable_cpus

    affinity = len(os.sched_getaffinity(0))
    assert usable_cpus(str(tmp_path / "absent")) == affinity
    (tmp_path / "cpu.max").write_text("max 100000\n")
    assert usable_cpus(str(tmp_path / "cpu.max")) == affinity
    (tmp_path / "cpu.max").write_text("150000 100000\n")  # 1.5 CPUs of quota: 2 processes at most
    assert usable_cpus(str(tmp_path / "cpu.max")) == min(affinity, 2)
    (tmp_path / "cpu.max").write_text("50000 100000\n")
    assert usable_cpus(str(tmp_path / "cpu.max")) == 1


def test_workers_that_fit_follow_the_memory_estimate():
    from pipelines import memory_fit

    one = memory_fit.local_peak_estimate(1 << 30, 1)
    assert memory_fit.workers_that_fit(1 << 30, 8, available=one - 1) == 1
    assert memory_fit.workers_that_fit(1 << 30, 8, available=one + memory_fit.BYTES_PER_EXTRA_WORKER) == 2
    assert memory_fit.workers_that_fit(1 << 30, 8, available=one + 100 * memory_fit.BYTES_PER_EXTRA_WORKER) == 8
    assert memory_fit.workers_that_fit(None, 4) == 4
