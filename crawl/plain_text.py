"""Plain-text documents (text/plain, text/markdown): the body is the page's text.

Why: standards, manuals and documentation are often published as text files (RFCs, READMEs,
man pages served as .txt, Markdown files), and a pretraining crawl wants them.
There is no markup to choose main content from, so the decoded body is the text, laid out as a
`<pre>` block is: line breaks and indentation kept (tables, code, diagrams), line endings made
`\\n`, trailing spaces and runs of blank lines trimmed, form feeds (an RFC's page breaks) made line
breaks, other control characters removed. Quality, language and repetition are the text stage's
to judge, as for any page.

Not documents: the machine-read files of a site's root (robots.txt, ads.txt, security.txt, ...)
and anything under /.well-known/ (RFC 8615); a crawl that meets a link to one logs
`plain:machine_file`. The only page-level directive a text file can carry is X-Robots-Tag
(noindex: the row stays, with no text, as for HTML and PDF).
"""
from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from crawl.fetch import merged_headers, mime_of, page_headers
from crawl.robots_meta import page_signals
from crawl.urls import authority_of, url_id

PLAIN_TYPES = ("text/plain", "text/markdown", "text/x-markdown")
MARKDOWN_TYPES = ("text/markdown", "text/x-markdown")
_MACHINE_FILES = frozenset({"/robots.txt", "/ads.txt", "/app-ads.txt", "/humans.txt", "/security.txt",
                            "/sitemap.txt", "/sellers.json"})
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")
_BLANK_RUN = re.compile(r"\n{3,}")
_ATX = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)[ \t#]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FRONT_TITLE = re.compile(r"""^title:[ \t]*["']?(.*?)["']?[ \t]*$""")


def machine_file(url: str) -> bool:
    """A well-known machine-read file of a site (robots.txt, ads.txt, /.well-known/...), not a document."""
    path = urlsplit(url).path.lower()
    return path in _MACHINE_FILES or path.startswith("/.well-known/")


def plain_text(decoded: str) -> str:
    """A decoded text file -> the page text: lines as written, ends and blank runs trimmed."""
    text = decoded.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n").replace("\f", "\n")
    text = _CONTROL.sub("", text)
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    return _BLANK_RUN.sub("\n\n", text).strip("\n")


def markdown_title(text: str) -> str | None:
    """The first heading of a Markdown file (`# Title`, or a line underlined with = or -); with YAML
    front matter (between `---` lines at the top), its `title:` when it has one."""
    lines = text.split("\n")[:200]
    if lines and lines[0].strip() == "---" and "---" in (x.strip() for x in lines[1:]):
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
        for line in lines[1:end]:
            m = _FRONT_TITLE.match(line)
            if m and m.group(1).strip():
                return m.group(1).strip()[:300]
        lines = lines[end + 1:]
    prev = ""
    for line in lines:
        m = _ATX.match(line)
        if m:
            return m.group(1).strip()[:300] or None
        if prev.strip() and _SETEXT.match(line):
            return prev.strip()[:300]
        prev = line
    return None


def plain_page_row(url: str, decoded: str, encoding: str | None, status: int, content_type: str, header_items,
                   fetched_at: str, source: str, user_agent: str,
                   site_tdm: int | None = None) -> tuple[dict[str, Any] | None, str | None]:
    """(the PAGES row of a text file, None), or (None, "plain:machine_file"). `url` is canonical,
    `decoded` the body as text (crawl/charset.py), `header_items` the response's (name, value) pairs,
    `site_tdm` the site's TDMRep file's value for it (crawl/tdmrep.py)."""
    if machine_file(url):
        return None, "plain:machine_file"
    headers = merged_headers(header_items)
    noindex, nofollow, reserved, _ = page_signals(None, headers.get("x-robots-tag"), headers.get("tdm-reservation"),
                                                  user_agent, site_tdm)
    text = plain_text(decoded)
    lang = headers.get("content-language")
    return {
        "id": url_id(url), "url": url, "final_url": url, "host": authority_of(url), "depth": 0, "status": status,
        "fetched_at": fetched_at, "fetch_ms": None, "content_type": content_type, "encoding": encoding,
        "headers": page_headers(headers),
        "raw_html_zstd": None, "rendered_html_zstd": None, "rendered": False,
        "robots_noindex": noindex, "robots_nofollow": nofollow,
        "training_allowed": not noindex and not reserved,
        "title": markdown_title(text) if mime_of(content_type) in MARKDOWN_TYPES else None,
        "text": None if noindex else text,
        "language_hint": lang.split(",")[0].strip().lower() if lang else None,
        "author": None, "date": None, "canonical_url": None, "images": [], "tables": [], "outlinks": [],
        "source": source,
    }, None
