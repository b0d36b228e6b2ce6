"""Gopher repetition rules: duplicated lines/paragraphs and n-gram repetition, thresholds in config.

Scores (fractions in [0, 1]): duplicated lines and paragraphs (by count and by characters), the
character share of the most frequent 2/3/4-gram, and the character share covered by duplicated
5..10-grams. Words come from the language-aware splitter, so CJK text is judged per character.
"""
from __future__ import annotations

from collections import Counter

import numpy as np

from filters.base import Doc, TextFilter

# Gopher's thresholds (Rae et al. 2021, table A1); the text pipeline's config uses them as they are.
DEFAULT_TOP = {2: 0.20, 3: 0.18, 4: 0.16}
DEFAULT_DUP = {5: 0.15, 6: 0.14, 7: 0.13, 8: 0.12, 9: 0.11, 10: 0.10}


def _dup_fraction(items: list[str]) -> tuple[float, float]:
    """(share of items that repeat an earlier one, share of characters in those repeats)."""
    if not items:
        return 0.0, 0.0
    seen: set[str] = set()
    dup = dup_chars = total_chars = 0
    for it in items:
        total_chars += len(it)
        if it in seen:
            dup += 1
            dup_chars += len(it)
        else:
            seen.add(it)
    return dup / len(items), (dup_chars / total_chars if total_chars else 0.0)


def top_ngram_fraction_reference(words: list[str], n: int, total_chars: int) -> float:
    if len(words) < n or not total_chars:
        return 0.0
    grams = Counter(zip(*(words[i:] for i in range(n))))
    gram, count = grams.most_common(1)[0]
    if count < 2:
        return 0.0
    return sum(map(len, gram)) * count / total_chars


def dup_ngram_fraction_reference(words: list[str], n: int, total_chars: int) -> float:
    """Characters covered by n-grams seen before (non-overlapping walk, as in Gopher/datatrove).
    The plain walk over word tuples: what `NgramIds.dup_fraction` must equal (tests compare)."""
    if len(words) < n or not total_chars:
        return 0.0
    seen: set[tuple[str, ...]] = set()
    covered = [False] * len(words)
    i = 0
    while i <= len(words) - n:
        g = tuple(words[i:i + n])
        if g in seen:
            for j in range(i, i + n):
                covered[j] = True
            i += n
        else:
            seen.add(g)
            i += 1
    return sum(len(w) for w, c in zip(words, covered) if c) / total_chars


class NgramIds:
    """Exact integer ids of a document's word n-grams, built once and shared by every n.

    Words get ids from a dict (in order of first occurrence); the ids of (n+1)-grams are the ranks
    of (id of the n-gram, id of the next word) pairs, which is exact (no hashing), so two n-grams
    get the same id iff their words are equal. The repetition scores then run in numpy and walk
    only the positions whose n-gram occurs more than once, instead of building a tuple per
    position and n."""

    def __init__(self, words: list[str]):
        # word ids in order of first occurrence, mapped in C (dict.fromkeys keeps that order)
        vocab = {w: i for i, w in enumerate(dict.fromkeys(words))}
        self.words = words
        self.wid = np.fromiter(map(vocab.__getitem__, words), dtype=np.int64, count=len(words))
        self.vocab_size = max(len(vocab), 1)
        self.lengths = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
        self._ids: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    def _grams(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(the len(words) - n + 1 ids of the n-grams in order, equal ids <=> equal n-grams; the
        first position of each id; the count of each id): one sort per n >= 2, shared by the next
        n's ids and by both scores; words need none (their ids are already dense, in order of first
        occurrence)."""
        if n not in self._ids:
            if n == 1:
                w = self.wid
                first = np.flatnonzero(np.r_[True, w[1:] > np.maximum.accumulate(w)[:-1]]) if len(w) else w
                self._ids[1] = (w, first, np.bincount(w, minlength=len(first)))
            else:
                prev = self._grams(n - 1)[0]
                m = len(self.wid) - n + 1
                keys = prev[:m] * self.vocab_size + self.wid[n - 1:n - 1 + m]
                _, first, inv, counts = np.unique(keys, return_index=True, return_inverse=True, return_counts=True)
                self._ids[n] = (inv.astype(np.int64).reshape(-1), first, counts)
        return self._ids[n]

    def top_fraction(self, n: int, total_chars: int) -> float:
        """As top_ngram_fraction_reference: characters of the most frequent n-gram times its
        count (ties: the n-gram seen first, as Counter.most_common keeps insertion order)."""
        if len(self.words) < n or not total_chars:
            return 0.0
        _, first, counts = self._grams(n)
        best = counts.max()
        if best < 2:
            return 0.0
        pos = int(first[counts == best].min())
        return int(self.lengths[pos:pos + n].sum()) * int(best) / total_chars

    def dup_fraction(self, n: int, total_chars: int) -> float:
        """As dup_ngram_fraction_reference (the non-overlapping walk). A position matters only if
        its n-gram occurs more than once; those positions are walked in order, with `seen` per
        n-gram id and the walk's jump after a hit (positions inside it are never visited)."""
        if len(self.words) < n or not total_chars:
            return 0.0
        g, _, counts = self._grams(n)
        positions = np.flatnonzero(counts[g] > 1)
        if not len(positions):
            return 0.0
        covered = np.zeros(len(self.words), dtype=bool)
        seen: set[int] = set()
        next_visit = 0
        for p, k in zip(positions.tolist(), g[positions].tolist()):
            if p < next_visit:
                continue  # inside the jump after a hit: not visited
            if k in seen:
                covered[p:p + n] = True
                next_visit = p + n
            else:
                seen.add(k)
        return int(self.lengths[covered].sum()) / total_chars


def top_ngram_fraction(words: list[str], n: int, total_chars: int) -> float:
    return NgramIds(words).top_fraction(n, total_chars)


def dup_ngram_fraction(words: list[str], n: int, total_chars: int) -> float:
    return NgramIds(words).dup_fraction(n, total_chars)


class Repetition(TextFilter):
    name = "repetition"
    OPTIONS = {"max_dup_lines", "max_dup_line_chars", "max_dup_paragraphs", "max_dup_paragraph_chars",
               "top_ngrams", "dup_ngrams"}

    def __init__(self, max_dup_lines: float = 0.30, max_dup_line_chars: float = 0.20,
                 max_dup_paragraphs: float = 0.30, max_dup_paragraph_chars: float = 0.20,
                 top_ngrams: dict | None = None, dup_ngrams: dict | None = None):
        self.max_dup_lines, self.max_dup_line_chars = max_dup_lines, max_dup_line_chars
        self.max_dup_paragraphs, self.max_dup_paragraph_chars = max_dup_paragraphs, max_dup_paragraph_chars
        self.top = {int(k): float(v) for k, v in (DEFAULT_TOP if top_ngrams is None else top_ngrams).items()}
        self.dup = {int(k): float(v) for k, v in (DEFAULT_DUP if dup_ngrams is None else dup_ngrams).items()}

    @property
    def score_ranges(self) -> dict[str, tuple[float, float]]:  # type: ignore[override]
        names = ["rep_dup_lines", "rep_dup_line_chars", "rep_dup_paragraphs", "rep_dup_paragraph_chars"]
        names += [f"rep_top_{n}gram" for n in sorted(self.top)] + [f"rep_dup_{n}gram" for n in sorted(self.dup)]
        return {k: (0.0, 1.0) for k in names}

    def score(self, doc: Doc) -> dict[str, float]:
        text = doc.text
        lines = [ln.strip() for ln in text.split("\n") if ln.strip()]
        paras = [p.strip() for p in text.split("\n\n") if p.strip()]
        s: dict[str, float] = {}
        s["rep_dup_lines"], s["rep_dup_line_chars"] = _dup_fraction(lines)
        s["rep_dup_paragraphs"], s["rep_dup_paragraph_chars"] = _dup_fraction(paras)
        words = doc.words
        total = sum(map(len, words))
        grams = NgramIds(words)  # shared by every n below
        for n in sorted(self.top):
            s[f"rep_top_{n}gram"] = grams.top_fraction(n, total)
        for n in sorted(self.dup):
            s[f"rep_dup_{n}gram"] = grams.dup_fraction(n, total)
        return s

    def decide(self, s: dict[str, float], doc: Doc | None = None) -> tuple[bool, str | None]:
        if s["rep_dup_lines"] > self.max_dup_lines or s["rep_dup_line_chars"] > self.max_dup_line_chars:
            return False, "repetition:duplicate_lines"
        if (s["rep_dup_paragraphs"] > self.max_dup_paragraphs
                or s["rep_dup_paragraph_chars"] > self.max_dup_paragraph_chars):
            return False, "repetition:duplicate_paragraphs"
        for n, lim in sorted(self.top.items()):
            if s[f"rep_top_{n}gram"] > lim:
                return False, f"repetition:top_{n}gram"
        for n, lim in sorted(self.dup.items()):
            if s[f"rep_dup_{n}gram"] > lim:
                return False, f"repetition:dup_{n}gram"
        return True, None
