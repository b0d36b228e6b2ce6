"""`synth --ocr-check`: OCR every rendered chart, table or scene and drop those whose drawn text
cannot be read back (clipped, overlapping, too small). Off by default: OCR costs 0.5-2.5 CPU-s
per image, far more than drawing it.

Kept rows carry their OCR scores in meta_json["ocr"]; dropped ones go to the report's samples
with the strings OCR missed, so a reviewer can see why.
"""
from __future__ import annotations

import json
from typing import Any, Sequence

from filters.ocr import ocr
from filters.ocr_readback import DEFAULT_MIN_RECALL, decide, readback
from synth.drawn_text import drawn_strings

OCR_RANGES = {"ocr_text_recall": (0.0, 1.0), "ocr_confidence": (0.0, 100.0)}


def check_row(row: dict[str, Any], min_recall: float = DEFAULT_MIN_RECALL,
              timeout_s: float = 20.0) -> tuple[dict[str, Any] | None, tuple[str, str, dict] | None]:
    """(row with meta_json["ocr"], None) when kept; (None, (reason, id, sample)) when dropped."""
    meta = json.loads(row["meta_json"])
    kind = meta.get("kind", "")
    res = ocr(row["image"], row.get("language"), timeout_s=timeout_s)
    scores = readback(drawn_strings(kind, meta), res)
    keep, reason = decide(scores, res.error, min_recall)
    info = {**scores, "engine": "tesseract", "lang": res.lang, "min_recall": min_recall}
    if not keep:
        return None, (reason, row["id"], {"kind": kind, **info, "ocr_text": res.text[:300]})
    meta["ocr"] = info
    return {**row, "meta_json": json.dumps(meta, ensure_ascii=False, sort_keys=True)}, None


def check_rows(rows: Sequence[dict[str, Any]], min_recall: float = DEFAULT_MIN_RECALL
               ) -> tuple[list[dict[str, Any]], list[tuple[str, str, dict]]]:
    kept, drops = [], []
    for r in rows:
        k, d = check_row(r, min_recall)
        (kept.append(k) if k is not None else drops.append(d))
    return kept, drops
