"""`cidermill crawl --order learned|shape` on the trap site served on 127.0.0.1, at one page budget.

Each order gets a real crawl through the CLI (Beam waves, real fetcher, robots.txt). What each
fetched is read from the server's own access log; robots compliance too.
"""
from collections import Counter
import json

import pytest
from protego import Protego

from corpus.errors import ConfigError
from corpus.reader import ShardDataset
from pipelines.cli import main as cli_main
from pipelines.crawl_order import CrawlOrder
from pipelines.demo_site import trap_site
from pipelines.demo_site.server import SITE_FILES
from pipelines.demo_site.trap_server import TrapSite
from pipelines.frontier_eval import TRAP_KINDS

pytestmark = pytest.mark.slow
BUDGET = 30


@pytest.fixture(scope="module")
def crawls(tmp_path_factory):
    out = {}
    for order in ("learned", "shape"):
        d = tmp_path_factory.mktemp(f"order_{order}")
        with TrapSite() as site:
            rc = cli_main(["crawl", "--seeds", site.url + "/", "--out", str(d / "crawl"), "--allow-private",
                           "--render", "never", "--delay", "0", "--max-pages", str(BUDGET), "--wave-size", "10",
                           "--max-depth", "12", "--no-sitemaps", "--retries", "0", "--quiet", "--order", order])
            assert rc == 0
            paths = list(site.paths)
        kinds = Counter(trap_site.page(trap_site.BASE + p).kind for p in paths if p not in SITE_FILES)
        log = [r for r in ShardDataset(str(d / "crawl" / "log")).iter_rows() if r["decision"] == "fetched"]
        out[order] = {"paths": paths, "kinds": kinds, "log": log}
    return out


def test_learned_order_fetches_more_good_and_fewer_trap_pages(crawls):
    learned, shape = crawls["learned"]["kinds"], crawls["shape"]["kinds"]
    assert sum(learned.values()) == sum(shape.values()) == BUDGET
    trap = {o: sum(v for k, v in crawls[o]["kinds"].items() if k in TRAP_KINDS) for o in crawls}
    assert learned["article"] > shape["article"], (learned, shape)
    assert trap["learned"] < trap["shape"], (learned, shape)


def test_robots_obeyed_from_the_access_log(crawls):
    robots = Protego.parse(trap_site.ROBOTS)
    for order, c in crawls.items():
        assert c["paths"][0] == "/robots.txt"
        bad = [p for p in c["paths"] if not robots.can_fetch("http://h" + p, "CiderBot")]
        assert bad == [], (order, bad)


def test_each_fetched_url_carries_its_priority_parts(crawls):
    for order, c in crawls.items():
        assert len(c["log"]) == BUDGET
        for r in c["log"]:
            parts = json.loads(r["priority_parts"])
            assert abs(sum(parts.values()) - r["priority"]) < 1e-3
            assert set(parts) == ({"shape", "quality", "language", "diversity", "anchor"} if order == "learned"
                                  else {"shape"})
    # later waves learned something: some URL was moved by what its section's pages scored
    assert any(json.loads(r["priority_parts"])["quality"] != 0 for r in crawls["learned"]["log"])


def test_unknown_order_is_a_one_line_error():
    with pytest.raises(ConfigError, match="--order must be one of"):
        CrawlOrder("bfs")
