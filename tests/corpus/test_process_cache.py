"""corpus.process_cache: one value per key per process, built once under concurrency, bounded,
closed when emptied."""
import threading
import time

from corpus.process_cache import ProcessCache


def test_each_value_is_built_once_even_when_threads_race():
    built = []

    def make():
        time.sleep(0.01)  # long enough for the other threads to arrive while it builds
        built.append(1)
        return object()

    cache = ProcessCache("test")
    got = []
    threads = [threading.Thread(target=lambda: got.append(cache.get("k", make))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(built) == 1 and len({id(v) for v in got}) == 1 and len(cache) == 1


def test_max_cost_starts_over_and_clear_closes():
    closed = []
    cache = ProcessCache("sized", close=closed.append, cost=lambda key: key, max_cost=10)
    cache.get(4, lambda: "a")
    cache.get(5, lambda: "b")
    assert len(cache) == 2 and closed == []
    cache.get(3, lambda: "c")          # 4 + 5 + 3 > 10: the cache empties (closing a, b) first
    assert len(cache) == 1 and sorted(closed) == ["a", "b"]
    assert cache.get(3, lambda: "other") == "c"
    cache.clear()
    assert len(cache) == 0 and sorted(closed) == ["a", "b", "c"]
