"""Sitemap discovery: URLs from the sitemaps robots.txt names (or /sitemap.xml), one index level."""
from __future__ import annotations

import gzip
import re

_LOC = re.compile(rb"<loc>\s*([^<\s]+)\s*</loc>", re.I)
MAX_SITEMAP_URLS = 5000


def parse_sitemap(body: bytes) -> tuple[list[str], list[str]]:
    """(page urls, nested sitemap urls) from a sitemap or sitemap index (gzip allowed)."""
    if body[:2] == b"\x1f\x8b":
        try:
            body = gzip.decompress(body)[:50 * 1024 * 1024]
        except (OSError, EOFError):
            return [], []
    locs = [m.group(1).decode("utf-8", "replace").replace("&amp;", "&") for m in _LOC.finditer(body)]
    if b"<sitemapindex" in body[:2048].lower():
        return [], locs
    return locs[:MAX_SITEMAP_URLS], []
