"""The frontier: which discovered URLs to crawl, in what order, within which limits.

Keeps the seen set (every URL ever queued or decided, so nothing is fetched twice), admits
links (depth, scope, include/exclude patterns, trap heuristics, each refusal a log reason) and
picks each wave: highest priority first, at most `wave_size`, within the page budget per host and
in total. Pure Python and deterministic: the same seen set and links give the same waves.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable

from crawl.priority import priority, trap_reason
from urllib.parse import parse_qsl, urlsplit

from crawl.urls import authority_of, try_canonicalize, url_id


@dataclass
class FrontierConfig:
    max_depth: int = 3
    max_pages: int = 1000
    max_pages_per_host: int = 0          # 0: no per-host limit beyond max_pages
    wave_size: int = 500
    max_per_template: int = 1000         # date-like URLs per host and path template: bounds calendars
    scope: str = "seeds"                 # seeds: only the seeds' hosts; any: follow links anywhere
    include: list[str] = field(default_factory=list)   # regexes; when given, a URL must match one
    exclude: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


_DATE_LIKE = re.compile(r"\d+[/_-]\d+")  # two number runs in a row: calendars, archives by date


def url_template(url: str) -> str:
    """host + path with digit runs masked and the query reduced to its keys: /calendar/2024/01/ and
    /calendar/2031/07/ share one template, so an endless calendar is cut off after a few pages."""
    p = urlsplit(url)
    keys = ",".join(sorted({k for k, _ in parse_qsl(p.query, keep_blank_values=True)}))
    return f"{p.netloc}{re.sub(r'[0-9]+', 'N', p.path)}?{keys}"


class Frontier:
    def __init__(self, config: FrontierConfig, seed_hosts: Iterable[str] = ()):
        self.config = config
        self.seen: set[str] = set()
        self.pending: dict[str, dict[str, Any]] = {}
        self.fetched_per_host: Counter = Counter()
        self.fetched = 0
        self.templates: Counter = Counter()
        self.seed_hosts = set(seed_hosts)
        try:
            self._inc = [re.compile(p) for p in config.include]
            self._exc = [re.compile(p) for p in config.exclude]
        except re.error as e:
            from corpus.errors import ConfigError  # noqa: PLC0415
            raise ConfigError(f"bad --include/--exclude pattern: {e}") from None

    # -- admission ----------------------------------------------------------------------------
    def refusal(self, url: str, depth: int) -> str | None:
        c = self.config
        if depth > c.max_depth:
            return "depth"
        if c.scope == "seeds" and self.seed_hosts and authority_of(url) not in self.seed_hosts:
            return "out_of_scope"
        if self._inc and not any(p.search(url) for p in self._inc):
            return "excluded"
        if any(p.search(url) for p in self._exc):
            return "excluded"
        return trap_reason(url)

    def add(self, url: str, depth: int, parent: str | None, source: str, retries: int = 0) -> str | None:
        """Queue a URL; returns None if queued or already seen, else the refusal reason to log."""
        if source == "retry":
            self.pending[url] = self._entry(url, depth, parent, source, retries)
            return None
        if url in self.seen:
            return None
        self.seen.add(url)
        if source == "redirect":
            return None  # a redirect target was just fetched under its source URL: seen, not queued
        reason = self.refusal(url, depth) if source != "seed" else None
        if reason is None and source != "seed" and _DATE_LIKE.search(urlsplit(url).path):
            t = url_template(url)
            self.templates[t] += 1
            if self.config.max_per_template and self.templates[t] > self.config.max_per_template:
                reason = "trap:template_limit"
        if reason is None:
            self.pending[url] = self._entry(url, depth, parent, source, retries)
        return reason

    def add_seed(self, raw: str) -> tuple[str | None, str | None]:
        url, why = try_canonicalize(raw)
        if url is None:
            return None, why
        self.seed_hosts.add(authority_of(url))
        self.add(url, 0, None, "seed")
        return url, None

    @staticmethod
    def _entry(url: str, depth: int, parent: str | None, source: str, retries: int) -> dict[str, Any]:
        return {"id": url_id(url), "url": url, "host": authority_of(url), "depth": int(depth),
                "priority": priority(url, depth), "parent": parent, "source": source, "retries": int(retries)}

    # -- waves --------------------------------------------------------------------------------
    def budget_left(self) -> int:
        return max(0, self.config.max_pages - self.fetched)

    def select(self) -> list[dict[str, Any]]:
        """Entries for the next wave (removed from pending)."""
        c = self.config
        take = min(c.wave_size, self.budget_left())
        per_host = Counter()
        chosen = []
        for e in sorted(self.pending.values(), key=lambda e: (-e["priority"], e["depth"], e["url"])):
            if len(chosen) >= take:
                break
            h = e["host"]
            if c.max_pages_per_host and self.fetched_per_host[h] + per_host[h] >= c.max_pages_per_host:
                continue
            per_host[h] += 1
            chosen.append(e)
        for e in chosen:
            del self.pending[e["url"]]
        return chosen

    def record_attempts(self, entries: list[dict[str, Any]], decisions: dict[str, str]) -> None:
        """Count the wave's requests against the budgets (deferred URLs do not count)."""
        for e in entries:
            if decisions.get(e["url"]) != "deferred":
                self.fetched += 1
                self.fetched_per_host[e["host"]] += 1

    def leftovers(self) -> list[dict[str, Any]]:
        return sorted(self.pending.values(), key=lambda e: e["url"])
