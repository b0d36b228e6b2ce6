"""Language ID and PII scrubbing for pair texts, reusing the text pipeline's filters as they are
(filters/langid.py: fastText lid.176; filters/pii.py: typed placeholders with validity checks).

Alt texts are short, so a low-confidence fastText label falls back to the page's language; the
`languages` option (None = keep all) is the only language-based drop.
"""
from __future__ import annotations

from collections import Counter

from filters.langid import lid_model_path, load_fasttext, predict
from filters.pii import scrub

R_LANGUAGE = "alt_language_not_kept"


def text_language(text: str, page_language: str | None = None, min_score: float = 0.5) -> tuple[str | None, float]:
    """(language, confidence) of a short text; the page language when fastText is not confident."""
    pred = predict(load_fasttext(lid_model_path()), text[:2000]) if text else []
    if pred and pred[0][1] >= min_score:
        return pred[0][0], pred[0][1]
    return (page_language or (pred[0][0] if pred else None)), (pred[0][1] if pred else 0.0)


def scrub_pii(text: str) -> tuple[str, Counter]:
    return scrub(text) if text else (text, Counter())


__all__ = ["text_language", "scrub_pii", "R_LANGUAGE"]
