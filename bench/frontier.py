"""Crawl order on the trap site: learned priority vs today's URL-shape order, breadth-first, random.

At fixed page budgets, each order crawls pipelines/demo_site/trap_site (in-process pages, real
robots.txt parsing, real frontier and text filters; see pipelines/frontier_eval.py) and we count:
yield (share of fetched pages that pass language ID + Gopher, each text once), topics covered by
passing pages, trap pages fetched (tags, calendars, facets, listings, forum, print copies), robots
violations (must be 0). Random order: median over 5 seeds. Then a URL explosion: 10^6 generated
links into one frontier, its queue and memory (growth of the process's peak RSS while adding
them, measured first so nothing else has raised the peak).

Then the same comparison as a real `cidermill crawl` (learned vs shape order) of the trap site
served on 127.0.0.1 (pipelines/demo_site/trap_server.py), counted from the server's access log.

What it does not cover: a real network and politeness delays, real sites' link structure (the
trap site is generated), a quality model's scores (the filter verdict stands in for them).

    python bench/frontier.py [--budgets 50,100,200]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import resource

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench.results import save_result, start_conditions  # noqa: E402
from crawl.identity import BOT_TOKEN  # noqa: E402


def explosion(n: int) -> dict:
    from crawl.frontier import FrontierConfig
    from crawl.learned_frontier import LearnedFrontier
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t = time.process_time()
    fr = LearnedFrontier(FrontierConfig(max_depth=5), order="learned", max_pending=20_000, max_per_template=50)
    fr.add_seed("http://s.example/")
    for i in range(n):
        fr.add(f"http://s.example/search?color=c{i % 97}&size={i % 13}&sort={i % 7}&page={i}", 1, None, "Next", "nav")
    cpu = time.process_time() - t
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0) / 1024   # KiB on Linux
    return {"links": n, "pending": len(fr.pending), "seen": len(fr.seen), "refused": dict(fr.refused),
            "peak_rss_growth_mib": grown, "cpu_s": cpu}


def live(order: str, budget: int, wave: int) -> dict:
    """A real `cidermill crawl` (Beam waves, HTTP fetcher, robots.txt) of the trap site on 127.0.0.1;
    what was fetched is read from the server's access log."""
    import contextlib
    import io
    import tempfile
    from collections import Counter

    from pipelines.cli import main as cli_main
    from pipelines.demo_site import trap_site
    from pipelines.demo_site.trap_server import TrapSite
    from pipelines.frontier_eval import TRAP_KINDS
    from crawl.robots import parse_robots
    robots = parse_robots(trap_site.BASE, trap_site.ROBOTS)
    with tempfile.TemporaryDirectory() as d, TrapSite() as site:
        t = time.process_time()
        with contextlib.redirect_stdout(io.StringIO()):   # the verb's JSON summary; the table says it
            cli_main(["crawl", "--seeds", site.url + "/", "--out", d + "/c", "--allow-private", "--render", "never",
                      "--delay", "0", "--max-pages", str(budget), "--wave-size", str(wave), "--max-depth", "12",
                      "--no-sitemaps", "--retries", "0", "--quiet", "--order", order])
        cpu = time.process_time() - t
        paths = [p for p in site.paths if p != "/robots.txt"]
    kinds = Counter(trap_site.page(trap_site.BASE + p).kind for p in paths)
    return {"order": order, "budget": budget, "wave_size": wave, "requests": len(paths),
            "articles": kinds["article"], "trap_pages": sum(v for k, v in kinds.items() if k in TRAP_KINDS),
            "kinds": dict(kinds), "robots_violations": sum(not robots.parser.can_fetch(trap_site.BASE + p, BOT_TOKEN)
                                                           for p in paths),
            "driver_cpu_s": round(cpu, 2)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--budgets", default="50,100,200")
    ap.add_argument("--explosion", type=int, default=1_000_000)
    ap.add_argument("--live", type=int, default=60, help="page budget of the real `cidermill crawl` runs (0: skip)")
    args = ap.parse_args(argv)
    from pipelines.frontier_eval import simulate
    start = start_conditions()
    ex = explosion(args.explosion)
    rows = []
    for b in [int(x) for x in args.budgets.split(",")]:
        for order in ("learned", "shape", "bfs", "random"):
            runs = [simulate(order, b, seed=s) for s in (range(5) if order == "random" else [0])]
            for r in runs:
                r.pop("log")
            med = lambda k: statistics.median(r[k] for r in runs)  # noqa: E731
            rows.append({"budget": b, "order": order, "yield": med("yield"), "passed": med("passed_unique"),
                         "topics": med("topics"), "trap_pages": med("trap_pages"),
                         "robots_violations": max(r["robots_violations"] for r in runs), "runs": len(runs)})
    print(f"{'budget':>6} {'order':8} {'yield':>6} {'passed':>6} {'topics':>6} {'trap':>5} {'robots!':>7}")
    for r in rows:
        print(f"{r['budget']:6d} {r['order']:8} {r['yield']:6.3f} {r['passed']:6.0f} {r['topics']:6.0f} "
              f"{r['trap_pages']:5.0f} {r['robots_violations']:7d}")
    print(f"\nURL explosion: {ex['links']:,} links -> pending {ex['pending']}, seen {ex['seen']}, "
          f"refused {ex['refused']}, peak RSS grew {ex['peak_rss_growth_mib']:.1f} MiB, {ex['cpu_s']:.1f} CPU-s")
    lives = [live(o, args.live, 10) for o in ("learned", "shape")] if args.live else []
    if lives:
        print(f"\nreal `cidermill crawl` on the trap site (127.0.0.1), {args.live} pages, waves of 10:")
        print(f"{'order':8} {'articles':>8} {'trap':>5} {'robots!':>7} {'driver CPU-s':>12}")
        for r in lives:
            print(f"{r['order']:8} {r['articles']:8d} {r['trap_pages']:5d} {r['robots_violations']:7d} "
                  f"{r['driver_cpu_s']:12.1f}")
    mid = [r for r in rows if r["budget"] == sorted({x["budget"] for x in rows})[len({x['budget'] for x in rows}) // 2]]
    by = {r["order"]: r for r in mid}
    headline = [{"what": f"crawl order at {mid[0]['budget']} pages on the trap site: yield learned / URL-shape / BFS / random",
                 "figure": " / ".join(f"{by[o]['yield']:.2f}" for o in ("learned", "shape", "bfs", "random")),
                 "target": "learned highest"},
                {"what": f"trap pages fetched at {mid[0]['budget']} pages: learned / URL-shape / BFS / random",
                 "figure": " / ".join(f"{by[o]['trap_pages']:.0f}" for o in ("learned", "shape", "bfs", "random")),
                 "target": "learned lowest"},
                {"what": f"frontier under {ex['links']:,} generated links: peak memory",
                 "figure": f"+{ex['peak_rss_growth_mib']:.1f} MiB peak RSS", "target": "bounded"}]
    if lives:
        headline.append({"what": f"real `cidermill crawl` of the trap site, {args.live} pages: articles (trap pages) "
                                 "learned / URL-shape",
                         "figure": " / ".join(f"{r['articles']} ({r['trap_pages']})" for r in lives),
                         "target": "more articles, fewer trap pages with learned"})
    save_result("frontier", {"rows": rows, "explosion": ex, "live": lives, "headline": headline}, start=start)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
