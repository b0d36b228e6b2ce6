"""Objects too costly to build per record, shared by everything in one worker process.

Beam may set up several DoFn instances per worker, and a crawl runs one Beam pipeline per wave; a
model, a crawler with its connection pools and browser, or a large render buffer should still be
built once per process. Each such cache is a `ProcessCache` with one owner: the module that
defines it, which says what it holds, what the key is and who empties it. Lifetime: until its
`clear()` (which closes what it holds when given a `close`) or the end of the process.

`get(key, make)` builds a missing value under the cache's lock, so two threads never build the
same one. `max_cost` bounds what the cache holds (in the units `cost` returns): a new value that
would pass it empties the cache first.
"""
from __future__ import annotations

import threading
from typing import Callable, Generic, Hashable, TypeVar

V = TypeVar("V")


class ProcessCache(Generic[V]):
    def __init__(self, name: str, close: Callable[[V], None] | None = None,
                 cost: Callable[[Hashable], float] | None = None, max_cost: float | None = None):
        self.name = name
        self._close = close
        self._cost, self._max_cost = cost, max_cost
        self._items: dict[Hashable, V] = {}
        self._lock = threading.Lock()

    def get(self, key: Hashable, make: Callable[[], V]) -> V:
        """The value for `key`, built by `make()` on first use."""
        with self._lock:
            if key in self._items:
                return self._items[key]
            if self._max_cost is not None and self._cost is not None:
                if sum(self._cost(k) for k in self._items) + self._cost(key) > self._max_cost:
                    self._clear_locked()
            value = self._items[key] = make()
            return value

    def clear(self) -> None:
        """Forget (and close) every value; the next get() builds afresh."""
        with self._lock:
            self._clear_locked()

    def _clear_locked(self) -> None:
        values = list(self._items.values())
        self._items.clear()
        if self._close is not None:
            for v in values:
                self._close(v)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"ProcessCache({self.name!r}, {len(self)} items)"
