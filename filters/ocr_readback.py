"""Read a rendered image back: did OCR find the text the renderer says it drew?

A synthetic chart, table or scene knows its strings (title, axis label, categories, cells). Each
is looked for in the OCR words: a Latin-script string counts as read when at least half of its
words match an OCR word closely (similarity >= 0.75, so one misread letter does not count as
missing); a Chinese/Japanese/Korean string when half of its characters appear in the OCR text.
`ocr_text_recall` is the share of strings read; below `min_recall` the image is dropped with
reason `ocr:unreadable_text`: text that was clipped, overlapped or drawn too small to read.
"""
from __future__ import annotations

import difflib
import re
from typing import Sequence

from filters.ocr import OcrResult

_TOKEN = re.compile(r"\w+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
DEFAULT_MIN_RECALL = 0.55   # chosen on dev charts by bench/ocr_threshold.py


def _norm_tokens(s: str) -> list[str]:
    return [t for t in _TOKEN.findall(s.lower()) if t]


def string_read(expected: str, ocr_tokens: set[str], ocr_chars: set[str]) -> bool:
    cjk = _CJK.findall(expected)
    if cjk:
        return sum(ch in ocr_chars for ch in cjk) >= 0.5 * len(cjk)
    toks = _norm_tokens(expected)
    if not toks:
        return True
    hit = 0
    for t in toks:
        if t in ocr_tokens or any(difflib.SequenceMatcher(None, t, o).ratio() >= 0.75 for o in ocr_tokens
                                  if abs(len(o) - len(t)) <= max(2, len(t) // 3)):
            hit += 1
    return hit >= 0.5 * len(toks)


def readback(expected: Sequence[str], result: OcrResult) -> dict:
    """{"ocr_text_recall", "ocr_expected", "ocr_missing": [...]} for one image."""
    exp = [s for s in dict.fromkeys(x.strip() for x in expected) if s]
    tokens = {t for w, _ in result.words for t in _norm_tokens(w)}
    chars = set(_CJK.findall(result.text))
    missing = [s for s in exp if not string_read(s, tokens, chars)]
    recall = (len(exp) - len(missing)) / len(exp) if exp else 1.0
    return {"ocr_text_recall": recall, "ocr_expected": len(exp), "ocr_missing": missing,
            "ocr_confidence": result.mean_confidence}


def decide(scores: dict, error: str | None, min_recall: float = DEFAULT_MIN_RECALL) -> tuple[bool, str | None]:
    if error:
        return False, error
    if scores["ocr_expected"] and scores["ocr_text_recall"] < min_recall:
        return False, "ocr:unreadable_text"
    return True, None
