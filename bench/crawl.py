"""Crawl throughput on a generated local site (politeness delay 0): static fetch+extract pages/s and
rendered pages/s, through the library (WaveCrawler, no Beam) and through `run_crawl` (Beam waves).

Targets from the issue: >= 200 static pages/s, >= 5 rendered pages/s with browser reuse, on this
2-core machine. The site: --hosts servers on 127.0.0.1 (distinct ports = distinct hosts, so
hosts crawl in parallel), each a root -> hub pages -> articles with ~300 words, an image and links;
the rendered run crawls --rendered pages of a same-sized site whose pages add text from a script.
CPU per page (crawler process, site servers, browser process trees) is printed beside the rates,
since a busy machine moves the rates more than the CPU figures. About 2.5 minutes.

The static crawl runs side by side in one run, on the same site served fresh for each peer:
cidermill with extraction in its own process (--extract-workers 1), cidermill with one extract
worker per core, and (--scrapy) Scrapy; medians over --rounds go to bench/results/crawl.json.
CPU per page counts the crawler and its extract workers, not the site servers.

    .venv/bin/python bench/crawl.py [--pages 5000] [--hosts 8] [--rendered 200] [--render-workers 2]
                                    [--pages-per-browser 4] [--beam] [--scrapy] [--scratch DIR]
                                    [--extract-workers 0] [--rounds 1]

--scrapy adds the peer on the same generated site in the same run: Scrapy (installed by this script
into a bench venv, SCRATCH/scrapyvenv) obeying robots.txt with no delay, extracting each page's main
content with trafilatura in its callback (cidermill's static path also extracts main content).
"""
from __future__ import annotations

import argparse
import http.server
import os
import random
import shutil
import statistics
import socket
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from proctree import children_cpu  # noqa: E402  (bench/ is on sys.path: the script's folder)
from results import save_result, start_conditions  # noqa: E402

WORDS = ("apple orchard cider press harvest blossom bee tree farmer autumn juice barrel cellar yeast "
         "ferment bottle cork taste sweet sharp dry valley river hill village market season frost").split()


def make_site(n_pages: int, seed: int) -> dict[str, bytes]:
    rng = random.Random(seed)
    hubs = max(1, int(n_pages ** 0.5))
    per_hub = max(1, (n_pages - 1 - hubs) // hubs + 1)
    pages: dict[str, bytes] = {}

    def para(k):
        return " ".join(rng.choice(WORDS) for _ in range(k)).capitalize() + "."

    pages["/"] = ("<html><body><h1>Index</h1>" + "".join(f'<a href="/hub/{h}.html">hub {h}</a> ' for h in range(hubs))
                  + f"<p>{para(40)}</p></body></html>").encode()
    count = 1
    for h in range(hubs):
        links = []
        for a in range(per_hub):
            if count + len(links) + 1 >= n_pages:
                break
            links.append(f"/a/{h}/{a}.html")
        pages[f"/hub/{h}.html"] = ("<html><body><h1>Hub</h1><ul>" + "".join(f'<li><a href="{u}">{u}</a></li>' for u in links)
                                   + "</ul></body></html>").encode()
        count += 1
        for u in links:
            body = "".join(f"<p>{para(50)}</p>" for _ in range(6))
            table = "<table><tr><th>Year</th><th>Tons</th></tr><tr><td>2024</td><td>12</td></tr></table>" \
                if rng.random() < 0.2 else ""
            pages[u] = (f"<html lang='en'><head><title>Article {u}</title></head><body><nav><a href='/'>home</a></nav>"
                        f"<article><h1>Article {u}</h1>{body[:len(body) // 2]}<figure><img src='/img/{count}.jpg' "
                        f"alt='photo'><figcaption>{para(8)}</figcaption></figure>{body[len(body) // 2:]}{table}"
                        f"</article><a href='/hub/{h}.html'>back</a></body></html>").encode()
            count += 1
    return pages


def serve(pages: dict[str, bytes], js: bool):
    script = (b"<script>setTimeout(function(){var p=document.createElement('p');p.textContent='Rendered '+"
              b"'by script. '.repeat(30);document.body.appendChild(p)},20)</script>")

    class H(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def setup(self):
            # like nginx's tcp_nodelay: http.server writes headers and body separately, and with
            # Nagle on, the body waits for the client's delayed ACK (~40 ms per page)
            super().setup()
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def do_GET(self):
            if self.path == "/robots.txt":
                body, ctype = b"User-agent: *\nAllow: /\n", "text/plain"
            elif self.path in pages:
                body, ctype = pages[self.path], "text/html; charset=utf-8"
                if js:
                    body = body.replace(b"</body>", script + b"</body>")
            else:
                body, ctype = b"nope", "text/plain"
            self.send_response(200 if self.path in pages or self.path == "/robots.txt" else 404)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def _serve_main(n_hosts: int, per_host: int, js: bool, seed0: int, conn) -> None:
    servers = [serve(make_site(per_host, seed=seed0 + h), js) for h in range(n_hosts)]
    conn.send([s.server_port for s in servers])
    while conn.recv() == "cpu":  # "cpu": report this process's CPU seconds so far; anything else: stop
        conn.send(time.process_time())
    for s in servers:
        s.shutdown()


class Sites:
    """The generated hosts, served from a child process so the servers do not compete with the
    crawler for this process's GIL."""

    def __init__(self, n_hosts: int, per_host: int, js: bool, seed0: int):
        import multiprocessing as mp
        ctx = mp.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_serve_main, args=(n_hosts, per_host, js, seed0, child), daemon=True)
        self.proc.start()
        self.ports = self.conn.recv()

    @property
    def seeds(self) -> list[str]:
        return [f"http://127.0.0.1:{p}/" for p in self.ports]

    def cpu(self) -> float:
        """CPU seconds the site servers have used so far."""
        self.conn.send("cpu")
        return self.conn.recv()

    def close(self) -> None:
        self.conn.send("stop")
        self.proc.join(timeout=10)


def bench_library(seeds: list[str], n_pages, render: str, render_workers: int, pages_per_browser: int = 4,
                  context_reuse: int = 1, extract_workers: int = 1):
    """Fetch + (render) + extract every page with one WaveCrawler (all hosts in parallel), no Beam.
    Returns (pages, seconds, browser CPU seconds); browsers and extract workers start before the
    clock does."""
    from crawl.crawler import CrawlConfig, WaveCrawler
    from crawl.extract_pool import shared_pool
    from crawl.frontier import Frontier, FrontierConfig

    cfg = CrawlConfig(allow_private=True, delay=0, render=render, sitemaps=False, retries=0,
                      max_parallel_hosts=len(seeds), render_workers=render_workers, render_idle_ms=1500,
                      render_pages_per_browser=pages_per_browser, render_context_reuse=context_reuse,
                      extract_workers=extract_workers)
    crawler = WaveCrawler(cfg)
    pool = shared_pool(extract_workers)
    if pool is not None:
        pool.start()
    browser_cpu0 = 0.0
    if render != "never":
        crawler.renderer.start()
        browser_cpu0 = children_cpu()
    f = Frontier(FrontierConfig(max_depth=5, max_pages=n_pages, wave_size=n_pages))
    for u in seeds:
        f.add_seed(u)
    pages = 0
    t0 = time.perf_counter()
    while f.budget_left() > 0:
        wave = f.select()
        if not wave:
            break
        out = crawler.crawl(wave)
        f.record_attempts(wave, {})
        pages += len(out.pages)
        for ln in out.links:
            f.add(ln["url"], ln["depth"], ln["parent"], ln["source"])
    dt = time.perf_counter() - t0
    browser_cpu = children_cpu() - browser_cpu0 if render != "never" else 0.0
    crawler.close()
    return pages, dt, browser_cpu


SCRAPY_RUNNER = r'''
import json, sys, time
import scrapy, trafilatura
from scrapy.crawler import CrawlerProcess
seeds, limit, per_domain = json.loads(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
count = {"pages": 0, "chars": 0}

class Site(scrapy.Spider):
    name = "site"
    start_urls = seeds
    def parse(self, response):
        text = trafilatura.extract(response.text) or ""
        count["pages"] += 1
        count["chars"] += len(text)
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href, self.parse)

proc = CrawlerProcess({"ROBOTSTXT_OBEY": True, "DOWNLOAD_DELAY": 0, "CONCURRENT_REQUESTS": 32,
                       "CONCURRENT_REQUESTS_PER_DOMAIN": per_domain, "CLOSESPIDER_PAGECOUNT": limit,
                       "LOG_LEVEL": "ERROR", "TELNETCONSOLE_ENABLED": False, "DEPTH_LIMIT": 5})
proc.crawl(Site)
t0, c0 = time.perf_counter(), time.process_time()
proc.start()
print(json.dumps({"pages": count["pages"], "seconds": time.perf_counter() - t0,
                  "cpu": time.process_time() - c0, "chars": count["chars"]}))
'''


def ensure_scrapy(scratch: str) -> str:
    """A bench-only venv with Scrapy and trafilatura (not a project dependency)."""
    import subprocess
    venv = os.path.join(scratch, "scrapyvenv")
    py = os.path.join(venv, "bin", "python")
    if not os.path.exists(py) or subprocess.run([py, "-c", "import scrapy, trafilatura"],
                                                capture_output=True).returncode != 0:
        print("installing scrapy + trafilatura into", venv, flush=True)
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        subprocess.run([py, "-m", "pip", "install", "-q", "scrapy==2.19.*", "trafilatura==2.3.1",
                        "lxml_html_clean"], check=True)
    return py


def bench_scrapy(py: str, seeds: list[str], n_pages: int, per_domain: int = 64) -> dict:
    """Scrapy keys its slots by host name without the port, so the generated hosts (ports of
    127.0.0.1) share one slot: `per_domain` requests at once across all of them. At 8 it waits on
    latency, not CPU; the default gives it its best rate (still delay 0)."""
    import json
    import subprocess
    # a file, not `-c`: Scrapy reads its callbacks' source code
    script = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(py))), "scrapy_runner.py")
    with open(script, "w", encoding="utf-8") as f:
        f.write(SCRAPY_RUNNER)
    r = subprocess.run([py, script, json.dumps(seeds), str(n_pages), str(per_domain)], capture_output=True, text=True, timeout=1800)
    if r.returncode != 0:
        raise SystemExit(f"scrapy run failed: {r.stderr[-2000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=5000)
    ap.add_argument("--hosts", type=int, default=8)
    ap.add_argument("--rendered", type=int, default=200, help="pages to render (0: skip)")
    ap.add_argument("--render-workers", type=int, default=2, help="browsers")
    ap.add_argument("--pages-per-browser", type=int, default=4, help="pages rendering at once in one browser")
    ap.add_argument("--context-reuse", type=int, default=16,
                    help="pages of one host per browser context in the second rendered run (the first: a fresh context each)")
    ap.add_argument("--beam", action="store_true", help="also time the Beam run_crawl end to end")
    ap.add_argument("--scrapy", action="store_true", help="also crawl the same site with Scrapy + trafilatura")
    ap.add_argument("--extract-workers", type=int, default=0, help="extract workers of the second cidermill "
                    "run (default 0: one per core)")
    ap.add_argument("--scrapy-per-domain", type=int, default=64, help="Scrapy's CONCURRENT_REQUESTS_PER_DOMAIN "
                    "(all generated hosts share one Scrapy slot)")
    ap.add_argument("--rounds", type=int, default=1, help="rounds of every peer; medians are reported")
    ap.add_argument("--scratch", default="/tmp/cidermill-bench", help="where the Scrapy bench venv lives")
    args = ap.parse_args()
    scrapy_py = ensure_scrapy(args.scratch) if args.scrapy else None
    from crawl.extract_pool import resolve_workers
    start = start_conditions()
    all_workers = resolve_workers(args.extract_workers)
    per_host = max(2, args.pages // args.hosts)
    sites = Sites(args.hosts, per_host, js=False, seed0=0)
    bench_library(sites.seeds[:1], 5, "never", 1)  # warm-up: imports, first connections
    sites.close()
    peers = [("cidermill, 1 extract worker (in-process)", 1), (f"cidermill, {all_workers} extract workers", all_workers)]
    if scrapy_py:
        peers.append(("Scrapy + trafilatura in its callback", None))
    runs: dict[str, list[dict]] = {name: [] for name, _ in peers}
    for rnd in range(args.rounds):
        for name, workers in peers:  # the same generated site (seed 1000) served fresh for every peer
            sites = Sites(args.hosts, per_host, js=False, seed0=1000)
            cpu0, kids0, srv0 = time.process_time(), children_cpu(), sites.cpu()
            if workers is None:
                r = bench_scrapy(scrapy_py, sites.seeds, per_host * args.hosts, args.scrapy_per_domain)
                n, dt, cpu = r["pages"], r["seconds"], r["cpu"]
            else:
                n, dt, _ = bench_library(sites.seeds, per_host * args.hosts, "never", 1, extract_workers=workers)
                srv = sites.cpu() - srv0
                # this process plus its extract workers; the site servers are children too, so out
                cpu = time.process_time() - cpu0 + children_cpu() - kids0 - srv
            sites.close()
            runs[name].append({"pages": n, "seconds": round(dt, 2), "pages_per_s": round(n / dt, 1),
                               "cpu_ms_per_page": round(cpu / max(1, n) * 1000, 2), "loadavg": os.getloadavg()[0]})
            print(f"round {rnd + 1}: {name}: {n} pages in {dt:.1f}s = {n / dt:.1f} pages/s, "
                  f"CPU {cpu / max(1, n) * 1000:.2f} ms/page (load {os.getloadavg()[0]:.1f})", flush=True)
    med = {name: {"pages_per_s": statistics.median(r["pages_per_s"] for r in rs),
                  "cpu_ms_per_page": statistics.median(r["cpu_ms_per_page"] for r in rs),
                  "pages": rs[0]["pages"]} for name, rs in runs.items()}
    print(f"\nstatic crawl, {per_host * args.hosts} pages on {args.hosts} hosts, delay 0, medians of "
          f"{args.rounds} round(s):")
    for name, m in med.items():
        print(f"  {name:42s} {m['pages_per_s']:8.1f} pages/s  {m['cpu_ms_per_page']:7.2f} ms CPU/page")
    one, many = med[peers[0][0]], med[peers[1][0]]
    headline = [{"what": f"crawl, {all_workers} extract workers vs 1 (static site, {one['pages']} pages)",
                 "figure": f"{many['pages_per_s']:.0f} vs {one['pages_per_s']:.0f} pages/s "
                           f"({many['pages_per_s'] / one['pages_per_s']:.2f}x)", "target": "uses every core"}]
    if scrapy_py:
        peer = med[peers[2][0]]
        ratio = many["pages_per_s"] / peer["pages_per_s"]
        print(f"  cidermill ({all_workers} extract workers) / Scrapy + trafilatura: {ratio:.2f}x (target 1.4x)")
        headline.append({"what": "crawl vs Scrapy + trafilatura (static site, extraction in both)",
                         "figure": f"{many['pages_per_s']:.0f} vs {peer['pages_per_s']:.0f} pages/s ({ratio:.2f}x); "
                                   f"CPU {many['cpu_ms_per_page']:.1f} vs {peer['cpu_ms_per_page']:.1f} ms/page",
                         "target": ">= 1.4x"})
    path = save_result("crawl", {
        "site": {"pages": per_host * args.hosts, "hosts": args.hosts, "delay": 0, "served_by": "http.server "
                 "(threaded, one child process, TCP_NODELAY)", "robots_obeyed": True},
        "scrapy": {"concurrent_requests": 32, "concurrent_requests_per_domain": args.scrapy_per_domain,
                   "extraction": "trafilatura.extract(response.text) in the parse callback"},
        "cidermill": {"connections_per_host": 1, "parallel_hosts": args.hosts, "api": "WaveCrawler (no Beam)"},
        "rounds": args.rounds, "runs": runs, "medians": med, "headline": headline,
        "not_covered": "rendered pages, Beam wave overhead (library WaveCrawler), real network latency, "
                       "politeness delays (delay 0 on loopback)"},
        packages=["apache-beam", "lxml", "trafilatura"], start=start)
    print("wrote", path)
    if args.beam:
        from pipelines.crawl_pipeline import run_crawl
        sites = Sites(args.hosts, per_host, js=False, seed0=1000)
        tmp = tempfile.mkdtemp(prefix="crawlbench-")
        try:
            t0 = time.perf_counter()
            _, summ = run_crawl(sites.seeds, os.path.join(tmp, "c"),
                                allow_private=True, render="never", delay=0, max_pages=per_host * args.hosts,
                                max_depth=5, wave_size=per_host * args.hosts, sitemaps=False, retries=0,
                                max_parallel_hosts=args.hosts, progress=False)
            dt = time.perf_counter() - t0
            print(f"static crawl (Beam waves, end to end): {summ['fetched']} pages in {dt:.1f}s = "
                  f"{summ['fetched'] / dt:.1f} pages/s")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
            sites.close()
    if args.rendered and os.path.exists("/usr/bin/chromium"):
        for k, reuse in enumerate(sorted({1, max(1, args.context_reuse)})):
            rsites = Sites(args.hosts, per_host, js=True, seed0=100 + 10 * k)
            cpu0 = time.process_time()
            n, dt, bcpu = bench_library(rsites.seeds, args.rendered, "always", args.render_workers,
                                        args.pages_per_browser, reuse)
            cpu = time.process_time() - cpu0
            rate = n / dt
            mode = "a fresh context per page" if reuse == 1 else f"a context per host for up to {reuse} pages, wiped between"
            print(f"rendered, {mode}: CPU per page: crawler {cpu / n * 1000:.0f} ms, browsers {bcpu / n * 1000:.0f} ms "
                  f"(CPU-bound ceiling on 2 idle cores: {2 * n / (cpu + bcpu):.1f} pages/s)")
            print(f"rendered (Chromium, {args.render_workers} browser(s) reused, {args.pages_per_browser} pages at once "
                  f"in each, {mode}): {n} pages in {dt:.1f}s = {rate:.2f} pages/s  target 5: ratio {rate / 5:.2f}")
            rsites.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
