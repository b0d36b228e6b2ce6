"""Crawl the trap site in-process with a given frontier order and count what the budget bought.

The fetch is simulated (pages come from pipelines.demo_site.trap_site, no sockets), everything
else is the real thing: robots.txt parsed by crawl.robots and checked for every URL before it
is fetched, admission and ordering by crawl.learned_frontier, and the project's text filters
(language ID against the targets, Gopher rules) deciding which fetched pages pass. A page passes
once: a second copy of the same text (print versions) does not count again, and the frontier
learns from the same judgement the live crawl uses (`pipelines.crawl_order.PageJudge`).
"""
from __future__ import annotations

from collections import Counter
from typing import Any

from crawl.frontier import FrontierConfig
from crawl.identity import BOT_TOKEN
from crawl.learned_frontier import LearnedFrontier
from crawl.learned_priority import LearnedPriority
from crawl.robots import parse_robots
from crawl.urls import try_canonicalize
from pipelines.crawl_order import PageJudge
from pipelines.demo_site import trap_site

TRAP_KINDS = {"tag", "event", "search", "listing", "forum", "print"}


def simulate(order: str, budget: int, wave: int = 10, seed: int = 0, targets=("en",), agent: str = BOT_TOKEN,
             max_per_template: int = 50, log: bool = False) -> dict[str, Any]:
    robots = parse_robots(trap_site.BASE, trap_site.ROBOTS)
    fr = LearnedFrontier(FrontierConfig(max_depth=12, max_pages=budget), order=order,
                         learner=LearnedPriority(targets), seed=seed, max_per_template=max_per_template)
    fr.add_seed(trap_site.BASE + "/")
    judge = PageJudge(targets)
    fetched, rows = 0, []
    kinds, topics = Counter(), set()
    passed_unique = robots_refused = robots_violations = 0
    while fetched < budget and fr.pending:
        for e in fr.select(min(wave, budget - fetched)):
            url = e["url"]
            if not robots.parser.can_fetch(url, agent):
                robots_refused += 1          # never fetched; not counted against the budget
                continue
            pg = trap_site.page(url)
            fetched += 1
            robots_violations += int(not robots.parser.can_fetch(url, agent))
            kinds[pg.kind or str(pg.status)] += 1
            passed, new, lang, topic = judge(url, pg.text) if pg.status == 200 else (False, False, None, None)
            new_pass = passed and new
            passed_unique += int(new_pass)
            if new_pass and pg.topic:
                topics.add(pg.topic)
            fr.observe(url, float(new_pass), lang, topic)
            if log:
                rows.append({"url": url, "kind": pg.kind, "passed": passed, "priority": e.get("priority"),
                             "parts": e.get("parts")})
            for link, anchor, block in pg.links:
                canon, _ = try_canonicalize(link)
                if canon:
                    fr.add(canon, e["depth"] + 1, url, anchor, block)
    trap = sum(v for k, v in kinds.items() if k in TRAP_KINDS)
    return {"order": order, "budget": budget, "fetched": fetched, "passed_unique": passed_unique,
            "yield": passed_unique / max(1, fetched), "topics": len(topics), "trap_pages": trap,
            "kinds": dict(kinds), "robots_refused": robots_refused, "robots_violations": robots_violations,
            "frontier_refused": dict(fr.refused), "pending": len(fr.pending), "log": rows}
