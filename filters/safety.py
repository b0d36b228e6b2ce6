"""Safety and profanity: per-language word lists (whole-word, case-insensitive), a density
threshold, an optional URL/domain blocklist, and a hook for a classifier.

Lists live in filters/wordlists/<lang>.txt (or files named in config). Languages written without
spaces (zh, ja) match substrings instead of words. The classifier hook names a callable
`"package.module:function"` taking the text and returning an unsafe-probability in [0, 1].
"""
from __future__ import annotations

import importlib
import os
import re
from urllib.parse import urlsplit

from corpus.errors import ConfigError
from filters.base import Doc, TextFilter

WORDLIST_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "wordlists")
SUBSTRING_LANGS = {"zh", "ja"}


def read_list(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8") as f:
            return [ln.strip().lower() for ln in f if ln.strip() and not ln.lstrip().startswith("#")]
    except OSError as e:
        raise ConfigError(f"{path}: cannot read word list ({e.strerror})") from None


def builtin_wordlists() -> dict[str, str]:
    return {n[:-4]: os.path.join(WORDLIST_DIR, n) for n in sorted(os.listdir(WORDLIST_DIR)) if n.endswith(".txt")}


def host_blocked(url: str | None, blocked: frozenset[str]) -> bool:
    """True if the URL's host is a blocked domain or a subdomain of one."""
    if not url or not blocked:
        return False
    host = (urlsplit(url).hostname or "").lower().rstrip(".")
    parts = host.split(".")
    return any(".".join(parts[i:]) in blocked for i in range(len(parts)))


class Safety(TextFilter):
    name = "safety"
    RANGES = {"unsafe_words": (0.0, 50.0), "unsafe_density": (0.0, 0.1), "unsafe_domain": (0.0, 1.0),
              "unsafe_classifier": (0.0, 1.0)}
    OPTIONS = {"wordlists", "max_density", "min_hits", "blocked_domains", "blocked_domains_file",
               "classifier", "classifier_threshold"}

    def __init__(self, wordlists: dict[str, str] | None = None, max_density: float = 0.01, min_hits: int = 3,
                 blocked_domains: list[str] | None = None, blocked_domains_file: str | None = None,
                 classifier: str | None = None, classifier_threshold: float = 0.5):
        lists = builtin_wordlists()
        lists.update(wordlists or {})
        self.words: dict[str, frozenset[str]] = {}
        self.substr: dict[str, re.Pattern] = {}
        for lang, path in lists.items():
            terms = read_list(path)
            if lang in SUBSTRING_LANGS:
                self.substr[lang] = re.compile("|".join(map(re.escape, terms)))
            else:
                self.words[lang] = frozenset(terms)
        doms = [d.lower().strip(".") for d in (blocked_domains or [])]
        if blocked_domains_file:
            doms += [d.strip(".") for d in read_list(blocked_domains_file)]
        self.blocked = frozenset(doms)
        self.max_density, self.min_hits = float(max_density), int(min_hits)
        self.classifier_name, self.classifier_threshold = classifier, float(classifier_threshold)
        self._classifier = None
        if classifier:
            mod, _, fn = classifier.partition(":")
            try:
                self._classifier = getattr(importlib.import_module(mod), fn)
            except (ImportError, AttributeError, ValueError) as e:
                raise ConfigError(f"safety.classifier {classifier!r}: cannot import ({e})") from None

    @property
    def score_ranges(self) -> dict[str, tuple[float, float]]:  # type: ignore[override]
        r = dict(self.RANGES)
        if self._classifier is None:
            r.pop("unsafe_classifier")
        return r

    def score(self, doc: Doc) -> dict[str, float]:
        lang = (doc.language or "").split("-")[0]
        words = doc.words
        hits = 0
        if lang in self.substr:
            hits = len(self.substr[lang].findall(doc.text))
        else:
            # all lists: profanity often crosses languages; English terms appear everywhere
            vocab = self.words.get(lang, frozenset()) | self.words.get("en", frozenset())
            hits = sum(1 for w in words if w.lower() in vocab)
        s = {"unsafe_words": float(hits), "unsafe_density": hits / max(len(words), 1),
             "unsafe_domain": 1.0 if host_blocked(doc.url, self.blocked) else 0.0}
        if self._classifier is not None:
            s["unsafe_classifier"] = float(self._classifier(doc.text))
        return s

    def decide(self, s: dict[str, float], doc: Doc | None = None) -> tuple[bool, str | None]:
        if s["unsafe_domain"] > 0:
            return False, "safety:blocked_domain"
        if s["unsafe_words"] >= self.min_hits and s["unsafe_density"] > self.max_density:
            return False, "safety:unsafe_words"
        if s.get("unsafe_classifier", 0.0) > self.classifier_threshold:
            return False, "safety:classifier"
        return True, None
