"""Priority learned while crawling, on top of the URL-shape heuristics of crawl.priority.

What the crawler has fetched so far says where the good pages are:
  - quality: the share of fetched pages that passed the text filters (or the quality model's
    score), per host and path prefix (/a/b/, else /a/, else the host), smoothed toward 0.5 so one
    page does not decide a section;
  - language: the share of a prefix's fetched pages in the target languages;
  - topic diversity: a prefix whose pages are all one topic that already fills the fetched set is
    pushed down, so the frontier does not fill with one topic;
  - the link itself: descriptive anchor text in the page's content block goes up, short
    navigation anchors ("next", "2", "sort by price") in menus and footers go down.
Each part is kept beside the total (`parts`), so a reviewer can see why one URL came before
another. Memory: one small record per prefix, at most `max_prefixes` (least-seen ones forgotten).
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from crawl.priority import priority as shape_priority

_NAV_WORDS = re.compile(r"^(next|prev|previous|more|older|newer|page|home|login|log in|sign in|cart|"
                        r"sort|sort by.*|filter.*|print|share|tags?|archive|\d+|«|»|›|‹|>|<)$", re.I)


@dataclass
class Weights:
    quality: float = 3.0
    language: float = 2.0
    diversity: float = 1.5
    anchor: float = 0.6
    prior_strength: float = 2.0      # pseudo-pages at 0.5 pass rate per prefix


@dataclass
class PrefixStats:
    fetched: int = 0
    passed: float = 0.0
    in_target: int = 0
    topics: Counter = field(default_factory=Counter)


def prefixes(url: str) -> list[str]:
    """host/a/b/, host/a/, host/ (most specific first): directories only, never the page itself."""
    p = urlsplit(url)
    segs = [s for s in p.path.split("/") if s]
    dirs = segs[:-1] if segs and not p.path.endswith("/") else segs
    out = [f"{p.netloc}/" + "".join(s + "/" for s in dirs[:k]) for k in (2, 1) if len(dirs) >= k]
    return out + [f"{p.netloc}/"]


def anchor_score(anchor: str | None, block: str | None) -> float:
    """+1 descriptive anchor in content, -1 navigation-looking anchor or link in a nav block."""
    a = " ".join((anchor or "").split())
    words = len(a.split())
    score = 0.0
    if block == "content":
        score += 0.5
    elif block == "nav":
        score -= 0.5
    if not a or _NAV_WORDS.match(a):
        score -= 0.5
    elif words >= 3:
        score += 0.5
    return score


class LearnedPriority:
    def __init__(self, target_languages=("en",), weights: Weights | None = None, max_prefixes: int = 100_000):
        self.targets = frozenset(target_languages)
        self.w = weights or Weights()
        self.max_prefixes = max_prefixes
        self.stats: dict[str, PrefixStats] = {}
        self.topics: Counter = Counter()
        self.fetched = 0

    def observe(self, url: str, passed: float, language: str | None, topic: str | None) -> None:
        """A fetched page: passed in [0, 1] (filter verdict or quality score), its language, its topic."""
        self.fetched += 1
        if topic:
            self.topics[topic] += 1
        for pre in prefixes(url):
            st = self.stats.get(pre)
            if st is None:
                if len(self.stats) >= self.max_prefixes:
                    self._forget()
                st = self.stats[pre] = PrefixStats()
            st.fetched += 1
            st.passed += float(passed)
            st.in_target += int((language or "") in self.targets)
            if topic:
                st.topics[topic] += 1

    def _forget(self) -> None:
        keep = sorted(self.stats.items(), key=lambda kv: -kv[1].fetched)[: self.max_prefixes // 2]
        self.stats = dict(keep)

    def _prefix(self, url: str) -> PrefixStats | None:
        for pre in prefixes(url):
            st = self.stats.get(pre)
            if st is not None and st.fetched >= 2:
                return st
        return None

    def score(self, url: str, depth: int, anchor: str | None = None, block: str | None = None
              ) -> tuple[float, dict[str, float]]:
        """(priority, parts): higher first; parts name what moved it."""
        w = self.w
        parts = {"shape": shape_priority(url, depth), "quality": 0.0, "language": 0.0, "diversity": 0.0,
                 "anchor": w.anchor * anchor_score(anchor, block)}
        st = self._prefix(url)
        if st is not None:
            rate = (st.passed + 0.5 * w.prior_strength) / (st.fetched + w.prior_strength)
            parts["quality"] = w.quality * (rate - 0.5)
            parts["language"] = w.language * (st.in_target / st.fetched - 1.0)
            if st.topics and self.fetched:
                topic, _ = st.topics.most_common(1)[0]
                fair = 1.0 / max(1, len(self.topics))
                share = self.topics[topic] / self.fetched
                parts["diversity"] = -w.diversity * max(0.0, share - fair) / (1.0 - fair if fair < 1 else 1.0)
        parts = {k: round(v, 4) for k, v in parts.items()}
        return round(sum(parts.values()), 4), parts
