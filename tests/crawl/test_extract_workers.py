"""Extraction in worker processes (crawl/extract_pool.py) changes where pages are parsed, never
what the crawl writes: the demo-site crawl with 1 and with 2 extract workers gives the same page
rows in the same order, and the same log and link decisions."""
import os

import pytest

from corpus.reader import ShardDataset
from crawl.extract_pool import page_task, resolve_workers, shared_pool
from pipelines.crawl_pipeline import run_crawl
from pipelines.demo_site.server import DemoSite

pytestmark = pytest.mark.slow
VARY = {"fetched_at", "fetch_ms", "at"}  # clock readings, different on every run


def _rows(d, skip_id=False):
    rows = []
    for r in ShardDataset(d).iter_rows():
        r = {k: v for k, v in r.items() if k not in VARY}
        if "headers" in r:
            r["headers"] = [h for h in r["headers"] if h["name"] != "date"]
        rows.append(r)
    return rows


def _crawl(base, out, workers):
    return run_crawl([base + "/", base + "/redirect/start.html"], str(out), allow_private=True, render="never",
                     delay=0, max_pages=80, max_depth=3, read_timeout=1.0, total_timeout=2.0, retries=0,
                     exclude=[r"/slow\.html"], progress=False, extract_workers=workers)


@pytest.fixture(scope="module")
def site():
    with DemoSite(slow_seconds=1) as s:
        yield s


@pytest.fixture(scope="module")
def reference(site, tmp_path_factory):
    """The crawl with extraction in the crawler's own process (today's path)."""
    out = tmp_path_factory.mktemp("w1")
    pages, summary = _crawl(site.url, out, 1)
    return out, pages, summary


def _same_summary(a, b):
    def keep(s):
        return {k: v for k, v in s.items() if k != "seconds" and not k.startswith("latency")}
    return keep(a) == keep(b)


def test_one_and_two_extract_workers_write_the_same_pages(site, reference, tmp_path):
    assert shared_pool(1) is None  # one worker: today's in-process path
    out1, p1, s1 = reference
    p2, s2 = _crawl(site.url, tmp_path / "w2", 2)
    one, two = _rows(p1), _rows(p2)
    assert len(one) > 40 and sum(1 for r in one if r["text"]) > 30
    assert one == two
    log1 = sorted(map(repr, _rows(os.path.join(out1, "log"))))
    log2 = sorted(map(repr, _rows(os.path.join(tmp_path / "w2", "log"))))
    assert log1 == log2
    assert _same_summary(s1, s2)


def _page(r):
    r = {k: v for k, v in r.items() if k not in VARY}
    r["headers"] = [h for h in r["headers"] if h["name"] != "date"]
    return r


def test_a_killed_extract_worker_costs_no_page(reference):
    """kill -9 one extraction process mid-wave: its pages are extracted again in the crawler's
    process, a fresh pool takes the rest, and the wave equals the in-process one."""
    import signal
    import threading
    import time

    from crawl.crawler import CrawlConfig, WaveCrawler

    entries = list(ShardDataset(os.path.join(reference[0], "waves", "00001", "frontier")).iter_rows())
    assert len(entries) > 40

    def wave(workers):
        crawler = WaveCrawler(CrawlConfig(allow_private=True, render="never", delay=0, read_timeout=1.0,
                                          total_timeout=2.0, retries=0, extract_workers=workers))
        try:
            return crawler.crawl(entries, wave=1)
        finally:
            crawler.close()

    pool = shared_pool(2)
    pool.start()
    victim = sorted(pool._executor()._processes)[0]
    start, redone = pool.submitted, pool.redone
    killed = threading.Event()

    def kill_mid_wave():
        deadline = time.monotonic() + 60
        while pool.submitted < start + 10 and time.monotonic() < deadline:
            time.sleep(0.002)
        os.kill(victim, signal.SIGKILL)
        killed.set()

    threading.Thread(target=kill_mid_wave, daemon=True).start()
    pooled = wave(2)
    assert killed.is_set() and pool.submitted > start + 10
    alone = wave(1)
    assert [_page(r) for r in pooled.pages] == [_page(r) for r in alone.pages]
    assert len(pooled.pages) > 40
    assert [{k: v for k, v in r.items() if k not in VARY} for r in pooled.log] == \
        [{k: v for k, v in r.items() if k not in VARY} for r in alone.log]
    assert pooled.links == alone.links
    print(f"pages redone in-process after the kill: {pool.redone - redone}")


def test_extract_workers_zero_means_one_per_core():
    assert resolve_workers(0) == len(os.sched_getaffinity(0))
    assert resolve_workers(3) == 3
    with pytest.raises(ValueError, match="extract workers"):
        resolve_workers(-1)


def test_page_task_decides_rendering_then_extracts():
    """The pool's task with --render auto: a page headed for the browser comes back with its reason
    and no extraction; a page with scripts that keeps its static HTML comes back extracted, from
    the same parse-carrying task (the host thread never parses it)."""
    url = "http://site.invalid/a.html"
    shell = "<html><body><div id='root'></div><script src='/app.js'></script></body></html>"
    assert page_task(shell, url, "auto", None) == ("app_shell", None)
    article = ("<html><head><title>A</title></head><body><article><h1>A page</h1>"
               + "<p>Words that read like a page, written for people to read.</p>" * 20
               + "</article><script>var seen = 1;</script></body></html>")
    why, ex = page_task(article, url, "auto", None)
    assert why is None and "Words that read like a page" in ex.text
    why, ex = page_task(shell, url, None, None)  # no mode: the rendered HTML's pass, always extracted
    assert why is None and ex is not None


@pytest.mark.skipif(not os.path.exists("/usr/bin/chromium"), reason="no chromium")
def test_render_auto_with_extract_workers_changes_nothing(site):
    """With --render auto, pages the browser renders and pages read statically come out the same
    whether extraction runs in the crawler's process or in 2 extract workers: same pages and log."""
    import json

    from crawl.crawler import CrawlConfig, WaveCrawler

    gt = json.load(open(os.path.join(os.path.dirname(__file__), "..", "..", "pipelines", "demo_site",
                                     "ground_truth.json"), encoding="utf-8"))["paths"]
    js = sorted(p for p, v in gt.items() if "js_rendered" in v.get("categories", []))
    static = sorted(p for p, v in gt.items() if p.endswith(".html") and p not in js)[:6]
    assert js and static
    entries = [{"url": site.url + p, "depth": 1, "parent": None, "source": "link"} for p in js + static]

    def wave(workers):
        crawler = WaveCrawler(CrawlConfig(allow_private=True, render="auto", delay=0, read_timeout=1.0,
                                          total_timeout=3.0, retries=0, render_idle_ms=1000,
                                          extract_workers=workers))
        try:
            return crawler.crawl(entries, wave=1)
        finally:
            crawler.close()

    pooled, alone = wave(2), wave(1)
    assert [_page(r) for r in pooled.pages] == [_page(r) for r in alone.pages]
    rendered = {r["url"] for r in pooled.pages if r["rendered"]}
    assert rendered and rendered <= {site.url + p for p in js}
    assert [{k: v for k, v in r.items() if k not in VARY} for r in pooled.log] == \
        [{k: v for k, v in r.items() if k not in VARY} for r in alone.log]
