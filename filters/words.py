"""Language-aware word splitting: CJK scripts have no spaces, so each Han/Kana character is a word.

Hangul is written with spaces, so Korean splits on spaces like European languages. The same split
is used by every stage (Gopher rules, repetition, quality model input, decontamination n-grams),
so a threshold means the same thing everywhere.
"""
from __future__ import annotations

import re

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u31f0-\u31ff"
# one CJK char | a run of word characters that are not CJK (apostrophes inside words kept)
WORD_RE = re.compile(rf"[{_CJK}]|[^\W{_CJK}]+(?:['’][^\W{_CJK}]+)*")
CJK_RE = re.compile(rf"[{_CJK}]")
CJK_LANGS = frozenset({"zh", "ja", "th", "wuu", "yue", "lo", "my", "km"})


def split_words(text: str) -> list[str]:
    """Words of `text` in order; CJK characters are single-character words."""
    return WORD_RE.findall(text)


def is_cjk_language(lang: str | None) -> bool:
    return (lang or "").split("-")[0] in CJK_LANGS


def normalize_for_model(text: str, max_words: int = 2000) -> str:
    """Lower-cased words joined by single spaces: the quality model's input (train and predict)."""
    return " ".join(split_words(text.lower())[:max_words])
