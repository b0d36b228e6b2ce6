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
from typing import Any, Iterable

from crawl.learned_priority import LearnedPriority
from crawl.priority import priority as shape_priority

ORDERS = ("learned", "shape")
MAX_ANCHORS = 200_000          # anchors kept for pending links (oldest dropped first)


class CrawlOrder:
    def __init__(self, order: str = "learned", target_languages: Iterable[str] = ("en",)):
        from corpus.errors import ConfigError
        if order not in ORDERS:
            raise ConfigError(f"--order must be one of {', '.join(ORDERS)} (got {order!r})")
        self.order = order
        self.targets = tuple(target_languages)
        self.learner = LearnedPriority(self.targets)
        self.anchors: dict[str, str] = {}
        self._filters = None
        self.seen_texts: set[bytes] = set()

    def _judge(self, url: str, text: str) -> tuple[bool, str | None, str | None]:
        """(passes the text filters, language, topic) for one fetched page."""
        from filters.base import Doc
        from pipelines.frontier_eval import dominant_word
        if self._filters is None:
            from filters.gopher import GopherQuality
            from filters.langid import LanguageId
            self._filters = (LanguageId(languages=list(self.targets)), GopherQuality())
        langid, gopher = self._filters
        doc = Doc(id=url, text=text or "", url=url)
        _, keep_l, _ = langid(doc)
        _, keep_g, _ = gopher(doc) if keep_l else (None, False, None)
        # a second copy of a text already seen (print versions, mirrors) adds nothing: not a pass
        h = hashlib.blake2b((text or "").encode(), digest_size=8).digest()
        new = h not in self.seen_texts
        self.seen_texts.add(h)
        return bool(keep_l and keep_g and new), doc.language, dominant_word(text or "", doc.language)

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
            ok = r.get("status") == 200
            passed, lang, topic = self._judge(r["url"], r.get("text") or "") if ok else (False, None, None)
            self.learner.observe(r["url"], float(passed), lang, topic)
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
