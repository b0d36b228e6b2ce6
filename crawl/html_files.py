"""Saved HTML pages in: a folder of .html files (a documentation set as built or installed, a
`wget --mirror` copy, /usr/share/doc) becomes PAGES rows, as if each file had been fetched.

- A file's URL is `base_url` joined with its path under the folder (percent-encoded), so links
  between the pages resolve as on the site; without `base_url` it is the file's own `file://` URL.
- `.html`, `.htm`, `.xhtml` and `.shtml` files are read, and the same gzip-compressed (`.html.gz`,
  as Debian installs documentation); other files are not pages and are not counted. A file whose
  bytes are not text is counted as binary_content, one over MAX_FILE_BYTES (inflated) as
  too_large, one that cannot be read as unreadable.
- The date is the file's modification time; the charset comes from the page's own declaration
  or the bytes (crawl/charset.py); a page's robots meta tags apply as in a crawl.
"""
from __future__ import annotations

import gzip
import os
import zlib
from collections import Counter
from datetime import datetime, timezone
from typing import Any, Iterator
from urllib.parse import quote, urljoin

from crawl.identity import BOT_TOKEN
from crawl.stored_page import stored_page_row
from crawl.urls import try_canonicalize

MAX_FILE_BYTES = 10 * 1024 * 1024
PAGE_SUFFIXES = (".html", ".htm", ".xhtml", ".shtml")


def page_files(root: str) -> list[str]:
    """The page files under `root`, as sorted paths relative to it (POSIX separators)."""
    out = []
    for d, dirs, files in os.walk(root):
        dirs.sort()
        for name in files:
            low = name.lower().removesuffix(".gz")
            if low.endswith(PAGE_SUFFIXES):
                out.append(os.path.relpath(os.path.join(d, name), root).replace(os.sep, "/"))
    return sorted(out)


def file_url(root: str, rel: str, base_url: str | None) -> str:
    """The page's URL: `base_url` + its path (a `.gz` suffix dropped, as the server would)."""
    path = quote(rel.removesuffix(".gz") if rel.lower().endswith(".gz") else rel)
    if base_url:
        return urljoin(base_url if base_url.endswith("/") else base_url + "/", path)
    return "file://" + quote(os.path.abspath(root).replace(os.sep, "/")).rstrip("/") + "/" + path


def iter_html_file_pages(root: str, rels: list[str], base_url: str | None = None, user_agent: str = BOT_TOKEN,
                         fast: bool | None = None, skipped: Counter | None = None) -> Iterator[dict[str, Any]]:
    """PAGES rows for the files `rels` (relative paths from page_files) under `root`."""
    skipped = skipped if skipped is not None else Counter()
    for rel in rels:
        url = file_url(root, rel, base_url)
        if base_url:
            url, why = try_canonicalize(url)
            if url is None:
                skipped[why or "invalid_url"] += 1
                continue
        full = os.path.join(root, rel)
        try:
            body = _read(full)
            mtime = os.path.getmtime(full)
        except (OSError, EOFError, zlib.error) as e:
            bad_gzip = isinstance(e, (gzip.BadGzipFile, EOFError, zlib.error))
            skipped["unreadable:bad_gzip" if bad_gzip else f"unreadable:{type(e).__name__}"] += 1
            continue
        if body is None:
            skipped["too_large"] += 1
            continue
        date = datetime.fromtimestamp(mtime, timezone.utc).isoformat(timespec="seconds")
        row, why = stored_page_row(url, body, "", [], 200, date, "files", user_agent, fast)
        if row is None:
            skipped[why] += 1
            continue
        if not base_url:          # a file: URL has no host: the folder names the set
            row["host"] = os.path.basename(os.path.abspath(root))
        yield row


def _read(path: str) -> bytes | None:
    """The file's bytes (inflated for .gz), None past MAX_FILE_BYTES."""
    opener = gzip.open if path.lower().endswith(".gz") else open
    with opener(path, "rb") as f:
        body = f.read(MAX_FILE_BYTES + 1)
    return None if len(body) > MAX_FILE_BYTES else body
