"""W3C TDMRep's site-wide file, `/.well-known/tdmrep.json`: a site's text-and-data-mining
reservation (the machine-readable opt-out of Article 4 of the EU's DSM Directive) for paths of the
site, read once per origin like robots.txt.

The file is a JSON array of rules `{"location": PATTERN, "tdm-reservation": 0|1, "tdm-policy": URL}`.
As the TDMRep report (final, 2024) says:
- the first rule whose location matches the URL's path (and query) decides; no match: unset;
- locations are robots.txt path patterns: a prefix match, `*` for any run of characters, a final
  `$` anchoring the end; percent-escapes of unreserved characters are decoded before comparing;
- a reservation other than 0 or 1 is a protocol error: unset for the URLs its rule matches;
- a file that is missing, unreachable or not a JSON array of rules means the site does not use it;
- a page's own `tdm-reservation` (response header or HTML meta) supersedes the file's value for
  that page (crawl/robots_meta.py page_signals takes the file's value as the page's default).

A location written as an absolute URL is read as its path and query; a location that is neither
that nor a path (`/...` or `*...`) is skipped, as is a rule that is not an object. The file is
requested only where the caller's check allows its URL (the crawler passes its address policy and
robots.txt: a site that disallows /.well-known/ to the crawler gets no request for it).
"""
from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from typing import Callable
from urllib.parse import quote, urlsplit

from crawl.fetch import Fetcher
from crawl.origin_cache import OriginCache
from crawl.urls import origin_of

PATH = "/.well-known/tdmrep.json"
MAX_BYTES = 512 * 1024  # a file larger than this is read that far, and is then broken JSON: unset
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
_SAFE = "/?#[]@!$&'()*+,;=:%-._~"


@dataclass(frozen=True)
class TdmRule:
    location: str
    reservation: int | None  # 0, 1, or None: a protocol error (unset where it matches)
    policy: str | None
    pattern: re.Pattern


def _normalized(s: str, safe: str = _SAFE) -> str:
    """Non-ASCII and spaces percent-encoded (UTF-8), escapes of unreserved characters decoded,
    other escapes in upper case: one spelling for one path."""
    def one(m: re.Match) -> str:
        c = chr(int(m.group(1), 16))
        return c if c in _UNRESERVED else "%" + m.group(1).upper()
    return _ESCAPE.sub(one, quote(s, safe=safe))


def _target(url: str) -> str:
    """A URL's path and query as patterns compare with it: a literal `$` or `*` in it is encoded,
    as a pattern must write one (`/path/foo-%24` matches `/path/foo-$`)."""
    parts = urlsplit(url)
    return _normalized((parts.path or "/") + (f"?{parts.query}" if parts.query else ""),
                       _SAFE.replace("$", "").replace("*", ""))


def _compile(location: str) -> re.Pattern | None:
    if location.lower().startswith(("http://", "https://")):
        parts = urlsplit(location)
        location = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    if not location.startswith(("/", "*")):
        return None
    anchored = location.endswith("$")
    body = _normalized(location[:-1] if anchored else location)
    return re.compile(".*".join(re.escape(piece) for piece in body.split("*")) + (r"\Z" if anchored else ""), re.S)


def _reservation(value) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and value in (0, 1):
        return value
    if isinstance(value, str) and value.strip() in ("0", "1"):
        return int(value.strip())
    return None


def parse_tdmrep(text: str) -> list[TdmRule] | None:
    """The file's rules in order, or None when it is not a TDMRep file (not JSON, not an array)."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, list):
        return None
    rules = []
    for item in data:
        if not isinstance(item, dict) or not isinstance(item.get("location"), str):
            continue
        pattern = _compile(item["location"].strip())
        if pattern is None:
            continue
        policy = item.get("tdm-policy")
        rules.append(TdmRule(item["location"], _reservation(item.get("tdm-reservation")),
                             policy if isinstance(policy, str) else None, pattern))
    return rules


def site_reservation(rules: list[TdmRule] | None, url: str) -> int | None:
    """The file's tdm-reservation for `url`: the first matching rule's value; None when unset."""
    if not rules:
        return None
    target = _target(url)
    for rule in rules:
        if rule.pattern.match(target):
            return rule.reservation
    return None


@dataclass
class TdmFile:
    origin: str
    rules: list[TdmRule] | None
    fetched_at: float
    detail: str = ""  # why there are no rules: http_404, not_tdmrep_json, a fetch skip reason
    transient: bool = False  # a failure a later request may not meet (timeout, 5xx, 429): kept error_ttl


class TdmFileCache:
    """One `/.well-known/tdmrep.json` request per origin (thread-safe), kept `ttl` seconds; an
    origin whose file could not be fetched (timeout, 5xx) is asked again after `error_ttl`."""

    def __init__(self, fetcher: Fetcher, ttl: float = 24 * 3600, error_ttl: float = 300,
                 check_address: Callable[[str], str | None] | None = None):
        self.fetcher = fetcher
        self.ttl, self.error_ttl = ttl, error_ttl
        self.check_address = check_address or (lambda u: None)
        self._cache: OriginCache[TdmFile] = OriginCache(
            self._load, lambda f: self.error_ttl if f.transient else self.ttl)

    def _load(self, origin: str) -> TdmFile:
        url = origin + PATH
        reason = self.check_address(url)
        if reason:  # refused by address policy or robots.txt; robots.txt that could not be read is asked again
            return TdmFile(origin, None, time.time(), reason, transient=reason == "robots_unavailable")
        res = self.fetcher.fetch(url, allow=self.check_address, accept_types=None, prefix=MAX_BYTES)
        if res.skip and not res.skip.startswith("http_"):
            return TdmFile(origin, None, time.time(), res.skip, transient=True)
        if not 200 <= res.status < 300:
            return TdmFile(origin, None, time.time(), f"http_{res.status}",
                           transient=res.status >= 500 or res.status == 429)
        rules = parse_tdmrep(res.body[:MAX_BYTES].decode("utf-8-sig", "replace"))
        return TdmFile(origin, rules, time.time(), "" if rules is not None else "not_tdmrep_json")

    def file(self, url: str) -> TdmFile:
        return self._cache.get(origin_of(url))

    def reservation(self, url: str) -> int | None:
        """The site's tdm-reservation for `url` from its file (0, 1), or None: unset."""
        return site_reservation(self.file(url).rules, url)
