"""One image as the stage sees it: fetched live or read from a WARC record, then checked with Pillow.

The result is an info dict, never an exception: `reason` is None for a usable image, else why not
(`fetch_*`, `image_*`). A usable one carries the re-encoded bytes and their sha256 and pHash.
"""
from __future__ import annotations

from typing import Any, Iterable, Iterator

from crawl.image_fetch import ImageFetcher
from crawl.image_warc import R_NOT_IN_WARC, pick_record
from filters.image_check import check_image
from imagetext.config import ImagesConfig


def check_body(src: str, final_url: str, status: int, content_type: str, body: bytes, training_allowed: bool,
               reason: str | None, detail: str, cfg: ImagesConfig, fetch_ms: float | None = None) -> dict[str, Any]:
    """The info dict of one image, fetched live or read from a WARC record: Pillow checks on the body."""
    info: dict[str, Any] = {"src": src, "final_url": final_url, "status": status, "content_type": content_type,
                            "fetch_ms": None if fetch_ms is None else round(fetch_ms, 1),
                            "training_allowed": training_allowed, "fetch_reason": reason,
                            "reason": reason, "detail": detail}
    if reason:
        return info
    chk = check_image(body, cfg.image, content_type)
    info.update({"reason": chk.reason, "detail": chk.detail, "orig_format": chk.orig_format,
                 "orig_width": chk.orig_width, "orig_height": chk.orig_height, "animated": chk.animated,
                 "image": chk.image, "mime": chk.mime, "width": chk.width, "height": chk.height,
                 "sha256": chk.sha256, "phash": chk.phash, "decode_ms": round(chk.decode_ms, 2),
                 "bytes_in": len(body)})
    return info


def _error_info(src: str, reason: str, e: Exception) -> dict[str, Any]:
    return {"src": src, "reason": reason, "detail": f"{type(e).__name__}: {e}"[:200]}


def fetch_and_check(src: str, fetcher: ImageFetcher, cfg: ImagesConfig) -> dict[str, Any]:
    """Fetch one image URL through the crawl rules and validate it."""
    res = fetcher.fetch(src)
    return check_body(src, res.final_url, res.status, res.content_type, res.body, res.training_allowed,
                      res.reason, res.detail, cfg, fetch_ms=res.fetch_ms)


def fetch_host(srcs: Iterable[str], fetcher: ImageFetcher, cfg: ImagesConfig) -> Iterator[tuple[str, dict]]:
    """(src, info) for one host's images, one at a time in sorted order (its politeness clock)."""
    for src in sorted(set(srcs)):
        try:
            info = fetch_and_check(src, fetcher, cfg)
        except Exception as e:  # noqa: BLE001  (a bug in one fetch must not kill the job)
            info = _error_info(src, "fetch_error", e)
        yield src, info


def warc_infos(srcs: Iterable[str], records: list[dict[str, Any]],
               cfg: ImagesConfig) -> tuple[list[tuple[str, dict]], list[str]]:
    """The srcs sharing one canonical URL and the WARC records archived under it -> ([(src, info)],
    [srcs with no record])."""
    srcs = sorted(set(srcs))
    rec = pick_record(records) if srcs else None
    if rec is None:
        return [], srcs
    found = []
    for src in srcs:
        try:
            info = check_body(src, rec["url"], rec["status"], rec["content_type"], rec["body"],
                              rec["training_allowed"], rec["reason"], rec["detail"], cfg)
        except Exception as e:  # noqa: BLE001  (a bug on one image must not kill the job)
            info = _error_info(src, "image_error", e)
        info["from_warc"] = True
        found.append((src, info))
    return found, []


def not_in_warc(src: str) -> dict[str, Any]:
    """The info of a src the WARC files do not hold (when those are not fetched live)."""
    return {"src": src, "reason": R_NOT_IN_WARC, "detail": "no record of this URL in the WARC files"}
