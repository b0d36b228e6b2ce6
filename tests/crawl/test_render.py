"""Headless rendering with Debian's Chromium: JS content, and the route guard (robots, schemes)."""
import os

import pytest
from crawl_testsite import LocalSite, Route

from crawl.render import CHROMIUM, RenderConfig, Renderer

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"no chromium at {CHROMIUM}")]

APP = """<html><body><div id="root"></div><img src="/private/tracker.png">
<script>
fetch('/api/article.json').then(r => r.json()).then(j => {
  document.getElementById('root').innerHTML = '<article><h1>' + j.title + '</h1><p>' + j.body + '</p></article>';
});
fetch('/private/secret.json').catch(() => {});
alert('a dialog that must not block');
window.open('/popup.html');
var i = document.createElement('iframe'); i.src = 'file:///etc/passwd'; document.body.appendChild(i);
</script></body></html>"""


@pytest.fixture(scope="module")
def site():
    s = LocalSite({"/app.html": Route(APP),
                   "/api/article.json": Route('{"title": "Bees in the orchard", "body": "Pollination by wild bees."}',
                                              200, "application/json"),
                   "/private/secret.json": Route("{}", 200, "application/json"),
                   "/private/tracker.png": Route(b"x", 200, "image/png")})
    with s:
        yield s


@pytest.fixture(scope="module")
def renderer():
    r = Renderer(lambda u: "robots" if "/private/" in u else None,
                 RenderConfig(nav_timeout_ms=10_000, idle_cap_ms=1500, scroll_steps=1))
    yield r
    r.close()


def test_js_content_captured_and_guard_enforced(site, renderer):
    res = renderer.render(site.url + "/app.html", body=APP.encode(), content_type="text/html")
    assert res.error is None
    assert "Pollination by wild bees." in res.html and "<h1>Bees in the orchard</h1>" in res.html
    assert "/api/article.json" in site.hits
    assert "/app.html" not in site.hits  # the main document came from the bytes already fetched
    assert not any(h.startswith("/private/") for h in site.hits)
    reasons = {r for _, r in res.blocked}
    assert "robots" in reasons


def test_navigation_fetch_when_no_body_and_fresh_context(site, renderer):
    res = renderer.render(site.url + "/app.html")
    assert "Pollination" in (res.html or "")
    assert site.hits.count("/app.html") == 1
    assert not any(h.startswith("/private/") for h in site.hits)
