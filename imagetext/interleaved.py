"""Interleaved documents: one page's text split at its image positions, each kept image in place.

An image stays when it would make a usable pair (imagetext.pairs.image_reason) and CLIP scores it
against the text around it (imagetext.refs.context_text) at `interleaved_threshold` or more.
"""
from __future__ import annotations

import math
from typing import Any

from filters.alt_text import normalize
from filters.alt_text_lang_pii import scrub_pii
from imagetext.config import ImagesConfig
from imagetext.pairs import image_reason

R_LOW_CLIP = "interleaved_low_clip_score"
R_NO_IMAGE_KEPT = "no_image_kept"
Outcome = tuple[bool, str | None, float | None]   # per image: (kept, reason, score), for the report


def interleaved_doc(page: dict[str, Any], refs: list[tuple[dict, dict | None]], scores: dict[int, float],
                    cfg: ImagesConfig) -> tuple[dict[str, Any], list[Outcome]]:
    """One interleaved document: text pieces split at image positions, kept images in place.

    Returns the row and, per image, (kept, reason, score) for the report."""
    text = page.get("text") or ""
    n = len(text)
    order = sorted(refs, key=lambda ri: (ri[0]["position"] if ri[0]["position"] is not None else n, ri[0]["idx"]))
    items: list[dict[str, Any]] = []
    outcomes: list[Outcome] = []
    pos = 0
    for ref, info in order:
        p = min(max(ref["position"] if ref["position"] is not None else n, pos), n)
        _add_text(items, text[pos:p], cfg)
        pos = p
        score = scores.get(ref["idx"])
        reason = image_reason(ref, info) or _context_reason(score, cfg)
        outcomes.append((reason is None, reason, score))
        if reason is None:
            items.append({"type": "image", "text": normalize(ref.get("alt")) or None,
                          "image_sha256": info["sha256"], "image_src": ref["src"],
                          "clip_score": None if score is None else float(score)})
    _add_text(items, text[pos:], cfg)
    kept = sum(o[0] for o in outcomes)
    row = {"id": page["id"], "url": page.get("final_url") or page.get("url"), "items": items,
           "language": page.get("language_hint"), "images_in": len(refs), "images_kept": kept}
    return row, outcomes


def _context_reason(score: float | None, cfg: ImagesConfig) -> str | None:
    cut = cfg.interleaved_threshold
    if cut is not None and (score is None or math.isnan(score) or score < cut):
        return R_LOW_CLIP
    return None


def _add_text(items: list[dict[str, Any]], piece: str, cfg: ImagesConfig) -> None:
    piece = piece.strip()
    if piece:
        if cfg.pii:
            piece = scrub_pii(piece)[0]
        items.append({"type": "text", "text": piece, "image_sha256": None, "image_src": None, "clip_score": None})


def document_events(doc: dict[str, Any], outcomes: list[Outcome]) -> list[tuple]:
    """Report events of one document: one per image, and one for the document (dropped when it had
    images and kept none)."""
    events = [("interleaved_images", kept, reason, {"clip_score": s} if s is not None and not math.isnan(s) else {})
              for kept, reason, s in outcomes]
    ok = doc["images_kept"] > 0 or doc["images_in"] == 0
    return events + [("interleaved_docs", ok, None if ok else R_NO_IMAGE_KEPT, {})]
