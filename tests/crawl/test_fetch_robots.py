"""Fetching, robots.txt, page directives, charset and address safety against a local server."""
import time

from crawl_testsite import Route

from crawl.charset import decode_html
from crawl.fetch import FetchConfig, Fetcher
from crawl.politeness import HostClock
from crawl.robots import RobotsCache, parse_robots
from crawl.robots_meta import robots_flags
from crawl.safety import AddressPolicy

ROBOTS = """User-agent: CiderBot
Disallow: /private/
Allow: /private/open.html
Disallow: /*.php$

User-agent: CiderBot-Extended
Disallow: /no-train/

User-agent: *
Disallow: /
Crawl-delay: 10
"""


def test_robots_groups_and_optout_token_matched_exactly():
    r = RobotsCache(Fetcher())
    r.put(parse_robots("http://h.test", ROBOTS))
    d = r.decide("http://h.test/en/a.html")
    assert d.allowed and d.training_allowed
    assert r.decide("http://h.test/private/x.html").reason == "robots"
    assert r.decide("http://h.test/private/open.html").allowed
    assert r.decide("http://h.test/list.php").reason == "robots"
    assert r.decide("http://h.test/list.php?page=2").allowed
    opt = r.decide("http://h.test/no-train/essay.html")
    assert opt.allowed and not opt.training_allowed
    assert r.crawl_delay("http://h.test/") is None  # our group has none; `*`'s 10 s is not ours
    # Without an opt-out group, `*` decides training use (not the crawler's own group by prefix).
    r.put(parse_robots("http://g.test", "User-agent: CiderBot\nAllow: /\n\nUser-agent: *\nDisallow: /\n"))
    d = r.decide("http://g.test/page.html")
    assert d.allowed and not d.training_allowed
    # Tokens match exactly (RFC 9309), by product token: a group for "Cider" or "c" is another
    # crawler's, not ours; "CiderBot/1.0" and "ciderbot-extended/2" name our two tokens.
    for name in ("Cider", "c", "CiderBotNews"):
        r.put(parse_robots("http://p.test", f"User-agent: *\nDisallow: /\n\nUser-agent: {name}\nAllow: /\n"))
        assert r.decide("http://p.test/a.html").reason == "robots", name
    r.put(parse_robots("http://v.test", "User-agent: CiderBot/1.0\nDisallow: /x/\nCrawl-delay: 3\n\n"
                                        "User-agent: ciderbot-extended/2\r\nDisallow: /\r\n"))
    assert r.decide("http://v.test/x/a.html").reason == "robots" and r.crawl_delay("http://v.test/") == 3.0
    d = r.decide("http://v.test/a.html")
    assert d.allowed and not d.training_allowed


def test_robots_keys_written_loosely_still_state_their_rules():
    """"useragent", "user agent" and a key parted from its value by spaces ("Disallow /x/"), which
    real files carry and Google's open-source parser reads, keep their rules; a prose line that is
    not one key and one value is still no rule."""
    r = RobotsCache(Fetcher())
    for text in ("useragent: CiderBot\nDisallow: /x/\n", "User Agent: CiderBot\nDisallow: /x/\n",
                 "User-agent CiderBot\nDisallow /x/   # ours\n", "User-agent: *\r\nDisallow : /x/\r\n"):
        r.put(parse_robots("http://h.test", text))
        assert r.decide("http://h.test/x/a.html").reason == "robots", text
        assert r.decide("http://h.test/a.html").allowed, text
    r.put(parse_robots("http://h.test", "Sitemap http://h.test/s.xml\nUser-agent: *\nCrawl-delay 4\n"
                                        "Allow me to explain\nDisallow: /x/\n"))
    assert r.entry("http://h.test/").sitemaps == ["http://h.test/s.xml"] and r.crawl_delay("http://h.test/") == 4.0
    assert r.decide("http://h.test/me").allowed and r.decide("http://h.test/x/").reason == "robots"


def test_content_signals_refusing_ai_training_mark_pages_not_for_training():
    """`Content-Signal: ai-train=no` (as Cloudflare's managed robots.txt writes it) in the group that
    applies to the opt-out token or to the crawler's own: pages stay crawlable, not for training."""
    r = RobotsCache(Fetcher())

    def decide(text):
        r.put(parse_robots("http://h.test", text))
        d = r.decide("http://h.test/a.html")
        return d.allowed, d.training_allowed

    assert decide("User-agent: *\nContent-Signal: search=yes, ai-train=no\nAllow: /\n") == (True, False)
    assert decide("User-agent: *\nContent-Signal: search=yes,ai-train=yes, ai-input=no\nAllow: /\n") == (True, True)
    assert decide("User-agent: OtherBot\nUser-agent: CiderBot\nContent-Signal: AI-Train = No # ours\n") == (True, False)
    assert decide("User-agent: OtherBot\nContent-Signal: ai-train=no\n\nUser-agent: *\nAllow: /\n") == (True, True)
    assert decide("Content-Signal: ai-train=no\nUser-agent: *\nAllow: /\n") == (True, True)   # before any group
    # our tokens both have groups of their own, without a signal: `*`'s signal is not ours
    assert decide("User-agent: CiderBot\nAllow: /\n\nUser-agent: CiderBot-Extended\nAllow: /\n\n"
                  "User-agent: *\nContent-Signal: ai-train=no\n") == (True, True)


def test_robots_status_semantics(local_site):
    site500 = local_site({"/robots.txt": Route("oops", 500, "text/plain")})
    site404 = local_site({})
    site429 = local_site({"/robots.txt": Route("slow down", 429, "text/plain")})
    loop = local_site({"/robots.txt": Route("", 302, None, {"Location": "/robots.txt"})})
    f = Fetcher(FetchConfig(retries=0))
    r = RobotsCache(f)
    assert r.decide(site500.url + "/a.html").reason == "robots_unavailable"
    d = r.decide(site404.url + "/private/a.html")
    assert d.allowed and d.training_allowed
    assert r.decide(loop.url + "/a.html").reason == "robots_unavailable"
    assert r.decide(site429.url + "/a.html").reason == "robots_unavailable"
    r.decide(site404.url + "/b.html")
    assert site404.hits.count("/robots.txt") == 1  # cached per origin
    # A robots.txt larger than the page cap is read to 500 KiB and parsed (RFC 9309), not taken as
    # unavailable (which would close the whole host); rules past 500 KiB do not count.
    huge = "User-agent: *\nDisallow: /private/\n" + "# padding line\n" * 500_000 + "Disallow: /late/\n"
    big = local_site({"/robots.txt": Route(huge, 200, "text/plain")})
    r = RobotsCache(Fetcher(FetchConfig(retries=0, max_bytes=1_000_000)))
    assert len(huge) > 5_000_000
    assert r.decide(big.url + "/private/a.html").reason == "robots"
    assert r.decide(big.url + "/late/a.html").allowed and r.decide(big.url + "/a.html").allowed


def test_redirects_are_checked_hop_by_hop_and_loops_stop(local_site):
    site = local_site({
        "/start": Route("", 301, None, {"Location": "/hop"}),
        "/hop": Route("", 302, None, {"Location": "final.html"}),
        "/final.html": Route("<html><body>arrived</body></html>"),
        "/loop-a": Route("", 302, None, {"Location": "/loop-b"}),
        "/loop-b": Route("", 302, None, {"Location": "/loop-a"}),
        "/to-private": Route("", 302, None, {"Location": "/private/secret.html"}),
        "/to-file": Route("", 302, None, {"Location": "file:///etc/passwd"}),
    })
    f = Fetcher(FetchConfig(retries=0, max_redirects=5))
    res = f.fetch(site.url + "/start")
    assert res.ok and res.final_url == site.url + "/final.html" and len(res.redirects) == 2
    assert "arrived" in res.html
    assert f.fetch(site.url + "/loop-a").skip == "redirect_loop"
    deny = lambda u: "robots" if "/private/" in u else None  # noqa: E731
    res = f.fetch(site.url + "/to-private", allow=deny)
    assert res.skip == "redirect_robots"
    assert "/private/secret.html" not in site.hits
    assert f.fetch(site.url + "/to-file").skip == "bad_redirect"
    assert Fetcher(FetchConfig(retries=0, max_redirects=1)).fetch(site.url + "/start").skip == "too_many_redirects"


def test_limits_types_binary_timeouts_and_retries(local_site):
    calls = {"n": 0}

    def flaky(_h):
        calls["n"] += 1
        return Route("busy", 503, "text/plain", {"Retry-After": "0"}) if calls["n"] < 2 else Route("<p>ok now</p>")

    site = local_site({
        "/big": Route("<p>" + "x" * 300_000 + "</p>"),
        "/img": Route(b"\x89PNG\r\n\x1a\n" + bytes(200), 200, "image/png"),
        "/binary-as-html": Route(bytes(range(256)) * 8),
        "/slow": Route("<p>late</p>", delay=1.5),
        "/flaky": flaky,
        "/gone": Route("no", 404, "text/plain"),
    })
    f = Fetcher(FetchConfig(retries=1, backoff=0.01, max_bytes=100_000, read_timeout=0.5))
    assert f.fetch(site.url + "/big").skip == "too_large"
    assert f.fetch(site.url + "/img").skip == "wrong_type"
    assert f.fetch(site.url + "/binary-as-html").skip == "binary_content"
    t = time.time()
    res = f.fetch(site.url + "/slow")
    assert res.skip == "timeout" and time.time() - t < 1.4 * 2 + 0.5
    res = f.fetch(site.url + "/flaky")
    assert res.ok and res.attempts == 2 and "ok now" in res.html
    assert f.fetch(site.url + "/gone").skip == "http_404"


def test_charset_detection_order():
    fr = "Cidre fermier: la pomme, le goût, l'été à Caen — très bien. " * 4
    assert decode_html(fr.encode("cp1252"), "text/html")[0] == fr  # no label at all: detected
    ja = "<meta charset='shift_jis'><p>日本のりんご品種のはなし</p>"
    assert "りんご" in decode_html(ja.encode("shift_jis"), "text/html")[0]  # meta tag
    assert decode_html(fr.encode("cp1252"), "text/html; charset=iso-8859-1")[0] == fr  # header (WHATWG alias)
    assert decode_html(b"\xef\xbb\xbf<p>caf\xc3\xa9</p>", "text/html; charset=latin-1")[0] == "<p>café</p>"  # BOM wins


def test_page_directives():
    assert robots_flags('<meta name="robots" content="noindex,follow">', None) == (True, False)
    assert robots_flags('<META NAME="ROBOTS" CONTENT="NONE">', None) == (True, True)
    assert robots_flags('<meta name="ciderbot" content="nofollow">', None) == (False, True)
    assert robots_flags('<meta name="otherbot" content="noindex">', None) == (False, False)
    assert robots_flags("<p>x</p>", "noindex") == (True, False)
    assert robots_flags("<p>x</p>", "otherbot: noindex") == (False, False)
    # X-Robots-Tag sent twice: both headers count (a dict of the response's headers kept only the last)
    from urllib3._collections import HTTPHeaderDict

    from crawl.fetch import KEEP_HEADERS, merged_headers
    h = HTTPHeaderDict()
    h.add("X-Robots-Tag", "noindex")
    h.add("X-Robots-Tag", "otherbot: nofollow")
    h.add("Link", "<a>; rel=x")
    h.add("Link", "<b>; rel=y")
    kept = merged_headers(h.items(), KEEP_HEADERS)
    assert kept["link"] == "<a>; rel=x, <b>; rel=y"
    assert robots_flags("<p>x</p>", kept["x-robots-tag"]) == (True, False)
    h = HTTPHeaderDict()
    h.add("X-Robots-Tag", "otherbot: noindex")
    h.add("X-Robots-Tag", "nofollow")
    assert robots_flags("<p>x</p>", merged_headers(h.items())["x-robots-tag"]) == (False, True)


def test_private_addresses_refused_unless_allowed():
    p = AddressPolicy(allow_private=False)
    for u in ["http://127.0.0.1/", "http://localhost:8080/", "http://10.1.2.3/", "http://169.254.169.254/meta",
              "http://[::1]/", "http://192.168.0.1/"]:
        assert p.check(u) == "private_address", u
    assert p.check("file:///etc/passwd") == "bad_scheme"
    assert AddressPolicy(allow_private=True).check("http://127.0.0.1/") is None


def test_host_clock_backs_off_and_recovers():
    now = [0.0]
    slept = []
    c = HostClock(0.5, crawl_delay=3.0, honour_crawl_delay=True, clock=lambda: now[0], sleep=slept.append)
    assert c.base == 3.0
    c.done(503, 10, retry_after=8)
    assert c.delay == 8
    c.wait()
    assert slept == [8]
    now[0] = 100
    c.done(200, 10)
    assert c.delay == 4
    assert HostClock(0.5, crawl_delay=30, max_crawl_delay=10).base == 10
    assert HostClock(0.5, crawl_delay=30, honour_crawl_delay=False).base == 0.5


def test_connection_guard_refuses_private_peers_even_after_the_check(local_site):
    """DNS rebinding: the address policy said yes, but the socket lands on 127.0.0.1: refused."""
    site = local_site({"/": Route("<p>internal</p>")})
    guarded = Fetcher(FetchConfig(retries=0, block_private=True))
    res = guarded.fetch(site.url + "/")
    assert res.skip == "private_address" and site.hits == []
    assert Fetcher(FetchConfig(retries=0)).fetch(site.url + "/").ok


def _trickling_server(head: bytes):
    """A raw socket server on 127.0.0.1 that sends `head`, then one byte every 0.1 s for 15 s (so a
    fetcher without a deadline fails the test instead of hanging it): each wait for bytes is short."""
    import socket
    import threading

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)

    def one(conn):
        try:
            conn.recv(65536)
            conn.sendall(head)
            for _ in range(150):
                conn.sendall(b"x")
                time.sleep(0.1)
        except OSError:
            pass
        finally:
            conn.close()

    def accept():
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            threading.Thread(target=one, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    return srv, f"http://127.0.0.1:{srv.getsockname()[1]}"


def test_a_server_that_trickles_headers_or_body_is_cut_off_at_the_deadline(local_site):
    """Slow-drip servers (slowloris-like): a byte every 0.1 s never trips the read timeout, and a body
    chunk is gathered until full, so only a deadline on the whole response ends the fetch. It is
    `total_timeout` (retried once, as any timeout), and the same fetcher then fetches normally."""
    site = local_site({"/ok": Route("<p>fine</p>")})
    f = Fetcher(FetchConfig(total_timeout=1.0, read_timeout=0.5, retries=1, backoff=0.01))
    heads = {"headers": b"HTTP/1.1 200 OK\r\nX-Slow: ",
             "body": b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100000\r\n\r\n",
             "chunked": b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n100000\r\n"}
    for what, head in heads.items():
        srv, url = _trickling_server(head)
        try:
            t = time.time()
            res = f.fetch(url + "/page")
            took = time.time() - t
        finally:
            srv.close()
        assert res.skip == "timeout" and "slower than" in res.detail and res.body == b"", (what, res.skip, res.detail)
        assert took < 8, (what, took)   # two tries of 1 s each; without the deadline: hours
    assert f.fetch(site.url + "/ok").ok
