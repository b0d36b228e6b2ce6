"""WARC bodies stored with their HTTP content coding (as browser-driven crawlers keep them) are read
as the page, whatever the coding: gzip, x-gzip, deflate either way, brotli, zstd, stacked, chunked."""
import gzip
import io
import zlib
from collections import Counter

import brotli
import pytest
import zstandard
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from crawl.content_coding import decoded
from crawl.warc import iter_warc_pages

HTML = ("<html><head><title>Cider</title></head><body><article><p>"
        + "The orchard press makes cider every autumn in the old village barn. " * 30
        + "</p></article></body></html>").encode()


def _chunked(b: bytes) -> bytes:
    half = len(b) // 2
    return b"%x\r\n%s\r\n%x\r\n%s\r\n0\r\n\r\n" % (half, b[:half], len(b) - half, b[half:])


def _raw_deflate(b: bytes) -> bytes:
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    return c.compress(b) + c.flush()


CASES = {
    "gzip": ([("Content-Encoding", "gzip")], gzip.compress(HTML)),
    "x-gzip": ([("Content-Encoding", "x-gzip")], gzip.compress(HTML)),
    "deflate-zlib": ([("Content-Encoding", "deflate")], zlib.compress(HTML)),
    "deflate-raw": ([("Content-Encoding", "deflate")], _raw_deflate(HTML)),
    "br": ([("Content-Encoding", "br")], brotli.compress(HTML)),
    "zstd": ([("Content-Encoding", "zstd")], zstandard.ZstdCompressor().compress(HTML)),
    "upper": ([("Content-Encoding", "BR")], brotli.compress(HTML)),
    "stacked": ([("Content-Encoding", "gzip, br")], brotli.compress(gzip.compress(HTML))),
    "chunked": ([("Transfer-Encoding", "chunked")], _chunked(HTML)),
    "chunked-br": ([("Transfer-Encoding", "Chunked"), ("Content-Encoding", "br")], _chunked(brotli.compress(HTML))),
    "says-gzip-is-plain": ([("Content-Encoding", "gzip")], HTML),
    "identity": ([("Content-Encoding", "identity")], HTML),
}


def test_every_coding_reads_as_the_page(tmp_path):
    buf = io.BytesIO()
    w = WARCWriter(buf, gzip=True)
    for name, (headers, body) in CASES.items():
        sh = StatusAndHeaders("200 OK", [("Content-Type", "text/html")] + headers, protocol="HTTP/1.1")
        w.write_record(w.create_warc_record(f"http://cider.test/{name}", "response",
                                            payload=io.BytesIO(body), http_headers=sh))
    path = tmp_path / "codings.warc.gz"
    path.write_bytes(buf.getvalue())
    skipped: Counter = Counter()
    rows = {r["url"].rsplit("/", 1)[1]: r for r in iter_warc_pages(str(path), skipped=skipped)}
    assert sorted(rows) == sorted(CASES) and not skipped
    texts = {r["text"] for r in rows.values()}
    assert len(texts) == 1 and "village barn" in texts.pop()


def test_an_unknown_coding_is_left_for_the_binary_check(tmp_path):
    assert decoded(b"\x28\xb5abc", "compress", 100) == b"\x28\xb5abc"
    buf = io.BytesIO()
    w = WARCWriter(buf, gzip=True)
    sh = StatusAndHeaders("200 OK", [("Content-Type", "text/html"), ("Content-Encoding", "snappy")], protocol="HTTP/1.1")
    w.write_record(w.create_warc_record("http://cider.test/s", "response", http_headers=sh,
                                        payload=io.BytesIO(bytes(range(256)) * 8)))
    path = tmp_path / "unknown.warc.gz"
    path.write_bytes(buf.getvalue())
    skipped: Counter = Counter()
    assert list(iter_warc_pages(str(path), skipped=skipped)) == []
    assert skipped["binary_content"] == 1


@pytest.mark.parametrize("coding", ["gzip", "deflate", "br", "zstd"])
def test_decoding_stops_at_the_limit(coding):
    big = b"cider " * 100_000
    data = {"gzip": gzip.compress, "deflate": zlib.compress, "br": brotli.compress,
            "zstd": zstandard.ZstdCompressor().compress}[coding](big)
    assert decoded(data, coding, 1000) == big[:1000]
    assert decoded(data, coding, len(big) + 1) == big
