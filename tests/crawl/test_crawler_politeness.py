"""The wave crawler (no Beam): per-host delay, Crawl-delay, Retry-After deferral, robots in the loop."""
import time

from crawl_testsite import Route

from crawl.crawler import CrawlConfig, WaveCrawler

PAGE = "<html><body><p>{}</p></body></html>".format("Plenty of words about apples and pears. " * 20)


def _stamped(stamps):
    def route(_h):
        stamps.append(time.monotonic())
        return Route(PAGE)
    return route


def test_delay_and_crawl_delay_between_requests_to_one_host(local_site):
    stamps = []
    routes = {f"/p{i}.html": _stamped(stamps) for i in range(4)}
    routes["/robots.txt"] = Route("User-agent: CiderBot\nCrawl-delay: 0.4\nDisallow: /private/\n", 200, "text/plain")
    site = local_site(routes)
    c = WaveCrawler(CrawlConfig(allow_private=True, delay=0.1, render="never", sitemaps=False, retries=0))
    try:
        entries = [{"url": f"{site.url}/p{i}.html", "depth": 1} for i in range(4)]
        entries.append({"url": f"{site.url}/private/x.html", "depth": 1})
        out = c.crawl(entries)
    finally:
        c.close()
    assert len(out.pages) == 4
    gaps = [b - a for a, b in zip(stamps, stamps[1:])]
    assert len(gaps) == 3 and min(gaps) >= 0.38  # Crawl-delay 0.4 beats --delay 0.1
    assert {r["reason"] for r in out.log if r["decision"] == "skipped"} == {"robots"}
    assert not any(h.startswith("/private/") for h in site.hits)


def test_503_with_retry_after_is_deferred_to_a_later_wave(local_site):
    site = local_site({"/busy.html": Route("busy", 503, "text/plain", {"Retry-After": "120"}),
                       "/ok.html": Route(PAGE)})
    c = WaveCrawler(CrawlConfig(allow_private=True, delay=0, render="never", sitemaps=False, retries=2,
                                max_retry_after=5, max_requeue=1))
    try:
        t = time.time()
        out = c.crawl([{"url": f"{site.url}/busy.html", "depth": 1}, {"url": f"{site.url}/ok.html", "depth": 1}])
        assert time.time() - t < 5  # a Retry-After beyond the cap is not slept through
        (busy,) = [r for r in out.log if r["url"].endswith("/busy.html")]
        assert busy["decision"] == "deferred" and busy["reason"] == "http_503"
        assert [ln["source"] for ln in out.links if ln["url"].endswith("/busy.html")] == ["retry"]
        assert c.clocks[site.url.split("//")[1]].delay >= 5  # the host is backed off ...
        (ok,) = [r for r in out.log if r["url"].endswith("/ok.html")]
        assert (ok["decision"], ok["reason"]) == ("deferred", "host_backoff")  # ... so its next URL waits a wave
        assert site.hits.count("/ok.html") == 0
        again = c.crawl([{"url": f"{site.url}/ok.html", "depth": 1, "retries": 1}])
        assert again.log[0]["decision"] == "skipped"  # deferred once, then given up and logged
    finally:
        c.close()
