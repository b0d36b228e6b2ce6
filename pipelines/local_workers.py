"""The local text engine's worker processes: `cidermill text --workers N`.

Scoring pages (the per-document chain, most of a text job's CPU) and preparing dedup entries
(normalise, shingle, MinHash) are independent per work item, so they spread over N spawned
processes; each loads the chain and its models once. Results come back in work-item order, and
the corpus-wide steps (quality threshold, decontamination counts, LSH buckets, clusters) and the
writing stay in the parent, so the output is the same bytes as with one process.

With one worker the same functions run in this process, without a pool.

`--workers auto` (the default) measures before it spends: the first work item is scored here,
and worker processes start only when that item's CPU time, times the items left, gives each of
them at least WORK_PER_WORKER_S (twice what one costs to start), up to one per usable CPU and as
many as the memory estimate allows (pipelines/memory_fit.py). A small job, or one whose per-document work is
light (a dedup-only job: sanitising costs ~30 us a document), stays in one process, where a
second would only add its start-up; any choice writes the same bytes.
"""
from __future__ import annotations

import contextlib
import functools
import itertools
import logging
import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Callable, Iterator

from corpus.errors import CidermillError
from corpus.process_pools import close_pool
from corpus.reader import ShardDataset, read_items
from filters.chain import TextChain
from pipelines.text_rows import alive, page_dicts, score_page

MAX_WORKERS = 256
AUTO = "auto"
# CPU seconds of scoring each worker must get for `auto` to start it. A spawned worker costs about a
# second before its first item (interpreter, imports, its own chain and models; 0.5-1 s measured on
# the 2-core machine, both starting at once) and its rows cost time to send back, so a worker pays
# only with at least twice that to do: two workers need 4 s of work left, a 64-core machine starts
# 20 for 40 s of work, not 64.
WORK_PER_WORKER_S = 2.0
log = logging.getLogger(__name__)
_STATE: dict[str, Any] = {}  # per process: the chain and the pages dataset


def _load(pages_dir: str, columns: list[str], cfg: dict[str, Any]) -> None:
    """A worker's start: its own chain (models loaded once) and its own handle on the pages."""
    _STATE.update(chain=TextChain(cfg), dataset=ShardDataset(pages_dir), columns=columns)


def score_item(item: tuple[int, int, int]) -> list[dict[str, Any]]:
    """One (shard, start, stop) range of pages -> their scored rows."""
    chain, ds, columns = _STATE["chain"], _STATE["dataset"], _STATE["columns"]
    return [score_page(chain, page) for batch in ds.iter_slice(*item, columns=columns) for page in page_dicts(batch)]


class _Pool:
    """`map(fn, items)` over a spawned process pool, results in item order. Pools are spawned, not
    forked: a forked copy of a process that already runs Arrow's threads is not safe."""

    def __init__(self, workers: int, dataset: ShardDataset, columns: list[str], cfg: dict[str, Any]):
        self.processes = workers
        self.executor = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                                            initializer=_load, initargs=(dataset.directory, columns, cfg))

    def __call__(self, fn: Callable, items) -> Iterator:
        try:   # map() hands every item out now, starting workers as it goes
            results = self.executor.map(fn, items)
        except (BrokenProcessPool, OSError) as e:
            # a worker died while the work was handed out: the pool is broken, or it closed the
            # queue a new worker was being started with ("handle is closed")
            raise _worker_died() from e
        return _checked(results)

    def close(self) -> None:
        """Shut the pool down, killing what a dead worker left behind first (corpus/process_pools.py:
        about one run in ten of the killed-worker test hung in shutdown before)."""
        close_pool(self.executor)


class _Measured:
    """`--workers auto`: the first map's first item runs here, timed; the rest of that map and every
    later map run in a pool of up to `most` processes when the measured work left pays for their
    start (WORK_PER_WORKER_S each), else here too."""

    def __init__(self, most: int, dataset: ShardDataset, columns: list[str], cfg: dict[str, Any]):
        self.most, self.dataset, self.columns, self.cfg = most, dataset, columns, cfg
        self.run: _Pool | _InProcess | None = None   # decided on the first item
        self.processes = 1

    def __call__(self, fn: Callable, items) -> Iterator:
        if self.run is not None:
            return self.run(fn, items)
        items = list(items)
        if not items:
            return iter(())
        t0 = time.process_time()
        first = fn(items[0])
        took = time.process_time() - t0
        rest = items[1:]
        left = took * len(rest)
        n = min(self.most, len(rest), int(left // WORK_PER_WORKER_S))
        self.run = _Pool(n, self.dataset, self.columns, self.cfg) if n > 1 else _InProcess()
        self.processes = self.run.processes
        log.info("local engine, --workers auto: first of %d work items took %.2f CPU-s; %s", len(items), took,
                 f"{n} worker processes for the rest" if n > 1 else f"one process ({_why_one(left, len(rest))})")
        return itertools.chain([first], self.run(fn, rest))

    def close(self) -> None:
        if isinstance(self.run, _Pool):
            self.run.close()


def _why_one(left: float, rest: int) -> str:
    if left < 2 * WORK_PER_WORKER_S:
        return f"about {left:.1f} CPU-s left; two workers pay from {2 * WORK_PER_WORKER_S:.0f}"
    return "one work item left" if rest <= 1 else "the usable CPUs or the memory allow one"


@contextlib.contextmanager
def worker_map(workers: int | str, chain: TextChain, dataset: ShardDataset, columns: list[str],
               cfg: dict[str, Any], most: int = 1) -> Iterator[Callable]:
    """A `map(fn, items)` that runs in `workers` processes (results in item order), or in this
    process for one worker, with the caller's chain and dataset; every worker process loads its
    own from `cfg`. `workers="auto"`: decided on the first work item, at most `most` processes
    (_Measured). The map's `processes` says how many ran."""
    _STATE.update(chain=chain, dataset=dataset, columns=columns)
    try:
        if workers == AUTO:
            measured = _Measured(most, dataset, columns, cfg)
            try:
                yield measured
            finally:
                measured.close()
        elif workers <= 1:
            yield _InProcess()
        else:
            pool = _Pool(workers, dataset, columns, cfg)
            try:
                yield pool
            finally:
                pool.close()
    finally:
        _STATE.clear()


class _InProcess:
    processes = 1

    def __call__(self, fn: Callable, items) -> Iterator:
        return map(fn, items)


def _checked(results: Iterator) -> Iterator:
    """A worker that dies (killed, out of memory) breaks the pool: one clear error instead of a
    job that waits forever; nothing has been written yet (outputs are written after the workers)."""
    try:
        yield from results
    except BrokenProcessPool:
        raise _worker_died() from None


def _worker_died() -> CidermillError:
    return CidermillError("a local worker process died (killed, or out of memory) before the job wrote "
                          "anything; rerun with fewer --workers or more memory")


def score_pages(pmap: Callable, dataset: ShardDataset, prepare: Callable | None = None
                ) -> tuple[list[dict[str, Any]], list[tuple] | None]:
    """Every page of the dataset, scored, in dataset order; with `prepare` (filters/dedup_lsh.py
    batch_preparer), also the dedup preparation of each work item's surviving rows, made in the
    process that scored them (score_and_prepare), else None."""
    rows: list[dict[str, Any]] = []
    if prepare is None:
        for part in pmap(score_item, read_items(dataset)):
            rows.extend(part)
        return rows, None
    prepared = []
    for part, prep in pmap(functools.partial(score_and_prepare, prepare=prepare), read_items(dataset)):
        rows.extend(part)
        prepared.append(prep)
    return rows, prepared


def score_and_prepare(item: tuple[int, int, int], prepare: Callable) -> tuple[list[dict[str, Any]], tuple]:
    """score_item, then the dedup preparation of the item's surviving rows, here: their texts
    then cross to the parent once, with the rows, instead of going back to a worker to be
    prepared (a dedup-only job's rows are mostly text)."""
    rows = score_item(item)
    return rows, prepare([r for r in rows if alive(r)])
