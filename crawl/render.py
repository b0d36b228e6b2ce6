"""Headless rendering with Playwright and Debian's Chromium: the DOM after JavaScript ran.

One browser per worker, a fresh context per page (no cookies or storage carried between pages or
hosts). Every request the page makes goes through a route handler that refuses non-http(s)
URLs, URLs robots.txt disallows and private addresses (the `allow` callback), and optionally
fonts and media; the main document is served from the bytes the crawler already fetched, so
rendering never fetches a page twice. Dialogs are dismissed, popups closed, downloads refused;
the page is scrolled to trigger lazy content, then the DOM is serialised.

Playwright's sync API is bound to the thread that started it: `RenderService` owns the browser
on one thread and other threads submit pages to it.
"""
from __future__ import annotations

import concurrent.futures as cf
import os
import queue
import time
from dataclasses import dataclass, field
from typing import Callable

CHROMIUM = os.environ.get("CIDERMILL_CHROMIUM", "/usr/bin/chromium")
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               "--disable-dev-shm-usage"]


@dataclass
class RenderConfig:
    user_agent: str = "CiderBot/0.1"
    nav_timeout_ms: int = 15_000
    idle_cap_ms: int = 3_000           # wait for network idle at most this long
    scroll_steps: int = 3
    quiet_ms: int = 250                # no request in flight for this long: the page has settled
    poll_ms: int = 50
    skip_media: bool = True            # fonts, images, audio, video (the DOM keeps their URLs)
    executable: str = CHROMIUM
    viewport: tuple[int, int] = (1280, 2000)


@dataclass
class RenderResult:
    html: str | None = None
    final_url: str | None = None
    error: str | None = None
    render_ms: float = 0.0
    blocked: list[tuple[str, str]] = field(default_factory=list)  # (url, reason)
    requests: int = 0


class BrowserUnavailable(RuntimeError):
    pass


class Renderer:
    """Use from a single thread (see RenderService for multi-threaded callers)."""

    def __init__(self, allow: Callable[[str], str | None], config: RenderConfig | None = None):
        self.allow = allow
        self.config = config or RenderConfig()
        self._pw = None
        self._browser = None
        self._next = None  # (context, page, state) opened ahead for the next render

    def start(self) -> None:
        if self._browser is not None:
            return
        if not os.path.exists(self.config.executable):
            raise BrowserUnavailable(f"chromium not found at {self.config.executable}")
        from playwright.sync_api import sync_playwright  # noqa: PLC0415
        self._pw = sync_playwright().start()
        try:
            self._browser = self._pw.chromium.launch(executable_path=self.config.executable, headless=True,
                                                     args=LAUNCH_ARGS)
        except Exception as e:
            self._pw.stop()
            self._pw = None
            raise BrowserUnavailable(f"chromium failed to start: {e}") from None

    def close(self) -> None:
        try:
            if self._next is not None:
                try:
                    self._next[0].close()
                except Exception:  # noqa: BLE001
                    pass
                self._next = None
            if self._browser is not None:
                self._browser.close()
        finally:
            self._browser = None
            if self._pw is not None:
                self._pw.stop()
                self._pw = None

    @staticmethod
    def _settle(page, inflight: dict, cfg: "RenderConfig") -> None:
        """Scroll (lazy content) and wait until no request has been in flight for `quiet_ms`, at most
        `idle_cap_ms`: like Playwright's networkidle, without its fixed 500 ms on quiet pages."""
        deadline = time.monotonic() + cfg.idle_cap_ms / 1000
        steps = 0
        while time.monotonic() < deadline:
            if steps < cfg.scroll_steps:
                try:
                    page.evaluate("window.scrollBy(0, document.body ? document.body.scrollHeight : 0)")
                except Exception:  # noqa: BLE001
                    steps = cfg.scroll_steps
                steps += 1
            try:
                page.wait_for_timeout(cfg.poll_ms)
            except Exception:  # noqa: BLE001
                return
            quiet = (time.monotonic() - inflight["last"]) * 1000
            if steps >= cfg.scroll_steps and inflight["n"] == 0 and quiet >= cfg.quiet_ms:
                return

    # -- a fresh context per page, opened ahead of time -------------------------------------
    def _route(self, r, state: dict) -> None:
        job = state.get("job")
        req = r.request
        u = req.url
        if job is None:  # nothing should load before the page is assigned
            return r.abort("blockedbyclient")
        res: RenderResult = job["res"]
        res.requests += 1
        if not (u.startswith("http://") or u.startswith("https://")):
            res.blocked.append((u[:200], "bad_scheme"))
            return r.abort("blockedbyclient")
        if self.config.skip_media and req.resource_type in ("font", "media", "image"):
            return r.abort("blockedbyclient")
        if (job["body"] is not None and not job["served_main"] and req.is_navigation_request()
                and u.rstrip("/") == job["url"].rstrip("/")):
            job["served_main"] = True
            return r.fulfill(status=200, body=job["body"], headers={"content-type": job["ctype"] or "text/html"})
        reason = self.allow(u)
        if reason:
            res.blocked.append((u[:200], reason))
            return r.abort("blockedbyclient")
        return r.continue_()

    def _open(self) -> tuple:
        """A new isolated context (no cookies, storage or cache shared with any other page) and its page."""
        cfg = self.config
        ctx = self._browser.new_context(user_agent=cfg.user_agent, accept_downloads=False, service_workers="block",
                                        viewport={"width": cfg.viewport[0], "height": cfg.viewport[1]},
                                        java_script_enabled=True)
        state: dict = {"job": None, "n": 0, "last": time.monotonic()}
        try:
            ctx.route("**/*", lambda r: self._route(r, state))
            page = ctx.new_page()

            def started(_req):
                state["n"] += 1
                state["last"] = time.monotonic()

            def ended(_req):
                state["n"] = max(0, state["n"] - 1)
                state["last"] = time.monotonic()

            page.on("request", started)
            page.on("requestfinished", ended)
            page.on("requestfailed", ended)
            ctx.on("page", lambda p: p.close() if p is not page else None)  # popups
            page.on("dialog", lambda d: d.dismiss())
            page.on("download", lambda d: d.cancel())
            page.set_default_timeout(cfg.nav_timeout_ms)
        except Exception:
            ctx.close()
            raise
        return ctx, page, state

    def prepare(self) -> None:
        """Open the next page's context now (called while the crawler is busy with other work)."""
        if self._browser is None or self._next is not None:
            return
        try:
            self._next = self._open()
        except Exception:  # noqa: BLE001  (render() opens one itself)
            self._next = None

    def render(self, url: str, body: bytes | None = None, content_type: str = "text/html") -> RenderResult:
        self.start()
        cfg = self.config
        res = RenderResult()
        t0 = time.monotonic()
        ctx, page, state = self._next if self._next is not None else self._open()
        self._next = None
        state["job"] = {"url": url, "body": body, "ctype": content_type, "res": res, "served_main": False}
        try:
            try:
                page.goto(url, wait_until="load", timeout=cfg.nav_timeout_ms)
            except Exception as e:  # noqa: BLE001  (timeouts and aborted navigations: keep what loaded)
                res.error = "render_timeout" if "Timeout" in type(e).__name__ else "render_error"
            self._settle(page, state, cfg)
            try:
                res.html = page.content()
                res.final_url = page.url
                if res.error == "render_timeout" and res.html:
                    res.error = None
            except Exception as e:  # noqa: BLE001
                res.error = res.error or f"render_error: {type(e).__name__}"
                res.html = None
        finally:
            state["job"] = None
            try:
                ctx.close()
            except Exception:  # noqa: BLE001
                pass
            res.render_ms = (time.monotonic() - t0) * 1000
        return res


class RenderService:
    """Thread-safe front for `workers` Renderers, each with its own browser on its own thread
    (Playwright's sync API is bound to the thread that started it). Callers block until a
    browser is free; browsers start lazily, on first use."""

    def __init__(self, allow: Callable[[str], str | None], config: RenderConfig | None = None, workers: int = 1):
        self._slots: queue.Queue = queue.Queue()
        self._all = []
        for k in range(max(1, workers)):
            slot = (cf.ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"render-{k}"), Renderer(allow, config))
            self._all.append(slot)
            self._slots.put(slot)
        self.unavailable: str | None = None

    def render(self, url: str, body: bytes | None = None, content_type: str = "text/html") -> RenderResult:
        if self.unavailable:
            return RenderResult(error="render_unavailable")
        pool, renderer = slot = self._slots.get()
        try:
            result = pool.submit(renderer.render, url, body, content_type).result()
            pool.submit(renderer.prepare)  # the next context opens while the caller extracts
            return result
        except BrowserUnavailable as e:
            self.unavailable = str(e)
            return RenderResult(error="render_unavailable")
        except Exception:  # noqa: BLE001  (browser crash: a fresh one starts on the next page)
            try:
                pool.submit(renderer.close).result(timeout=30)
            except Exception:  # noqa: BLE001
                pass
            return RenderResult(error="render_error")
        finally:
            self._slots.put(slot)

    def close(self) -> None:
        for pool, renderer in self._all:
            try:
                pool.submit(renderer.close).result(timeout=30)
            except Exception:  # noqa: BLE001
                pass
            pool.shutdown(wait=False)
