"""Decontamination: find documents sharing an n-gram (13 words by default) with evaluation sets.

Eval sets are files: `.jsonl` (every string field of each record, or the fields named in config)
or plain text (one item per line, or the whole file with `whole_file`). N-grams are hashed
(xxh64 of the lower-cased words), so the eval side is a set of integers.

The decision needs the whole corpus: n-grams that occur very often in the corpus (1,000+ documents
by default) are common phrases, not leaks. So `score` reports the colliding n-gram hashes and the
pipeline counts them over the corpus before `decide_with(frequent)` drops a document.
"""
from __future__ import annotations

import json
import os

import xxhash

from corpus.errors import ConfigError
from filters.base import Doc, TextFilter
from filters.words import split_words


def ngram_hashes(text: str, n: int) -> set[int]:
    words = [w.lower() for w in split_words(text)]
    if len(words) < n:
        return set()
    h = xxhash.xxh64_intdigest
    return {h(" ".join(words[i:i + n]).encode("utf-8")) for i in range(len(words) - n + 1)}


def read_eval_texts(path: str, fields: list[str] | None = None, whole_file: bool = False) -> list[str]:
    if not os.path.exists(path):
        raise ConfigError(f"{path}: evaluation set not found")
    with open(path, encoding="utf-8", errors="replace") as f:
        if path.endswith((".jsonl", ".json")):
            out = []
            for i, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError:
                    raise ConfigError(f"{path}:{i}: not valid JSON lines") from None
                vals = rec.values() if fields is None else [rec.get(k) for k in fields]
                out.extend(v for v in vals if isinstance(v, str))
            return out
        data = f.read()
    return [data] if whole_file else [ln for ln in data.splitlines() if ln.strip()]


class Decontamination(TextFilter):
    name = "decontam"
    score_ranges = {"decontam_hits": (0.0, 20.0)}
    OPTIONS = {"eval_sets", "ngram", "fields", "whole_file", "max_corpus_count"}

    def __init__(self, eval_sets: list[str] | None = None, ngram: int = 13, fields: list[str] | None = None,
                 whole_file: bool = False, max_corpus_count: int = 1000):
        self.n = int(ngram)
        self.max_corpus_count = int(max_corpus_count)
        self.eval_hashes: set[int] = set()
        for path in eval_sets or []:
            for t in read_eval_texts(path, fields, whole_file):
                self.eval_hashes |= ngram_hashes(t, self.n)

    @classmethod
    def input_files(cls, cfg: dict) -> list[str]:
        return list(cfg.get("eval_sets") or [])

    @property
    def active(self) -> bool:
        return bool(self.eval_hashes)

    def collisions(self, doc: Doc) -> list[int]:
        if not self.eval_hashes:
            return []
        return sorted(ngram_hashes(doc.text, self.n) & self.eval_hashes)

    def score(self, doc: Doc) -> dict[str, float]:
        hits = self.collisions(doc)
        doc.meta["decontam_ngrams"] = hits
        return {"decontam_hits": float(len(hits))}

    def decide_with(self, hits: list[int], frequent: set[int]) -> tuple[bool, str | None]:
        """Drop if any colliding n-gram is not one of the corpus-frequent ones."""
        if any(h not in frequent for h in hits):
            return False, "decontam:eval_ngram_overlap"
        return True, None

    def decide(self, s: dict[str, float], doc: Doc | None = None) -> tuple[bool, str | None]:
        """Single-document decision (no corpus counts): any collision drops."""
        if s["decontam_hits"] > 0:
            return False, "decontam:eval_ngram_overlap"
        return True, None
