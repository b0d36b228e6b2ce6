"""The local text engine's worker processes: `cidermill text --workers N`.

Scoring pages (the per-document chain, most of a text job's CPU) and preparing dedup entries
(normalise, shingle, MinHash) are independent per work item, so they spread over N spawned
processes; each loads the chain and its models once. Results come back in work-item order, and
the corpus-wide steps (quality threshold, decontamination counts, LSH buckets, clusters) and the
writing stay in the parent, so the output is the same bytes as with one process.

With one worker the same functions run in this process, without a pool.
"""
from __future__ import annotations

import contextlib
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Callable, Iterator

from corpus.errors import CidermillError
from corpus.reader import ShardDataset, read_items
from filters.chain import TextChain
from pipelines.text_rows import page_dicts, score_page

MAX_WORKERS = 256
_STATE: dict[str, Any] = {}  # per process: the chain and the pages dataset


def _load(pages_dir: str, columns: list[str], cfg: dict[str, Any]) -> None:
    """A worker's start: its own chain (models loaded once) and its own handle on the pages."""
    _STATE.update(chain=TextChain(cfg), dataset=ShardDataset(pages_dir), columns=columns)


def score_item(item: tuple[int, int, int]) -> list[dict[str, Any]]:
    """One (shard, start, stop) range of pages -> their scored rows."""
    chain, ds, columns = _STATE["chain"], _STATE["dataset"], _STATE["columns"]
    return [score_page(chain, page) for batch in ds.iter_slice(*item, columns=columns) for page in page_dicts(batch)]


@contextlib.contextmanager
def worker_map(workers: int, chain: TextChain, dataset: ShardDataset, columns: list[str],
               cfg: dict[str, Any]) -> Iterator[Callable]:
    """A `map(fn, items)` that runs in `workers` processes (results in item order), or in this
    process for one worker, with the caller's chain and dataset; every worker process loads its
    own from `cfg`. Pools are spawned, not forked: a forked copy of a process that already runs
    Arrow's threads is not safe."""
    if workers <= 1:
        _STATE.update(chain=chain, dataset=dataset, columns=columns)
        try:
            yield map
        finally:
            _STATE.clear()
        return
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(workers, mp_context=ctx, initializer=_load,
                             initargs=(dataset.directory, columns, cfg)) as pool:
        yield lambda fn, items: _checked(pool.map(fn, items))


def _checked(results: Iterator) -> Iterator:
    """A worker that dies (killed, out of memory) breaks the pool: one clear error instead of a
    job that waits forever; nothing has been written yet (outputs are written after the workers)."""
    try:
        yield from results
    except BrokenProcessPool:
        raise CidermillError("a local worker process died (killed, or out of memory) before the job wrote "
                             "anything; rerun with fewer --workers or more memory") from None


def score_pages(pmap: Callable, dataset: ShardDataset) -> list[dict[str, Any]]:
    """Every page of the dataset, scored, in dataset order."""
    rows: list[dict[str, Any]] = []
    for part in pmap(score_item, read_items(dataset)):
        rows.extend(part)
    return rows
