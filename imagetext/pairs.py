"""Pair rows: (image, alt text) and (image, figcaption) for each image reference of a page.

Every pair is a row, kept or dropped: `drop_reason` is the first check it failed, in this order:
the page opted out of training, the image is unusable (fetch or Pillow reason), the image opted
out, the text is junk (filters/alt_text.py), the language is not wanted. Later steps of the stage
add a duplicate verdict (`apply_duplicate`) and the CLIP cut (`finalize_pair`). Fields starting
with "_" travel between those steps and are folded away before the row is written.
"""
from __future__ import annotations

import hashlib
import json
import math
from typing import Any

from filters.alt_text import alt_text_reason, normalize
from filters.alt_text_lang_pii import R_LANGUAGE, scrub_pii, text_language
from filters.clip_select import clip_reason
from filters.image_dedup import node_key
from filters.ocr_text_rich import read_text
from imagetext.config import ImagesConfig
from imagetext.refs import CONTEXT_CHARS

R_PAGE_OPTOUT = "page_training_optout"
R_IMAGE_OPTOUT = "image_training_optout"
R_NO_IMAGE = "image_missing_src"


def pair_id(ref: dict[str, Any], source: str) -> str:
    return hashlib.sha1(f"{ref['page_id']}\n{ref['idx']}\n{ref['src']}\n{source}".encode("utf-8")).hexdigest()


def image_reason(ref: dict[str, Any], info: dict[str, Any] | None) -> str | None:
    """Why the image of a reference cannot be used whatever its text (None: it can)."""
    if not ref["page_training_allowed"]:
        return R_PAGE_OPTOUT
    if info is None or info.get("reason"):
        return (info or {}).get("reason") or R_NO_IMAGE
    if not info.get("training_allowed", True):
        return R_IMAGE_OPTOUT
    return None


def text_reason(text: str, source: str, lang: str | None, cfg: ImagesConfig) -> str | None:
    """Why a pair's text is not worth training on: junk (named for its source) or an unwanted language."""
    reason = alt_text_reason(text, cfg.alt)
    if reason and source == "caption":
        reason = reason.replace("alt_", "caption_", 1)
    if reason is None and cfg.languages and lang not in cfg.languages:
        reason = R_LANGUAGE
    return reason


def ocr_columns(ref: dict[str, Any], info: dict[str, Any], cfg: ImagesConfig) -> dict[str, Any]:
    """--ocr: the text read from a usable image (the page's language picks the model), PII scrubbed."""
    if cfg.ocr is None or info.get("image") is None or info.get("reason") \
            or not ref["page_training_allowed"] or not info.get("training_allowed", True):
        return {}
    cols = read_text(info["image"], ref.get("page_language"), cfg.ocr)
    if cfg.pii and cols.get("ocr_text"):
        cols["ocr_text"] = scrub_pii(cols["ocr_text"])[0]
    return cols


def make_pairs(ref: dict[str, Any], info: dict[str, Any] | None, cfg: ImagesConfig) -> list[dict[str, Any]]:
    """Pair rows of one image reference (alt always, caption when present), with first drop reason."""
    info = info or {"reason": R_NO_IMAGE, "detail": "no src"}
    sources = [("alt", ref["alt"])]
    if cfg.captions and normalize(ref.get("caption")):
        sources.append(("caption", ref["caption"]))
    ocr_cols = ocr_columns(ref, info, cfg)
    return [_pair_row(ref, info, source, raw, ocr_cols, cfg) for source, raw in sources]


def _pair_row(ref: dict[str, Any], info: dict[str, Any], source: str, raw: str | None, ocr_cols: dict[str, Any],
              cfg: ImagesConfig) -> dict[str, Any]:
    text = normalize(raw)
    pii_n = 0
    if text and cfg.pii:
        text, counts = scrub_pii(text)
        pii_n = sum(counts.values())
    lang, lang_score = (text_language(text, ref.get("page_language")) if text else
                        (ref.get("page_language"), 0.0))
    reason = image_reason(ref, info) or text_reason(text, source, lang, cfg)
    has_image = info.get("image") is not None
    keep_bytes = has_image and (reason is None or cfg.store_dropped_images)
    meta = {"alt_raw": ref["alt"], "caption": ref.get("caption"), "position": ref.get("position"),
            "text_before": (ref.get("text_before") or "")[-CONTEXT_CHARS:],
            "text_after": (ref.get("text_after") or "")[:CONTEXT_CHARS], "detail": info.get("detail") or "",
            "status": info.get("status"), "animated": info.get("animated"),
            "ocr_reason": ocr_cols.get("ocr_reason")}   # no timings: output is deterministic
    return {
        "id": pair_id(ref, source), "image": info.get("image") if keep_bytes else None,
        "mime": info.get("mime"), "width": info.get("width"), "height": info.get("height"),
        "sha256": info.get("sha256"), "phash": info.get("phash"), "text": text, "text_source": source,
        "page_url": ref["page_url"], "language": lang, "clip_score": None, "drop_reason": reason, "qa": [],
        "meta_json": None, "image_url": ref["src"], "page_id": ref["page_id"],
        "orig_format": info.get("orig_format"), "orig_width": info.get("orig_width"),
        "orig_height": info.get("orig_height"), "language_score": round(float(lang_score), 4),
        "pii_count": pii_n, "ocr_text": ocr_cols.get("ocr_text"), "ocr_score": ocr_cols.get("ocr_score"),
        "ocr_chars": ocr_cols.get("ocr_chars"), "_meta": meta, "_has_image": has_image, "_img": info.get("image"),
    }


def dedup_node(row: dict[str, Any]) -> tuple[str, str, Any]:
    """(node, sha256, phash) of a dedup candidate: the node orders a cluster so that its survivor is
    the pair whose text matches the image best (highest CLIP score), ties by id."""
    return node_key(row["text_source"], neg_score(row["clip_score"]), row["id"], row["sha256"]), \
        row["sha256"], row["phash"]


def neg_score(s: float | None) -> float:
    return math.inf if s is None or math.isnan(s) else -float(s)


def apply_duplicate(row: dict[str, Any], dup: tuple[str, str] | None) -> dict[str, Any]:
    """Mark a pair that is still kept as a duplicate (reason, survivor id), if it is one."""
    if dup is None or row["drop_reason"] is not None:
        return row
    return dict(row, drop_reason=dup[0], _meta=dict(row["_meta"], duplicate_of=dup[1]))


def finalize_pair(row: dict[str, Any], cut: float) -> dict[str, Any]:
    """Apply the CLIP cut; fold private fields into meta_json."""
    row = dict(row)
    meta = row.pop("_meta")
    row.pop("_has_image", None)
    row.pop("_img", None)
    if row["drop_reason"] is None:
        row["drop_reason"] = clip_reason(row["clip_score"], cut)
    row["meta_json"] = json.dumps({k: v for k, v in meta.items() if v not in (None, "")}, ensure_ascii=False,
                                  sort_keys=True)
    return row
