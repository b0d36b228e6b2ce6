"""End-to-end crawls of the embedded demo site (pipelines/demo_site) through the Beam pipeline.

Robots compliance is proven from the demo server's own access log, never from the crawler's
accounting. One crawl of the whole site is shared by most tests (module fixture); robots.txt
500/404 and resume get small crawls of their own.
"""
import json
import os
from collections import Counter
from urllib.parse import urlsplit

import pytest
from protego import Protego

from corpus.reader import ShardDataset
from corpus.verify import verify_dataset
from pipelines.cli import main as cli_main
from pipelines.crawl_pipeline import run_crawl
from pipelines.demo_site.server import SITE_FILES, DemoSite

pytestmark = pytest.mark.slow
GT_PATH = os.path.join(os.path.dirname(__file__), "..", "..", "pipelines", "demo_site", "ground_truth.json")
HAS_CHROMIUM = os.path.exists("/usr/bin/chromium")


def _gt():
    with open(GT_PATH, encoding="utf-8") as f:
        return json.load(f)


def _path(url: str) -> str:
    try:
        p = urlsplit(url)
    except ValueError:
        return url
    return p.path + (f"?{p.query}" if p.query else "")


@pytest.fixture(scope="module")
def crawl(tmp_path_factory):
    out = tmp_path_factory.mktemp("democrawl")
    with DemoSite(log_path=out / "access.jsonl", slow_seconds=4) as site:
        base = site.url
        pages_dir, summary = run_crawl(
            [base + "/", base + "/redirect/start.html", base + "/loop/a.html"], str(out / "crawl"),
            allow_private=True, render="auto" if HAS_CHROMIUM else "never", delay=0, max_pages=400, max_depth=4,
            read_timeout=1.0, total_timeout=3.0, retries=0, render_idle_ms=1000, progress=False)
        requests = site.requests()
    pages = {_path(r["url"]): r for r in ShardDataset(pages_dir).iter_rows()}
    log = list(ShardDataset(str(out / "crawl" / "log")).iter_rows())
    return {"gt": _gt(), "requests": requests, "pages": pages, "log": log, "summary": summary,
            "pages_dir": pages_dir, "out": out / "crawl", "base": base}


def test_zero_requests_to_disallowed_paths_from_access_log(crawl):
    gt = crawl["gt"]
    robots = Protego.parse(gt["robots_txt"]["text"])
    paths = [r["path"] for r in crawl["requests"]]
    assert paths, "the server saw no requests"
    bad = [p for p in paths if p != "/robots.txt" and not robots.can_fetch("http://h" + p, "CiderBot")]
    assert bad == []
    labelled = [p for p in paths if p in gt["paths"] and gt["paths"][p]["robots"]["CiderBot"] is False]
    assert labelled == []
    for p in ("/private/budget.html", "/private/staff-notes.html", "/archive/list.php", "/en/print/cider-history.html"):
        assert p not in paths
    assert "/private/open-notice.html" in paths  # the Allow exception inside a disallowed folder
    skipped = {_path(r["url"]) for r in crawl["log"] if r["reason"] == "robots"}
    assert "/private/budget.html" in skipped  # and the log says why


def test_no_page_requested_twice(crawl):
    # pages, not the stylesheet or scripts the browser loads for each rendered page
    counts = Counter(r["path"] for r in crawl["requests"]
                     if r["path"] not in SITE_FILES and not r["path"].endswith((".css", ".js")))
    assert [p for p, n in counts.items() if n > 1] == []


def test_training_optout_marked(crawl):
    gt, pages = crawl["gt"]["paths"], crawl["pages"]
    optout = [p for p, v in gt.items() if v.get("kind") == "html" and v["robots"].get("CiderBot-Extended") is False
              and v["robots"]["CiderBot"]]
    assert optout
    for p in optout:
        assert p in pages, f"{p} should still be crawled"
        assert pages[p]["training_allowed"] is False, p
    for p, row in pages.items():
        v = gt.get(p)
        if v and v.get("kind") == "html" and v["robots"].get("CiderBot-Extended") and not v["noindex"]:
            assert row["training_allowed"] is True, p


def test_noindex_content_dropped_and_nofollow_links_not_followed(crawl):
    gt, pages = crawl["gt"]["paths"], crawl["pages"]
    paths = {r["path"] for r in crawl["requests"]}
    for p, v in gt.items():
        if v.get("kind") == "html" and v.get("noindex") and p in pages:
            assert pages[p]["robots_noindex"] and pages[p]["text"] is None and pages[p]["raw_html_zstd"] is None, p
            assert pages[p]["training_allowed"] is False
    for p, v in gt.items():
        if "only_linked_from_nofollow" in v.get("categories", []) and not v.get("in_sitemap"):
            assert p not in paths, p
    assert "/meta/from-noindex.html" in pages  # noindex alone still lets links be followed


@pytest.mark.skipif(not HAS_CHROMIUM, reason="no chromium")
def test_js_built_content_captured(crawl):
    gt, pages = crawl["gt"]["paths"], crawl["pages"]
    js = [p for p, v in gt.items() if "js_rendered" in v.get("categories", [])]
    assert js
    for p in js:
        row = pages[p]
        assert row["rendered"] and row["rendered_html_zstd"] is not None, p
        for snip in gt[p]["js_only_snippets"] or gt[p]["expected_snippets"]:
            assert snip in row["text"], (p, snip)
    assert crawl["summary"]["render_share"] < 0.5  # auto renders only the pages that need it


def test_spider_trap_bounded_redirects_and_slow_page(crawl):
    paths = [r["path"] for r in crawl["requests"]]
    assert 0 < sum(p.startswith("/calendar/") for p in paths) <= 10
    by_path = {_path(r["url"]): r for r in crawl["log"] if r["decision"] != "deferred"}
    chain = crawl["pages"]["/redirect/start.html"]
    assert _path(chain["final_url"]) == "/redirect/final.html"
    assert by_path["/loop/a.html"]["reason"] == "redirect_loop"
    assert sum(p.startswith("/loop/") for p in paths) <= 3
    assert by_path["/slow.html"]["reason"] == "timeout"


def test_legacy_encodings_decoded(crawl):
    gt, pages = crawl["gt"]["paths"], crawl["pages"]
    legacy = [p for p, v in gt.items() if "legacy_encoding" in v.get("categories", [])]
    assert len(legacy) >= 2
    for p in legacy:
        assert pages[p]["title"] == gt[p]["title"]
        for snip in gt[p]["expected_snippets"]:
            assert snip in pages[p]["text"], (p, snip)
        from corpus.schemas import decompress_html
        assert gt[p]["expected_snippets"][0] in decompress_html(pages[p]["raw_html_zstd"])  # stored as UTF-8
        assert pages[p]["encoding"] in ("cp1252", "shift_jis", "cp932")


def test_bad_inputs_are_skip_reasons(crawl):
    by_path = {}
    for r in crawl["log"]:
        by_path.setdefault(_path(r["url"]) if r["url"].startswith("http") and "://" in r["url"] else r["url"], r)
    assert by_path["/bad/binary.html"]["reason"] == "binary_content"
    assert by_path["/huge.html"]["reason"] == "too_large"
    assert by_path["/files/harvest.csv"]["reason"] == "wrong_type"
    # PDFs are a source now (crawl/pdf.py); this one has no pages and no xref: refused with its reason
    assert by_path["/files/annual-report.pdf"]["reason"] == "pdf:broken"
    invalid = [r for r in crawl["log"] if r["reason"] == "invalid_url"]
    assert invalid and all(r["parent"].endswith("/bad/invalid-links.html") for r in invalid)
    gt = crawl["gt"]["paths"]
    assert all(s in crawl["pages"]["/bad/malformed.html"]["text"] for s in gt["/bad/malformed.html"]["expected_snippets"])


def test_extraction_against_ground_truth(crawl):
    gt, pages = crawl["gt"]["paths"], crawl["pages"]
    found = total = 0
    for p, row in pages.items():
        v = gt.get(p)
        if not v or v.get("kind") != "html" or v.get("noindex") or v.get("js"):
            continue
        for s in v["expected_snippets"]:
            total += 1
            found += s in (row["text"] or "")
    assert total > 50 and found / total >= 0.9, (found, total)
    shapes = pages["/gallery/shapes.html"]
    srcs = {_path(i["src"]) for i in shapes["images"]}
    assert {_path(i["src"]) if "://" in i["src"] else i["src"] for i in gt["/gallery/shapes.html"]["images"]} <= srcs
    placed = [i for i in shapes["images"] if i["position"] >= 0]
    assert placed and all(i["text_before"] or i["text_after"] for i in placed)
    merged = pages["/data/merged-cells.html"]["tables"]
    assert merged and len({len(r) for r in merged[0]["rows"]}) == 1  # spans expanded to a rectangle


def test_outputs_are_valid_datasets_with_report(crawl):
    assert verify_dataset(crawl["pages_dir"]) == []
    assert verify_dataset(str(crawl["out"] / "log")) == []
    from corpus.report import STATS_NAME, report_dir
    with open(os.path.join(report_dir(crawl["pages_dir"]), STATS_NAME), encoding="utf-8") as f:
        stats = json.load(f)
    info = stats["info"]["crawl"]
    assert info["fetched"] == len(crawl["pages"]) and info["skipped_by_reason"]["robots"] >= 3
    assert "crawl" in stats["stages"] and any(k.startswith("host ") for k in stats["stages"])
    import pyarrow.dataset as pads
    assert pads.dataset(crawl["pages_dir"], format="ipc").count_rows() == len(crawl["pages"])


def test_robots_500_fetches_nothing_and_404_allows_all(tmp_path):
    with DemoSite(robots_status=500) as site:
        _, s = run_crawl([site.url + "/"], str(tmp_path / "c500"), allow_private=True, delay=0, retries=0,
                         max_requeue=0, render="never", progress=False)
        paths500 = site.requested_paths()
    assert set(paths500) == {"/robots.txt"} and s["fetched"] == 0
    assert s["skipped_by_reason"] == {"robots_unavailable": 1}
    with DemoSite(robots_status=404) as site:
        _, s = run_crawl([site.url + "/private/budget.html"], str(tmp_path / "c404"), allow_private=True, delay=0,
                         max_depth=0, render="never", sitemaps=False, progress=False)
        paths404 = site.requested_paths()
    assert "/private/budget.html" in paths404 and s["fetched"] == 1


def test_resume_fetches_nothing_twice(tmp_path, capsys):
    out = str(tmp_path / "c")
    with DemoSite() as site:
        common = ["crawl", "--out", out, "--allow-private", "--delay", "0", "--max-depth", "2", "--render", "never",
                  "--no-sitemaps", "--quiet"]
        assert cli_main(common + ["--seeds", site.url + "/", "--max-pages", "6", "--write-warc"]) == 0
        first = site.page_paths()
        assert cli_main(common + ["--seeds", site.url + "/de/", "--max-pages", "6"]) == 1  # another crawl is there
        assert cli_main(common + ["--resume", "--max-pages", "15"]) == 0
        assert cli_main(common + ["--seeds", site.url + "/other", "--resume"]) == 1  # different seeds: refused
        allp = site.page_paths()
        rows = list(ShardDataset(os.path.join(out, "pages")).iter_rows(["id", "url"]))
        log = list(ShardDataset(os.path.join(out, "log")).iter_rows(["decision", "fetch_ms"]))
        assert sum(r["fetch_ms"] is not None for r in log) == 15
        from crawl.warc import iter_warc_pages
        warcs = sorted(os.listdir(os.path.join(out, "warc")))
        assert warcs and list(iter_warc_pages(os.path.join(out, "warc", warcs[0])))
        # the same command again without --resume is a rerun: it replaces the crawl
        assert cli_main(common + ["--seeds", site.url + "/", "--max-pages", "2"]) == 0
        assert 1 <= len(ShardDataset(os.path.join(out, "pages"))) <= 2
    capsys.readouterr()
    assert len(first) == 6 and len(allp) == 15
    assert len(set(allp)) == len(allp)
    assert len({r["id"] for r in rows}) == len(rows) and 10 <= len(rows) <= 15  # 404s are logged, not pages



def test_interrupted_wave_reuses_its_finished_chunks(tmp_path, monkeypatch):
    from pipelines import crawl_pipeline

    real = crawl_pipeline.CrawlDriver._finish_wave

    def crash_in_wave_1(self, d, entries, t0):
        if self.wave == 1:
            raise RuntimeError("simulated crash after wave 1 fetched its pages")
        return real(self, d, entries, t0)

    out = str(tmp_path / "c")
    kw = dict(allow_private=True, delay=0, max_pages=9, max_depth=1, render="never", sitemaps=False, chunk_size=2,
              progress=False)
    with DemoSite() as site:
        monkeypatch.setattr(crawl_pipeline.CrawlDriver, "_finish_wave", crash_in_wave_1)
        with pytest.raises(RuntimeError):
            run_crawl([site.url + "/"], out, **kw)
        before = site.page_paths()
        assert os.listdir(os.path.join(out, "waves", "00001", "partial"))
        monkeypatch.setattr(crawl_pipeline.CrawlDriver, "_finish_wave", real)
        pages_dir, summary = run_crawl([site.url + "/"], out, resume=True, **kw)
        after = site.page_paths()
    assert len(before) == 9 and after == before  # the redone wave fetched nothing again
    assert len(ShardDataset(pages_dir)) == summary["pages"] >= 7
    assert not os.path.exists(os.path.join(out, "waves", "00001", "partial"))
