"""Language-aware word splitting: CJK scripts have no spaces, so each Han/Kana character is a word.

Hangul is written with spaces, so Korean splits on spaces like European languages. The same split
is used by every stage (Gopher rules, repetition, quality model input, decontamination n-grams),
so a threshold means the same thing everywhere.
"""
from __future__ import annotations

import re

# Han and Kana code point ranges (inclusive): hiragana and katakana, CJK extension A, unified
# ideographs, compatibility ideographs, katakana phonetic extensions
CJK_RANGES = ((0x3040, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x31F0, 0x31FF))
_CJK = "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in CJK_RANGES)
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
