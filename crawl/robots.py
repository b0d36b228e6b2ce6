"""robots.txt (RFC 9309) per host, with the training opt-out token, parsed by protego.

- 2xx: parse the first 500 KiB (a larger file is read that far, not refused); 4xx: everything
  allowed; 5xx, 429, timeouts, refused connections, redirect loops: nothing allowed on that host
  until a later retry (the entry expires sooner).
- The crawler's own token picks its group, else `*`; so does the opt-out token (CiderBot-Extended,
  like Applebot-Extended). Tokens match exactly, case-insensitively, as RFC 9309 says: a group
  for `Cider` or for `CiderBot` is not one for `CiderBot-Extended` or `CiderBot`, and a line
  written `CiderBot/1.0` names CiderBot (its product token). A page the opt-out
  token may not fetch is still crawled for links but marked training_allowed=false.
- Content signals: a `Content-Signal: ... ai-train=no` line in the group that applies to the
  crawler's token or to the opt-out token (its own group, else `*`) marks every page of the site
  training_allowed=false; the pages are still crawled (search=... is not about training).
- Keys written loosely keep their rules, as Google's open-source parser reads them: "useragent"
  and "user agent", and a key parted from its one-word value by spaces ("Disallow /private/").
- Entries are cached per origin with a TTL; the cache is thread-safe.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Callable

from protego import Protego

from crawl.fetch import Fetcher
from crawl.identity import BOT_TOKEN, OPTOUT_TOKEN
from crawl.origin_cache import OriginCache
from crawl.urls import origin_of

MAX_ROBOTS_BYTES = 500 * 1024
_UA_LINE = re.compile(r"^([ \t]*user-agent[ \t]*:[ \t]*)([^#\s]+)[^#\n]*", re.I | re.M)
# Keys as real files write them and Google's open-source parser reads them: "useragent" and
# "user agent" for user-agent, and a key parted from its one-word value by spaces instead of a colon
# ("Disallow /private/"). Read strictly, such a line is dropped, and the rule it states with it.
_LOOSE_KEY = re.compile(r"^([ \t]*)(user[ \t]?-?[ \t]?agent|allow|disallow|crawl-delay|sitemap)"
                        r"(?:[ \t]*:|[ \t]+(?=[^\s:#]\S*[ \t]*(?:#[^\n]*)?$))", re.I | re.M)
_UA_SPELLINGS = re.compile(r"user[ \t]?-?[ \t]?agent", re.I)
_PRODUCT_TOKEN = re.compile(r"[A-Za-z_-]+")


@dataclass
class RobotsEntry:
    origin: str
    state: str                        # parsed | allow_all | unavailable
    status: int = 0
    parser: Protego | None = None
    agents: set[str] = field(default_factory=set)
    fetched_at: float = 0.0
    ai_train_no: set[str] = field(default_factory=set)  # groups (tokens, lower case) saying ai-train=no
    detail: str = ""

    @property
    def sitemaps(self) -> list[str]:
        return list(self.parser.sitemaps) if self.parser is not None else []


@dataclass
class RobotsDecision:
    allowed: bool
    reason: str | None                # robots | robots_unavailable | None
    training_allowed: bool


def _product_token(value: str) -> str:
    """A user-agent line's value -> its product token, as RFC 9309 defines it (letters, "_" and "-"):
    "CiderBot/1.0" and "CiderBot(+url)" name CiderBot; "*" stays."""
    m = _PRODUCT_TOKEN.match(value)
    return m.group(0) if m else value


def parse_robots(origin: str, text: str, status: int = 200) -> RobotsEntry:
    """A robots.txt whose user-agent lines name product tokens; `agents` holds them in lower case.
    A group applies to a crawler only when its token equals the crawler's, case-insensitively
    (RobotsCache.decide): protego alone also applies a group whose name starts the crawler's
    ("Cider" or "c" for CiderBot), and matched no group written with a version ("CiderBot/1.0")."""
    agents: set[str] = set()

    def product_line(m: re.Match) -> str:
        token = _product_token(m.group(2))
        agents.add(token.lower())
        return m.group(1) + token

    def key_line(m: re.Match) -> str:
        key = "user-agent" if _UA_SPELLINGS.fullmatch(m.group(2)) else m.group(2)
        return f"{m.group(1)}{key}:"

    text = text[:MAX_ROBOTS_BYTES].replace("\r\n", "\n").replace("\r", "\n")
    text = _UA_LINE.sub(product_line, _LOOSE_KEY.sub(key_line, text))
    return RobotsEntry(origin, "parsed", status, Protego.parse(text), agents, time.time(), ai_train_no=_ai_train_no(text))


def _ai_train_no(text: str) -> set[str]:
    """The groups (their product tokens, lower case) whose `Content-Signal` line says ai-train=no:
    the content signals a site's robots.txt may carry (as Cloudflare's managed robots.txt writes
    them, e.g. `Content-Signal: search=yes, ai-train=no` under `User-agent: *`). A group is the
    user-agent lines in a row and the lines after them, as RFC 9309 reads it."""
    refused: set[str] = set()
    group: list[str] = []
    in_agents = False
    for line in text.split("\n"):
        line = line.split("#", 1)[0].strip()
        key, sep, value = line.partition(":")
        if not sep:
            continue
        key = key.strip().lower()
        if key == "user-agent":
            group = (group if in_agents else []) + [_product_token(value.strip()).lower()]
            in_agents = True
            continue
        in_agents = False
        if key == "content-signal" and group:
            signals = {k.strip(): v.strip() for k, _, v in (p.lower().partition("=") for p in value.split(","))}
            if signals.get("ai-train") == "no":
                refused.update(group)
    return refused


def _group_token(e: RobotsEntry, token: str) -> str:
    """The name to ask protego with: the crawler's token when the file has a group for exactly it,
    else "*" (the group every crawler without its own follows)."""
    token = _product_token(token)
    return token if token.lower() in e.agents else "*"


class RobotsCache:
    def __init__(self, fetcher: Fetcher, user_agent: str = BOT_TOKEN, optout_token: str = OPTOUT_TOKEN,
                 ttl: float = 24 * 3600, error_ttl: float = 300, check_address: Callable[[str], str | None] | None = None):
        self.fetcher = fetcher
        self.user_agent = user_agent
        self.optout_token = optout_token
        self.ttl, self.error_ttl = ttl, error_ttl
        self.check_address = check_address or (lambda u: None)
        # one robots.txt request per origin, even with many threads asking
        self._cache: OriginCache[RobotsEntry] = OriginCache(
            self._load, lambda e: self.ttl if e.state != "unavailable" else self.error_ttl)

    def _load(self, origin: str) -> RobotsEntry:
        url = origin + "/robots.txt"
        reason = self.check_address(url)
        if reason:
            return RobotsEntry(origin, "unavailable", 0, fetched_at=time.time(), detail=reason)
        res = self.fetcher.fetch(url, allow=self.check_address, accept_types=None, prefix=MAX_ROBOTS_BYTES)
        if res.skip and not res.skip.startswith("http_"):
            return RobotsEntry(origin, "unavailable", res.status, fetched_at=time.time(), detail=res.skip)
        if 200 <= res.status < 300:
            text = res.body[:MAX_ROBOTS_BYTES].decode("utf-8-sig", "replace")  # a BOM must not hide line 1
            return parse_robots(origin, text, res.status)
        if 400 <= res.status < 500 and res.status != 429:  # 429 means "slow down", not "no robots.txt"
            return RobotsEntry(origin, "allow_all", res.status, fetched_at=time.time())
        return RobotsEntry(origin, "unavailable", res.status, fetched_at=time.time(), detail=f"http_{res.status}")

    def entry(self, url: str) -> RobotsEntry:
        return self._cache.get(origin_of(url))

    def put(self, entry: RobotsEntry) -> None:
        self._cache.put(entry.origin, entry)

    def decide(self, url: str) -> RobotsDecision:
        e = self.entry(url)
        if e.state == "unavailable":
            return RobotsDecision(False, "robots_unavailable", False)
        if e.state == "allow_all" or e.parser is None:
            return RobotsDecision(True, None, True)
        allowed = e.parser.can_fetch(url, _group_token(e, self.user_agent))
        training = e.parser.can_fetch(url, _group_token(e, self.optout_token)) if self.optout_token else True
        if e.ai_train_no and {_group_token(e, self.user_agent).lower(),
                              _group_token(e, self.optout_token or self.user_agent).lower()} & e.ai_train_no:
            training = False  # the site's content signals refuse AI training to the group that is ours
        return RobotsDecision(allowed, None if allowed else "robots", bool(allowed and training))

    def crawl_delay(self, url: str) -> float | None:
        e = self.entry(url)
        if e.parser is None:
            return None
        d = e.parser.crawl_delay(_group_token(e, self.user_agent))
        return float(d) if d is not None else None
