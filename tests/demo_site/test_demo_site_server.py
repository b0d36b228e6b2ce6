"""The demo site serves what its ground truth says: statuses, content types, robots.txt rules,
robots.txt failure modes, the access log, redirects, legacy encodings, slow/huge/trap routes."""
from __future__ import annotations

import http.client
import json
import re
import subprocess
import sys
import threading
import time
from urllib.parse import urlsplit

import pytest
from protego import Protego

from pipelines.demo_site import DemoSite, load_ground_truth

GT = load_ground_truth()
AGENTS = ("CiderBot", "*", "CiderBot-Extended")
SKIP_BULK = {"/huge.html", "/slow.html"}


def get(site: DemoSite, path: str, method: str = "GET", ua: str = "CiderBot/0.1 (+test)", timeout: float = 10):
    """One request without following redirects: (status, headers, body)."""
    conn = http.client.HTTPConnection(site.host, site.port, timeout=timeout)
    try:
        conn.request(method, path, headers={"User-Agent": ua})
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        conn.close()


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    log = tmp_path_factory.mktemp("demo") / "access.jsonl"
    with DemoSite(log_path=log, slow_seconds=0.2) as s:
        yield s


def test_every_labelled_path_has_its_status_and_content_type(site):
    for path, e in GT["paths"].items():
        if path in SKIP_BULK:
            continue
        status, headers, body = get(site, path)
        assert status == e["status"], path
        if status == 200:
            assert headers.get("content-type") == e["content_type"], path
            if e.get("bytes") is not None and e["kind"] != "robots" and b"{{BASE_URL}}" not in body:
                assert len(body) == e["bytes"] or e["kind"] in ("sitemap",), path
        if e.get("x_robots_tag"):
            assert headers.get("x-robots-tag") == e["x_robots_tag"]
        if e["kind"] == "redirect":
            assert headers["location"].replace(site.url, "{{BASE_URL}}") == e["location"]


def test_head_sends_headers_without_body(site):
    status, headers, body = get(site, "/en/cider-history.html", method="HEAD")
    assert status == 200 and body == b"" and int(headers["content-length"]) > 1000


def test_robots_txt_labels_agree_with_protego(site):
    status, _, body = get(site, "/robots.txt")
    assert status == 200
    text = body.decode()
    assert f"Sitemap: {site.url}/sitemap.xml" in text
    rp = Protego.parse(text)
    wrong = []
    for path, e in GT["paths"].items():
        for agent in AGENTS:
            ua = "SomeOtherBot/2.0" if agent == "*" else agent
            if rp.can_fetch(site.url + path, ua) != e["robots"][agent]:
                wrong.append((path, agent))
    assert not wrong
    assert rp.crawl_delay("SomeOtherBot") == GT["robots_txt"]["crawl_delay"]["*"]
    assert rp.crawl_delay("CiderBot") is None
    assert list(rp.sitemaps) == [site.url + "/sitemap.xml"]
    # every kind of rule is exercised by at least one labelled path
    for agent in AGENTS:
        assert any(not e["robots"][agent] for e in GT["paths"].values()), agent
    assert GT["paths"]["/archive/list.php"]["robots"]["CiderBot"] is False
    assert GT["paths"]["/archive/list.php?page=2"]["robots"]["CiderBot"] is True


def test_pages_disallowed_for_the_crawler_are_linked_from_allowed_pages():
    linked_from_allowed = set()
    for e in GT["paths"].values():
        if e["kind"] == "html" and e["robots"]["CiderBot"]:
            linked_from_allowed.update(e.get("internal_links", []))
    disallowed = [p for p, e in GT["paths"].items() if e["kind"] == "html" and not e["robots"]["CiderBot"]]
    assert len(disallowed) >= 3
    assert set(disallowed) <= linked_from_allowed
    assert not any(GT["paths"][p]["ciderbot_fetches"] for p in disallowed)


@pytest.mark.parametrize("status", [500, 404])
def test_robots_txt_failure_modes(status):
    with DemoSite(robots_status=status) as s:
        got, _, _ = get(s, "/robots.txt")
        assert got == status
        assert get(s, "/")[0] == 200


def test_access_log_records_every_request(tmp_path):
    log = tmp_path / "log.jsonl"
    with DemoSite(log_path=log) as s:
        get(s, "/robots.txt", ua="CiderBot/0.1")
        get(s, "/private/budget.html?x=1", ua="Other")
        get(s, "/nope.html", method="HEAD")
    recs = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["path"] for r in recs] == ["/robots.txt", "/private/budget.html?x=1", "/nope.html"]
    assert [r["status"] for r in recs] == [200, 200, 404]
    assert recs[0]["user_agent"] == "CiderBot/0.1" and recs[0]["bytes"] > 100
    assert recs[2]["method"] == "HEAD" and recs[2]["bytes"] == 0
    assert set(recs[0]) == {"time", "method", "path", "status", "user_agent", "bytes"}
    assert s.requested_paths() == [r["path"] for r in recs]


def _follow(site, path, limit=10):
    seen = [path]
    for _ in range(limit):
        status, headers, _ = get(site, path)
        if status not in (301, 302, 303, 307, 308):
            return seen, status
        loc = headers["location"]
        base = site.url + path
        from urllib.parse import urljoin
        path = urlsplit(urljoin(base, loc)).path
        seen.append(path)
    return seen, None


def test_redirect_chain_and_loop(site):
    chain, status = _follow(site, GT["redirects"]["chain"][0])
    assert chain == GT["redirects"]["chain"] and status == 200 and len(chain) - 1 == 3
    loop, status = _follow(site, "/loop/a.html", limit=6)
    assert status is None and set(loop) == set(GT["redirects"]["loop"])


def _meta_charset(raw: bytes) -> str:
    m = re.search(rb'<meta[^>]+charset="?([A-Za-z0-9_\-]+)', raw[:2048], re.I)
    return m.group(1).decode()


def test_legacy_encodings_decode_only_via_their_meta_tag(site):
    legacy = {p: e for p, e in GT["paths"].items() if "legacy_encoding" in e["categories"]}
    assert {e["encoding"] for e in legacy.values()} == {"shift_jis", "windows-1252"}
    for path, e in legacy.items():
        status, headers, raw = get(site, path)
        assert headers["content-type"] == "text/html" and "charset" not in headers["content-type"]
        assert e["charset_in_header"] is False
        good = raw.decode(_meta_charset(raw))
        for snip in e["expected_snippets"]:
            assert snip in good
            assert snip not in raw.decode("utf-8", errors="replace")
            # ISO-8859-1 (a header-less default) gets every windows-1252 snippet here wrong too
            assert snip not in raw.decode("iso-8859-1")


def test_slow_page_waits_and_never_blocks_shutdown():
    with DemoSite(slow_seconds=0.5) as s:
        t0 = time.monotonic()
        assert get(s, "/slow.html")[0] == 200
        assert time.monotonic() - t0 >= 0.45
    s = DemoSite(slow_seconds=60).start()
    errors = []

    def client():
        try:
            get(s, "/slow.html", timeout=0.3)
        except Exception as e:  # noqa: BLE001
            errors.append(e)
    th = threading.Thread(target=client)
    th.start()
    th.join()
    assert errors and isinstance(errors[0], TimeoutError)
    t0 = time.monotonic()
    s.stop()
    assert time.monotonic() - t0 < 3


def test_huge_page_is_streamed(site):
    conn = http.client.HTTPConnection(site.host, site.port, timeout=10)
    conn.request("GET", "/huge.html")
    r = conn.getresponse()
    assert int(r.getheader("Content-Length")) == GT["dynamic_routes"]["huge"]["bytes"]
    first = r.read(1 << 20)
    assert len(first) == 1 << 20 and first.startswith(b"<!doctype html>")
    conn.close()


def test_calendar_is_an_infinite_trap(site):
    path, seen = GT["dynamic_routes"]["spider_trap"]["entry"], set()
    for _ in range(15):
        status, _, body = get(site, path)
        assert status == 200
        seen.add(path)
        path = re.search(rb'href="([^"]+)" rel="next"', body).group(1).decode()
    assert len(seen) == 15 and path == "/calendar/2025/04/"
    assert get(site, "/calendar/2024/13/")[0] == 404


def test_decompression_bomb_is_ten_thousand_pixels_square(site):
    from io import BytesIO

    from PIL import Image
    status, headers, body = get(site, "/img/bad/huge-100mp.png")
    assert status == 200 and headers["content-type"] == "image/png" and len(body) < 100_000
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", Image.DecompressionBombWarning)
        with Image.open(BytesIO(body)) as im:  # header only: size without decoding
            assert im.size == (10000, 10000)


def test_cli_serves_until_terminated(tmp_path):
    log = tmp_path / "cli.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "pipelines.cli", "serve-demo-site", "--log", str(log)],
                            stdout=subprocess.PIPE, text=True)
    try:
        url = proc.stdout.readline().strip()
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+", url)
        host, port = urlsplit(url).hostname, urlsplit(url).port
        conn = http.client.HTTPConnection(host, port, timeout=5)
        conn.request("GET", "/robots.txt", headers={"User-Agent": "CiderBot"})
        assert conn.getresponse().status == 200
        conn.close()
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0
        proc.stdout.close()
    assert json.loads(log.read_text().splitlines()[0])["path"] == "/robots.txt"


def test_hostile_paths_get_404_not_a_crash(site):
    for path in ["/../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/img/%00.png", "/" + "b" * 6000,
                 "/_serve.json", "/static/../../server.py"]:
        assert get(site, path)[0] == 404, path[:40]
    assert get(site, "/account/login.html", method="POST")[0] == 403
    assert get(site, "/")[0] == 200  # still serving
