"""Headless rendering with Playwright and Debian's Chromium: the DOM after JavaScript ran.

One browser per worker thread, several pages rendering at once in each browser: rendering is
mostly waiting for scripts and subresources, so one page's wait overlaps another's. By default
each page gets a fresh context (no cookies, storage or cache carried between pages or hosts).
A fresh context costs Chromium a new renderer process, about 0.4-0.8 s of CPU, far more than
rendering a simple page; `context_reuse=N` lets one context render up to N pages of one host
(never another host), wiped between pages: session storage and window.name cleared, the page
sent to about:blank, cookies and every origin's storage it touched (local storage, IndexedDB,
cache storage, service workers) deleted.

The browser never touches the network itself. Every request a page makes goes through a route
handler that refuses non-http(s) URLs, URLs robots.txt disallows and private addresses (the
`allow` callback), and optionally fonts and media; what is allowed is fetched by the crawler's
own fetcher (the `fetch(url, headers)` callback: its connections check the address they actually
reached, so a host that rebinds its DNS to 127.0.0.1 after the check gets nothing) and handed to
the page. Only GET/HEAD pass (a crawler reads; no forms, beacons or POSTed queries), with the
page's Accept, Accept-Language, Referer and X-Requested-With; no cookies.
Chromium's own resolver maps every name to "not found", so preconnects and DNS prefetches
resolve nothing either. The main document is served from the bytes the crawler already fetched,
so rendering never fetches a page twice. Dialogs are dismissed, popups closed, downloads
refused; the page is scrolled to trigger lazy content and counted as settled when none of its
requests has been in the route handler for `quiet_ms` (capped by `idle_cap_ms`).

Playwright runs on asyncio here: each browser owns an event loop on its own thread, and
`RenderService.render` (thread-safe, blocking) hands pages to the least busy one.
"""
from __future__ import annotations

import asyncio
import concurrent.futures as cf
import os
import threading
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit
from typing import Any, Callable

from crawl.identity import AGENT_STRING
from crawl.visibility import HIDDEN_ATTR

CHROMIUM = os.environ.get("CIDERMILL_CHROMIUM", "/usr/bin/chromium")
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               "--disable-dev-shm-usage", "--dns-prefetch-disable",
               # every request is answered by the route handler; Chromium itself resolves no name
               "--host-resolver-rules=MAP * ~NOTFOUND",
               "--force-webrtc-ip-handling-policy=disable_non_proxied_udp"]
FORWARD_HEADERS = ("content-type", "content-language", "last-modified", "etag", "cache-control")
REQUEST_HEADERS = ("accept", "accept-language", "referer", "x-requested-with")  # passed on from the page


@dataclass
class RenderConfig:
    user_agent: str = AGENT_STRING
    nav_timeout_ms: int = 15_000
    idle_cap_ms: int = 3_000           # after load, wait for the network to settle at most this long
    scroll_steps: int = 3
    quiet_ms: int = 200                # no request in the route handler for this long: settled
    poll_ms: int = 25
    skip_media: bool = True            # fonts, images, audio, video (the DOM keeps their URLs)
    executable: str = CHROMIUM
    viewport: tuple[int, int] = (1280, 2000)
    pages_per_browser: int = 4         # pages rendering at once in one browser, each in its own context
    context_reuse: int = 1             # pages one context renders (one host only, wiped between): 1 = fresh each
    max_html_chars: int = 40_000_000   # a rendered DOM larger than this is not kept (render_too_large)


@dataclass
class RenderResult:
    html: str | None = None            # the rendered DOM; elements the browser does not draw carry HIDDEN_ATTR
    visible_text: str | None = None    # the browser's innerText of the body: what a visitor reads
    final_url: str | None = None
    error: str | None = None
    render_ms: float = 0.0
    blocked: list[tuple[str, str]] = field(default_factory=list)  # (url, reason)
    requests: int = 0
    context_page: int = 0              # 1: the context's first page; above 1: a reused, wiped context


# Marks, in the rendered DOM, every element the browser does not draw (computed display:none or
# visibility:hidden), so the extractor skips it exactly as a visitor would; returns the body's innerText.
# An element whose computed white-space keeps line breaks (pre, pre-wrap, pre-line, break-spaces: a
# stylesheet's rule, which the saved DOM would lose) where its parent's does not gets that value as
# an inline style, which the block extractor reads (crawl/extract_blocks.py), so its text keeps its lines.
_MARK_HIDDEN_JS = """(limit) => {
  const root = document.body || document.documentElement;
  if (!root) return '';
  const keepsLines = (ws) => ws.startsWith('pre') || ws === 'break-spaces';
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT, {acceptNode(el) {
    const s = getComputedStyle(el);
    if (s.display === 'none' || s.visibility === 'hidden') {
      el.setAttribute('%s', '');
      return NodeFilter.FILTER_REJECT;
    }
    const ws = s.whiteSpace || '';
    if (keepsLines(ws) && el.tagName !== 'PRE' && el.tagName !== 'TEXTAREA' && el.parentElement &&
        getComputedStyle(el.parentElement).whiteSpace !== ws) {
      el.style.whiteSpace = ws;
    }
    return NodeFilter.FILTER_ACCEPT;
  }});
  let n = 0;
  while (walker.nextNode()) { if (++n > limit) break; }
  return root.innerText || '';
}""" % HIDDEN_ATTR


class BrowserUnavailable(RuntimeError):
    pass


class _Job:
    """One page being rendered: its route state and in-flight count."""

    def __init__(self, url: str, body: bytes | None, ctype: str, page=None):
        self.url, self.body, self.ctype = url, body, ctype
        self.res = RenderResult()
        self.served_main = False
        self.page = page               # the page this job renders; requests from any other (popups) are refused
        self.origins: set[str] = set()  # every origin a request went to (wiped before a context is reused)
        self.inflight = 0
        self.last = time.monotonic()

    def begin(self) -> None:
        self.inflight += 1
        self.last = time.monotonic()

    def end(self) -> None:
        self.inflight -= 1
        self.last = time.monotonic()


class _Tab:
    """A browser context with its one page, kept for pages of one host when contexts are reused."""

    def __init__(self, host: str, ctx):
        self.host, self.ctx = host, ctx
        self.page = None
        self.cdp = None
        self.job: _Job | None = None   # the page being rendered; None between pages (requests refused)
        self.uses = 0
        self.since = time.monotonic()


class _Browser:
    """One Chromium and its asyncio loop on a dedicated thread (Playwright objects live there)."""

    def __init__(self, allow: Callable[[str], str | None], fetch: Callable[[str, dict], Any], config: RenderConfig,
                 io_pool: cf.ThreadPoolExecutor, name: str):
        self.allow, self.fetch, self.config, self.io_pool = allow, fetch, config, io_pool
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self.thread.start()
        self.active = 0                # pages submitted and not finished (read under RenderService's lock)
        self._pw = None
        self._browser = None
        self._start_lock: asyncio.Lock | None = None
        self._sem: asyncio.Semaphore | None = None
        self._idle: dict[str, list[_Tab]] = {}   # host -> wiped contexts waiting for its next page

    # -- lifecycle (coroutines run on self.loop) ---------------------------------------------
    async def _start(self) -> None:
        if self._start_lock is None:
            self._start_lock = asyncio.Lock()
            self._sem = asyncio.Semaphore(max(1, self.config.pages_per_browser))
        async with self._start_lock:
            if self._browser is not None and self._browser.is_connected():
                return
            await self._stop()
            if not os.path.exists(self.config.executable):
                raise BrowserUnavailable(f"chromium not found at {self.config.executable}")
            from playwright.async_api import async_playwright  # noqa: PLC0415
            self._pw = await async_playwright().start()
            try:
                self._browser = await self._pw.chromium.launch(executable_path=self.config.executable, headless=True,
                                                               args=LAUNCH_ARGS)
            except Exception as e:  # noqa: BLE001
                await self._pw.stop()
                self._pw = None
                raise BrowserUnavailable(f"chromium failed to start: {e}") from None

    async def _stop(self) -> None:
        self._idle = {}
        try:
            if self._browser is not None:
                await self._browser.close()
        except Exception:  # noqa: BLE001
            pass
        self._browser = None
        try:
            if self._pw is not None:
                await self._pw.stop()
        except Exception:  # noqa: BLE001
            pass
        self._pw = None

    def submit(self, coro) -> cf.Future:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def close(self) -> None:
        try:
            self.submit(self._stop()).result(timeout=30)
        except Exception:  # noqa: BLE001
            pass
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        if not self.thread.is_alive():
            self.loop.close()

    # -- the route guard ------------------------------------------------------------------------
    async def _route(self, route, job: _Job | None) -> None:
        if job is None:  # anything still asking after the page was given up
            return await _quiet(route.abort("blockedbyclient"))
        req = route.request
        u = req.url
        job.begin()
        try:
            job.res.requests += 1
            if not (u.startswith("http://") or u.startswith("https://")):
                job.res.blocked.append((u[:200], "bad_scheme"))
                return await _quiet(route.abort("blockedbyclient"))
            parts = urlsplit(u)
            job.origins.add(f"{parts.scheme}://{parts.netloc}")
            try:
                own = req.frame.page is job.page
            except Exception:  # noqa: BLE001  (no frame: a service worker's request)
                own = False
            if not own:  # popups and other pages the context opened
                job.res.blocked.append((u[:200], "other_page"))
                return await _quiet(route.abort("blockedbyclient"))
            if self.config.skip_media and req.resource_type in ("font", "media", "image"):
                return await _quiet(route.abort("blockedbyclient"))
            if (job.body is not None and not job.served_main and req.is_navigation_request()
                    and u.rstrip("/") == job.url.rstrip("/")):
                job.served_main = True
                return await _quiet(route.fulfill(status=200, body=job.body,
                                                  headers={"content-type": job.ctype or "text/html"}))
            reason = await self.loop.run_in_executor(self.io_pool, self.allow, u)
            if reason:
                job.res.blocked.append((u[:200], reason))
                return await _quiet(route.abort("blockedbyclient"))
            if req.method not in ("GET", "HEAD"):
                job.res.blocked.append((u[:200], "method"))  # a crawler reads; it never posts forms or beacons
                return await _quiet(route.abort("blockedbyclient"))
            sent = {k: v for k, v in req.headers.items() if k.lower() in REQUEST_HEADERS}
            r = await self.loop.run_in_executor(self.io_pool, self.fetch, u, sent)
            if r.status == 0 or (r.skip and not r.skip.startswith("http_")):
                job.res.blocked.append((u[:200], r.skip or "fetch_error"))
                return await _quiet(route.abort("blockedbyclient" if r.skip and "private" in r.skip else "failed"))
            headers = {k: v for k, v in r.headers.items() if k in FORWARD_HEADERS}
            await _quiet(route.fulfill(status=r.status if r.status < 300 or r.status >= 400 else 200,
                                       body=r.body, headers=headers))
        finally:
            job.end()

    # -- one page ---------------------------------------------------------------------------------
    async def render(self, url: str, body: bytes | None, content_type: str) -> RenderResult:
        await self._start()
        async with self._sem:
            return await self._render(url, body, content_type)

    async def _new_tab(self, host: str) -> "_Tab":
        cfg = self.config
        ctx = await self._browser.new_context(user_agent=cfg.user_agent, accept_downloads=False,
                                              service_workers="block", java_script_enabled=True,
                                              viewport={"width": cfg.viewport[0], "height": cfg.viewport[1]})
        tab = _Tab(host, ctx)
        try:
            await ctx.route("**/*", lambda r: self._route(r, tab.job))
            tab.page = page = await ctx.new_page()
            ctx.on("page", lambda p: asyncio.ensure_future(p.close()) if p is not page else None)  # popups
            page.on("dialog", lambda d: asyncio.ensure_future(_quiet(d.dismiss())))
            page.on("download", lambda d: asyncio.ensure_future(_quiet(d.cancel())))
            page.set_default_timeout(cfg.nav_timeout_ms)
        except Exception:
            await _quiet(ctx.close())
            raise
        return tab

    def _take_tab(self, host: str, tab: "_Tab | None" = None) -> "_Tab | None":
        """Remove an idle context of `host` from the pool (the given one, else the newest) and return it."""
        tabs = self._idle.get(host)
        if not tabs:
            return None
        if tab is None:
            tab = tabs.pop()
        else:
            tabs.remove(tab)
        if not tabs:
            del self._idle[host]
        return tab

    async def _release(self, tab: "_Tab", origins: set[str], reusable: bool) -> None:
        """Wipe the context for its host's next page, or close it (spent, broken, or reuse off)."""
        tab.uses += 1
        keep = reusable and tab.uses < self.config.context_reuse and not tab.page.is_closed()
        if keep:
            try:
                await tab.page.evaluate("() => { try { sessionStorage.clear(); } catch (e) {} window.name = ''; }")
                await tab.page.goto("about:blank", wait_until="commit", timeout=5000)
                await tab.ctx.clear_cookies()
                if tab.cdp is None:
                    tab.cdp = await tab.ctx.new_cdp_session(tab.page)
                for origin in sorted(origins):
                    await tab.cdp.send("Storage.clearDataForOrigin", {"origin": origin, "storageTypes": "all"})
            except Exception:  # noqa: BLE001  (could not wipe it: never reuse it)
                keep = False
        if not keep:
            await _quiet(tab.ctx.close())
            return
        self._idle.setdefault(tab.host, []).append(tab)
        while sum(len(v) for v in self._idle.values()) > max(1, self.config.pages_per_browser):
            victim = min((t for tabs in self._idle.values() for t in tabs), key=lambda t: t.since)
            self._take_tab(victim.host, victim)
            await _quiet(victim.ctx.close())

    async def _render(self, url: str, body: bytes | None, content_type: str) -> RenderResult:
        cfg = self.config
        t0 = time.monotonic()
        host = urlsplit(url).netloc.lower()
        res, job = RenderResult(), None
        tab = self._take_tab(host) if cfg.context_reuse > 1 else None
        try:
            if tab is None:
                tab = await self._new_tab(host)
            job = tab.job = _Job(url, body, content_type, tab.page)
            res = job.res
            res.context_page = tab.uses + 1
            page = tab.page
            try:
                await page.goto(url, wait_until="load", timeout=cfg.nav_timeout_ms)
            except Exception as e:  # noqa: BLE001  (timeouts and aborted navigations: keep what loaded)
                res.error = "render_timeout" if "Timeout" in type(e).__name__ else "render_error"
            await self._settle(page, job)
            try:
                try:
                    res.visible_text = await page.evaluate(_MARK_HIDDEN_JS, 300_000)
                except Exception:  # noqa: BLE001  (a page that broke its own DOM API: keep the DOM unmarked)
                    res.visible_text = None
                res.html = await page.content()
                if res.html is not None and len(res.html) > cfg.max_html_chars:
                    res.html, res.visible_text, res.error = None, None, "render_too_large"
                res.final_url = page.url
                if res.error == "render_timeout" and res.html:
                    res.error = None
            except Exception as e:  # noqa: BLE001
                res.error = res.error or f"render_error: {type(e).__name__}"
                res.html = None
        finally:
            if tab is not None:
                tab.job = None
                await self._release(tab, job.origins if job else set(), reusable=job is not None and res.error is None)
            res.render_ms = (time.monotonic() - t0) * 1000
        return res

    async def _settle(self, page, job: _Job) -> None:
        """Scroll (lazy content), then wait until no request has been in the route handler for
        `quiet_ms`, at most `idle_cap_ms`: the handler's own count, so no extra browser round trips."""
        cfg = self.config
        deadline = time.monotonic() + cfg.idle_cap_ms / 1000
        for _ in range(cfg.scroll_steps):
            try:
                await page.evaluate("window.scrollBy(0, document.body ? document.body.scrollHeight : 0)")
            except Exception:  # noqa: BLE001
                break
        while time.monotonic() < deadline:
            if job.inflight <= 0 and (time.monotonic() - job.last) * 1000 >= cfg.quiet_ms:
                return
            await asyncio.sleep(cfg.poll_ms / 1000)


async def _quiet(aw) -> None:
    """Await a Playwright call that fails harmlessly when its page or context is already gone."""
    try:
        await aw
    except Exception:  # noqa: BLE001
        pass


class RenderService:
    """Thread-safe, blocking front for `workers` browsers, each rendering up to
    `config.pages_per_browser` pages at once. Browsers start lazily, on first use; a crashed one
    is started again on the next page."""

    def __init__(self, allow: Callable[[str], str | None], fetch: Callable[[str, dict], Any],
                 config: RenderConfig | None = None, workers: int = 1):
        self.config = config or RenderConfig()
        n = max(1, workers)
        # fetches and robots lookups for subresources run here (blocking I/O, off the event loops)
        self._io = cf.ThreadPoolExecutor(max_workers=4 * n * max(1, self.config.pages_per_browser),
                                         thread_name_prefix="render-io")
        self._browsers = [_Browser(allow, fetch, self.config, self._io, f"render-{k}") for k in range(n)]
        self._lock = threading.Lock()
        self.unavailable: str | None = None

    def start(self) -> None:
        """Launch every browser now instead of on first use; raises BrowserUnavailable."""
        for f in [b.submit(b._start()) for b in self._browsers]:
            f.result(timeout=120)

    def render(self, url: str, body: bytes | None = None, content_type: str = "text/html") -> RenderResult:
        if self.unavailable:
            return RenderResult(error="render_unavailable")
        with self._lock:
            b = min(self._browsers, key=lambda x: x.active)
            b.active += 1
        try:
            timeout = (self.config.nav_timeout_ms + self.config.idle_cap_ms) / 1000 + 60
            return b.submit(b.render(url, body, content_type)).result(timeout=timeout)
        except BrowserUnavailable as e:
            self.unavailable = str(e)
            return RenderResult(error="render_unavailable")
        except Exception:  # noqa: BLE001  (browser crash: the next page starts a fresh one)
            return RenderResult(error="render_error")
        finally:
            with self._lock:
                b.active -= 1

    def close(self) -> None:
        for b in self._browsers:
            b.close()
        self._io.shutdown(wait=False)

    def __enter__(self) -> "RenderService":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
