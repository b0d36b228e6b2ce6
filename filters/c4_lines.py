"""C4-style line cleaning: drop boilerplate lines (cookie and JavaScript notices, "read more",
policy links), and drop pages that are lorem ipsum or mostly boilerplate.

A cleaner: `clean(doc)` rewrites the text, then the scores say how much was removed.
"""
from __future__ import annotations

import re

from filters.base import Doc, TextFilter

DEFAULT_PATTERNS = [
    r"\bjavascript\b",
    r"\bcookies?\b.*\b(policy|consent|accept|use|settings|preferences)\b",
    r"\b(accept|allow|manage)\b.*\bcookies?\b",
    r"^\s*(read|continue reading|learn|see|show|view|load)\s+more\b",
    r"^\s*(terms of (use|service)|privacy policy|all rights reserved)\b",
    r"\benable\b.*\b(browser|scripts?)\b",
    r"^\s*(share|tweet|pin it|share on \w+)\s*$",
    r"\bsubscribe to (our|the) newsletter\b",
]
# Every default pattern needs one of these words (lowercase). A line holding none of them cannot
# match, and `in` on the lowered line is far cheaper than the case-insensitive alternation. Exact:
# under re.I only four non-ASCII letters match ASCII ones (Python's re docs); a line with one of
# them goes to the regex.
DEFAULT_KEYWORDS = ("javascript", "cookie", "more", "terms of", "privacy", "rights", "enable", "share", "tweet",
                    "pin it", "subscribe")
_FOLDS_TO_ASCII = "\u0130\u0131\u017f\u212a"  # İ ı ſ K (Kelvin)
LOREM_RE = re.compile(r"lorem ipsum", re.I)


class C4Lines(TextFilter):
    name = "c4_lines"
    score_ranges = {"c4_removed_lines": (0.0, 1.0), "c4_removed_chars": (0.0, 1.0), "c4_lorem": (0.0, 1.0)}
    OPTIONS = {"patterns", "extra_patterns", "max_line_chars_for_notice", "min_words_per_line",
               "max_removed_chars", "drop_lorem_ipsum"}

    def __init__(self, patterns: list[str] | None = None, extra_patterns: list[str] | None = None,
                 max_line_chars_for_notice: int = 400, min_words_per_line: int = 0,
                 max_removed_chars: float = 0.7, drop_lorem_ipsum: bool = True):
        pats = list(DEFAULT_PATTERNS if patterns is None else patterns) + list(extra_patterns or [])
        self.line_re = re.compile("|".join(f"(?:{p})" for p in pats), re.I) if pats else None
        self.keywords = DEFAULT_KEYWORDS if patterns is None and not extra_patterns else None
        self.max_line_chars = int(max_line_chars_for_notice)   # long lines that mention cookies are content
        self.min_words_per_line = int(min_words_per_line)
        self.max_removed_chars = float(max_removed_chars)
        self.drop_lorem = bool(drop_lorem_ipsum)

    def _is_boilerplate(self, line: str) -> bool:
        s = line.strip()
        if not s:
            return False
        if self.min_words_per_line and len(s.split()) < self.min_words_per_line:
            return True
        if not self.line_re or len(s) > self.max_line_chars:
            return False
        if self.keywords and not any(c in s for c in _FOLDS_TO_ASCII):
            low = s.lower()
            if not any(k in low for k in self.keywords):
                return False
        return bool(self.line_re.search(s))

    def clean(self, doc: Doc) -> None:
        lines = doc.text.split("\n")
        kept = [ln for ln in lines if not self._is_boilerplate(ln)]
        nonempty = sum(1 for ln in lines if ln.strip())
        removed = len(lines) - len(kept)
        before = len(doc.text)
        doc.meta["c4_removed"] = (removed / nonempty if nonempty else 0.0, before)
        if removed:
            doc.set_text(re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip())

    def score(self, doc: Doc) -> dict[str, float]:
        frac_lines, before = doc.meta.get("c4_removed", (0.0, len(doc.text)))
        removed_chars = max(0, before - len(doc.text)) / before if before else 0.0
        return {"c4_removed_lines": float(frac_lines), "c4_removed_chars": float(removed_chars),
                "c4_lorem": 1.0 if LOREM_RE.search(doc.text) else 0.0}

    def decide(self, s: dict[str, float], doc: Doc | None = None) -> tuple[bool, str | None]:
        if self.drop_lorem and s["c4_lorem"] > 0:
            return False, "c4:lorem_ipsum"
        if s["c4_removed_chars"] > self.max_removed_chars:
            return False, "c4:mostly_boilerplate"
        return True, None
