"""A page's image references: one record per <img>, in document order, with the text around it."""
from __future__ import annotations

from typing import Any

from filters.alt_text import normalize

CONTEXT_CHARS = 200   # text kept (and judged against the image) on each side of an image


def page_refs(page: dict[str, Any]) -> list[dict[str, Any]]:
    """One record per <img> reference of a page, in document order."""
    out = []
    for idx, im in enumerate(page.get("images") or []):
        out.append({
            "page_id": page["id"], "page_url": page.get("final_url") or page.get("url"), "idx": idx,
            "src": (im.get("src") or "").strip(), "alt": im.get("alt"), "caption": im.get("caption"),
            "text_before": im.get("text_before") or "", "text_after": im.get("text_after") or "",
            "position": im.get("position"), "page_language": page.get("language_hint"),
            "page_training_allowed": page.get("training_allowed") is not False,
        })
    return out


def context_text(ref: dict[str, Any]) -> str:
    """The text an interleaved image is judged against: caption, then the nearest text around it."""
    parts = [normalize(ref.get("caption")), normalize((ref.get("text_before") or "")[-CONTEXT_CHARS:]),
             normalize((ref.get("text_after") or "")[:CONTEXT_CHARS])]
    return " ".join(p for p in parts if p)


