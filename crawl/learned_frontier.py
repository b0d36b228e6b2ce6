"""A frontier that orders by learned priority, with bounded memory under URL explosions.

Admission is crawl.frontier's (depth, scope, include/exclude, trap shapes) plus a cap on URLs per
URL template for every templated URL (digits masked, query reduced to its keys): faceted search,
tag pagination and calendars all collapse into a few templates, and a refused URL is counted,
not stored, so 10^6 generated links cost a counter, not a million entries. The pending queue is
capped too (the lowest-priority half is dropped, with a reason, when it overflows).

`order` picks the ordering to compare: learned (crawl.learned_priority), shape (today's URL-shape
priority), bfs (discovery order) or random (seeded). Every selected entry carries its priority and
the parts that made it, so the crawl log can say why a page was fetched before another.
Politeness and robots.txt are not decided here: the fetcher decides them for every URL, as before.
"""
from __future__ import annotations

import hashlib
import re
from collections import Counter
from typing import Any

from crawl.frontier import Frontier, FrontierConfig, url_template
from crawl.learned_priority import LearnedPriority
from crawl.priority import priority as shape_priority
from crawl.urls import authority_of

ORDERS = ("learned", "shape", "bfs", "random")
_TEMPLATED = re.compile(r"\d|\?")


class LearnedFrontier:
    def __init__(self, config: FrontierConfig, order: str = "learned", learner: LearnedPriority | None = None,
                 seed: int = 0, max_pending: int = 20_000, max_per_template: int = 50, max_samples: int = 20):
        if order not in ORDERS:
            raise ValueError(f"order must be one of {ORDERS}")
        self.config, self.order, self.seed = config, order, seed
        self.learner = learner or LearnedPriority()
        self.rules = Frontier(config)            # admission rules only
        self.seen: set[bytes] = set()            # 8-byte digests of admitted URLs
        self.pending: dict[str, dict[str, Any]] = {}
        self.templates: Counter = Counter()
        self.refused: Counter = Counter()
        self.refused_samples: list[tuple[str, str]] = []
        self.max_pending, self.max_per_template, self.max_samples = max_pending, max_per_template, max_samples
        self.max_templates = 200_000
        self._n = 0

    def _refuse(self, url: str, reason: str) -> str:
        self.refused[reason] += 1
        if len(self.refused_samples) < self.max_samples:
            self.refused_samples.append((reason, url))
        return reason

    def add_seed(self, url: str) -> None:
        self.rules.seed_hosts.add(authority_of(url))
        self.seen.add(hashlib.blake2b(url.encode(), digest_size=8).digest())
        self._queue(url, 0, None, None, None, "seed")

    def add(self, url: str, depth: int, parent: str | None = None, anchor: str | None = None,
            block: str | None = None) -> str | None:
        """Queue a discovered link; None if queued or seen before, else the refusal reason."""
        key = hashlib.blake2b(url.encode(), digest_size=8).digest()
        if key in self.seen:
            return None
        reason = self.rules.refusal(url, depth)
        if reason:
            return self._refuse(url, reason)
        if _TEMPLATED.search(url):
            t = url_template(url)
            if self.templates[t] >= self.max_per_template:
                return self._refuse(url, "trap:template_limit")
            if len(self.templates) >= self.max_templates and t not in self.templates:
                return self._refuse(url, "trap:too_many_templates")
            self.templates[t] += 1
        self.seen.add(key)
        self._queue(url, depth, parent, anchor, block, "link")
        if len(self.pending) > self.max_pending:
            self._shrink()
        return None

    def _queue(self, url, depth, parent, anchor, block, source) -> None:
        self._n += 1
        self.pending[url] = {"url": url, "depth": int(depth), "parent": parent, "anchor": (anchor or "")[:200],
                             "block": block, "source": source, "n": self._n}

    def _key(self, e: dict[str, Any]) -> tuple:
        if self.order == "bfs":
            return (e["n"],)
        if self.order == "random":
            return (hashlib.blake2b(f"{self.seed}:{e['url']}".encode(), digest_size=8).digest(),)
        if self.order == "shape":
            e["priority"], e["parts"] = shape_priority(e["url"], e["depth"]), None
        else:
            e["priority"], e["parts"] = self.learner.score(e["url"], e["depth"], e["anchor"], e["block"])
        return (-e["priority"], e["depth"], e["n"])

    def _shrink(self) -> None:
        ranked = sorted(self.pending.values(), key=self._key)
        for e in ranked[self.max_pending // 2:]:
            del self.pending[e["url"]]
            self._refuse(e["url"], "frontier_full")

    def select(self, k: int) -> list[dict[str, Any]]:
        """The next k entries (removed from pending), each with `priority` and `parts` when scored."""
        chosen = sorted(self.pending.values(), key=self._key)[:k]
        for e in chosen:
            del self.pending[e["url"]]
        return chosen

    def observe(self, url: str, passed: float, language: str | None, topic: str | None) -> None:
        self.learner.observe(url, passed, language, topic)
