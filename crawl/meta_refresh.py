"""`<meta http-equiv="refresh" content="0; url=...">`: a redirect written in the page.

A browser that meets a refresh with no delay leaves the page before anyone reads it, and search
engines treat it as a permanent redirect. Documentation generators write thousands of such pages
(GNU Texinfo: one per index entry; Jekyll's redirect_from; a site root sending visitors to
/en/). So a page with an instant refresh to another URL is handled as an HTTP redirect is: its
target becomes a link, the page itself is no document. A delayed refresh ("5; url=...") leaves
the page on screen: it stays a page.

The content attribute is parsed as the HTML standard's declarative refresh steps read it: a
number, then `;` or `,`, then optionally `url=`, then the URL, optionally quoted.
"""
from __future__ import annotations

import re
from urllib.parse import urldefrag, urljoin

_META = re.compile(rb"<meta\b[^>]*>", re.I)
_HTTP_EQUIV = re.compile(rb"""http-equiv\s*=\s*["']?\s*refresh\b""", re.I)
_CONTENT = re.compile(rb"""\bcontent\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""", re.I)
_STEPS = re.compile(r"""^\s*(\d*)(?:\.[\d.]*)?\s*(?:[;,]\s*)?(?:url\s*=\s*)?(["']?)(.*)$""", re.I | re.S)
HEAD_BYTES = 64 * 1024     # the tag belongs in <head>: the first 64 KiB are searched


def refresh(html: str | bytes) -> tuple[float, str] | None:
    """(delay in seconds, URL as written) of the page's first refresh meta tag; None without one
    (or one with no URL: a page reloading itself)."""
    # slice before encoding: a crawled page is a str of any size, and only its head is read
    head = (html[:HEAD_BYTES].encode("utf-8", "replace") if isinstance(html, str) else html)[:HEAD_BYTES]
    for tag in _META.finditer(head):
        if not _HTTP_EQUIV.search(tag.group(0)):
            continue
        c = _CONTENT.search(tag.group(0))
        if c is None:
            continue
        content = next(g for g in c.groups() if g is not None).decode("utf-8", "replace")
        m = _STEPS.match(content)
        if m is None or m.group(1) == "":
            return None
        url = m.group(3).strip()
        if m.group(2) and m.group(2) in url:
            url = url[:url.index(m.group(2))]
        return (float(m.group(1)), url.strip()) if url.strip() else None
    return None


def instant_refresh_target(html: str | bytes, page_url: str) -> str | None:
    """The absolute URL an instant (0 s) refresh sends to, when it is another page (not this one,
    nor a fragment of it); None otherwise."""
    r = refresh(html)
    if r is None or r[0] > 0:
        return None
    target = urljoin(page_url, r[1])
    if urldefrag(target)[0] == urldefrag(page_url)[0]:
        return None
    return target
