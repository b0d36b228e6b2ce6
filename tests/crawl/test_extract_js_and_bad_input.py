"""JavaScript apps and hostile pages: `--render auto` judges visibility like a browser, rendered pages
are extracted from what a visitor sees, the render size cap, and bad input that must end in a
recorded reason or a time-capped render (never a hang or a crash)."""
import os
import re
import time
from collections import Counter

import pytest
from crawl_testsite import Route

from corpus.reader import ShardDataset
from crawl.crawler import CrawlConfig, WaveCrawler
from crawl.extract import extract_page
from crawl.render import CHROMIUM
from crawl.render_policy import render_reason, text_budget
from pipelines.cli import main as cli_main
from pipelines.demo_site import DemoSite, load_ground_truth
from tests.capped_run import run_capped

HAS_CHROMIUM = os.path.exists(CHROMIUM)
WIKI_PATH = os.path.join(os.path.dirname(__file__), "..", "..", "pipelines", "demo_site", "site", "js", "wiki.html")


def _words(text: str) -> Counter:
    return Counter(w.lower() for w in re.findall(r"\w+", text or ""))


def _recall(got: str, want: str) -> float:
    g, w = _words(got), _words(want)
    return sum((g & w).values()) / max(1, sum(w.values()))


def big_wiki(store_bytes: int) -> str:
    """A single-file wiki page whose hidden store holds `store_bytes` of text; the script draws 3 entries."""
    entry = "<div title='e{i}'><pre>Entry {i} tells how the orchard keeper pruned tree number {i} in winter.</pre></div>"
    n = store_bytes // 90
    store = "".join(entry.format(i=i) for i in range(n))
    return ("<html><head><title>Big wiki</title></head><body><header>Orchard wiki</header><div id='story'></div>"
            f"<div id='store' style='display:none'>{store}</div><script>"
            "var s=document.getElementById('story');['e1','e2','e3'].forEach(function(t){"
            "var p=document.createElement('p');p.textContent=document.querySelector('[title='+t+'] pre').textContent"
            "+' Drawn by the wiki script for its readers today.';s.appendChild(p);});</script></body></html>")


def test_render_policy_counts_only_visible_text():
    with open(WIKI_PATH, encoding="utf-8") as f:
        wiki = f.read()
    visible, concealed = text_budget(wiki)
    assert visible < 200 < 10 * visible < concealed  # the hidden store is concealed, not visible
    assert render_reason(wiki, "auto") in ("little_text", "scripts_dominate")
    prose = "<p>" + "Orchard words for a visitor to read. " * 20 + "</p>"
    assert render_reason(prose + "<script>track()</script>", "auto") is None
    hidden = f'<div hidden>{prose}</div><template>{prose}</template><script type="application/json">{{"a": 1}}</script>'
    assert render_reason("<p>Welcome.</p>" + hidden + "<script>draw()</script>", "auto") == "little_text"
    styled = f'<div style="color: red; display : none">{prose}</div><p>Short.</p><script>draw()</script>'
    assert render_reason(styled, "auto") == "little_text"
    assert render_reason(f'<div style="display:none">{prose}</div>', "auto") is None  # no script could show it


def test_extraction_skips_hidden_text():
    html = ("<html><body><article><p>" + "The visible paragraph about pressing apples in autumn. " * 5 +
            "</p><div style='display:none'><p>" + "Secret store text that nobody sees on the page. " * 5 +
            "</p></div><p hidden>Hidden attribute text.</p><p data-cidermill-hidden>Marked by the browser.</p>"
            "<template><p>Template text.</p></template></article></body></html>")
    ex = extract_page(html, "http://x.test/")
    assert "visible paragraph" in ex.text
    for s in ("Secret store", "Hidden attribute", "Marked by the browser", "Template text"):
        assert s not in ex.text


def test_a_page_hidden_whole_by_its_inline_style_is_read_as_its_script_shows_it():
    """An anti-flicker wrapper (`visibility:hidden` until the app's script runs) that holds the whole
    page, title included: the static reader reads it; a small hidden part, a data store without
    content structure and what the browser itself did not draw stay hidden."""
    prose = "<p>" + "The orchard keeper explains how the press is cleaned after every batch. " * 6 + "</p>"
    wrapped = ("<html><body><div id='__next'><div style='visibility:hidden;min-height:100vh'><nav><a href='/'>Home</a>"
               f"</nav><article><h1>Cleaning the press</h1>{prose * 3}</article></div></div></body></html>")
    ex = extract_page(wrapped, "http://x.test/")
    assert "orchard keeper explains" in ex.text and "Cleaning the press" in ex.text
    twice = wrapped.replace("<article>", "<div style='display:none'><article>").replace("</article>", "</article></div>")
    assert "orchard keeper explains" in extract_page(twice, "http://x.test/").text  # a cloak in a cloak
    modal = ("<html><body><article><h1>Pressing</h1>" + prose * 3 + "</article><div style='display:none'><h1>Republish"
             "</h1><p>Copy this notice with the article when you republish it.</p></div></body></html>")
    assert "Copy this notice" not in extract_page(modal, "http://x.test/").text
    for hide in ("style='display:none'", "data-cidermill-hidden"):  # a store; the browser's own judgement
        ex = extract_page(f"<html><body><header>Wiki</header><div {hide}>"
                          + (f"<article><h1>Entries</h1>{prose * 3}</article>" if "data" in hide else
                             f"<div title='e1'><pre>{prose * 3}</pre></div>") + "</div></body></html>", "http://x.test/")
        assert "orchard keeper" not in ex.text
    with open(WIKI_PATH, encoding="utf-8") as f:
        assert render_reason(f.read(), "auto") in ("little_text", "scripts_dominate")  # still rendered


def test_a_product_block_hidden_with_the_pages_only_title_is_read_under_its_visible_frame():
    """A shop's lock app hides the product block (its <h1> included) until its script runs, while the
    header and footer stay visible, so the block holds well under CLOAK_SHARE of the text: it is read
    when no <h1> shows elsewhere. A hidden title in a page that shows its own, a hidden fragment under
    a tenth of the text and a dialog stay hidden."""
    frame = "<p>" + "Free shipping on orders over fifty dollars, returns within thirty days. " * 8 + "</p>"
    story = "<p>" + "This dark roast is ground fresh for cold mornings and slow pour-overs. " * 6 + "</p>"

    def page(block, title=""):
        return f"<html><body><header>{title}{frame}</header><main>{block}</main><footer>{frame}</footer></body></html>"

    locked = page(f"<div class='lockdown-content' style='display:none;'><h1>Dark Roast Coffee</h1>{story}</div>")
    assert "ground fresh for cold mornings" in extract_page(locked, "http://x.test/p").text
    shown_title = page(f"<div style='display:none'><h1>Dark Roast Coffee</h1>{story}</div>",
                       title="<h1>Our coffees</h1>")
    assert "ground fresh" not in extract_page(shown_title, "http://x.test/p").text
    small = page("<div style='display:none'><h1>Sale</h1><p>Ten percent off.</p></div>" + story)
    assert "Ten percent off" not in extract_page(small, "http://x.test/p").text
    dialog = page(f"<div role='dialog' aria-modal='true' style='display:none'><h1>Republish</h1>{story}</div>")
    assert "ground fresh" not in extract_page(dialog, "http://x.test/p").text


def test_a_modal_is_never_lifted_as_a_cloak():
    """An inline-hidden modal (aria-modal) that holds most of the page's text and an <h1> is not a
    cloak: a script opens it over the page, not instead of it. It is not a candidate at all, so its
    style stays as written and a lifted count reports nothing; its text stays out."""
    from crawl.extract import parse_html
    from crawl.visibility import lift_cloak

    story = "<p>" + "Republish this story under the licence, with credit and a link back. " * 20 + "</p>"
    html = ("<html><body><p>Short visible note.</p><div role='dialog' aria-modal='true' style='display:none'>"
            f"<h1>Republish</h1>{story}</div></body></html>")
    doc = parse_html(html)
    assert lift_cloak(doc) is False
    assert "display:none" in doc.xpath("//*[@aria-modal]")[0].get("style")
    assert "Republish this story" not in extract_page(html, "http://x.test/p").text


def test_deep_pages_of_hidden_titles_and_panels_parse_in_linear_time():
    """The parse-time lifts walk each element once: 80,000 hidden <h1>s and 80,000 collapsed panels
    250 levels deep took 20 s and more when every one walked its own ancestors (about 2 s now). Run
    in a child process with a time cap, so a regression fails instead of stalling the suite."""
    out = run_capped("from crawl.extract import parse_html\n"
                     "deep = '<div>' * 250, '</div>' * 250\n"
                     "titles = ('<html><body><header>' + 'x ' * 80000 + '</header><div style=\"display:none\">'"
                     " + deep[0] + '<h1>t</h1><p>w</p>' * 80000 + deep[1] + '</div></body></html>')\n"
                     "panels = ('<html><body>' + deep[0] + ''.join(f'<button aria-expanded=\"false\" aria-controls=\"p{i}\">b'"
                     "f'</button><div id=\"p{i}\" hidden>w</div>' for i in range(80000)) + deep[1] + '</body></html>')\n"
                     "doc = parse_html(panels)\n"
                     "print(parse_html(titles) is not None, int(doc.xpath('count(//*[@hidden])')))\n", timeout=15)
    assert out.split() == ["True", "0"]


def test_bad_input_pages_end_in_text_or_a_reason():
    binary = bytes(range(256)) * 400
    cases = ["", "\x00" * 10, binary.decode("latin-1"), "<html><body><p>unclosed <div><table><tr><td>cell <b>x",
             "<div>" * 10_000 + "deep words inside" + "</div>" * 10_000,
             "<p>" + ("<span>" * 50 + "w " + "</span>" * 50) * 100 + "</p>"]
    for html in cases:
        t = time.process_time()
        ex = extract_page(html, "http://x.test/")
        assert isinstance(ex.text, str) and (ex.text or ex.error or not html.strip("\x00"))
        assert time.process_time() - t < 20
    assert extract_page("", "http://x.test/").error == "unparseable_html"


def test_thousands_of_one_cell_tables_extract_in_linear_time():
    """trafilatura's full vote runs jusText, whose neighbour search was quadratic in a run of short
    paragraphs: 16,000 one-cell tables took 25 CPU-s, 32,000 about 100; crawl/justext_linear.py
    gives the same classes in one pass each way (5 s for 32,000). Run in a child process with a
    time cap, so a regression fails instead of stalling the suite. (Each cell is one word: no block
    makes a sentence, so the page records no main content.)"""
    out = run_capped("from crawl.extract import extract_page\n"
                     "ex = extract_page('<html><body>' + '<table><tr><td>a</td></tr></table>' * 32000"
                     " + '</body></html>', 'http://x.test/')\n"
                     "print(ex.error, repr(ex.text))\n", timeout=60)
    assert out.split() == ["no_main_content", "''"]


@pytest.mark.slow
def test_size_caps_binary_and_empty_bodies(local_site):
    """Over --max-bytes: skipped as too_large unless headed for rendering; over the render cap: too_large
    whatever the page; 0-byte and binary bodies served as text/html: a row or a reason, never a crash."""
    static_big = "<html><body>" + "<p>Plain static words about cider for everyone to read.</p>" * 120_000 + "</body></html>"
    routes = {
        "/robots.txt": Route("User-agent: *\nAllow: /\n", 200, "text/plain"),
        "/static-big.html": Route(static_big),                      # ~7 MB of visible text
        "/huge.html": Route(big_wiki(30 * 1024 * 1024)),             # 30 MB: over the render cap too
        "/empty.html": Route(b""),
        "/binary.html": Route(bytes(range(256)) * 4000),
    }
    site = local_site(routes)
    c = WaveCrawler(CrawlConfig(allow_private=True, delay=0, render="never", sitemaps=False, retries=0,
                                render_max_bytes=24 * 1024 * 1024))
    try:
        # render never: the fetch cap is --max-bytes itself
        out = c.crawl([{"url": f"{site.url}{p}", "depth": 0} for p in ("/static-big.html", "/empty.html", "/binary.html")])
    finally:
        c.close()
    log = {r["url"].rsplit("/", 1)[1]: r for r in out.log}
    assert log["static-big.html"]["reason"] == "too_large"
    for name in ("empty.html", "binary.html"):
        assert log[name]["decision"] in ("fetched", "skipped") and (log[name]["decision"] == "fetched" or log[name]["reason"])
    c = WaveCrawler(CrawlConfig(allow_private=True, delay=0, render="auto", sitemaps=False, retries=0,
                                render_max_bytes=24 * 1024 * 1024))
    try:
        out = c.crawl([{"url": f"{site.url}{p}", "depth": 0} for p in ("/static-big.html", "/huge.html")])
    finally:
        c.close()
    log = {r["url"].rsplit("/", 1)[1]: r for r in out.log}
    assert log["static-big.html"]["reason"] == "too_large"  # fetched under the render cap, not headed there
    assert "not headed for rendering" in log["static-big.html"]["detail"]
    assert log["huge.html"]["reason"] == "too_large"
    assert not out.pages


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.skipif(not HAS_CHROMIUM, reason=f"no chromium at {CHROMIUM}")
def test_big_js_wiki_rendered_under_its_own_cap_and_endless_script_time_capped(local_site):
    endless = ("<html><body><p id='n'>start</p><script>var i = 0; setInterval(function () {"
               "fetch('/tick?' + (i++)).catch(function () {}); document.getElementById('n').textContent = 'tick ' + i;"
               "}, 20); while (Date.now() < 0) {}</script></body></html>")
    routes = {"/robots.txt": Route("User-agent: *\nAllow: /\n", 200, "text/plain"),
              "/wiki.html": Route(big_wiki(6 * 1024 * 1024)),       # 6 MB, like a real single-file wiki
              "/endless.html": Route(endless)}
    for i in range(2000):
        routes[f"/tick?{i}"] = Route("{}", 200, "application/json")
    site = local_site(routes)
    c = WaveCrawler(CrawlConfig(allow_private=True, delay=0, render="auto", sitemaps=False, retries=0,
                                render_idle_ms=1500, render_timeout_ms=8000))
    try:
        t = time.time()
        out = c.crawl([{"url": f"{site.url}/wiki.html", "depth": 0}, {"url": f"{site.url}/endless.html", "depth": 0}])
        assert time.time() - t < 60
    finally:
        c.close()
    pages = {p["url"].rsplit("/", 1)[1]: p for p in out.pages}
    wiki = pages["wiki.html"]
    assert wiki["rendered"]
    assert "Drawn by the wiki script" in wiki["text"] and "tree number 2 in winter" in wiki["text"]
    assert "tree number 500 " not in wiki["text"]  # the hidden store is not what a visitor sees
    log = {r["url"].rsplit("/", 1)[1]: r for r in out.log}
    assert log["endless.html"]["decision"] == "fetched"  # a page that never settles is cut off by the idle cap


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.skipif(not HAS_CHROMIUM, reason=f"no chromium at {CHROMIUM}")
def test_cidermill_crawl_render_auto_gets_the_words_the_wiki_script_draws(tmp_path):
    gt = load_ground_truth()["paths"]["/js/wiki.html"]
    drawn = gt["main_text"]
    with DemoSite() as site:
        rc = cli_main(["crawl", "--seeds", site.url + "/js/wiki.html", "--out", str(tmp_path), "--allow-private",
                       "--delay", "0", "--max-depth", "0", "--render", "auto", "--no-sitemaps", "--quiet"])
    assert rc == 0
    (row,) = list(ShardDataset(str(tmp_path / "pages")).iter_rows())
    assert row["rendered"]
    assert _recall(row["text"], drawn) >= 0.95
    for s in gt["not_drawn"]:
        assert s not in row["text"]
