"""Main-content extraction in worker processes, so a crawl uses every core.

Fetching is I/O and stays in the crawler's host threads (politeness per host stays in one place);
extraction (parse + block model, pure CPU) holds the GIL, so threads cannot share it out. An
`ExtractPool` sends each page's HTML to one of N spawned processes and hands back a Future of the
same answer `page_task` gives in-process (with `--render auto`, the render decision's parse goes
along, so the host thread never parses the page): the crawler keeps its rows in frontier
order, so the output does not depend on N. A worker that dies is replaced and its pages are
extracted again in the crawler's own process: a crash costs time, never a page.
"""
from __future__ import annotations

import concurrent.futures as cf
import multiprocessing as mp
import os
import threading
import time

from corpus.cpus import usable_cpus
from corpus.process_pools import close_pool
from crawl.extract import Extraction, extract_page
from crawl.render_policy import render_reason


def resolve_workers(n: int) -> int:
    """--extract-workers: 0 means one per available core."""
    if n < 0:
        raise ValueError(f"extract workers must be >= 0 (0: one per core), got {n}")
    return n or usable_cpus()


def page_task(html: str, url: str, render_mode: str | None, fast: bool | None
              ) -> tuple[str | None, Extraction | None]:
    """One page's CPU work: with `render_mode`, first the render decision (render_policy parses a
    page with scripts in full), then, when the static page is kept, its extraction; -> (why to
    render, None) or (None, Extraction). Run in a worker, it spares the host thread that fetched
    the page (and holds the GIL every fetch needs) a second parse of the same HTML."""
    if render_mode is not None:
        why = render_reason(html, render_mode)
        if why:
            return why, None
    return None, extract_page(html, url, fast=fast)


_HERE = threading.Lock()


def page_task_here(html: str, url: str, render_mode: str | None, fast: bool | None
                   ) -> tuple[str | None, Extraction | None]:
    """page_task in this process, one page at a time. Extraction is pure-Python CPU work: host
    threads that run it at once only fight over the GIL. On bench/crawl.py's site (2,000 pages, 8
    hosts), one at a time took 7.2 instead of 12.1 CPU ms per page and crawled 142 instead of 97
    pages/s; the other host threads keep fetching while they wait."""
    with _HERE:
        return page_task(html, url, render_mode, fast)


_WARM_PAGE = ("<html><head><title>warm</title></head><body><article><h1>Warm up</h1>"
              + "<p>A paragraph of words that reads like a page, so every import is done.</p>" * 5
              + "<a href='/x'>x</a></article></body></html>")


def _warm(pause: float) -> int:
    extract_page(_WARM_PAGE, "http://warm.invalid/", fast=None)  # imports and the block model, once per worker
    time.sleep(pause)  # held briefly, so each warm-up call lands on its own worker
    return os.getpid()


class ExtractPool:
    """N extraction processes (spawned: the crawler holds threads, and fork would copy their locks)."""

    def __init__(self, workers: int):
        self.workers = workers
        self.submitted = 0  # pages sent to the workers so far
        self.redone = 0     # pages extracted here again because their worker died
        self._pool: cf.ProcessPoolExecutor | None = None
        self._lock = threading.Lock()

    def _executor(self) -> cf.ProcessPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = cf.ProcessPoolExecutor(self.workers, mp_context=mp.get_context("spawn"))
            return self._pool

    def start(self) -> None:
        """Start every worker and load the model in each (otherwise the first pages pay for it)."""
        pool = self._executor()
        for f in [pool.submit(_warm, 0.3) for _ in range(self.workers)]:
            f.result()

    def submit(self, task: tuple, fast: bool | None) -> cf.Future:
        """A Future of page_task(*task, fast); task: (html, url, render_mode)."""
        self.submitted += 1
        pool = self._executor()
        try:
            fut = pool.submit(page_task, *task, fast)
        except cf.process.BrokenProcessPool:
            self._reset(pool)
            pool = self._executor()
            fut = pool.submit(page_task, *task, fast)
        fut.cidermill_pool = pool   # which pool to reset if this page's worker dies
        return fut

    def result(self, fut: cf.Future, task: tuple, fast: bool | None) -> tuple[str | None, Extraction | None]:
        """The worker's page_task answer, or the same answer computed here if the worker died (or
        its pool was shut down because another worker of it died)."""
        try:
            return fut.result()
        except (cf.process.BrokenProcessPool, cf.CancelledError):
            self._reset(getattr(fut, "cidermill_pool", None))
            self.redone += 1
            return page_task_here(*task, fast)

    def _reset(self, broken: cf.ProcessPoolExecutor | None) -> None:
        """Drop the pool `broken` (one whose worker died), if it is still the current one: host
        threads that each see a page of that pool fail call this one after another, and a later
        call must not shut down the fresh pool an earlier one's next submit started."""
        with self._lock:
            if broken is None or self._pool is not broken:
                return
            self._pool = None
        close_pool(broken, wait=False, cancel_futures=True)

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            close_pool(pool, wait=True, cancel_futures=True)


# One pool per process and size, kept across crawls: spawning workers and loading the model in
# each costs about a second, which a driver running many waves (or tests running many crawls)
# would otherwise pay every time. The processes end with the interpreter.
_SHARED: dict[int, ExtractPool] = {}
_SHARED_LOCK = threading.Lock()


def shared_pool(workers: int) -> ExtractPool | None:
    """The pool for `workers` processes (0: one per core), or None to extract in this process: one
    worker asked for, or this process is a daemon (a Dask worker) and may not start children."""
    n = resolve_workers(workers)
    if n <= 1 or mp.current_process().daemon:
        return None
    with _SHARED_LOCK:
        if n not in _SHARED:
            _SHARED[n] = ExtractPool(n)
        return _SHARED[n]
