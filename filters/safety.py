"""Safety and profanity: per-language word lists (whole-word, case-insensitive), a density
threshold, an optional URL/domain blocklist, and a hook for a classifier.

Two sources of lists, merged per language:
  - the project's own short lists in filters/wordlists/<lang>.txt (Apache-2.0);
  - the LDNOOBW lists of the npm package `naughty-words` (CC-BY-4.0), which `make setup` unpacks
    into .cache/naughty-words/ (never committed); `CIDERMILL_NAUGHTY_WORDS=DIR` points elsewhere.
Terms the package lists but that are ordinary words of the language (Portuguese "aranha", spider)
are removed by filters/wordlists/exclude.txt. Languages written without spaces (zh, ja) and Korean
(whose particles attach to the word) match substrings of two or more characters; their Latin-only
terms (`sm`, `13.`) match as whole words, so digits and acronyms do not fire inside other text.
Multi-word terms match as whole phrases. The classifier hook names a callable
`"package.module:function"` taking the text and returning an unsafe-probability in [0, 1].
"""
from __future__ import annotations

import importlib
import json
import os
import re

from corpus.errors import ConfigError
from crawl.urls import hostname_of
from filters.base import Doc, TextFilter

WORDLIST_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "wordlists")
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAUGHTY_WORDS_DIR = os.path.join(REPO_ROOT, ".cache", "naughty-words", "package")
SUBSTRING_LANGS = {"zh", "ja", "ko"}
_LATIN_ONLY = re.compile(r"^[\x00-\u024f\s\W]+$")


def read_list(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8") as f:
            return [ln.strip().lower() for ln in f if ln.strip() and not ln.lstrip().startswith("#")]
    except OSError as e:
        raise ConfigError(f"{path}: cannot read word list ({e.strerror})") from None


def builtin_wordlists() -> dict[str, str]:
    return {n[:-4]: os.path.join(WORDLIST_DIR, n) for n in sorted(os.listdir(WORDLIST_DIR))
            if n.endswith(".txt") and n != "exclude.txt"}


def package_wordlists(directory: str | None = None) -> dict[str, str]:
    """lang -> path of the naughty-words JSON lists found (empty when setup has not unpacked them)."""
    d = directory or os.environ.get("CIDERMILL_NAUGHTY_WORDS") or NAUGHTY_WORDS_DIR
    if not os.path.isdir(d):
        return {}
    return {n[:-5]: os.path.join(d, n) for n in sorted(os.listdir(d))
            if n.endswith(".json") and re.fullmatch(r"[a-z]{2,3}\.json", n)}


def read_json_list(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8") as f:
            terms = json.load(f)
    except (OSError, ValueError) as e:
        raise ConfigError(f"{path}: cannot read word list ({e})") from None
    if not isinstance(terms, list):
        raise ConfigError(f"{path}: word list is not a JSON array")
    return [" ".join(str(t).lower().split()) for t in terms if str(t).strip()]


def exclusions() -> dict[str, set[str]]:
    """lang -> terms never counted (ordinary words that a package list carries)."""
    out: dict[str, set[str]] = {}
    for line in read_list(os.path.join(WORDLIST_DIR, "exclude.txt")):
        lang, _, term = line.partition(" ")
        out.setdefault(lang, set()).add(term.strip())
    return out


def load_terms(extra: dict[str, str] | None = None, package_dir: str | None = None
               ) -> tuple[dict[str, set[str]], dict[str, list[str]]]:
    """(lang -> terms, lang -> sources) from the project lists, the package lists and `extra` files."""
    terms: dict[str, set[str]] = {}
    sources: dict[str, list[str]] = {}
    for lang, path in builtin_wordlists().items():
        terms.setdefault(lang, set()).update(read_list(path))
        sources.setdefault(lang, []).append("cidermill")
    for lang, path in package_wordlists(package_dir).items():
        terms.setdefault(lang, set()).update(read_json_list(path))
        sources.setdefault(lang, []).append("naughty-words")
    for lang, path in (extra or {}).items():
        got = read_json_list(path) if path.endswith(".json") else read_list(path)
        terms.setdefault(lang, set()).update(got)
        sources.setdefault(lang, []).append(path)
    for lang, drop in exclusions().items():
        if lang in terms:
            terms[lang] -= drop
    return terms, sources


def host_blocked(url: str | None, blocked: frozenset[str]) -> bool:
    """True if the URL's host is a blocked domain or a subdomain of one."""
    if not url or not blocked:
        return False
    host = hostname_of(url)
    parts = host.split(".")
    return any(".".join(parts[i:]) in blocked for i in range(len(parts)))


def _phrase_re(phrases: list[str]) -> re.Pattern | None:
    if not phrases:
        return None
    body = "|".join(r"\s+".join(map(re.escape, p.split())) for p in sorted(phrases, key=len, reverse=True))
    return re.compile(rf"(?<!\w)(?:{body})(?!\w)", re.IGNORECASE)


class PhraseCounter:
    """`len(pattern.findall(text))` for the phrase regex, trying the regex only where a phrase's
    first word occurs. The regex alone tries every phrase at every word start (a third of a µs per
    character; most of this filter's time); the first words are found with str.find in the text
    lower-cased, and a phrase can start nowhere else. That holds when lower-casing keeps every
    character's position and the text has no character that the regex's case-insensitive matching
    equates with a first-word character other than through lower() (the `ſ` of `s`, the `ı` of `i`:
    Python's re/_casefix.py table; a capital sigma, which lower() reads by context); other texts
    take the plain regex. Same counts, tested."""

    def __init__(self, phrases: list[str]):
        self.pattern = _phrase_re(phrases)
        self.firsts = sorted({p.split()[0] for p in phrases})
        fixes = _case_fixes()
        odd = set()
        for c in {ch for w in self.firsts for ch in w}:
            for f in (fixes or {}).get(c, ()):
                odd.update(t for t in {f, f.upper(), f.title()} if len(t) == 1 and t.lower() != c)
            if c in "σς":
                odd.add("Σ")   # str.lower() makes it ς at a word's end, σ elsewhere: by context
        self.odd = re.compile("[" + "".join(map(re.escape, sorted(odd))) + "]") if odd else None
        self.plain = fixes is None

    def count(self, text: str) -> int:
        if self.pattern is None:
            return 0
        low = text.lower()
        if self.plain or len(low) != len(text) or (self.odd is not None and self.odd.search(text)):
            return len(self.pattern.findall(text))
        starts = set()
        for w in self.firsts:
            i = low.find(w)
            while i >= 0:
                starts.add(i)
                i = low.find(w, i + 1)
        n, end = 0, 0
        for pos in sorted(starts):   # findall's scan, at the only positions where it can match
            if pos < end:
                continue
            m = self.pattern.match(text, pos)
            if m is not None:
                n += 1
                end = max(m.end(), pos + 1)
        return n


def _case_fixes() -> dict[str, tuple[str, ...]] | None:
    """{lower-case character: the other characters re's IGNORECASE equates with it}; None if this
    Python does not expose the table (PhraseCounter then always runs the plain regex)."""
    try:
        from re._casefix import _EXTRA_CASES  # noqa: PLC0415
    except ImportError:
        return None
    return {chr(k): tuple(chr(v) for v in vs) for k, vs in _EXTRA_CASES.items()}


class Safety(TextFilter):
    name = "safety"
    RANGES = {"unsafe_words": (0.0, 50.0), "unsafe_density": (0.0, 0.1), "unsafe_domain": (0.0, 1.0),
              "unsafe_classifier": (0.0, 1.0)}
    OPTIONS = {"wordlists", "max_density", "min_hits", "blocked_domains", "blocked_domains_file",
               "classifier", "classifier_threshold"}

    def __init__(self, wordlists: dict[str, str] | None = None, max_density: float = 0.01, min_hits: int = 3,
                 blocked_domains: list[str] | None = None, blocked_domains_file: str | None = None,
                 classifier: str | None = None, classifier_threshold: float = 0.5):
        terms, self.sources = load_terms(wordlists)
        self.excluded = {k: frozenset(v) for k, v in exclusions().items()}
        self._vocab: dict[str, frozenset[str]] = {}
        self.words: dict[str, frozenset[str]] = {}
        self.substr: dict[str, re.Pattern] = {}
        self.phrases: dict[str, PhraseCounter] = {}
        for lang, ts in terms.items():
            single = {t for t in ts if " " not in t}
            multi = sorted(t for t in ts if " " in t)
            if lang in SUBSTRING_LANGS:
                # in-script terms as substrings (two characters or more); Latin ones as whole words
                sub = sorted((t for t in single if not _LATIN_ONLY.match(t) and len(t) >= 2), key=len, reverse=True)
                if sub:
                    self.substr[lang] = re.compile("|".join(map(re.escape, sub)))
                single = {t for t in single if _LATIN_ONLY.match(t)}
                multi = [t for t in multi if _LATIN_ONLY.match(t)]
            self.words[lang] = frozenset(single)
            if multi:
                self.phrases[lang] = PhraseCounter(multi)
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

    @classmethod
    def input_files(cls, cfg: dict) -> list[str]:
        """The config's word lists and blocked-domains file (the shipped lists are code)."""
        extra = cfg.get("wordlists") or {}
        files = [extra[lang] for lang in sorted(extra)]
        if cfg.get("blocked_domains_file"):
            files.append(cfg["blocked_domains_file"])
        return files

    @property
    def score_ranges(self) -> dict[str, tuple[float, float]]:  # type: ignore[override]
        r = dict(self.RANGES)
        if self._classifier is None:
            r.pop("unsafe_classifier")
        return r

    def score(self, doc: Doc) -> dict[str, float]:
        lang = (doc.language or "").split("-")[0]
        words = doc.words
        # the document's language plus English: English profanity appears in every language
        langs = [lang, "en"] if lang and lang != "en" else ["en"]
        vocab = self._vocab.get(lang)
        if vocab is None:
            vocab = frozenset().union(*(self.words.get(x, frozenset()) for x in langs))
            vocab = self._vocab[lang] = vocab - self.excluded.get(lang, frozenset())
        hits = sum(1 for w in words if w.lower() in vocab)
        for x in langs:
            if x in self.phrases:
                hits += self.phrases[x].count(doc.text)
        if lang in self.substr:
            hits += len(self.substr[lang].findall(doc.text.lower()))
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
