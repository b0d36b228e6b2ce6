"""Headless rendering with Debian's Chromium: JS content, the route guard (robots, schemes,
private addresses) and the browser never reaching the network on its own (DNS rebinding)."""
import os

import pytest
from crawl_testsite import LocalSite, Route

from crawl.crawler import CrawlConfig, WaveCrawler
from crawl.fetch import FetchConfig, Fetcher
from crawl.robots import parse_robots
from crawl.render import CHROMIUM, RenderConfig, RenderService

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"no chromium at {CHROMIUM}")]

APP = """<html><body><div id="root"></div><img src="/private/tracker.png">
<script>
fetch('/api/article.json', {headers: {'Accept': 'application/json'}}).then(r => r.json()).then(j => {
  document.getElementById('root').innerHTML = '<article><h1>' + j.title + '</h1><p>' + j.body + '</p></article>';
});
fetch('/private/secret.json').catch(() => {});
alert('a dialog that must not block');
window.open('/popup.html');
var i = document.createElement('iframe'); i.src = 'file:///etc/passwd'; document.body.appendChild(i);
</script></body></html>"""


def lazy_page(n: int) -> str:
    return ("<html><body><div id='out'></div><script>fetch('/api/%d.json').then(r => r.json())"
            ".then(j => {document.getElementById('out').textContent = j.text;});</script></body></html>" % n)


@pytest.fixture(scope="module")
def site():
    seen_headers = []

    def article(handler):
        seen_headers.append(handler.headers)  # an email.message.Message: case-insensitive get()
        return Route('{"title": "Bees in the orchard", "body": "Pollination by wild bees."}', 200, "application/json")

    routes = {"/app.html": Route(APP), "/api/article.json": article,
              "/private/secret.json": Route("{}", 200, "application/json"),
              "/private/tracker.png": Route(b"x", 200, "image/png")}
    for n in range(6):
        routes[f"/api/{n}.json"] = Route('{"text": "late text %d"}' % n, 200, "application/json", delay=1.0)
    s = LocalSite(routes)
    s.seen_headers = seen_headers
    with s:
        yield s


@pytest.fixture(scope="module")
def renderer():
    fetcher = Fetcher(FetchConfig(retries=0))

    def allow(u):
        return "robots" if "/private/" in u else None

    r = RenderService(allow, lambda u, h: fetcher.fetch(u, allow=allow, accept_types=None, headers=h),
                      RenderConfig(nav_timeout_ms=10_000, idle_cap_ms=5000, quiet_ms=300, scroll_steps=1, pages_per_browser=3))
    yield r
    r.close()


def test_js_content_captured_and_guard_enforced(site, renderer):
    res = renderer.render(site.url + "/app.html", body=APP.encode(), content_type="text/html")
    assert res.error is None
    assert "Pollination by wild bees." in res.html and "<h1>Bees in the orchard</h1>" in res.html
    assert "/api/article.json" in site.hits
    sent = site.seen_headers[0]  # fetched by the crawler's fetcher, with the page's Accept and our agent
    assert sent.get("Accept") == "application/json" and sent.get("User-Agent") == FetchConfig().user_agent
    assert len(sent.get_all("Accept")) == 1
    assert "/app.html" not in site.hits  # the main document came from the bytes already fetched
    assert "/popup.html" not in site.hits
    assert not any(h.startswith("/private/") for h in site.hits)
    reasons = {r for _, r in res.blocked}
    assert {"robots", "other_page"} <= reasons  # the popup's request was refused  # (file:// never reaches the route: Chromium refuses it on an http page)


def test_navigation_fetch_when_no_body_and_fresh_context(site, renderer):
    res = renderer.render(site.url + "/app.html")
    assert "Pollination" in (res.html or "")
    assert site.hits.count("/app.html") == 1
    assert not any(h.startswith("/private/") for h in site.hits)


def test_concurrent_pages_each_get_their_own_late_content(site, renderer):
    # each page fetches its text from an API answering in 1 s (load does not wait for fetch()): the
    # settle wait must see that request in flight, and pages rendering side by side must not mix up
    # their results
    import concurrent.futures as cf
    urls = [f"{site.url}/lazy/{n}.html" for n in range(6)]
    with cf.ThreadPoolExecutor(6) as pool:
        results = list(pool.map(lambda n: renderer.render(urls[n], lazy_page(n).encode()), range(6)))
    for n, res in enumerate(results):
        assert res.error is None
        assert f"late text {n}<" in res.html
        assert all(f"late text {m}<" not in res.html for m in range(6) if m != n)


REBIND_PAGE = """<html><head><link rel="preconnect" href="http://localhost:{port}/">
<link rel="dns-prefetch" href="//localhost:{port}/"><link rel="stylesheet" href="http://localhost:{port}/s.css">
<script src="http://localhost:{port}/s.js"></script></head><body><p id="p">public page</p>
<img src="http://localhost:{port}/i.png"><iframe src="http://localhost:{port}/frame.html"></iframe>
<script>fetch('http://localhost:{port}/api.json').catch(() => {{}});
var x = new XMLHttpRequest(); x.open('GET', 'http://127.0.0.1:{port}/xhr.json'); x.send();
try {{ new WebSocket('ws://localhost:{port}/ws'); new WebSocket('ws://127.0.0.1:{port}/ws-ip'); }} catch (e) {{}}
</script></body></html>"""


def test_browser_never_reaches_a_name_that_resolves_to_loopback(local_site):
    """Without --allow-private: subresources on `localhost` (and 127.0.0.1) are refused by the address
    policy; and when the policy's answer is stale (the name was public when checked, then rebound to
    127.0.0.1), the browser still cannot reach it, because it resolves nothing itself and the
    crawler's fetcher checks the address it actually connected to. The site's access log stays empty."""
    leak = {p: Route("x", 200, t) for p, t in [("/s.css", "text/css"), ("/s.js", "application/javascript"),
                                                ("/i.png", "image/png"), ("/frame.html", "text/html"),
                                                ("/api.json", "application/json"),
                                                ("/xhr.json", "application/json")]}
    site = local_site(leak)
    port = site.url.rsplit(":", 1)[1]
    page = REBIND_PAGE.format(port=port).encode()
    crawler = WaveCrawler(CrawlConfig(allow_private=False, skip_media=False, render_idle_ms=1500))
    try:
        res = crawler.renderer.render(f"http://localhost:{port}/page.html", page)
        assert res.error is None and "public page" in res.html
        assert site.hits == []
        assert {r for _, r in res.blocked} == {"private_address"}
        assert len(res.blocked) >= 5

        # DNS rebinding: these names resolved to a public address when the policy checked them and their
        # robots.txt allowed everything (stale cache entries); now they answer 127.0.0.1
        crawler.policy._cache.update({"localhost": None, "127.0.0.1": None})
        for host in ("localhost", "127.0.0.1"):
            crawler.robots.put(parse_robots(f"http://{host}:{port}", "User-agent: *\nAllow: /\n"))
        assert crawler.allow(f"http://localhost:{port}/s.js") is None
        res = crawler.renderer.render(f"http://localhost:{port}/page2.html", page)
        assert res.error is None and "public page" in res.html
        assert site.hits == []
        assert {r for _, r in res.blocked} == {"private_address"}  # refused by the fetcher's connection check
        assert len(res.blocked) >= 5
    finally:
        crawler.close()

    # the control: with --allow-private the same page does load those subresources (through the fetcher)
    crawler = WaveCrawler(CrawlConfig(allow_private=True, skip_media=False, render_idle_ms=1500))
    try:
        res = crawler.renderer.render(f"http://localhost:{port}/page3.html", page)
        assert res.error is None
        assert {"/s.css", "/s.js", "/i.png", "/frame.html", "/api.json", "/xhr.json"} <= set(site.hits)
        assert not {"/ws", "/ws-ip"} & set(site.hits)  # the browser opens no socket of its own, even then
    finally:
        crawler.close()


STATE_PAGE = """<html><body><pre id="seen"></pre><script>
var seen = [document.cookie, localStorage.getItem('k'), sessionStorage.getItem('k'), window.name].join('|');
document.getElementById('seen').textContent = 'seen:' + seen + ':end';
document.cookie = 'k=v; path=/'; localStorage.setItem('k', 'v'); sessionStorage.setItem('k', 'v'); window.name = 'n';
</script></body></html>"""


def test_reused_context_is_wiped_between_pages_and_never_crosses_hosts(site):
    fetcher = Fetcher(FetchConfig(retries=0))
    r = RenderService(lambda u: None, lambda u, h: fetcher.fetch(u, accept_types=None, headers=h),
                      RenderConfig(quiet_ms=100, scroll_steps=0, pages_per_browser=2, context_reuse=3))
    other = LocalSite({})
    try:
        with other:
            def render(base, n):
                res = r.render(f"{base}/state/{n}.html", STATE_PAGE.encode())
                assert res.error is None, res.error
                return res.context_page, res.html.split("seen:")[1].split(":end")[0]

            # a context's own state would be seen on its next page (same origin, same tab): the wipe must
            # remove cookies, local and session storage and window.name
            assert render(site.url, 1) == (1, "|||")
            assert render(site.url, 2) == (2, "|||")
            assert render(other.url, 3) == (1, "|||")   # another host never gets that context
            assert render(site.url, 4) == (3, "|||")
            assert render(site.url, 5) == (1, "|||")    # spent after 3 pages: a fresh one
    finally:
        r.close()


def test_stylesheet_white_space_survives_rendering_into_the_text(renderer):
    """A stylesheet's white-space: pre-line (a mail archive's message body) is gone from the saved
    DOM; the render writes it inline, so the extracted text keeps the message's lines."""
    from crawl.extract import extract_page
    body = ("Grate the quinces first, then let the\npomace rest for an hour.\n\n"
            "Steps:\n1. tighten until the juice runs clear\n2. wait five minutes")
    page = ("<html><head><style>.msg { white-space: pre-line } .code { white-space: pre }</style></head><body>"
            f"<nav><a href='/'>Home</a></nav><main><h1>Pressing quinces</h1><div class='msg'>{body}</div>"
            "<div class='code'>    indented line\n        more indented</div></main></body></html>")
    with LocalSite({"/m.html": Route(page)}) as s:
        res = renderer.render(s.url + "/m.html", body=page.encode(), content_type="text/html")
    assert res.error is None and "white-space: pre-line" in res.html and "white-space: pre;" in res.html
    assert body in extract_page(res.html, s.url + "/m.html").text
    assert body not in extract_page(page, s.url + "/m.html").text   # the static tree cannot know
