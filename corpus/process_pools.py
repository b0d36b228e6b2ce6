"""Shutting down a process pool that lost a worker, without hanging and without leaving a process.

CPython 3.11's ProcessPoolExecutor terminates the workers of a broken pool (one whose worker
died), but not a worker that a concurrent submit spawned while it was doing so. That worker blocks
writing a result nobody reads: `shutdown(wait=True)` then waits for it forever, and with
`wait=False` it stays behind. Both users of spawned pools (the local engine's workers and the
crawler's extraction processes) shut their pools down here.
"""
from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor


def close_pool(executor: ProcessPoolExecutor, wait: bool = True, cancel_futures: bool = False) -> None:
    """executor.shutdown(wait, cancel_futures), after killing every worker still alive when the
    pool is broken."""
    if executor._broken:
        for proc in list((executor._processes or {}).values()):
            proc.kill()   # a no-op for a worker already gone
    executor.shutdown(wait=wait, cancel_futures=cancel_futures)
