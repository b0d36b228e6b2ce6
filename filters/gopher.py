"""Gopher-style document rules (Rae et al. 2021), kept light: every threshold comes from config.

Scores: word count, mean word length, symbol-to-word ratio (# and ellipses), share of lines that
start with a bullet / end with an ellipsis, share of words with a letter, stop-word count, and
sentence ends per 100 words (a page that is only a list of titles or links has none).
Mean word length is not judged for CJK languages (their words are single characters) nor Korean.
"""
from __future__ import annotations

import re

from filters.base import Doc, TextFilter
from filters.stopwords import STOP_WORDS
from filters.words import is_cjk_language

NO_WORD_LENGTH_LANGS = {"ko"}  # besides CJK: Hangul words (syllable blocks) are short by nature

_SENTENCE_END = re.compile(r"[.!?。！？](?:\s|$)|[。！？]")
_BULLETS = ("•", "●", "○", "▪", "◦", "‣", "⁃", "-", "*", "·", "➤", "►", "✓")


class GopherQuality(TextFilter):
    name = "gopher"
    score_ranges = {"gopher_words": (0.0, 5000.0), "gopher_mean_word_len": (0.0, 15.0),
                    "gopher_symbol_ratio": (0.0, 0.5), "gopher_bullet_lines": (0.0, 1.0),
                    "gopher_ellipsis_lines": (0.0, 1.0), "gopher_alpha_words": (0.0, 1.0),
                    "gopher_stop_words": (0.0, 20.0), "gopher_sentence_ends": (0.0, 20.0)}
    OPTIONS = {"min_words", "max_words", "min_mean_word_len", "max_mean_word_len", "max_symbol_ratio",
               "max_bullet_lines", "max_ellipsis_lines", "min_alpha_words", "min_stop_words", "min_sentence_ends"}

    def __init__(self, min_words: int = 50, max_words: int = 100_000, min_mean_word_len: float = 3.0,
                 max_mean_word_len: float = 10.0, max_symbol_ratio: float = 0.1, max_bullet_lines: float = 0.9,
                 max_ellipsis_lines: float = 0.3, min_alpha_words: float = 0.8, min_stop_words: int = 2,
                 min_sentence_ends: float = 0.5):
        self.min_words, self.max_words = min_words, max_words
        self.min_mean_word_len, self.max_mean_word_len = min_mean_word_len, max_mean_word_len
        self.max_symbol_ratio, self.max_bullet_lines = max_symbol_ratio, max_bullet_lines
        self.max_ellipsis_lines, self.min_alpha_words = max_ellipsis_lines, min_alpha_words
        self.min_stop_words = min_stop_words
        self.min_sentence_ends = min_sentence_ends  # per 100 words: lists of titles/links have none

    def score(self, doc: Doc) -> dict[str, float]:
        text, words = doc.text, doc.words
        n = len(words)
        lines = [ln.strip() for ln in text.split("\n") if ln.strip()]
        nl = max(len(lines), 1)
        symbols = text.count("#") + text.count("...") + text.count("…")
        alpha = n - sum(map(str.isdigit, words))
        lang = (doc.language or "").split("-")[0]
        stops = STOP_WORDS.get(lang)
        if stops is None:
            n_stop = float(self.min_stop_words)  # no list for this language: rule passes
        else:
            n_stop = 0
            for w in words:
                if w.lower() in stops:
                    n_stop += 1
                    if n_stop >= 20:
                        break
        return {
            "gopher_words": float(n),
            "gopher_mean_word_len": (sum(map(len, words)) / n) if n else 0.0,
            "gopher_symbol_ratio": symbols / max(n, 1),
            "gopher_bullet_lines": sum(1 for ln in lines if ln.startswith(_BULLETS)) / nl,
            "gopher_ellipsis_lines": sum(1 for ln in lines if ln.endswith(("...", "…"))) / nl,
            "gopher_alpha_words": alpha / n if n else 0.0,
            "gopher_stop_words": float(n_stop),
            "gopher_sentence_ends": 100.0 * len(_SENTENCE_END.findall(text)) / max(n, 1),
        }

    def decide(self, s: dict[str, float], doc: Doc | None = None) -> tuple[bool, str | None]:
        if s["gopher_words"] < self.min_words:
            return False, "gopher:too_few_words"
        if s["gopher_words"] > self.max_words:
            return False, "gopher:too_many_words"
        lang = (doc.language or "").split("-")[0] if doc is not None else ""
        if not (is_cjk_language(lang) or lang in NO_WORD_LENGTH_LANGS):
            if s["gopher_mean_word_len"] < self.min_mean_word_len:
                return False, "gopher:short_words"
            if s["gopher_mean_word_len"] > self.max_mean_word_len:
                return False, "gopher:long_words"
        if s["gopher_symbol_ratio"] > self.max_symbol_ratio:
            return False, "gopher:symbols"
        if s["gopher_bullet_lines"] > self.max_bullet_lines:
            return False, "gopher:bullet_lines"
        if s["gopher_ellipsis_lines"] > self.max_ellipsis_lines:
            return False, "gopher:ellipsis_lines"
        if s["gopher_alpha_words"] < self.min_alpha_words:
            return False, "gopher:non_alpha_words"
        if s["gopher_stop_words"] < self.min_stop_words:
            return False, "gopher:no_stop_words"
        if s.get("gopher_sentence_ends", 100.0) < self.min_sentence_ends:
            return False, "gopher:no_sentences"
        return True, None
