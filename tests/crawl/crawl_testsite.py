"""A tiny scripted HTTP server on 127.0.0.1 with its own access log, for crawler tests."""
from __future__ import annotations

import http.server
import threading
import time



class Route:
    def __init__(self, body=b"", status=200, ctype="text/html; charset=utf-8", headers=None, delay=0.0):
        self.body = body.encode("utf-8") if isinstance(body, str) else body
        self.status, self.ctype, self.headers, self.delay = status, ctype, headers or {}, delay


class LocalSite:
    """routes: path -> Route (or callable(handler) -> Route). `hits` lists requested paths in order."""

    def __init__(self, routes: dict):
        self.routes = routes
        self.hits: list[str] = []
        site = self

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_GET(self):
                site.hits.append(self.path)
                r = site.routes.get(self.path)
                if callable(r):
                    r = r(self)
                if r is None:
                    r = Route(b"not found", 404, "text/plain")
                if r.delay:
                    time.sleep(r.delay)
                try:
                    self.send_response(r.status)
                    if r.ctype:
                        self.send_header("Content-Type", r.ctype)
                    for k, v in r.headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Length", str(len(r.body)))
                    self.end_headers()
                    self.wfile.write(r.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        class Quiet(http.server.ThreadingHTTPServer):
            def handle_error(self, request, client_address):
                pass  # clients that hang up early (size caps, timeouts) are part of the tests

        self.server = Quiet(("127.0.0.1", 0), H)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
