"""The demo site's HTTP server: static files from site/ plus the dynamic test routes.

Standard library only (ThreadingHTTPServer on 127.0.0.1, a free port by default), so crawler,
text and image tests can start it in-process:

    with DemoSite(log_path=tmp_path / "access.jsonl", slow_seconds=2) as site:
        fetch(site.url + "/robots.txt")
        site.requests()   # the access log as a list of dicts

Static files get their content type from the extension; `site/_serve.json` (written by the
generator) overrides the type, status or headers of a few paths (legacy charsets declared only in
a meta tag, X-Robots-Tag, HTML served as image/jpeg). Text files have `{{BASE_URL}}` replaced by the
site's own URL (robots.txt Sitemap line, sitemap.xml, absolute links).

Dynamic routes (all labelled in ground_truth.json): the redirect chain and loop, the slow page,
the 50 MB streamed page, the infinite calendar (spider trap), the 100-megapixel PNG and robots.txt
answering 500/404 on demand. The server never blocks shutdown: daemon threads, and the slow and
huge handlers wake up when the site stops.
"""
from __future__ import annotations

import io
import json
import mimetypes
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

PACKAGE_DIR = Path(__file__).resolve().parent
SITE_DIR = PACKAGE_DIR / "site"
BASE_URL_TOKEN = b"{{BASE_URL}}"
# site-wide files a crawler reads once per origin (per process), beside the pages: robots.txt and
# TDMRep's /.well-known/tdmrep.json (crawl/tdmrep.py)
SITE_FILES = ("/robots.txt", "/.well-known/tdmrep.json")

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".htm": "text/html; charset=utf-8",
    ".php": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "application/javascript; charset=utf-8",
    ".json": "application/json",
    ".txt": "text/plain; charset=utf-8",
    ".xml": "application/xml",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".svg": "image/svg+xml",
    ".pdf": "application/pdf",
    ".csv": "text/csv; charset=utf-8",
}
TEXTUAL = ("text/", "application/javascript", "application/json", "application/xml", "image/svg+xml")

# Dynamic routes (paths are labelled in ground_truth.json under "paths" and "dynamic_routes").
REDIRECTS = {  # path -> (status, location); the chain is 3 hops to /redirect/final.html
    "/redirect/start.html": (301, "/redirect/hop-1.html"),
    "/redirect/hop-1.html": (302, "{{BASE_URL}}/redirect/hop-2.html"),  # absolute Location
    "/redirect/hop-2.html": (307, "final.html"),                        # relative Location
    "/loop/a.html": (302, "/loop/b.html"),
    "/loop/b.html": (302, "/loop/a.html"),
}
SLOW_PATH = "/slow.html"
HUGE_PATH = "/huge.html"
HUGE_BYTES = 50 * 1024 * 1024
BOMB_PATH = "/img/bad/huge-100mp.png"
BOMB_SIZE = (10000, 10000)
CALENDAR_RE = re.compile(r"^/calendar/(\d{4})/(\d{2})/$")
HIDDEN_FILES = {"_serve.json"}


def calendar_page(year: int, month: int) -> bytes:
    """One month of the infinite calendar: links to the previous and next month, forever."""
    py, pm = (year, month - 1) if month > 1 else (year - 1, 12)
    ny, nm = (year, month + 1) if month < 12 else (year + 1, 1)
    links = []
    if py >= 1:
        links.append(f'<a href="/calendar/{py:04d}/{pm:02d}/" rel="prev">&laquo; previous month</a>')
    if ny <= 9999:
        links.append(f'<a href="/calendar/{ny:04d}/{nm:02d}/" rel="next">next month &raquo;</a>')
    days = "".join(f"<td>{d}</td>" + ("</tr><tr>" if d % 7 == 0 else "") for d in range(1, 29))
    return (
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>Events calendar {year:04d}-{month:02d} | Cider Mill Gazette</title></head><body>"
        "<nav><a href=\"/\">Home</a> | <a href=\"/calendar/2024/01/\">Calendar</a></nav>"
        f"<h1>Orchard events: {year:04d}-{month:02d}</h1><p>No events are scheduled this month.</p>"
        f"<table class=\"month\"><tr>{days}</tr></table><p>{' | '.join(links)}</p>"
        "<footer>Cider Mill Gazette community calendar</footer></body></html>"
    ).encode()


def huge_chunks(total: int):
    """The 50 MB page, generated on the fly: a head, then the same paragraph until `total` bytes."""
    head = (b"<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>A very long page"
            b"</title></head><body><h1>A very long page</h1>\n")
    para = (b"<p>This paragraph repeats until the page is fifty megabytes long, so a crawler can "
            b"prove it stops reading at its size limit instead of filling its memory.</p>\n")
    yield head
    sent = len(head)
    block = para * (65536 // len(para))
    while sent < total:
        chunk = block[: total - sent]
        yield chunk
        sent += len(chunk)


class _Handler(BaseHTTPRequestHandler):
    server_version = "CiderMillDemo/1.0"
    protocol_version = "HTTP/1.0"  # one request per connection: nothing lingers after a test
    site: "DemoSite"  # set on the subclass made per site

    def log_message(self, format, *args):  # noqa: A002  (silence stderr; we keep a JSON log)
        pass

    def do_GET(self):
        self._serve(head=False)

    def do_HEAD(self):
        self._serve(head=True)

    def do_POST(self):  # the login form posts here: always refuse, never a session
        self._send(403, "text/html; charset=utf-8", b"<!doctype html><p>Login is disabled on the demo site.</p>",
                   head=False)

    # -- plumbing -------------------------------------------------------------------------
    def _log(self, status: int, nbytes: int) -> None:
        self.site._log({
            "time": round(time.time(), 3),
            "method": self.command,
            "path": self.path,
            "status": status,
            "user_agent": self.headers.get("User-Agent", ""),
            "bytes": nbytes,
        })

    def _send(self, status: int, ctype: str | None, body: bytes, head: bool, headers: dict | None = None) -> None:
        self.send_response(status)
        if ctype:
            self.send_header("Content-Type", ctype)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self._log(status, 0 if head else len(body))  # before the body: the log order is the request order
        if not head:
            try:
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass

    def _not_found(self, head: bool) -> None:
        self._send(404, "text/html; charset=utf-8",
                   b"<!doctype html><title>Not found</title><h1>404: page not found</h1>", head)

    # -- routing --------------------------------------------------------------------------
    def _serve(self, head: bool) -> None:
        site = self.site
        parts = urlsplit(self.path)
        path = unquote(parts.path) or "/"

        if path == "/robots.txt" and site.robots_status not in (None, 200):
            status = int(site.robots_status)
            self._send(status, "text/plain; charset=utf-8", f"robots.txt status {status}\n".encode(), head)
            return
        if path == "/robots.txt" and site.robots_txt is not None:
            self._send(200, "text/plain; charset=utf-8", site._expand(site.robots_txt.encode()), head)
            return
        if path in REDIRECTS:
            status, loc = REDIRECTS[path]
            self._send(status, "text/html; charset=utf-8", b"<!doctype html><p>Moved.</p>", head,
                       {"Location": site._expand(loc.encode()).decode()})
            return
        if path == SLOW_PATH:
            site._stopping.wait(site.slow_seconds)
            self._send(200, "text/html; charset=utf-8",
                       b"<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Slow page</title>"
                       b"</head><body><h1>Slow page</h1><p>This page took a long time to answer.</p></body></html>",
                       head)
            return
        if path == HUGE_PATH:
            self._serve_huge(head)
            return
        if path == BOMB_PATH:
            self._send(200, "image/png", site._bomb_png(), head)
            return
        m = CALENDAR_RE.match(path)
        if m:
            year, month = int(m.group(1)), int(m.group(2))
            if 1 <= year <= 9999 and 1 <= month <= 12:
                self._send(200, "text/html; charset=utf-8", calendar_page(year, month), head)
            else:
                self._not_found(head)
            return
        self._serve_static(path, head)

    def _serve_static(self, path: str, head: bool) -> None:
        site = self.site
        rel = path.lstrip("/")
        if rel == "" or rel.endswith("/"):
            rel += "index.html"
        try:
            target = (site.site_dir / rel).resolve()
            found = site.site_dir in target.parents and target.is_file() and target.name not in HIDDEN_FILES
        except (OSError, ValueError):  # name too long, NUL byte, ...
            found = False
        if not found:
            self._not_found(head)
            return
        key = "/" + target.relative_to(site.site_dir).as_posix()
        over = site.overrides.get(key, {})
        ctype = over.get("content_type") or CONTENT_TYPES.get(target.suffix.lower()) \
            or mimetypes.guess_type(target.name)[0] or "application/octet-stream"
        body = target.read_bytes()
        if ctype.startswith(TEXTUAL) and not over.get("raw"):
            body = site._expand(body)
        self._send(int(over.get("status", 200)), ctype, body, head, over.get("headers"))

    def _serve_huge(self, head: bool) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(HUGE_BYTES))
        self.end_headers()
        self._log(200, 0 if head else HUGE_BYTES)
        if not head:
            try:
                for chunk in huge_chunks(HUGE_BYTES):
                    if self.site._stopping.is_set():
                        break
                    self.wfile.write(chunk)
            except (BrokenPipeError, ConnectionResetError, OSError):
                pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    block_on_close = False

    def handle_error(self, request, client_address):  # a client hanging up is not our error
        pass


class DemoSite:
    """The demo site on 127.0.0.1. Use as a context manager, or call start()/stop().

    robots_status: None (serve robots.txt), or an HTTP status such as 500 or 404 for robots.txt.
    robots_txt: replace robots.txt's text (`{{BASE_URL}}` is expanded) for ad-hoc crawler tests.
    slow_seconds: how long /slow.html waits before answering (default 15).
    log_path: append one JSON line per request (time, method, path, status, user_agent, bytes).
    """

    def __init__(self, port: int = 0, host: str = "127.0.0.1", log_path: str | Path | None = None,
                 robots_status: int | None = None, robots_txt: str | None = None,
                 slow_seconds: float = 15.0, site_dir: str | Path | None = None):
        self.host, self.port = host, port
        self.log_path = Path(log_path) if log_path else None
        self.robots_status = robots_status
        self.robots_txt = robots_txt
        self.slow_seconds = float(slow_seconds)
        self.site_dir = Path(site_dir or SITE_DIR).resolve()
        serve = self.site_dir / "_serve.json"
        self.overrides: dict = json.loads(serve.read_text()) if serve.exists() else {}
        self._records: list[dict] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._bomb: bytes | None = None
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None
        self._log_file = None

    # -- lifecycle ------------------------------------------------------------------------
    def start(self) -> "DemoSite":
        if self._httpd is not None:
            return self
        handler = type("Handler", (_Handler,), {"site": self})
        self._httpd = _Server((self.host, self.port), handler)
        self.port = self._httpd.server_address[1]
        if self.log_path:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            self._log_file = open(self.log_path, "a", encoding="utf-8")
        self._stopping.clear()
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.1},
                                        name=f"demo-site:{self.port}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is None:
            return
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread:
            self._thread.join(timeout=5)
        self._httpd = None
        with self._lock:
            if self._log_file:
                self._log_file.close()
                self._log_file = None

    def __enter__(self) -> "DemoSite":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def serve_forever(self) -> None:
        """Block until KeyboardInterrupt (for the CLI)."""
        self.start()
        try:
            while self._thread and self._thread.is_alive():
                self._thread.join(0.5)
        finally:
            self.stop()

    # -- helpers --------------------------------------------------------------------------
    @property
    def url(self) -> str:
        """Base URL without a trailing slash, e.g. http://127.0.0.1:43121."""
        return f"http://{self.host}:{self.port}"

    def requests(self) -> list[dict]:
        """Every request served so far, as logged (a copy)."""
        with self._lock:
            return list(self._records)

    def requested_paths(self) -> list[str]:
        return [r["path"] for r in self.requests()]

    def page_paths(self) -> list[str]:
        """requested_paths without the site-wide files a crawler reads (SITE_FILES)."""
        return [p for p in self.requested_paths() if p not in SITE_FILES]

    def _log(self, rec: dict) -> None:
        with self._lock:
            self._records.append(rec)
            if self._log_file:
                self._log_file.write(json.dumps(rec, ensure_ascii=False) + "\n")
                self._log_file.flush()

    def _expand(self, body: bytes) -> bytes:
        return body.replace(BASE_URL_TOKEN, self.url.encode())

    def _bomb_png(self) -> bytes:
        """A 10000x10000 one-bit PNG (~12 KB compressed), made on first request and kept."""
        with self._lock:
            if self._bomb is None:
                from PIL import Image

                buf = io.BytesIO()
                Image.new("1", BOMB_SIZE, 1).save(buf, format="PNG", optimize=True)
                self._bomb = buf.getvalue()
            return self._bomb
