"""The PAGES row of an HTML page read from storage rather than fetched: a WARC record, a saved
file. The same decoding, page-level robots directives and extraction as a live crawl, with the
binary check and the HTML sniffing an untyped body needs.
"""
from __future__ import annotations

from typing import Any

from corpus.schemas import compress_html
from crawl.charset import decode_html, looks_binary
from crawl.extract import extract_page
from crawl.fetch import merged_headers, page_headers
from crawl.meta_refresh import instant_refresh_target
from crawl.robots_meta import page_signals
from crawl.urls import authority_of, url_id

# The WHATWG MIME sniffing standard's HTML signatures: a tag name followed by space or ">".
_HTML_SIGNATURES = (b"<!doctype html", b"<html", b"<head", b"<script", b"<iframe", b"<h1", b"<div", b"<font",
                    b"<table", b"<a", b"<style", b"<title", b"<b", b"<body", b"<br", b"<p", b"<!--")


def sniffed_html(body: bytes) -> bool:
    """Whether an untyped body is HTML, by the WHATWG sniffing rules (leading whitespace and a
    UTF-8 byte order mark skipped)."""
    head = body[:512].removeprefix(b"\xef\xbb\xbf").lstrip(b" \t\n\r\x0c").lower()
    return any(head.startswith(sig) and head[len(sig):len(sig) + 1] in (b" ", b">") for sig in _HTML_SIGNATURES)


def stored_page_row(url: str, body: bytes, ctype: str, header_items: list, status: int, date: str, source: str,
                    user_agent: str, fast: bool | None) -> tuple[dict[str, Any] | None, str | None]:
    """(row, None), or (None, why): "binary_content" for bytes that are not text, "meta_refresh"
    for a page that redirects at once (crawl/meta_refresh.py). `url` is canonical;
    `header_items` are the stored HTTP headers as (name, value) pairs; `date` is ISO-8601."""
    if looks_binary(body):
        return None, "binary_content"
    if instant_refresh_target(body, url) is not None:   # a redirect written in the page, as a crawl reads it
        return None, "meta_refresh"
    html, enc = decode_html(body, ctype)
    headers = merged_headers(header_items)
    noindex, nofollow, reserved, images_reserved = page_signals(html, headers.get("x-robots-tag"),
                                                                headers.get("tdm-reservation"), user_agent)
    ex = extract_page(html, url, fast=fast) if not noindex else None
    return {
        "id": url_id(url), "url": url, "final_url": url, "host": authority_of(url), "depth": 0, "status": status,
        "fetched_at": date, "fetch_ms": None, "content_type": ctype, "encoding": enc,
        "headers": page_headers(headers),
        "raw_html_zstd": compress_html(html) if not noindex else None, "rendered_html_zstd": None,
        "rendered": False, "robots_noindex": noindex, "robots_nofollow": nofollow,
        # robots.txt of the site is unknown here: only page-level directives apply.
        "training_allowed": not noindex and not reserved,
        "title": ex.title if ex else None, "text": ex.text if ex else None,
        "language_hint": ex.language_hint if ex else None, "author": ex.author if ex else None,
        "date": ex.date if ex else None, "canonical_url": ex.canonical_url if ex else None,
        "images": ex.images if ex and not images_reserved else [], "tables": ex.tables if ex else [],
        "outlinks": [] if (ex is None or nofollow) else ex.outlinks, "source": source,
    }, None
