"""`cidermill serve-demo-site`: serve the embedded demo site on 127.0.0.1 until Ctrl-C."""
from __future__ import annotations

import argparse

HELP = "serve the embedded demo site (robots.txt, multilingual pages, images, traps) on 127.0.0.1"
DESCRIPTION = ("Serve the embedded demo site on 127.0.0.1 and print its URL; runs until Ctrl-C. Every page is "
               "labelled in pipelines/demo_site/ground_truth.json. Each request is appended to the access log "
               "(JSON lines: time, method, path, status, user_agent, bytes).")
BEAM = False


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("--port", type=int, default=0, help="port to listen on (default 0: a free port)")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--log", metavar="FILE", default=None, help="append the JSON-lines access log to FILE")
    p.add_argument("--slow-seconds", type=float, default=15.0, help="delay of /slow.html (default 15)")
    p.add_argument("--robots-status", type=int, default=None, choices=[404, 500, 503],
                   help="answer /robots.txt with this HTTP status instead of the file")


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    from corpus.errors import ConfigError
    from pipelines.demo_site import DemoSite

    if not 0 <= args.port <= 65535:
        raise ConfigError(f"--port must be between 0 and 65535, got {args.port}")
    if args.slow_seconds < 0:
        raise ConfigError("--slow-seconds must not be negative")
    import signal
    import threading

    stopping = threading.Event()
    # a plain `kill` stops the server as cleanly as Ctrl-C, whenever it arrives
    signal.signal(signal.SIGTERM, lambda signum, frame: stopping.set())
    site = DemoSite(port=args.port, host=args.host, log_path=args.log, slow_seconds=args.slow_seconds,
                    robots_status=args.robots_status)
    try:
        site.start()
    except OSError as e:
        raise ConfigError(f"cannot listen on {args.host}:{args.port}: {e.strerror or e}") from None
    try:
        print(site.url, flush=True)
        print(f"serving the demo site at {site.url}/ (robots.txt: {site.url}/robots.txt)"
              + (f", access log: {args.log}" if args.log else "") + "; press Ctrl-C to stop", flush=True)
        while not stopping.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        site.stop()
    print("stopped", flush=True)
    return 0
