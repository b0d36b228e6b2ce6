"""Crawling the URLs of one wave: per host, politely, one request at a time; hosts in parallel.

`WaveCrawler.crawl(entries)` takes frontier entries (dicts in crawl.log_schema.FRONTIER) and
returns page rows (corpus.schemas.PAGES), crawl-log rows (one per decision) and discovered
links (crawl.log_schema.LINKS) for the driver to turn into the next wave's frontier. It holds
the fetcher, robots cache, address policy and renderer for its worker; Beam's DoFn in
pipelines/crawl_pipeline.py creates one in setup() and closes it in teardown().
"""
from __future__ import annotations

import concurrent.futures as cf
import datetime as _dt
from collections import deque
import hashlib
import json
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from corpus.process_cache import ProcessCache
from corpus.schemas import compress_html
from crawl.checkpoint import chunk_key, load_chunk, save_chunk
from crawl.extract import _links, parse_html
from crawl.extract_pool import ExtractPool, page_task_here, shared_pool
from crawl.fetch import (HTML_TYPES, PDF_TYPES, RETRY_STATUSES, FetchConfig, Fetcher, FetchResult, mime_of,
                         page_headers)
from crawl.identity import AGENT_STRING, BOT_TOKEN, OPTOUT_TOKEN
from crawl.meta_refresh import instant_refresh_target
from crawl.pdf import pdf_page_row
from crawl.plain_text import PLAIN_TYPES, plain_page_row
from crawl.politeness import HostClock
from crawl.render import RenderConfig, RenderService
from crawl.render_policy import render_reason
from crawl.robots import RobotsCache
from crawl.robots_meta import page_signals
from crawl.safety import AddressPolicy
from crawl.sitemap import (MAX_LISTED_SITEMAPS, MAX_NESTED_SITEMAPS, MAX_SITEMAP_FILES, MAX_SITEMAP_URLS,
                           read_sitemap)
from crawl.tdmrep import TdmFileCache
from crawl.urls import authority_of, origin_of, try_canonicalize, url_id


@dataclass
class _Rendered:
    """What rendering a page gave (empty when it was not rendered; `error` when rendering failed)."""
    html: str | None = None
    visible_text: str | None = None
    error: str | None = None
    noindex: bool = False   # robots meta tags in the rendered page
    nofollow: bool = False
    reserved: bool = False  # and the training reservations in it (crawl/robots_meta.py)
    images_reserved: bool = False


@dataclass
class CrawlConfig:
    user_agent: str = BOT_TOKEN               # robots.txt product token
    optout_token: str = OPTOUT_TOKEN          # training opt-out token
    agent_string: str = AGENT_STRING          # the User-Agent header
    allow_private: bool = False
    render: str = "auto"                      # auto | always | never
    delay: float = 1.0                        # seconds between requests to one host
    honour_crawl_delay: bool = True
    max_crawl_delay: float = 10.0
    max_parallel_hosts: int = 8
    connect_timeout: float = 5.0
    read_timeout: float = 10.0
    total_timeout: float = 30.0
    max_bytes: int = 5 * 1024 * 1024
    render_max_bytes: int = 24 * 1024 * 1024  # larger cap for pages headed for rendering (single-file JS apps)
    max_redirects: int = 5
    retries: int = 2
    backoff: float = 0.5
    max_retry_after: float = 30.0
    max_requeue: int = 1                      # deferred URLs (5xx, 429, robots unavailable) retried in later waves
    render_timeout_ms: int = 15_000
    render_idle_ms: int = 2_000
    render_workers: int = 1                   # browsers per worker process (each on its own thread)
    render_pages_per_browser: int = 4         # pages rendering at once in one browser (a context each)
    render_context_reuse: int = 1             # pages of one host a browser context renders, wiped between (1: fresh each)
    skip_media: bool = True
    sitemaps: bool = True
    fast_extract: bool | None = None        # trafilatura vote without its fallbacks; None: as the shipped model was trained
    extract_workers: int = 0                  # extraction processes (0: one per core; 1: in the crawler's process)
    keep_raw_html: bool = True
    pdf: bool = True                        # fetch application/pdf too (text layer via crawl.pdf)
    plain_text: bool = True                 # fetch text/plain and text/markdown too (crawl.plain_text)
    tdm_file: bool = True                   # read each origin's /.well-known/tdmrep.json (crawl.tdmrep)
    progress_every: float = 0.0               # seconds between progress lines inside a wave (0: none)
    chunk_size: int = 25                      # URLs per host between checkpoints (see crawl/checkpoint.py)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, o: dict[str, Any]) -> "CrawlConfig":
        return cls(**{k: v for k, v in o.items() if k in cls.__dataclass_fields__})


def now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds")


def log_id(url: str, parent: str | None = None, kind: str = "") -> str:
    return hashlib.sha1(f"{kind}\n{parent or ''}\n{url}".encode("utf-8")).hexdigest()


def link_row(url: str, depth: int, parent: str | None, source: str, retries: int = 0) -> dict[str, Any]:
    return {"id": log_id(url, parent, source), "url": url, "depth": depth, "parent": parent, "source": source,
            "retries": retries}


@dataclass
class WaveOutput:
    pages: list[dict[str, Any]] = field(default_factory=list)
    log: list[dict[str, Any]] = field(default_factory=list)
    links: list[dict[str, Any]] = field(default_factory=list)

    def extend(self, other: "WaveOutput") -> None:
        self.pages += other.pages
        self.log += other.log
        self.links += other.links


def fetch_cap(c: CrawlConfig) -> int:
    """Bytes the fetcher may read for one page: the render cap when rendering is possible, since a
    page's need for a browser is known only once its HTML is in hand (crawler checks max_bytes after)."""
    return max(c.max_bytes, c.render_max_bytes) if c.render != "never" else c.max_bytes


class WaveCrawler:
    def __init__(self, config: CrawlConfig, wave: int = 0):
        self.config = c = config
        self.wave = wave
        self.policy = AddressPolicy(c.allow_private)
        self.fetcher = Fetcher(FetchConfig(user_agent=c.agent_string, connect_timeout=c.connect_timeout,
                                           read_timeout=c.read_timeout, total_timeout=c.total_timeout,
                                           max_bytes=fetch_cap(c), max_redirects=c.max_redirects, retries=c.retries,
                                           backoff=c.backoff, max_retry_after=c.max_retry_after,
                                           accept_types=HTML_TYPES + (PDF_TYPES if c.pdf else ())
                                           + (PLAIN_TYPES if c.plain_text else ()),
                                           ), policy=self.policy)  # connect-time check of every request
        self.robots = RobotsCache(self.fetcher, c.user_agent, c.optout_token, check_address=self.policy.check)
        self.tdm_files = TdmFileCache(self.fetcher, check_address=self.allow) if c.tdm_file else None
        self._renderer: RenderService | None = None
        self._render_lock = threading.Lock()
        self.clocks: dict[str, HostClock] = {}
        self._sitemaps_done: set[str] = set()
        self._done = 0
        self._total = 0
        self._last_report = 0.0
        self._sitemap_lock = threading.Lock()

    # -- shared pieces ------------------------------------------------------------------------
    def allow(self, url: str) -> str | None:
        """Skip reason for fetching `url` (address policy, then robots.txt), or None."""
        reason = self.policy.check(url)
        if reason:
            return reason
        return self.robots.decide(url).reason

    def site_tdm(self, url: str) -> int | None:
        """The site's TDMRep file's tdm-reservation for `url` (0, 1), or None: unset or not read."""
        return self.tdm_files.reservation(url) if self.tdm_files is not None else None

    @property
    def renderer(self) -> RenderService:
        with self._render_lock:
            if self._renderer is None:
                c = self.config
                self._renderer = RenderService(self.allow, self._fetch_subresource, RenderConfig(
                    user_agent=c.agent_string, nav_timeout_ms=c.render_timeout_ms, idle_cap_ms=c.render_idle_ms,
                    skip_media=c.skip_media, pages_per_browser=c.render_pages_per_browser,
                    context_reuse=c.render_context_reuse), workers=c.render_workers)
            return self._renderer

    def _fetch_subresource(self, url: str, headers: dict[str, str] | None = None) -> FetchResult:
        """What the browser asked for, fetched by our fetcher: every redirect hop passes `allow`, and
        connections check the address they reached (the browser resolves no name itself)."""
        return self.fetcher.fetch(url, allow=self.allow, accept_types=None, headers=headers)

    def close(self) -> None:
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None
        self.fetcher.close()

    def clock(self, url: str) -> HostClock:
        host = authority_of(url)
        if host not in self.clocks:
            cd = None
            try:
                cd = self.robots.crawl_delay(url)
            except Exception:  # noqa: BLE001
                cd = None
            self.clocks[host] = HostClock(self.config.delay, cd, self.config.honour_crawl_delay,
                                          self.config.max_crawl_delay)
        return self.clocks[host]

    # -- rows ----------------------------------------------------------------------------------
    def _log(self, e: dict, decision: str, reason: str | None = None, detail: str = "", res: FetchResult | None = None,
             **extra) -> dict[str, Any]:
        row = {"id": log_id(e["url"], f"wave {self.wave}", "decision"), "url": e["url"], "host": e.get("host") or authority_of(e["url"]),
               "depth": e.get("depth", 0), "parent": e.get("parent"), "wave": self.wave, "decision": decision,
               "reason": reason, "detail": (detail or "")[:500], "status": res.status if res else None,
               "fetch_ms": res.fetch_ms if res else None, "bytes": len(res.body) if res else None,
               "rendered": False, "render_reason": None, "training_allowed": None, "robots_noindex": None,
               "robots_nofollow": None, "at": now_iso()}
        row.update(extra)
        return row

    # -- one host ------------------------------------------------------------------------------
    def crawl_host(self, entries: list[dict]) -> WaveOutput:
        pool = shared_pool(self.config.extract_workers)
        if pool is None:
            out = WaveOutput()
            for e in entries:
                try:
                    self._crawl_one(e, out)
                except Exception as ex:  # noqa: BLE001  (one bad page never stops the crawl)
                    out.log.append(self._internal_error(e, ex))
                self._tick()
            return out
        return self._crawl_host_pooled(entries, pool)

    def _internal_error(self, e: dict, ex: BaseException) -> dict[str, Any]:
        return self._log(e, "skipped", "internal_error", f"{type(ex).__name__}: {ex}")

    def _crawl_one(self, e: dict, out: WaveOutput) -> None:
        """One URL with extraction in this process."""
        steps = self._crawl_steps(e, out)
        try:
            task = next(steps)
            while True:
                task = steps.send(page_task_here(*task, self.config.fast_extract))
        except StopIteration:
            pass

    def _crawl_host_pooled(self, entries: list[dict], pool: ExtractPool) -> WaveOutput:
        """Fetch the host's URLs one after another (politeness unchanged) while earlier pages are
        extracted in the pool; each URL's rows go to its own WaveOutput, joined in frontier order, so
        the output is the in-process path's, row for row."""
        out = WaveOutput()
        window: deque = deque()
        ahead = 2 * pool.workers + 2  # pages fetched but not yet finished, per host
        fast = self.config.fast_extract
        for e in entries:
            part = WaveOutput()
            steps = self._crawl_steps(e, part)
            job = None
            try:
                task = next(steps)
                job = (task, pool.submit(task, fast))
            except StopIteration:
                pass
            except Exception as ex:  # noqa: BLE001
                part.log.append(self._internal_error(e, ex))
            window.append((e, part, steps, job))
            while len(window) > ahead:
                self._finish_pooled(window.popleft(), pool, fast, out)
        while window:
            self._finish_pooled(window.popleft(), pool, fast, out)
        return out

    def _finish_pooled(self, item, pool: ExtractPool, fast: bool, out: WaveOutput) -> None:
        e, part, steps, job = item
        if job is not None:
            task, fut = job
            try:
                task = steps.send(pool.result(fut, task, fast))
                while True:  # the page went to the browser: its rendered HTML is extracted now
                    task = steps.send(pool.result(pool.submit(task, fast), task, fast))
            except StopIteration:
                pass
            except Exception as ex:  # noqa: BLE001
                part.log.append(self._internal_error(e, ex))
            finally:
                steps.close()
        out.extend(part)
        self._tick()

    def _tick(self) -> None:
        every = self.config.progress_every
        if not every:
            return
        with self._render_lock:
            self._done += 1
            now = time.monotonic()
            if now - self._last_report < every and self._done < self._total:
                return
            self._last_report = now
            done, total = self._done, self._total
        print(f"[crawl] wave {self.wave}: {done}/{total} URLs done", flush=True)

    def _sitemap_links(self, url: str, out: WaveOutput) -> None:
        with self._sitemap_lock:  # once per origin, however many seeds share it
            if origin_of(url) in self._sitemaps_done:
                return
            self._sitemaps_done.add(origin_of(url))
        entry = self.robots.entry(url)
        maps = entry.sitemaps or [origin_of(url) + "/sitemap.xml"]
        seen_maps = set()
        queue = list(maps)[:MAX_LISTED_SITEMAPS]
        found = 0
        while queue and found < MAX_SITEMAP_URLS:
            sm = queue.pop(0)
            sm_url, _ = try_canonicalize(sm)
            if sm_url is None or sm_url in seen_maps or self.allow(sm_url):
                continue
            seen_maps.add(sm_url)
            clock = self.clock(sm_url)
            clock.wait()
            res = self.fetcher.fetch(sm_url, allow=self.allow, accept_types=None)
            clock.done(res.status, res.fetch_ms, res.retry_after)
            if res.skip or res.status != 200:
                continue
            sm_read = read_sitemap(res.body)
            if sm_read.skip:  # a gzip bomb or a broken file: recorded, never inflated past the cap
                out.log.append(self._log({"url": sm_url, "depth": 0}, "skipped", sm_read.skip,
                                         f"sitemap: {sm_read.detail}", res))
                continue
            queue += sm_read.nested[:MAX_NESTED_SITEMAPS] if len(seen_maps) < MAX_SITEMAP_FILES else []
            for p in sm_read.pages:
                u, _ = try_canonicalize(p)
                if u is not None:
                    out.links.append(link_row(u, 1, sm_url, "sitemap"))
                    found += 1

    def _defer_or_skip(self, e: dict, out: WaveOutput, reason: str, detail: str = "",
                       res: FetchResult | None = None, retryable: bool = True) -> None:
        """A URL that failed for a reason that may pass (robots.txt unreachable, host backing off,
        a 5xx or a dropped connection): queued for a later wave until it has been retried
        `max_requeue` times, then skipped. Each decision is logged with its reason."""
        retries = e.get("retries", 0) or 0
        if retryable and retries < self.config.max_requeue:
            out.links.append(link_row(e["url"], e.get("depth", 0), e.get("parent"), "retry", retries + 1))
            out.log.append(self._log(e, "deferred", reason, detail, res))
        else:
            out.log.append(self._log(e, "skipped", reason, detail, res))

    def _admit(self, e: dict, out: WaveOutput):
        """The robots.txt decision for a URL the address policy and robots.txt let us fetch (the
        seed's sitemaps read on the way); None, with the reason logged, otherwise."""
        url = e["url"]
        reason = self.policy.check(url)
        if reason:
            out.log.append(self._log(e, "skipped", reason))
            return None
        decision = self.robots.decide(url)
        if decision.reason == "robots_unavailable":
            self._defer_or_skip(e, out, "robots_unavailable", self.robots.entry(url).detail)
            return None
        if not decision.allowed:
            out.log.append(self._log(e, "skipped", "robots"))
            return None
        if self.config.sitemaps and e.get("source") == "seed":
            self._sitemap_links(url, out)
        return decision

    def _fetch_politely(self, e: dict, out: WaveOutput) -> FetchResult | None:
        """The response, fetched after the host's delay; None, logged, when the host asked us to
        stay away (Retry-After, repeated 429/503) or the fetch failed. A redirect target is
        recorded as a link (the page is stored under the requested URL)."""
        url = e["url"]
        clock = self.clock(url)
        if clock.pending_wait() > self.config.max_retry_after:
            self._defer_or_skip(e, out, "host_backoff", f"{clock.pending_wait():.0f}s")
            return None
        clock.wait()
        res = self.fetcher.fetch(url, allow=self.allow)
        clock.done(res.status, res.fetch_ms, res.retry_after)
        if res.skip:
            # a timeout is not retried: the host would hold a later wave as long again
            transient = res.skip != "timeout" and (res.status in RETRY_STATUSES or res.skip == "connection_error")
            self._defer_or_skip(e, out, res.skip, res.detail, res, retryable=transient)
            return None
        if res.final_url != url:
            out.links.append(link_row(res.final_url, e.get("depth", 0), url, "redirect"))
        return res

    def _crawl_steps(self, e: dict, out: WaveOutput):
        """One URL, as a generator: it yields (html, url, render_mode) when the page needs CPU work
        and takes extract_pool.page_task's answer back by send(), so the caller decides where that
        runs. With `--render auto` the render decision (a full parse of a page with scripts) goes
        with the extraction in that one task; a page it sends to the browser then yields again
        with its rendered HTML (render_mode None)."""
        c = self.config
        decision = self._admit(e, out)
        if decision is None:
            return
        res = self._fetch_politely(e, out)
        if res is None:
            return
        if mime_of(res.content_type) in PDF_TYPES:
            return self._pdf_page(e, res, decision, out)
        if mime_of(res.content_type) in PLAIN_TYPES:
            return self._plain_page(e, res, decision, out)
        url, final, html = e["url"], res.final_url, res.html or ""
        target = instant_refresh_target(html, final)
        if target is not None:   # <meta http-equiv="refresh" content="0; url=...">: a redirect
            canon, _ = try_canonicalize(target)
            if canon is not None:
                out.links.append(link_row(canon, e.get("depth", 0), url, "redirect"))
            out.log.append(self._log(e, "skipped", "meta_refresh", target, res))
            return
        noindex, nofollow, reserved, images_reserved = page_signals(
            html, res.headers.get("x-robots-tag"), res.headers.get("tdm-reservation"), c.user_agent,
            self.site_tdm(final))
        final_decision = self.robots.decide(final) if final != url else decision
        big = len(res.body) > c.max_bytes
        decide_in_task = c.render == "auto" and not noindex and not big
        why_render = render_reason(html, c.render) if not (noindex or decide_in_task) else None
        ex = None
        if decide_in_task:
            why_render, ex = yield html, final, c.render
        if big and not why_render:
            # only pages headed for rendering may use the larger render cap
            out.log.append(self._log(e, "skipped", "too_large", f"{len(res.body)} bytes > max_bytes {c.max_bytes} "
                                     "and not headed for rendering", res))
            return
        rendered = self._render(final, res) if why_render else _Rendered()
        noindex, nofollow = noindex or rendered.noindex, nofollow or rendered.nofollow
        if ex is None and not noindex:
            _, ex = yield rendered.html or html, final, None
        if ex is not None and not ex.text and rendered.visible_text and rendered.visible_text.strip():
            # no block passed as main content: what the browser shows beats nothing
            ex.text, ex.error = rendered.visible_text.strip(), "main_content_from_inner_text"
        reserved = reserved or rendered.reserved  # a reservation a script wrote counts too
        images_reserved = images_reserved or rendered.images_reserved
        page = self._page_row(e, res, html, rendered.html, ex, noindex, nofollow,
                              bool(final_decision.training_allowed) and not noindex and not reserved)
        if images_reserved and page["images"]:  # noimageai: the text stays, its images are not for training
            page["images"] = []
        out.pages.append(page)
        detail = ex.error if ex and ex.error else (f"render failed: {rendered.error}" if rendered.error else "")
        out.log.append(self._log(e, "fetched", None, detail, res, rendered=rendered.html is not None,
                                 render_reason=why_render, training_allowed=page["training_allowed"],
                                 robots_noindex=noindex, robots_nofollow=nofollow))
        self._page_links(e, out, ex, html, final, nofollow)

    def _render(self, final: str, res: FetchResult) -> "_Rendered":
        """The page as the browser shows it, with the robots meta tags its scripts wrote."""
        r = self.renderer.render(final, res.body, res.content_type or "text/html")
        if not r.html:
            return _Rendered(error=r.error)
        noindex, nofollow, reserved, images_reserved = page_signals(r.html, None, None, self.config.user_agent)
        return _Rendered(r.html, r.visible_text, None, noindex, nofollow, reserved, images_reserved)

    def _page_row(self, e: dict, res: FetchResult, html: str, rendered_html: str | None, ex,
                  noindex: bool, nofollow: bool, training_allowed: bool) -> dict[str, Any]:
        """The PAGES row of a fetched HTML page (`ex`: its Extraction, None when noindex)."""
        url = e["url"]
        headers = page_headers(res.headers)
        return {
            "id": url_id(url), "url": url, "final_url": res.final_url, "host": authority_of(url),
            "depth": e.get("depth", 0), "status": res.status, "fetched_at": now_iso(), "fetch_ms": res.fetch_ms,
            "content_type": res.content_type, "encoding": res.encoding, "headers": headers,
            # decoded to UTF-8 like every compressed HTML column (corpus.schemas); `encoding` says from what
            "raw_html_zstd": compress_html(html) if (self.config.keep_raw_html and not noindex) else None,
            "rendered_html_zstd": compress_html(rendered_html) if (rendered_html and not noindex) else None,
            "rendered": rendered_html is not None, "robots_noindex": noindex, "robots_nofollow": nofollow,
            "training_allowed": training_allowed,
            "title": ex.title if ex else None, "text": ex.text if ex else None,
            "language_hint": (ex.language_hint if ex else None) or _lang_header(res.headers),
            "author": ex.author if ex else None, "date": ex.date if ex else None,
            "canonical_url": ex.canonical_url if ex else None,
            "images": ex.images if ex else [], "tables": ex.tables if ex else [],
            "outlinks": [] if (ex is None or nofollow) else ex.outlinks, "source": "crawl",
        }

    def _page_links(self, e: dict, out: WaveOutput, ex, html: str, final: str, nofollow: bool) -> None:
        """The page's bad links (logged) and, unless nofollow, its links for the next wave."""
        url = e["url"]
        if ex is not None:
            for href, why in ex.bad_links:
                out.log.append({**self._log({"url": href, "host": authority_of(url), "depth": e.get("depth", 0) + 1,
                                             "parent": url}, "skipped", why, "bad link on page"),
                                "id": log_id(href, url, "badlink")})
        if not nofollow:
            links = ex.outlinks if ex is not None else _links_only(html, final)
            for ln in links:
                out.links.append(link_row(ln["url"], e.get("depth", 0) + 1, url, "link"))

    def _too_large(self, e: dict, res: FetchResult, out: WaveOutput) -> bool:
        """Whether a document that is never rendered (PDF, text file) is past --max-bytes; logged if so
        (the fetcher may have read up to the render cap)."""
        if len(res.body) <= self.config.max_bytes:
            return False
        out.log.append(self._log(e, "skipped", "too_large",
                                 f"{len(res.body)} bytes > max_bytes {self.config.max_bytes}", res))
        return True

    def _pdf_page(self, e: dict, res: FetchResult, decision, out: WaveOutput) -> None:
        """A fetched PDF: its text layer as a pages row (crawl.pdf: page, byte and time caps), or a
        skip with crawl.pdf's refusal reason (pdf:encrypted, pdf:broken, pdf:too_many_pages ...)."""
        c, url = self.config, e["url"]
        if self._too_large(e, res, out):
            return
        row, why = pdf_page_row(url, res.body, res.status, res.content_type, now_iso(), "crawl")
        if row is None:
            out.log.append(self._log(e, "skipped", why or "pdf:broken", "PDF refused", res))
            return
        final_decision = self.robots.decide(res.final_url) if res.final_url != url else decision
        # a PDF has no <meta name="robots">: X-Robots-Tag is its only page-level directive
        noindex, nofollow, reserved, _ = page_signals(None, res.headers.get("x-robots-tag"),
                                                      res.headers.get("tdm-reservation"), c.user_agent,
                                                      self.site_tdm(res.final_url))
        training = bool(final_decision.training_allowed) and not noindex and not reserved
        row.update({"final_url": res.final_url, "depth": e.get("depth", 0), "fetch_ms": res.fetch_ms,
                    "headers": page_headers(res.headers), "training_allowed": training,
                    "robots_noindex": noindex, "robots_nofollow": nofollow})
        if noindex:  # as for HTML: the row stays (crawled), its text never reaches the corpus
            row["text"] = None
        out.pages.append(row)
        out.log.append(self._log(e, "fetched", None, "pdf", res, training_allowed=training, robots_noindex=noindex,
                                 robots_nofollow=nofollow))

    def _plain_page(self, e: dict, res: FetchResult, decision, out: WaveOutput) -> None:
        """A fetched text file: its body is the text (crawl.plain_text), or a skip: too_large past
        --max-bytes, plain:machine_file for robots.txt and the like."""
        c, url = self.config, e["url"]
        if self._too_large(e, res, out):
            return
        row, why = plain_page_row(url, res.html or "", res.encoding, res.status, res.content_type,
                                  res.headers.items(), now_iso(), "crawl", c.user_agent, self.site_tdm(res.final_url))
        if row is None:
            out.log.append(self._log(e, "skipped", why, "not a document", res))
            return
        final_decision = self.robots.decide(res.final_url) if res.final_url != url else decision
        training = bool(final_decision.training_allowed) and row["training_allowed"]
        row.update({"final_url": res.final_url, "depth": e.get("depth", 0), "fetch_ms": res.fetch_ms,
                    "training_allowed": training})
        out.pages.append(row)
        out.log.append(self._log(e, "fetched", None, "plain text", res, training_allowed=training,
                                 robots_noindex=row["robots_noindex"], robots_nofollow=row["robots_nofollow"]))

    # -- a wave --------------------------------------------------------------------------------
    def crawl_host_checkpointed(self, entries: list[dict], partial_dir: str | None) -> WaveOutput:
        """crawl_host in chunks; each finished chunk is saved under partial_dir and reused on a redo."""
        if not partial_dir:
            return self.crawl_host(entries)
        out = WaveOutput()
        size = max(1, self.config.chunk_size)
        for i in range(0, len(entries), size):
            chunk = entries[i:i + size]
            key = chunk_key(self.wave, chunk)
            saved = load_chunk(partial_dir, key)
            if saved is not None:
                out.extend(WaveOutput(saved["pages"], saved["log"], saved["links"]))
                for _ in chunk:
                    self._tick()
                continue
            part = self.crawl_host(chunk)
            save_chunk(partial_dir, key, {"pages": part.pages, "log": part.log, "links": part.links})
            out.extend(part)
        return out

    def crawl(self, entries: list[dict], wave: int | None = None, partial_dir: str | None = None) -> WaveOutput:
        if wave is not None:
            self.wave = wave
        self._done, self._total = 0, len(entries)
        by_host: dict[str, list[dict]] = {}
        for e in entries:
            by_host.setdefault(e.get("host") or authority_of(e["url"]), []).append(e)
        out = WaveOutput()
        if len(by_host) <= 1 or self.config.max_parallel_hosts <= 1:
            for h in sorted(by_host):
                out.extend(self.crawl_host_checkpointed(by_host[h], partial_dir))
            return out
        with cf.ThreadPoolExecutor(max_workers=min(self.config.max_parallel_hosts, len(by_host))) as pool:
            for part in pool.map(lambda h: self.crawl_host_checkpointed(by_host[h], partial_dir), sorted(by_host)):
                out.extend(part)
        return out


def _lang_header(headers: dict[str, str]) -> str | None:
    v = headers.get("content-language")
    return v.split(",")[0].strip().lower() if v else None


def _links_only(html: str, base: str) -> list[dict[str, str]]:
    doc = parse_html(html)
    return _links(doc, base)[0] if doc is not None else []


# One crawler per worker process and config (key: the config as sorted JSON), kept across waves:
# the robots.txt cache, connection pools and the browser survive from one wave's pipeline to the
# next. Owner: this module; the crawl driver empties it (close_shared) when the crawl ends.
CRAWLERS: ProcessCache[WaveCrawler] = ProcessCache("crawlers", close=WaveCrawler.close)


def shared_crawler(config: CrawlConfig) -> WaveCrawler:
    return CRAWLERS.get(json.dumps(config.to_json(), sort_keys=True), lambda: WaveCrawler(config))


def close_shared() -> None:
    CRAWLERS.clear()
