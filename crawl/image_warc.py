"""Images from WARC files (Common Crawl style), so the images of WARC-imported pages need no refetch.

`iter_warc_images(path)` yields one record dict per `response` (or `resource`) record that is not
HTML, keyed by the same canonical URL the live image fetcher would request (`url_key`); the
images stage joins them to the pages' `<img src>`. A URL archived several times gives several
records; `pick_record` chooses one deterministically (a usable one first, then the latest
WARC-Date, then the body hash). Non-2xx statuses and oversized bodies become the same
`fetch_*` reasons as a live fetch; `X-Robots-Tag: noindex` (or one aimed at our opt-out token)
marks the image as not for training. The archived site's robots.txt is unknown here, as for pages
imported from WARC (crawl/warc.py). Corrupt records are counted, never raised, and reading resumes
at the next record (crawl/warc_records.py).
"""
from __future__ import annotations

import hashlib
from collections import Counter
from typing import Any, Iterable, Iterator

from crawl.content_coding import payload
from crawl.fetch import HTML_TYPES, mime_of
from crawl.identity import BOT_TOKEN, OPTOUT_TOKEN
from crawl.robots_meta import image_not_for_training
from crawl.urls import try_canonicalize
from crawl.warc_records import converted_records

R_NOT_IN_WARC = "image_not_in_warc"
MAX_RECORD_BYTES = 20 * 1024 * 1024
# archived types that are never images (others, even wrong ones, go to the Pillow checks)
NOT_IMAGES = frozenset({"text/css", "text/javascript", "application/javascript", "application/x-javascript",
                        "application/json", "application/ld+json", "text/xml", "application/xml", "application/pdf",
                        "application/rss+xml", "application/atom+xml", "font/woff", "font/woff2"})


def url_key(url: str) -> str | None:
    """The canonical form of an image URL (None when it cannot be canonicalised)."""

    canon, _ = try_canonicalize((url or "").strip())
    return canon


def iter_warc_images(path: str, user_agent: str = BOT_TOKEN, optout_token: str = OPTOUT_TOKEN,
                     max_bytes: int = MAX_RECORD_BYTES, skipped: Counter | None = None,
                     span: tuple[int, int | None] = (0, None)) -> Iterator[dict[str, Any]]:
    """Record dicts {url, status, content_type, body, date, training_allowed, reason, detail}, of
    the whole file or of one range of it (crawl.warc_records.warc_ranges)."""
    skipped = skipped if skipped is not None else Counter()
    yield from converted_records(path, ("response", "resource"),
                                 lambda rec: _image_record(rec, user_agent, optout_token, max_bytes, skipped),
                                 skipped, span)


def _image_record(rec, user_agent: str, optout_token: str, max_bytes: int, skipped: Counter) -> dict[str, Any] | None:
    url = url_key(rec.rec_headers.get_header("WARC-Target-URI") or "")
    if url is None:
        skipped["invalid_url"] += 1
        return None
    http = rec.http_headers if rec.rec_type == "response" else None
    status = int(http.get_statuscode() or 0) if http is not None else 200
    ctype = ((http.get_header("Content-Type") if http is not None
              else rec.rec_headers.get_header("Content-Type")) or "")
    mime = mime_of(ctype)
    if mime in HTML_TYPES or (200 <= status < 300 and mime in NOT_IMAGES):
        skipped["not_an_image_type"] += 1   # not worth carrying to the join with the pages' srcs
        return None
    body = payload(rec, max_bytes)
    reason, detail = None, ""
    if not 200 <= status < 300:
        reason, body = f"fetch_http_{status}", b""
    elif len(body) > max_bytes:
        reason, detail, body = "fetch_too_large", f">{max_bytes} bytes", b""
    xrt = http.get_header("X-Robots-Tag") if http is not None else None
    tdm = http.get_header("tdm-reservation") if http is not None else None
    allowed = not image_not_for_training(xrt, tdm, (user_agent, optout_token))
    return {"url": url, "status": status, "content_type": ctype, "body": body,
            "date": rec.rec_headers.get_header("WARC-Date") or "", "training_allowed": allowed,
            "reason": reason, "detail": detail}


def pick_record(records: Iterable[dict[str, Any]]) -> dict[str, Any] | None:
    """One record of a URL, the same whatever order the records arrive in."""
    recs = list(records)
    if not recs:
        return None
    return max(recs, key=lambda r: (r["reason"] is None, r["date"], hashlib.sha256(r["body"]).hexdigest(),
                                    r["status"], r["content_type"], r["training_allowed"]))


__all__ = ["iter_warc_images", "pick_record", "url_key", "R_NOT_IN_WARC"]
