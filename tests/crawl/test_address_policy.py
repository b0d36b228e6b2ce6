"""One address policy for every outgoing request: non-global ranges refused, and the connect-time
check (DNS rebinding) on page, robots.txt, sitemap and image fetches alike."""
from __future__ import annotations

import io
import socket

import pytest
from PIL import Image

from crawl.crawler import CrawlConfig, WaveCrawler
from crawl.robots import parse_robots
from crawl.safety import AddressPolicy, is_refused_ip
from crawl_testsite import Route
from crawl.image_fetch import ImageFetchConfig, ImageFetcher

NOT_GLOBAL = ["100.64.0.1", "100.127.255.254",        # carrier-grade NAT (cloud metadata services live here)
              "2002:7f00:1::1", "2002:808:808::1",     # 6to4: the far end cannot be checked
              "2001:0:4136:e378::1",                   # Teredo
              "::ffff:127.0.0.1", "::ffff:169.254.169.254", "::ffff:10.0.0.1",  # IPv4-mapped
              "64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe",  # NAT64 of loopback / link-local
              "169.254.169.254", "fd00:ec2::254", "fe80::1%eth0", "224.0.0.1", "ff02::1",
              "198.18.0.1", "192.0.0.8", "0.0.0.0", "::", "240.0.0.1", "2001:db8::1", "not-an-ip"]
GLOBAL = ["8.8.8.8", "1.1.1.1", "93.184.216.34", "2606:4700::1111", "2001:4860:4860::8888",
          "::ffff:8.8.8.8", "64:ff9b::808:808"]


def test_everything_not_global_is_refused():
    assert [ip for ip in NOT_GLOBAL if not is_refused_ip(ip)] == []
    assert [ip for ip in GLOBAL if is_refused_ip(ip)] == []
    strict, lax = AddressPolicy(), AddressPolicy(allow_private=True)
    for url in ("http://100.64.0.1/latest/meta-data/", "http://[2002:7f00:1::1]/", "http://[::ffff:127.0.0.1]/"):
        assert strict.check(url) == "private_address", url
        assert lax.check(url) is None, url
    assert strict.check("http://8.8.8.8/") is None
    assert lax.check("gopher://127.0.0.1/") == "bad_scheme"  # --allow-private never opens other schemes
    assert strict.refused_peer("100.64.0.1") and not lax.refused_peer("100.64.0.1")


@pytest.fixture
def rebinding(monkeypatch):
    """A resolver whose answer for `rebind.test` changes: public for the first lookup (the policy's
    check), then 127.0.0.1 (the lookup the connection makes)."""
    real = socket.getaddrinfo
    lookups = []

    def getaddrinfo(host, port, *args, **kw):
        if host == "rebind.test":
            lookups.append(port)
            if len(lookups) == 1:
                return [(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", ("93.184.216.34", port or 0))]
            host = "127.0.0.1"
        return real(host, port, *args, **kw)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return lookups


def _png() -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (8, 8), (200, 10, 10)).save(buf, format="PNG")
    return buf.getvalue()


def test_image_fetch_refuses_a_host_that_rebinds_to_loopback(local_site, rebinding):
    site = local_site({"/robots.txt": Route("User-agent: *\nAllow: /\n", 200, "text/plain"),
                       "/a.png": Route(_png(), 200, "image/png")})
    port = site.url.rsplit(":", 1)[1]
    f = ImageFetcher(ImageFetchConfig(delay=0.0, retries=0))
    try:
        res = f.fetch(f"http://rebind.test:{port}/a.png")
        assert res.reason in ("fetch_private_address", "fetch_robots_unavailable"), res
        assert res.body == b"" and site.hits == []   # not one request reached the loopback server
        # with robots.txt already known (a cache from before the rebinding), the image itself is refused
        f.robots.put(parse_robots(f"http://rebind.test:{port}", "User-agent: *\nAllow: /\n"))
        res = f.fetch(f"http://rebind.test:{port}/b.png")
        assert res.reason == "fetch_private_address" and site.hits == []
        assert len(rebinding) >= 2
    finally:
        f.close()
    # the control: allowed private addresses, the same rebinding name loads the image
    lax = ImageFetcher(ImageFetchConfig(delay=0.0, retries=0, allow_private=True))
    try:
        assert lax.fetch(f"http://rebind.test:{port}/a.png").body[:4] == b"\x89PNG"
    finally:
        lax.close()


def test_crawler_refuses_pages_robots_and_sitemaps_that_rebind(local_site, rebinding):
    site = local_site({"/robots.txt": Route("User-agent: *\nAllow: /\nSitemap: /sitemap.xml\n", 200, "text/plain"),
                       "/sitemap.xml": Route("<urlset><url><loc>/x.html</loc></url></urlset>", 200, "text/xml"),
                       "/": Route("<html><body><p>internal admin page</p></body></html>")})
    port = site.url.rsplit(":", 1)[1]
    c = WaveCrawler(CrawlConfig(delay=0, render="never", retries=0, max_requeue=0))
    try:
        out = c.crawl_host([{"url": f"http://rebind.test:{port}/", "depth": 0}])
    finally:
        c.close()
    assert out.pages == [] and site.hits == []
    assert out.log and all(r["decision"] != "fetched" for r in out.log)
