"""Per-host pacing: a minimum delay between requests, Crawl-delay, and backing off when a host
answers 429/503 or slows down. One `HostClock` per host; the crawler waits on it before each
request, so every host gets one request at a time and different hosts proceed in parallel."""
from __future__ import annotations

import threading
import time
from typing import Callable

SLOW_MS = 2000.0       # a response slower than this doubles the delay (the host is struggling)
MAX_DELAY = 60.0


class HostClock:
    def __init__(self, delay: float, crawl_delay: float | None = None, honour_crawl_delay: bool = True,
                 max_crawl_delay: float = 10.0, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep):
        base = max(0.0, delay)
        if honour_crawl_delay and crawl_delay is not None:
            base = max(base, min(float(crawl_delay), max_crawl_delay))
        self.base = base
        self.delay = base
        self._next = 0.0
        self._clock, self._sleep = clock, sleep
        self._lock = threading.Lock()
        self.waited = 0.0

    def pending_wait(self) -> float:
        """Seconds until the next request may start."""
        with self._lock:
            return max(0.0, self._next - self._clock())

    def wait(self) -> None:
        with self._lock:
            now = self._clock()
            if now < self._next:
                self._sleep(self._next - now)
                self.waited += self._next - now

    def done(self, status: int, latency_ms: float, retry_after: float | None = None) -> None:
        """Record a response; sets when the next request may start."""
        with self._lock:
            if status in (429, 503):
                self.delay = min(MAX_DELAY, max(self.delay * 2, 1.0, retry_after or 0.0))
            elif latency_ms > SLOW_MS:
                self.delay = min(MAX_DELAY, max(self.delay * 2, 0.5))
            elif self.delay > self.base:
                self.delay = max(self.base, self.delay / 2)  # recover slowly once the host is well
            self._next = self._clock() + self.delay
