"""HTTP(S) fetching with the limits a crawler needs: timeouts, size cap, content-type filter,
redirects checked hop by hop, loop detection, retries with backoff.

`Fetcher.fetch(url, allow)` follows redirects itself so that every hop passes `allow(url)`
(robots.txt, private addresses, scheme): a redirect can never lead the crawler to a URL it may
not fetch. Failures come back as a `FetchResult` with `skip` set to a crawl-log reason; nothing
here raises on bad servers or bad bytes.
"""
from __future__ import annotations

import email.utils
import random
import socket
import time
from dataclasses import dataclass, field
from typing import Callable

import urllib3

from crawl.charset import decode_html, looks_binary
from crawl.deadlines import WATCHDOG, deadlined
from crawl.identity import AGENT_STRING
from crawl.safety import AddressPolicy
from crawl.urls import try_canonicalize

HTML_TYPES = ("text/html", "application/xhtml+xml")
PDF_TYPES = ("application/pdf", "application/x-pdf")  # kept as bytes for crawl.pdf
KEEP_HEADERS = ("content-type", "content-length", "content-language", "last-modified", "etag", "server",
                "x-robots-tag", "link", "retry-after", "date", "cache-control", "tdm-reservation", "tdm-policy")
RETRY_STATUSES = (429, 500, 502, 503, 504)
PAGE_HEADERS = ("content-type", "content-language", "last-modified", "etag", "x-robots-tag", "server", "date",
                "tdm-reservation", "tdm-policy")


@dataclass
class FetchConfig:
    user_agent: str = AGENT_STRING
    connect_timeout: float = 5.0
    read_timeout: float = 10.0
    total_timeout: float = 30.0       # wall-clock cap on one response, headers and body (slow-drip servers)
    max_bytes: int = 5 * 1024 * 1024
    max_redirects: int = 5
    retries: int = 2
    backoff: float = 0.5              # seconds, doubled per retry, with jitter
    max_retry_after: float = 30.0     # Retry-After longer than this: give up on the URL for now
    accept_types: tuple[str, ...] = HTML_TYPES
    block_private: bool = False       # without a policy: refuse connections to non-global addresses (DNS rebinding)


@dataclass
class FetchResult:
    url: str
    final_url: str
    status: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    content_type: str = ""
    encoding: str | None = None
    html: str | None = None
    fetch_ms: float = 0.0
    skip: str | None = None           # crawl-log reason when the page is not usable
    detail: str = ""
    redirects: list[str] = field(default_factory=list)
    retry_after: float | None = None
    attempts: int = 0

    @property
    def ok(self) -> bool:
        return self.skip is None


def merged_headers(items, keep: tuple[str, ...] | None = None) -> dict[str, str]:
    """(name, value) pairs of a response -> {lower-case name: value}, only the names in `keep` when
    given. A header sent several times keeps every value: joined by ", " (HTTP's list syntax), but
    X-Robots-Tag's by newlines, so that "noindex" in one header and "otherbot: nofollow" in the next
    stay two rules (crawl/robots_meta.py reads a line per header; a plain dict kept only the last)."""
    out: dict[str, str] = {}
    for k, v in items:
        k = k.lower()
        if keep is None or k in keep:
            out[k] = v if k not in out else out[k] + ("\n" if k == "x-robots-tag" else ", ") + v
    return out


def parse_retry_after(value: str | None) -> float | None:
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
        return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def mime_of(content_type: str) -> str:
    return content_type.split(";")[0].strip().lower()


def page_headers(headers: dict[str, str]) -> list[dict[str, str]]:
    """The response headers a PAGES row keeps (PAGE_HEADERS), values cut at 1,000 characters."""
    return [{"name": k, "value": v[:1000]} for k, v in sorted(headers.items()) if k in PAGE_HEADERS]


class PrivateAddressRefused(urllib3.exceptions.NewConnectionError):
    pass


def _guarded(conn_cls, refused: Callable[[str], bool]):
    """A connection class that checks the address it actually connected to, before sending a byte:
    a host that resolved to a public address when the crawler checked it cannot rebind to
    127.0.0.1 (or a metadata address) afterwards."""

    class Guarded(conn_cls):
        def _new_conn(self):
            sock = super()._new_conn()
            try:
                peer = sock.getpeername()[0]
            except OSError:
                peer = None
            if peer is None or refused(peer):
                sock.close()
                raise PrivateAddressRefused(self, f"refused address {peer} (not globally routable)")
            return sock

    Guarded.__name__ = "Guarded" + conn_cls.__name__
    return Guarded


def _install_connections(pm: urllib3.PoolManager, refused: Callable[[str], bool] | None) -> None:
    """Connection classes for every pool of `pm`: each request's socket is attached to its deadline
    (crawl/deadlines.py), and with `refused`, the peer address is checked (_guarded)."""
    from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool  # noqa: PLC0415

    def cls(base):
        return deadlined(_guarded(base, refused) if refused is not None else base)

    class HTTPPool(HTTPConnectionPool):
        ConnectionCls = cls(HTTPConnectionPool.ConnectionCls)

    class HTTPSPool(HTTPSConnectionPool):
        ConnectionCls = cls(HTTPSConnectionPool.ConnectionCls)

    pm.pool_classes_by_scheme = {"http": HTTPPool, "https": HTTPSPool}


class Fetcher:
    """Thread-safe; one connection pool per host (urllib3), connections reused across pages.

    `policy` (crawl.safety.AddressPolicy) checks every connection's peer address; without one,
    `config.block_private` builds the default policy."""

    def __init__(self, config: FetchConfig | None = None, sleep: Callable[[float], None] = time.sleep,
                 policy: AddressPolicy | None = None):
        self.config = config or FetchConfig()
        if policy is None and self.config.block_private:
            policy = AddressPolicy(allow_private=False)
        self.sleep = sleep
        self.pool = urllib3.PoolManager(num_pools=64, maxsize=2, retries=False,
                                        timeout=urllib3.Timeout(connect=self.config.connect_timeout,
                                                                read=self.config.read_timeout),
                                        headers={"User-Agent": self.config.user_agent,
                                                 "Accept": "text/html,application/xhtml+xml;q=0.9,application/pdf;q=0.8,*/*;q=0.5",
                                                 "Accept-Encoding": "gzip, deflate"})
        _install_connections(self.pool, policy.refused_peer if policy is not None and not policy.allow_private
                             else None)

    def close(self) -> None:
        self.pool.clear()

    def _headers(self, extra: dict[str, str]) -> dict[str, str]:
        """The fetcher's headers with `extra` on top (case-insensitively); User-Agent and
        Accept-Encoding always stay the fetcher's."""
        extra = {k: v for k, v in extra.items() if k.lower() not in ("user-agent", "accept-encoding", "host")}
        keys = {k.lower() for k in extra}
        return {**{k: v for k, v in self.pool.headers.items() if k.lower() not in keys}, **extra}

    # -- one request, no redirects ----------------------------------------------------------
    def _request(self, url: str, accept_types: tuple[str, ...] | None, headers: dict[str, str] | None = None,
                 prefix: int | None = None) -> FetchResult:
        """One request under the wall-clock deadline `total_timeout` (crawl/deadlines.py): a server
        that trickles its headers or body is cut off then and the page is a timeout."""
        t0 = time.monotonic()
        token = WATCHDOG.arm(t0 + self.config.total_timeout)
        try:
            res = self._request_once(url, accept_types, headers, t0, token, prefix)
        finally:
            fired = WATCHDOG.disarm(token)
        if fired:
            res.skip, res.detail, res.body = "timeout", f"response slower than {self.config.total_timeout}s", b""
        return res

    def _request_once(self, url: str, accept_types: tuple[str, ...] | None, headers: dict[str, str] | None,
                      t0: float, token: int, prefix: int | None) -> FetchResult:
        cfg = self.config
        res = FetchResult(url=url, final_url=url)
        try:
            r = self.pool.request("GET", url, redirect=False, preload_content=False, decode_content=True,
                                  headers=self._headers(headers) if headers else None)
        except urllib3.exceptions.MaxRetryError as e:
            res.skip, res.detail = _error_reason(e.reason), str(e.reason)[:200]
            res.fetch_ms = (time.monotonic() - t0) * 1000
            return res
        except (urllib3.exceptions.HTTPError, OSError, ValueError) as e:
            res.skip, res.detail = _error_reason(e), str(e)[:200]
            res.fetch_ms = (time.monotonic() - t0) * 1000
            return res
        complete = False  # only a fully read response may hand its connection back to the pool
        try:
            res.status = r.status
            res.headers = merged_headers(r.headers.items(), KEEP_HEADERS + ("location",))
            res.content_type = r.headers.get("content-type", "")
            res.retry_after = parse_retry_after(r.headers.get("retry-after"))
            if r.status >= 300:
                clen = r.headers.get("content-length")
                if clen and clen.isdigit() and int(clen) <= 65536:
                    r.drain_conn()  # small redirect/error bodies: read and keep the connection
                    complete = True
                return res
            mime = mime_of(res.content_type)
            if accept_types is not None and mime and mime not in accept_types:
                res.skip, res.detail = "wrong_type", mime
                return res
            clen = r.headers.get("content-length")
            if prefix is None and clen and clen.isdigit() and int(clen) > cfg.max_bytes:
                res.skip, res.detail = "too_large", f"content-length {clen}"
                return res
            chunks, size = [], 0
            for chunk in r.stream(65536):
                chunks.append(chunk)
                size += len(chunk)
                if prefix is not None and size >= prefix:   # keep the head, leave the rest unread
                    res.body = b"".join(chunks)[:prefix]
                    return res
                if size > cfg.max_bytes:
                    res.skip, res.detail = "too_large", f">{cfg.max_bytes} bytes"
                    return res
            res.body = b"".join(chunks)
            complete = True
        except (urllib3.exceptions.HTTPError, OSError, ValueError) as e:
            res.skip, res.detail = _error_reason(e), str(e)[:200]
        finally:
            res.fetch_ms = (time.monotonic() - t0) * 1000
            if complete and not WATCHDOG.fired(token):   # a socket shut down at the deadline is not reused
                r.release_conn()
            else:
                r.close()
        return res

    # -- with retries -----------------------------------------------------------------------
    def _request_retrying(self, url: str, accept_types, headers: dict[str, str] | None = None,
                          prefix: int | None = None) -> FetchResult:
        cfg = self.config
        attempt = 0
        while True:
            res = self._request(url, accept_types, headers, prefix)
            res.attempts = attempt + 1
            retryable = res.skip in ("timeout", "connection_error") or res.status in RETRY_STATUSES
            if not retryable or attempt >= cfg.retries or (res.skip == "timeout" and attempt >= 1):
                return res  # a page that timed out gets one more try, not `retries`: timeouts are slow
            wait = cfg.backoff * (2 ** attempt) * (1 + random.random() * 0.25)
            if res.retry_after is not None:
                if res.retry_after > cfg.max_retry_after:
                    return res
                wait = max(wait, res.retry_after)
            self.sleep(wait)
            attempt += 1

    def fetch(self, url: str, allow: Callable[[str], str | None] = lambda u: None,
              accept_types: tuple[str, ...] | None | bool = True, headers: dict[str, str] | None = None,
              prefix: int | None = None) -> FetchResult:
        """GET `url` following up to max_redirects hops, each checked by `allow` (-> skip reason).

        accept_types=True uses the configured HTML types; None accepts anything (robots.txt).
        `headers` are sent on top of the fetcher's own (User-Agent, Accept-Encoding stay ours).
        `prefix`: keep the first `prefix` bytes of a longer body instead of refusing it as too_large
        (robots.txt, of which RFC 9309 parses the first 500 KiB)."""
        types = self.config.accept_types if accept_types is True else accept_types
        seen = {url}
        hops: list[str] = []
        current = url
        total_ms = 0.0
        while True:
            res = self._request_retrying(current, types, headers, prefix)
            total_ms += res.fetch_ms
            res.url, res.redirects, res.fetch_ms = url, list(hops), total_ms
            if not (300 <= res.status < 400 and res.status != 304) or res.skip:
                break
            loc = res.headers.get("location")
            if not loc:
                res.skip, res.detail = "bad_redirect", "no Location header"
                break
            nxt, why = try_canonicalize(loc, base=current)
            if nxt is None:
                res.skip, res.detail = "bad_redirect", f"{why}: {loc[:200]}"
                break
            if nxt in seen:
                res.skip, res.detail = "redirect_loop", nxt
                break
            if len(hops) >= self.config.max_redirects:
                res.skip, res.detail = "too_many_redirects", nxt
                break
            reason = allow(nxt)
            if reason:
                res.skip, res.detail = f"redirect_{reason}", nxt
                break
            seen.add(nxt)
            hops.append(nxt)
            current = nxt
        res.final_url = current
        if res.skip is None and res.status >= 400:
            res.skip, res.detail = f"http_{res.status}", ""
        if res.skip is None and res.body and types is not None:
            if mime_of(res.content_type) in PDF_TYPES:
                pass  # a document: the body stays bytes, crawl.pdf reads it
            elif looks_binary(res.body):
                res.skip, res.detail = "binary_content", res.content_type
            else:
                res.html, res.encoding = decode_html(res.body, res.content_type)
        return res


def _error_reason(e: BaseException) -> str:
    if isinstance(e, PrivateAddressRefused):
        return "private_address"
    if isinstance(e, (urllib3.exceptions.TimeoutError, socket.timeout, TimeoutError)):
        return "timeout"
    if isinstance(e, urllib3.exceptions.ProtocolError) and "timed out" in str(e):
        return "timeout"
    if isinstance(e, urllib3.exceptions.LocationParseError):
        return "invalid_url"
    if isinstance(e, urllib3.exceptions.SSLError):
        return "tls_error"
    return "connection_error"
