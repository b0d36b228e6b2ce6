"""The local text engine's worker processes: `cidermill text --workers N`.

Scoring pages (the per-document chain, most of a text job's CPU) and preparing dedup entries
(normalise, shingle, MinHash) are independent per work item, so they spread over N spawned
processes; each loads the chain and its models once. Results come back in work-item order. The
corpus-wide decisions (quality threshold, decontamination counts, LSH buckets, clusters) are made
in the parent; each process keeps the rows it scored and later applies the decisions to them and
writes shards itself (pipelines/text_held.py). The output is the same bytes as with one process.

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
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
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


def state() -> dict[str, Any]:
    """This process's chain, pages dataset and columns (a worker's own, or the parent's while a
    worker_map is open), and whatever a step keeps here between rounds (pipelines/text_held.py)."""
    return _STATE


def score_item(item: tuple[int, int, int]) -> list[dict[str, Any]]:
    """One (shard, start, stop) range of pages -> their scored rows."""
    chain, ds, columns = _STATE["chain"], _STATE["dataset"], _STATE["columns"]
    return [score_page(chain, page) for batch in ds.iter_slice(*item, columns=columns) for page in page_dicts(batch)]


class _Pool:
    """`map(fn, items)` over `workers` spawned processes, results in item order. Pools are spawned,
    not forked: a forked copy of a process that already runs Arrow's threads is not safe.

    Each process is its own one-worker executor and the items are handed out here, two in flight
    per process (the next to whichever finishes first), so the pool knows which process ran which
    item (`owner`): a step that keeps an item's results in its process (pipelines/text_held.py)
    can send later work on that item to the same process (`on_owners`)."""

    IN_FLIGHT = 2

    def __init__(self, workers: int, dataset: ShardDataset, columns: list[str], cfg: dict[str, Any]):
        self.processes = workers
        ctx = multiprocessing.get_context("spawn")
        self.executors = [ProcessPoolExecutor(1, mp_context=ctx, initializer=_load,
                                              initargs=(dataset.directory, columns, cfg)) for _ in range(workers)]
        self.owner: dict[Any, int] = {}

    def __call__(self, fn: Callable, items) -> Iterator:
        """Every result is in before this returns, so a dead worker is this call's one error."""
        return iter(list(_checked(self._run(fn, list(items)))))

    def _run(self, fn: Callable, items: list) -> Iterator:
        done: dict[int, Any] = {}
        running: dict[Future, tuple[int, int]] = {}   # future -> (item index, process)
        nxt, out = 0, 0
        try:
            while out < len(items):
                for depth in range(1, self.IN_FLIGHT + 1):   # top every process up, one item at a time:
                    for w in range(self.processes):          # a short list still reaches every process
                        if nxt < len(items) and sum(1 for _, x in running.values() if x == w) < depth:
                            running[self.executors[w].submit(fn, items[nxt])] = (nxt, w)
                            nxt += 1
                finished, _ = wait(list(running), return_when=FIRST_COMPLETED)
                for f in finished:
                    i, w = running.pop(f)
                    done[i] = f.result()
                    with contextlib.suppress(TypeError):   # an unhashable item is never asked for again
                        self.owner[items[i]] = w
                while out in done:
                    yield done.pop(out)
                    out += 1
        except (BrokenProcessPool, OSError) as e:
            # a worker died (killed, out of memory): its process, and what it held, is gone
            raise _worker_died() from e

    def on_owners(self, fn: Callable, items: list, *args) -> list:
        """fn(its items, *args) once in each process, for the items that process ran (the parent's
        own, `owner` -1, here) -> fn's per-item results, in `items` order."""
        groups: dict[int, list] = {}
        for item in items:
            groups.setdefault(self.owner.get(item, -1), []).append(item)
        futures = {w: self.executors[w].submit(fn, group, *args) for w, group in groups.items() if w >= 0}
        results = dict(zip(groups.get(-1, []), fn(groups[-1], *args))) if -1 in groups else {}
        try:
            for w, f in futures.items():
                results.update(zip(groups[w], f.result()))
        except (BrokenProcessPool, OSError) as e:
            raise _worker_died() from e
        return [results[item] for item in items]

    def close(self) -> None:
        """Shut the processes down, killing what a dead worker left behind first (corpus/process_pools.py:
        about one run in ten of the killed-worker test hung in shutdown before)."""
        for executor in self.executors:
            close_pool(executor, cancel_futures=True)


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

    def on_owners(self, fn: Callable, items: list, *args) -> list:
        """As _Pool.on_owners; the first item ran here, and so did everything without a pool."""
        return (self.run if self.run is not None else _InProcess()).on_owners(fn, items, *args)

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

    def on_owners(self, fn: Callable, items: list, *args) -> list:
        return list(fn(list(items), *args)) if items else []


def _checked(results: Iterator) -> Iterator:
    """A worker that dies (killed, out of memory) breaks the pool: one clear error instead of a
    job that waits forever. The caller removes what the job had written (text_local)."""
    try:
        yield from results
    except BrokenProcessPool:
        raise _worker_died() from None


def _worker_died() -> CidermillError:
    return CidermillError("a local worker process died (killed, or out of memory); the job's output was not "
                          "written; rerun with fewer --workers or more memory")


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
