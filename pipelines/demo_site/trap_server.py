"""Serve the trap site (pipelines.demo_site.trap_site) over HTTP on 127.0.0.1, so a real
`cidermill crawl` can be measured on it. Pages become HTML the way real shops write them:
navigation links in <nav>, article text and its related links in <main>; every absolute link
to the site points at this server instead. `paths` is the server's own access log (in order),
so robots compliance is checked from what was requested, not from the crawler's accounting.
"""
from __future__ import annotations

import html
import http.server
import threading

from pipelines.demo_site import trap_site


def render(pg: trap_site.Page, base: str) -> str:
    def href(u: str) -> str:
        return html.escape(u.replace(trap_site.BASE, base, 1), quote=True)

    lang = "fr" if pg.kind == "french" else "en"
    paras = [p for p in pg.text.split("\n") if p.strip()]
    title = html.escape(paras[0] if paras else "")
    nav = "".join(f'<a href="{href(u)}">{html.escape(a)}</a> ' for u, a, b in pg.links if b == "nav")
    content = "".join(f'<li><a href="{href(u)}">{html.escape(a)}</a></li>' for u, a, b in pg.links if b != "nav")
    body = "".join(f"<p>{html.escape(p)}</p>" for p in paras)
    return (f'<!doctype html><html lang="{lang}"><head><meta charset="utf-8"><title>{title}</title></head>'
            f"<body><nav>{nav}</nav><main><article>{body}</article><ul>{content}</ul></main></body></html>")


class TrapSite:
    """Context manager: `with TrapSite() as s: s.url` is the site's base URL on 127.0.0.1."""

    def __init__(self):
        self.paths: list[str] = []
        site = self

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_GET(self):
                site.paths.append(self.path)
                if self.path == "/robots.txt":
                    status, ctype, body = 200, "text/plain", trap_site.ROBOTS
                else:
                    pg = trap_site.page(trap_site.BASE + self.path)
                    status, ctype = pg.status, "text/html; charset=utf-8"
                    body = render(pg, site.url) if pg.status == 200 else "not found"
                data = body.encode("utf-8")
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        self._thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def __enter__(self) -> "TrapSite":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
