"""Fetching images through the crawl package: same robots.txt, opt-out token, politeness and
private-address rules as page crawling (crawl/), with an image-sized byte cap.

One `ImageFetcher` per worker. `fetch(url)` waits on the host's clock (crawl.politeness), asks
the address policy and robots.txt (every redirect hop too), and returns an `ImageFetch` whose
`reason` names why nothing usable came back (`fetch_robots`, `fetch_http_404`, `fetch_timeout`,
`fetch_private_address`, `image_training_optout`, ...). Nothing here raises on bad servers.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from crawl.fetch import FetchConfig, Fetcher
from crawl.identity import AGENT_STRING, BOT_TOKEN, OPTOUT_TOKEN
from crawl.politeness import HostClock
from crawl.robots import RobotsCache
from crawl.robots_meta import image_not_for_training
from crawl.safety import AddressPolicy
from crawl.tdmrep import TdmFileCache
from crawl.urls import authority_of, try_canonicalize


@dataclass(frozen=True)
class ImageFetchConfig:
    user_agent: str = BOT_TOKEN
    optout_token: str = OPTOUT_TOKEN
    agent_string: str = AGENT_STRING
    allow_private: bool = False
    delay: float = 1.0                 # seconds between requests to one host (Crawl-delay wins if larger)
    max_crawl_delay: float = 10.0
    connect_timeout: float = 5.0
    read_timeout: float = 10.0
    total_timeout: float = 20.0        # wall-clock cap on one image body
    max_bytes: int = 20 * 1024 * 1024
    retries: int = 1
    tdm_file: bool = True              # read each origin's /.well-known/tdmrep.json (crawl.tdmrep)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class ImageFetch:
    url: str
    final_url: str
    reason: str | None
    detail: str = ""
    status: int = 0
    content_type: str = ""
    body: bytes = b""
    fetch_ms: float = 0.0
    training_allowed: bool = True


class ImageFetcher:
    def __init__(self, cfg: ImageFetchConfig = ImageFetchConfig()):

        self.cfg = cfg
        self.policy = AddressPolicy(cfg.allow_private)
        self.fetcher = Fetcher(FetchConfig(user_agent=cfg.agent_string, connect_timeout=cfg.connect_timeout,
                                           read_timeout=cfg.read_timeout, total_timeout=cfg.total_timeout,
                                           max_bytes=cfg.max_bytes, retries=cfg.retries, accept_types=()),
                               policy=self.policy)  # the same policy checks each connection's peer (DNS rebinding)
        self.robots = RobotsCache(self.fetcher, cfg.user_agent, cfg.optout_token, check_address=self.policy.check)
        self.tdm_files = TdmFileCache(self.fetcher, check_address=self.allow) if cfg.tdm_file else None
        self.clocks: dict[str, Any] = {}

    def _clock(self, url: str):

        host = authority_of(url)
        if host not in self.clocks:
            try:
                cd = self.robots.crawl_delay(url)
            except Exception:  # noqa: BLE001  (an unreadable robots.txt has no Crawl-delay)
                cd = None
            self.clocks[host] = HostClock(self.cfg.delay, cd, True, self.cfg.max_crawl_delay)
        return self.clocks[host]

    def allow(self, url: str) -> str | None:
        reason = self.policy.check(url)
        return reason or self.robots.decide(url).reason

    def fetch(self, url: str) -> ImageFetch:

        canon, why = try_canonicalize(url or "")
        if canon is None:
            return ImageFetch(url, url, f"fetch_{why or 'invalid_url'}")
        reason = self.policy.check(canon)
        if reason:
            return ImageFetch(url, canon, f"fetch_{reason}")
        decision = self.robots.decide(canon)
        if not decision.allowed:
            return ImageFetch(url, canon, f"fetch_{decision.reason or 'robots'}")
        clock = self._clock(canon)
        clock.wait()
        res = self.fetcher.fetch(canon, allow=self.allow, accept_types=None)
        clock.done(res.status, res.fetch_ms, res.retry_after)
        out = ImageFetch(url, res.final_url, None, res.detail, res.status, res.content_type, res.body, res.fetch_ms,
                         training_allowed=bool(decision.training_allowed))
        if res.skip:
            out.reason, out.body = f"fetch_{res.skip}", b""
        elif res.final_url != canon and not self.robots.decide(res.final_url).training_allowed:
            out.training_allowed = False
        if not res.skip:
            site_tdm = self.tdm_files.reservation(res.final_url) if self.tdm_files is not None else None
            if image_not_for_training(res.headers.get("x-robots-tag"), res.headers.get("tdm-reservation"),
                                      (self.robots.user_agent,), site_tdm):
                out.training_allowed = False
        return out

    def close(self) -> None:
        self.fetcher.close()


__all__ = ["ImageFetchConfig", "ImageFetcher", "ImageFetch"]
