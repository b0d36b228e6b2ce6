"""Per-origin values that a crawl loads once and shares between its threads: robots.txt
(crawl/robots.py) and TDMRep's site-wide file (crawl/tdmrep.py).

Each origin's value is loaded by one thread at a time (the others wait for it rather than send the
same request), and loaded again once it is older than the time to live its own kind asks for: a
day for a file that was read or is known absent, minutes for one a transient failure kept away."""
from __future__ import annotations

import threading
import time
from typing import Callable, Generic, TypeVar

V = TypeVar("V")


class OriginCache(Generic[V]):
    """`load(origin)` -> a value with a `fetched_at` time; `ttl_of(value)` -> seconds it stays."""

    def __init__(self, load: Callable[[str], V], ttl_of: Callable[[V], float]):
        self.load, self.ttl_of = load, ttl_of
        self._values: dict[str, V] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()

    def get(self, origin: str) -> V:
        with self._lock:
            lock = self._locks.setdefault(origin, threading.Lock())
        with lock:
            v = self._values.get(origin)
            if v is None or time.time() - v.fetched_at > self.ttl_of(v):  # type: ignore[attr-defined]
                v = self._values[origin] = self.load(origin)
            return v

    def put(self, origin: str, value: V) -> None:
        self._values[origin] = value
