"""A page that redirects at once with <meta http-equiv="refresh"> is a redirect, as a browser and
a search engine read it: in a crawl its target becomes a link and the page no document; in an
import it is counted as meta_refresh. A delayed refresh stays a page."""
from collections import Counter

import pytest

from crawl.crawler import CrawlConfig, WaveCrawler
from crawl.html_files import iter_html_file_pages
from crawl.meta_refresh import instant_refresh_target, refresh
from crawl_testsite import Route

TEXINFO = """<html><head><title>XREFdel2 (GNU Octave)</title>
<meta http-equiv="Refresh" content="0; url=Utility-Functions.html#XREFdel2"></head>
<body><p>The node you are looking for is at <a href="Utility-Functions.html#XREFdel2">XREFdel2</a>.</p></body></html>"""
ARTICLE = ("<html><head><title>{t}</title>{head}</head><body><article><p>" + "The cider press works every "
           "autumn in the village and the whole valley brings its apples to it. " * 6 + "</p></article></body></html>")


@pytest.mark.parametrize("content,expected", [
    ("0; url=/en/", (0.0, "/en/")),
    ("0;URL='page.html'", (0.0, "page.html")),
    ("0, url=page.html", (0.0, "page.html")),
    ("0; page.html", (0.0, "page.html")),
    ('3;url="later.html"', (3.0, "later.html")),
    ("0", None),
    ("soon; url=x.html", None),
])
def test_the_content_attribute_is_read_as_the_html_standard_says(content, expected):
    q = "'" if '"' in content else '"'      # attribute order and case as pages write them
    html = f"<html><head><meta content={q}{content}{q} HTTP-EQUIV='REFRESH'></head></html>"
    assert refresh(html) == expected


def test_only_an_instant_refresh_to_another_page_is_a_redirect():
    assert instant_refresh_target(TEXINFO, "https://d.test/octave/XREFdel2.html") == \
        "https://d.test/octave/Utility-Functions.html#XREFdel2"
    delayed = ARTICLE.format(t="Moved", head='<meta http-equiv="refresh" content="5; url=/new">')
    assert instant_refresh_target(delayed, "https://d.test/old") is None
    to_self = '<meta http-equiv="refresh" content="0; url=#top">'
    assert instant_refresh_target(to_self, "https://d.test/page") is None
    assert instant_refresh_target("<html><body>no refresh</body></html>", "https://d.test/") is None


def test_a_crawl_follows_the_refresh_and_keeps_no_page_for_it(local_site):
    routes = {"/": Route('<html><head><meta http-equiv="refresh" content="0; url=/en/index.html"></head>'
                         '<body>Redirecting...</body></html>'),
              "/slow.html": Route(ARTICLE.format(t="Slow", head='<meta http-equiv="refresh" content="30; url=/">'))}
    site = local_site(routes)
    c = WaveCrawler(CrawlConfig(allow_private=True, delay=0, render="never", retries=0))
    try:
        out = c.crawl_host([{"url": site.url + "/", "depth": 0, "source": "seed"},
                            {"url": site.url + "/slow.html", "depth": 0, "source": "seed"}])
    finally:
        c.close()
    assert [p["url"] for p in out.pages] == [site.url + "/slow.html"]
    log = {r["url"]: (r["decision"], r["reason"], r["detail"]) for r in out.log}
    assert log[site.url + "/"] == ("skipped", "meta_refresh", site.url + "/en/index.html")
    assert {(ln["url"], ln["source"]) for ln in out.links if ln["parent"] == site.url + "/"} == \
        {(site.url + "/en/index.html", "redirect")}


def test_an_import_counts_redirect_pages(tmp_path):
    (tmp_path / "XREFdel2.html").write_text(TEXINFO)
    (tmp_path / "Utility-Functions.html").write_text(ARTICLE.format(t="Utility Functions", head=""))
    skipped: Counter = Counter()
    rows = list(iter_html_file_pages(str(tmp_path), ["Utility-Functions.html", "XREFdel2.html"],
                                     "https://d.test/octave/", skipped=skipped))
    assert [r["url"] for r in rows] == ["https://d.test/octave/Utility-Functions.html"]
    assert skipped == Counter({"meta_refresh": 1})
