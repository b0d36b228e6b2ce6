"""WARC in and out (warcio): Common Crawl style archives become the same page rows as a live crawl,
and a crawl can keep what it fetched as WARC response records.

Reading keeps `response` records with an HTML, PDF or plain-text content type; everything else (requests, metadata,
images, broken records) is counted and skipped, never raised. A corrupt record costs that record
only: reading resumes at the next one (crawl/warc_records.py).
"""
from __future__ import annotations

import io
from collections import Counter
from typing import Any, Iterator

from corpus.schemas import decompress_html
from crawl.content_coding import payload
from crawl.charset import decode_html, looks_binary
from crawl.crawler import now_iso
from crawl.fetch import HTML_TYPES, PDF_TYPES, mime_of
from crawl.identity import BOT_TOKEN
from crawl.pdf import pdf_page_row
from crawl.plain_text import PLAIN_TYPES, plain_page_row
from crawl.stored_page import sniffed_html, stored_page_row
from crawl.urls import try_canonicalize
from crawl.warc_records import converted_records

MAX_RECORD_BYTES = 10 * 1024 * 1024


def iter_warc_pages(path: str, user_agent: str = BOT_TOKEN, fast: bool | None = None,
                    skipped: Counter | None = None, span: tuple[int, int | None] = (0, None)) -> Iterator[dict[str, Any]]:
    """PAGES rows from one WARC file (.warc or .warc.gz), or from one range of it (warc_ranges)."""
    skipped = skipped if skipped is not None else Counter()
    yield from converted_records(path, ("response",),
                                 lambda rec: _page_from_record(rec, user_agent, fast, skipped), skipped, span)


def _page_from_record(rec, user_agent: str, fast: bool, skipped: Counter) -> dict[str, Any] | None:
    raw_url = rec.rec_headers.get_header("WARC-Target-URI") or ""
    url, why = try_canonicalize(raw_url)
    if url is None:
        skipped[why or "invalid_url"] += 1
        return None
    http = rec.http_headers
    status = int(http.get_statuscode() or 0) if http is not None else 0
    if http is not None and not 200 <= status < 300:
        # as a live crawl: a redirect's target is its own record, an error page is no document
        skipped["redirect" if 300 <= status < 400 else f"http_{status}"] += 1
        return None
    ctype = (http.get_header("Content-Type") if http is not None else "") or ""
    mime = _declared_mime(ctype, rec)
    if mime in PDF_TYPES:  # PDF documents: text layer into the same pages dataset
        body = payload(rec, MAX_RECORD_BYTES)
        row, why = pdf_page_row(url, body, status, ctype, rec.rec_headers.get_header("WARC-Date") or now_iso(),
                                "warc") if len(body) <= MAX_RECORD_BYTES else (None, "too_large")
        if row is None:
            skipped[why or "pdf:broken"] += 1
        return row
    if mime and mime not in HTML_TYPES + PLAIN_TYPES:
        skipped["wrong_type"] += 1
        return None
    body = payload(rec, MAX_RECORD_BYTES)
    if len(body) > MAX_RECORD_BYTES:
        skipped["too_large"] += 1
        return None
    if mime in PLAIN_TYPES:  # a text file: its body is the text
        if looks_binary(body):
            skipped["binary_content"] += 1
            return None
        text, enc = decode_html(body, ctype)
        row, why = plain_page_row(url, text, enc, status, ctype, http.headers if http is not None else [],
                                  rec.rec_headers.get_header("WARC-Date") or now_iso(), "warc", user_agent)
        if row is None:
            skipped[why] += 1
        return row
    if not mime and not sniffed_html(body):
        skipped["wrong_type"] += 1
        return None
    row, why = stored_page_row(url, body, ctype, http.headers if http is not None else [], status,
                               rec.rec_headers.get_header("WARC-Date") or now_iso(), "warc", user_agent, fast)
    if row is None:
        skipped[why] += 1
    return row


GENERIC_TYPES = ("", "application/octet-stream", "binary/octet-stream", "application/unknown", "unknown/unknown")


def _declared_mime(ctype: str, rec) -> str:
    """The record's MIME type: the HTTP Content-Type, or where that is missing or says nothing
    (application/octet-stream), the type the archive detected (WARC-Identified-Payload-Type, as in
    Common Crawl); "" when neither tells, for the body to be sniffed."""
    mime = mime_of(ctype)
    if mime in GENERIC_TYPES:
        mime = mime_of(rec.rec_headers.get_header("WARC-Identified-Payload-Type") or "")
    return "" if mime in GENERIC_TYPES else mime


def write_warc(path: str, pages: Iterator[dict[str, Any]]) -> int:
    """Write page rows (with raw HTML) as WARC response records; returns the record count."""
    from warcio.statusandheaders import StatusAndHeaders  # noqa: PLC0415
    from warcio.warcwriter import WARCWriter  # noqa: PLC0415
    n = 0
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        writer = WARCWriter(f, gzip=path.endswith(".gz"))
        for p in pages:
            html = decompress_html(p.get("raw_html_zstd"))
            if html is None:  # no stored HTML, or a column that inflates past the cap
                continue
            body = html.encode("utf-8")  # stored decoded, as UTF-8
            hdrs = [(h["name"], value) for h in (p.get("headers") or []) if h["name"] != "content-type"
                    for value in h["value"].splitlines()]   # a header sent several times, one line each
            mime = mime_of(p.get("content_type") or "") or "text/html"
            hdrs.append(("Content-Type", f"{mime}; charset=utf-8"))  # the header outranks any old <meta charset>
            status = int(p.get("status") or 200)
            sh = StatusAndHeaders(f"{status} OK", hdrs, protocol="HTTP/1.1")
            rec = writer.create_warc_record(p["final_url"] or p["url"], "response", payload=io.BytesIO(body),
                                            http_headers=sh, warc_headers_dict={"WARC-Date": p["fetched_at"][:19] + "Z"})
            writer.write_record(rec)
            n += 1
    import os  # noqa: PLC0415
    os.replace(tmp, path)
    return n
