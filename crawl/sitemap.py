"""Sitemap discovery: URLs from the sitemaps robots.txt names (or /sitemap.xml), one index level.

A gzipped sitemap is inflated as a stream and abandoned past `MAX_SITEMAP_BYTES` (the protocol's
own 50 MB limit on the uncompressed file): gzip of zeros expands about 1,000:1, so inflating
first and cutting afterwards would let any seed host's robots.txt point at gigabytes of memory.
"""
from __future__ import annotations

import re
import zlib
from dataclasses import dataclass, field

_LOC = re.compile(rb"<loc>\s*([^<\s]+)\s*</loc>", re.I)
# Limits on one origin's sitemaps (the crawler reads them once per origin, from its seeds):
MAX_SITEMAP_URLS = 5000        # page URLs taken from one sitemap, and from all of an origin's together
MAX_LISTED_SITEMAPS = 5        # sitemaps taken from robots.txt's Sitemap: lines
MAX_NESTED_SITEMAPS = 20       # sitemaps taken from one sitemap index
MAX_SITEMAP_FILES = 10         # files read before nested sitemaps stop being followed
MAX_SITEMAP_BYTES = 50 * 1024 * 1024
_STEP = 1 << 20  # compressed and inflated bytes handled per step


@dataclass
class Sitemap:
    pages: list[str] = field(default_factory=list)
    nested: list[str] = field(default_factory=list)   # sitemap urls of a sitemap index
    skip: str | None = None                            # 'too_large' | 'bad_gzip'
    detail: str = ""


def gunzip_capped(data: bytes, cap: int) -> bytes | None:
    """Inflate gzip `data` in steps, never holding more than `cap` (+ one step) of output; None past `cap`.
    Raises zlib.error on corrupt or truncated data."""
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    out, size, pos = [], 0, 0
    pending = b""
    while True:
        if not pending:
            if pos >= len(data) or d.eof:
                break
            pending, pos = data[pos:pos + _STEP], pos + _STEP
        chunk = d.decompress(pending, _STEP)
        pending = d.unconsumed_tail
        size += len(chunk)
        if size > cap:
            return None
        out.append(chunk)
    if not d.eof:
        raise zlib.error("truncated gzip data")
    return b"".join(out)


def read_sitemap(body: bytes, max_bytes: int = MAX_SITEMAP_BYTES) -> Sitemap:
    """Page urls (or nested sitemap urls) from a sitemap or sitemap index, gzip allowed."""
    if body[:2] == b"\x1f\x8b":
        try:
            inflated = gunzip_capped(body, max_bytes)
        except zlib.error as e:
            return Sitemap(skip="bad_gzip", detail=str(e)[:200])
        if inflated is None:
            return Sitemap(skip="too_large", detail=f"inflates past {max_bytes} bytes")
        body = inflated
    elif len(body) > max_bytes:
        return Sitemap(skip="too_large", detail=f"{len(body)} bytes")
    locs = [m.group(1).decode("utf-8", "replace").replace("&amp;", "&") for m in _LOC.finditer(body)]
    if b"<sitemapindex" in body[:2048].lower():
        return Sitemap(nested=locs)
    return Sitemap(pages=locs[:MAX_SITEMAP_URLS])

