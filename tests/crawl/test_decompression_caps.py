"""Decompression bombs on every path that inflates untrusted bytes: sitemaps (gzip files), HTTP
content-encoding, WARC records, zstd HTML columns. Each is read as a stream with a cap: memory
stays bounded and the record is counted as too large."""
from __future__ import annotations

import io
import struct
import tracemalloc
import zlib
from collections import Counter

import brotli
import pytest
import zstandard
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from corpus.schemas import compress_html, decompress_html
from crawl.crawler import CrawlConfig, WaveCrawler
from crawl.fetch import FetchConfig, Fetcher
from crawl.sitemap import read_sitemap
from crawl.warc import iter_warc_pages
from crawl_testsite import Route

MIB = 1 << 20


def gzip_bomb(mib: int) -> bytes:
    """A valid gzip file of `mib` MiB of zeros, about 1 KiB per MiB, built without compressing them:
    a full flush makes each 1 MiB deflate block independent, so one block is repeated."""
    zeros = b"\0" * MIB
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    first = c.compress(zeros) + c.flush(zlib.Z_FULL_FLUSH)
    block = c.compress(zeros) + c.flush(zlib.Z_FULL_FLUSH)
    header = first[:len(first) - len(block)]
    crc = 0
    for _ in range(mib):
        crc = zlib.crc32(zeros, crc)
    return header + block * mib + b"\x03\x00" + struct.pack("<II", crc, (mib * MIB) & 0xFFFFFFFF)


def _peak_mib(fn):
    tracemalloc.start()
    try:
        out = fn()
        return out, tracemalloc.get_traced_memory()[1] / MIB
    finally:
        tracemalloc.stop()


def test_the_bomb_is_real():
    b = gzip_bomb(3)
    assert len(b) < 4096 and zlib.decompress(b, 31) == b"\0" * (3 * MIB)


def test_gzip_sitemap_bomb_is_recorded_too_large_without_inflating_it(local_site):
    bomb = gzip_bomb(256)  # 256 MiB inflated (5x the cap), about 260 KiB on the wire
    routes = {"/sitemap.xml.gz": Route(bomb, 200, "application/gzip"),
              "/": Route("<html><body><p>home page with enough words to keep</p></body></html>")}
    site = local_site(routes)
    routes["/robots.txt"] = Route(f"User-agent: *\nAllow: /\nSitemap: {site.url}/sitemap.xml.gz\n", 200, "text/plain")
    c = WaveCrawler(CrawlConfig(allow_private=True, delay=0, render="never", retries=0))
    try:
        out, peak = _peak_mib(lambda: c.crawl_host([{"url": site.url + "/", "depth": 0, "source": "seed"}]))
    finally:
        c.close()
    assert "/sitemap.xml.gz" in site.hits
    sm = [r for r in out.log if r["url"].endswith("/sitemap.xml.gz")]
    assert [(r["decision"], r["reason"]) for r in sm] == [("skipped", "too_large")]
    assert not [x for x in out.links if x["source"] == "sitemap"]
    assert peak < 120, peak  # the cap (50 MiB) plus a step, never the 256 MiB
    assert read_sitemap(gzip_bomb(8), max_bytes=4 * MIB).skip == "too_large"
    assert read_sitemap(b"\x1f\x8b\x08\x00broken").skip == "bad_gzip"


def _zeros_in(coding: str, mib: int) -> bytes:
    if coding == "gzip":
        return gzip_bomb(mib)
    if coding == "br":
        return brotli.compress(b"\0" * (mib * MIB), quality=1)
    return zstandard.ZstdCompressor(level=1).compress(b"\0" * (mib * MIB))


@pytest.mark.parametrize("coding,mib", [("gzip", 1024), ("br", 256)])
def test_http_content_encoding_bomb_stops_at_max_bytes(local_site, coding, mib):
    """Sent whatever the request asked for (gzip, deflate): brotli is installed for WARC bodies, so
    urllib3 decodes it too, and must stop at the cap as it does for gzip."""
    site = local_site({"/page": Route(_zeros_in(coding, mib), 200, "text/html", {"Content-Encoding": coding})})
    f = Fetcher(FetchConfig(retries=0, max_bytes=2 * MIB))
    res, peak = _peak_mib(lambda: f.fetch(site.url + "/page"))
    f.close()
    assert res.skip == "too_large" and res.body == b""
    assert peak < 64, peak


@pytest.mark.parametrize("coding,mib", [("gzip", 512), ("br", 256), ("zstd", 256)])
def test_warc_record_with_encoded_bomb_is_skipped(tmp_path, coding, mib):
    path = str(tmp_path / "bomb.warc.gz")
    with open(path, "wb") as fh:
        w = WARCWriter(fh, gzip=True)
        hdrs = StatusAndHeaders("200 OK", [("Content-Type", "text/html"), ("Content-Encoding", coding)],
                                protocol="HTTP/1.1")
        w.write_record(w.create_warc_record("http://a.test/bomb.html", "response",
                                            payload=io.BytesIO(_zeros_in(coding, mib)), http_headers=hdrs))
    skipped: Counter = Counter()
    rows, peak = _peak_mib(lambda: list(iter_warc_pages(path, skipped=skipped)))
    assert rows == [] and skipped["too_large"] == 1
    assert peak < 64, peak


def test_zstd_column_bomb_is_not_inflated():
    bomb = zstandard.ZstdCompressor(level=1).compress(b"\0" * (256 * MIB))  # a forged raw_html_zstd cell
    html, peak = _peak_mib(lambda: decompress_html(bomb, max_bytes=4 * MIB))
    assert html is None and peak < 16, peak
    assert decompress_html(compress_html("<p>ok</p>")) == "<p>ok</p>"
