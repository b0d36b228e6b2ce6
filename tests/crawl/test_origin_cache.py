"""crawl/origin_cache.py: one load per origin at a time, whatever the threads, and a time to live
that the loaded value chooses (robots.txt and TDMRep's file both keep a failure for minutes, a
read file for a day)."""
import threading
import time
from dataclasses import dataclass

from crawl.origin_cache import OriginCache


@dataclass
class _Value:
    origin: str
    n: int
    fetched_at: float
    failed: bool = False


def test_threads_asking_for_one_origin_load_it_once():
    loads, gate = [], threading.Event()

    def load(origin):
        loads.append(origin)
        gate.wait(5)  # every thread asks while the first load is still under way
        return _Value(origin, len(loads), time.time())

    cache = OriginCache(load, lambda v: 3600)
    got = []
    threads = [threading.Thread(target=lambda: got.append(cache.get("https://a.test"))) for _ in range(8)]
    for t in threads:
        t.start()
    time.sleep(0.2)
    gate.set()
    for t in threads:
        t.join()
    assert loads == ["https://a.test"] and {v.n for v in got} == {1}
    assert cache.get("https://b.test").origin == "https://b.test" and loads[-1] == "https://b.test"


def test_a_value_stays_as_long_as_it_asks():
    clock = {"n": 0}

    def load(origin):
        clock["n"] += 1
        return _Value(origin, clock["n"], time.time() - 10, failed=origin.endswith("down"))

    cache = OriginCache(load, lambda v: 5 if v.failed else 3600)  # both values are 10 s old
    assert cache.get("https://up").n == 1 and cache.get("https://up").n == 1
    assert cache.get("https://down").n == 2 and cache.get("https://down").n == 3  # past its 5 s: asked again
    cache.put("https://up", _Value("https://up", 99, time.time()))
    assert cache.get("https://up").n == 99
