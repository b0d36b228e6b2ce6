"""Images read from a local folder instead of fetched: a saved site or documentation set.

`cidermill crawl --html-dir DIR --base-url URL` imports saved pages as if served at URL, so their
`<img src>` resolve to URLs under it. `cidermill images --local-images URL=DIR` then reads those
images from the same folder: the part of the src after URL, percent-decoded, is a path under DIR.
Nothing is fetched for them, and nothing outside DIR is read: a path that leaves it (`..`, a
symbolic link pointing out) is refused as image_outside_folder, a file that is not there is
image_not_in_folder, one over the byte cap image_too_large.
"""
from __future__ import annotations

import mimetypes
import os
from typing import Any, Iterable
from urllib.parse import unquote, urlsplit

from filters.image_check import R_TOO_LARGE
from imagetext.config import ImagesConfig
from imagetext.image_info import check_body

R_NOT_IN_FOLDER = "image_not_in_folder"
R_OUTSIDE_FOLDER = "image_outside_folder"


def parse_local_images(specs: Iterable[str]) -> tuple[tuple[str, str], ...]:
    """`URL=DIR` strings -> ((url prefix ending in "/", absolute real folder), ...); a ValueError
    naming the bad one otherwise."""
    out = []
    for spec in specs:
        url, sep, folder = spec.partition("=")
        parts = urlsplit(url)
        if not sep or parts.scheme not in ("http", "https") or not parts.netloc or not folder:
            raise ValueError(f"--local-images {spec!r}: expected URL=DIR with an http(s) URL")
        if not os.path.isdir(folder):
            raise ValueError(f"--local-images {spec!r}: {folder} is not a folder")
        out.append((url if url.endswith("/") else url + "/", os.path.realpath(folder)))
    return tuple(out)


def local_root(src: str, roots: Iterable[tuple[str, str]]) -> tuple[str, str] | None:
    """The (prefix, folder) whose prefix the src starts with (the longest), or None."""
    hits = [r for r in roots if src.startswith(r[0])]
    return max(hits, key=lambda r: len(r[0])) if hits else None


def local_info(src: str, prefix: str, folder: str, cfg: ImagesConfig) -> dict[str, Any]:
    """The info dict of one image read from `folder` (see the module docstring)."""
    rel = unquote(urlsplit(src[len(prefix):]).path)
    path = os.path.realpath(os.path.join(folder, rel.lstrip("/")))
    if "\x00" in rel or os.path.commonpath([path, folder]) != folder:
        return {"src": src, "reason": R_OUTSIDE_FOLDER, "detail": f"{rel[:200]} leaves {folder}"}
    if not os.path.isfile(path):
        return {"src": src, "reason": R_NOT_IN_FOLDER, "detail": f"no file {rel[:200]} under {folder}"}
    size = os.path.getsize(path)
    if size > cfg.fetch.max_bytes:
        return {"src": src, "reason": R_TOO_LARGE, "detail": f"{size} bytes, over {cfg.fetch.max_bytes}"}
    try:
        with open(path, "rb") as f:
            body = f.read(cfg.fetch.max_bytes + 1)
    except OSError as e:
        return {"src": src, "reason": R_NOT_IN_FOLDER, "detail": f"{type(e).__name__}: {e}"[:200]}
    ctype = mimetypes.guess_type(path)[0] or "application/octet-stream"
    info = check_body(src, src, 200, ctype, body, True, None, "", cfg)
    info["from_folder"] = True
    return info


def local_src_info(src: str, cfg: ImagesConfig) -> tuple[str, dict[str, Any]]:
    """(src, info) of a src under one of cfg.local_images; never raises (a bug on one image must not
    kill the job)."""
    prefix, folder = local_root(src, cfg.local_images)
    try:
        return src, local_info(src, prefix, folder, cfg)
    except Exception as e:  # noqa: BLE001
        return src, {"src": src, "reason": "image_error", "detail": f"{type(e).__name__}: {e}"[:200]}
