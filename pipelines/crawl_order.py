"""The order `cidermill crawl` fetches its frontier in: learned from the pages already fetched, or
by URL shape alone.

After every wave the driver hands the wave's pages to `CrawlOrder.learn`: each page is judged by
the project's text filters (language ID against the target languages, then the Gopher rules),
its topic taken as its dominant content word, and crawl.learned_priority records pass rate,
language and topics per host and path prefix. The anchor text of every link found is kept (one
bounded map), then `rescore` gives every pending URL its priority and the parts that made it
(shape, quality, language, diversity, anchor). The frontier picks highest priority first, as
before; robots.txt and politeness are the fetcher's and do not change. The parts travel in the
frontier datasets and end up in the crawl log, so a reviewer sees why one page came before another.

`shape` is the previous order (crawl.priority only): no parts beyond `shape`.
"""
from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from typing import Any, Iterable

from corpus.errors import ConfigError
from crawl.learned_priority import LearnedPriority
from crawl.priority import priority as shape_priority
from filters.base import Doc
from filters.gopher import GopherQuality
from filters.langid import LanguageId
from filters.stopwords import STOP_WORDS

ORDERS = ("learned", "shape")
MAX_ANCHORS = 200_000          # anchors kept for pending links (oldest dropped first)
MAX_SEEN_TEXTS = 1_000_000     # text hashes kept to spot copies (8 B each + dict overhead; oldest dropped first)
_WORD = re.compile(r"[^\W\d_]{5,}")


def dominant_word(text: str, lang: str | None) -> str | None:
    """A page's topic signal: its most frequent long content word (a topic model would do better)."""
    stops = STOP_WORDS.get(lang or "", frozenset())
    c = Counter(w for w in _WORD.findall(text.lower()) if w not in stops)
    return c.most_common(1)[0][0] if c else None


class PageJudge:
    """Whether a fetched page is one the crawl wants: in a target language, passing the Gopher
    rules, and not a copy of a text already judged (print versions and mirrors add nothing). The
    live crawl (`CrawlOrder`) and the offline simulation (`frontier_eval`) judge with this one class."""

    def __init__(self, targets: Iterable[str], max_seen: int = MAX_SEEN_TEXTS):
        self.langid, self.gopher = LanguageId(languages=list(targets)), GopherQuality()
        self.seen: dict[bytes, None] = {}
        self.max_seen = max_seen

    def __call__(self, url: str, text: str) -> tuple[bool, bool, str | None, str | None]:
        """(passes the filters, first time this text is seen, language, topic)."""
        doc = Doc(id=url, text=text or "", url=url)
        _, keep_l, _ = self.langid(doc)
        _, keep_g, _ = self.gopher(doc) if keep_l else (None, False, None)
        h = hashlib.blake2b((text or "").encode(), digest_size=8).digest()
        new = h not in self.seen
        if new:
            if len(self.seen) >= self.max_seen:
                self.seen.pop(next(iter(self.seen)))
            self.seen[h] = None
        return bool(keep_l and keep_g), new, doc.language, dominant_word(text or "", doc.language)


class CrawlOrder:
    def __init__(self, order: str = "learned", target_languages: Iterable[str] = ("en",)):
        if order not in ORDERS:
            raise ConfigError(f"--order must be one of {', '.join(ORDERS)} (got {order!r})")
        self.order = order
        self.targets = tuple(target_languages)
        self.learner = LearnedPriority(self.targets)
        self.anchors: dict[str, str] = {}
        self._judge: PageJudge | None = None  # built on the first learned wave (loads the LID model)

    def learn(self, pages: Iterable[dict[str, Any]]) -> int:
        """Feed a wave's pages (rows with url, status, text, outlinks); returns how many were judged."""
        if self.order != "learned":
            return 0
        n = 0
        for r in sorted(pages, key=lambda r: r["url"]):
            for ln in r.get("outlinks") or []:
                if ln.get("url") and ln["url"] not in self.anchors:
                    if len(self.anchors) >= MAX_ANCHORS:
                        self.anchors.pop(next(iter(self.anchors)))
                    self.anchors[ln["url"]] = (ln.get("anchor") or "")[:200]
            if self._judge is None:
                self._judge = PageJudge(self.targets)
            passed, new, lang, topic = (self._judge(r["url"], r.get("text") or "") if r.get("status") == 200
                                        else (False, False, None, None))
            # a second copy of a text already seen is not a pass: it adds nothing to the corpus
            self.learner.observe(r["url"], float(passed and new), lang, topic)
            n += 1
        return n

    def rescore(self, pending: dict[str, dict[str, Any]]) -> None:
        """Give every pending entry its `priority` and `priority_parts` (JSON) under this order."""
        for url, e in pending.items():
            if self.order == "shape":
                p = shape_priority(url, e["depth"])
                e["priority"], e["priority_parts"] = p, json.dumps({"shape": p})
            else:
                p, parts = self.learner.score(url, e["depth"], self.anchors.get(url), None)
                e["priority"], e["priority_parts"] = p, json.dumps(parts, sort_keys=True)
