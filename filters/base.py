"""The shape every text filter shares, so Beam, benchmarks and tests drive them the same way.

A filter looks at one document (a `Doc`) and
  - `clean(doc)` (cleaners only) rewrites `doc.text` in place (line cleaning, PII placeholders);
  - `score(doc) -> dict[str, float]` computes its scores (all written on the row, kept or dropped);
  - `decide(scores) -> (keep, reason)` applies the config thresholds; `reason` is None when kept.
No Beam here: a filter is plain Python and can be called on a single document.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from corpus.errors import ConfigError
from filters.words import split_words


@dataclass
class Doc:
    """One document moving through the chain. `language` is filled by language ID."""
    id: str
    text: str
    url: str | None = None
    language: str | None = None
    language_score: float = 0.0
    meta: dict[str, Any] = field(default_factory=dict)   # extras a filter passes on (word lists, counters)

    _words: list[str] | None = None
    _words_lang: str | None = None

    @property
    def words(self) -> list[str]:
        """Language-aware words of the current text (cached until the text or language changes)."""
        if self._words is None or self._words_lang != self.language:
            self._words = split_words(self.text)
            self._words_lang = self.language
        return self._words

    def set_text(self, text: str) -> None:
        if text != self.text:
            self.text = text
            self._words = None


class TextFilter:
    """Base class: a named stage with scores (name -> (lo, hi) range for report histograms)."""
    name: ClassVar[str] = "filter"
    #: score name -> histogram range in the report
    score_ranges: ClassVar[dict[str, tuple[float, float]]] = {}

    def clean(self, doc: Doc) -> None:  # cleaners override
        return None

    def score(self, doc: Doc) -> dict[str, float]:
        raise NotImplementedError

    def decide(self, scores: dict[str, float], doc: Doc | None = None) -> tuple[bool, str | None]:
        """Keep/drop from the scores alone (`doc` gives context such as the language, if needed)."""
        raise NotImplementedError

    @classmethod
    def from_config(cls, cfg: dict) -> "TextFilter":
        check_keys(cls.name, cfg, set(getattr(cls, "OPTIONS", ())))
        return cls(**cfg)

    @classmethod
    def input_files(cls, cfg: dict) -> list[str]:
        """Local files the filter built from `cfg` opens (models, word lists, eval sets), named
        without opening them: a remote runner checks that its workers have the same bytes there
        (pipelines/runners/dask_client.py: check_files). Filters that open files override this."""
        return []

    def __call__(self, doc: Doc) -> tuple[dict[str, float], bool, str | None]:
        """clean + score + decide on one document."""
        self.clean(doc)
        scores = self.score(doc)
        keep, reason = self.decide(scores, doc)
        return scores, keep, reason


def check_keys(name: str, given: dict[str, Any], allowed: set[str]) -> None:
    """Reject unknown config keys with one clear line (a typo must not silently disable a rule)."""
    unknown = sorted(set(given) - allowed)
    if unknown:
        raise ConfigError(f"stage {name!r}: unknown option(s) {', '.join(unknown)}; "
                          f"known: {', '.join(sorted(allowed))}")
