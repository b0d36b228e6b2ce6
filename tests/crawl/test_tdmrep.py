"""W3C TDMRep's site-wide file, /.well-known/tdmrep.json: its rules read as the report says (first
match, robots.txt patterns, protocol errors unset), a page's own declaration superseding it, and a
real crawl and real image fetches of a local site that publishes one."""
import io
import json
from urllib.parse import urlsplit

from crawl_testsite import LocalSite, Route
from PIL import Image

from corpus.reader import ShardDataset
from crawl.image_fetch import ImageFetchConfig, ImageFetcher
from crawl.robots_meta import page_signals
from crawl.tdmrep import parse_tdmrep, site_reservation
from pipelines.crawl_pipeline import run_crawl

PROSE = "".join(f"<p>Paragraph {i} of a members' letter about grafting apple trees and the care of young "
                f"orchards through a dry summer, written out in full sentences.</p>" for i in range(8))


def _value(rules_json, url):
    return site_reservation(parse_tdmrep(json.dumps(rules_json)), url)


def test_rules_first_match_patterns_and_protocol_errors():
    rules = [{"location": "/directory-a/", "tdm-reservation": 1},
             {"location": "/directory-b/images/*.jpg", "tdm-reservation": 0},
             {"location": "/directory-b/", "tdm-reservation": 1, "tdm-policy": "https://p.example/policy.json"},
             {"location": "/exact$", "tdm-reservation": 1},
             {"location": "/bad-value/", "tdm-reservation": 2},
             {"location": "/bool/", "tdm-reservation": True},
             {"location": "/text-one/", "tdm-reservation": "1"},
             {"location": "https://other.example/abs/", "tdm-reservation": 1},
             {"location": "no-slash", "tdm-reservation": 1},
             {"tdm-reservation": 1},
             "not a rule",
             {"location": "/caf%C3%A9/", "tdm-reservation": 1},
             {"location": "/~user/", "tdm-reservation": 1},
             {"location": "/search?q=*&page=", "tdm-reservation": 1},
             {"location": "/path/foo-%24", "tdm-reservation": 1}]
    base = "https://site.example"
    assert _value(rules, base + "/directory-a/x/y.html") == 1
    assert _value(rules, base + "/directory-b/images/tree.jpg") == 0      # the first match decides
    assert _value(rules, base + "/directory-b/images/tree.png") == 1
    assert _value(rules, base + "/directory-b/html/page.html") == 1
    assert _value(rules, base + "/exact") == 1
    assert _value(rules, base + "/exact/more") is None                    # `$` anchors the end
    assert _value(rules, base + "/bad-value/p") is None                   # protocol error: unset
    assert _value(rules, base + "/bool/p") is None
    assert _value(rules, base + "/text-one/p") == 1
    assert _value(rules, base + "/abs/p") == 1                            # an absolute location: its path
    assert _value(rules, base + "/no-slash") is None                      # not a path pattern: skipped
    assert _value(rules, base + "/café/menu") == 1                        # one spelling for one path
    assert _value(rules, base + "/caf%c3%a9/menu") == 1
    assert _value(rules, base + "/%7Euser/notes") == 1                    # %7E is "~"
    assert _value(rules, base + "/search?q=cider&page=2") == 1            # the query is matched too
    assert _value(rules, base + "/path/foo-$") == 1                       # a literal `$` is written %24
    assert _value(rules, base + "/path/foo-") is None
    assert _value(rules, base + "/Directory-a/x") is None                 # case-sensitive
    assert _value(rules, base + "/elsewhere") is None                     # no match: unset
    assert site_reservation([], base + "/x") is None


def test_files_that_are_not_tdmrep_mean_unset():
    for text in ("", "<html><body>Not found</body></html>", '{"location": "/", "tdm-reservation": 1}',
                 "[{\"location\": \"/\", ", "null", '"/"'):
        assert site_reservation(parse_tdmrep(text), "https://site.example/page") is None, text
    assert parse_tdmrep("[]") == []


def test_a_pages_own_declaration_supersedes_the_file():
    def reserved(html, header, site):
        return page_signals(html, None, header, site_tdm=site)[2]

    assert reserved("<p>x</p>", None, 1) is True
    assert reserved("<p>x</p>", "0", 1) is False                         # the header supersedes the file
    assert reserved('<meta name="tdm-reservation" content="0">', None, 1) is False
    assert reserved("<p>x</p>", "1", 0) is True
    assert reserved('<meta name="tdm-reservation" content="1">', None, 0) is True
    assert reserved('<meta name="tdm-reservation" content="1">', "0", None) is True   # a 1 in either wins
    assert reserved('<meta name="tdm-reservation" content="maybe">', None, 1) is True  # unset: the file stands
    assert reserved("<p>x</p>", None, 0) is False
    assert reserved("<p>x</p>", None, None) is False


def _page(title, head=""):
    return f"<html><head><title>{title}</title>{head}</head><body><article><h1>{title}</h1>{PROSE}</article></body></html>"


def _crawl(tmp_path, tdmrep_route, robots=None, **overrides):
    names = ["members/letter.html", "members/open.html", "members/notes.txt", "public.html"]
    links = "".join(f'<a href="/{n}">{n}</a> ' for n in names)
    routes = {
        "/": Route(f"<html><body><p>Index of the orchard society.</p>{links}</body></html>"),
        "/members/letter.html": Route(_page("Letter")),
        "/members/open.html": Route(_page("Open letter", '<meta name="tdm-reservation" content="0">')),
        "/members/notes.txt": Route(("Notes on grafting. " * 40).encode(), ctype="text/plain; charset=utf-8"),
        "/public.html": Route(_page("Public page")),
    }
    if tdmrep_route is not None:
        routes["/.well-known/tdmrep.json"] = tdmrep_route
    if robots is not None:
        routes["/robots.txt"] = Route(robots.encode(), ctype="text/plain")
    with LocalSite(routes) as site:
        pages_dir, _ = run_crawl([site.url + "/"], str(tmp_path / "crawl"), allow_private=True, render="never",
                                 delay=0, max_pages=20, max_depth=2, progress=False, **overrides)
        hits = list(site.hits)
    pages = {urlsplit(r["url"]).path: r for r in ShardDataset(pages_dir).iter_rows()}
    assert set(pages) >= {"/" + n for n in names}
    return {p: r["training_allowed"] for p, r in pages.items() if p != "/"}, hits


def test_crawl_reads_the_sites_tdmrep_file(tmp_path):
    rules = json.dumps([{"location": "/members/", "tdm-reservation": 1},
                        {"location": "/", "tdm-reservation": 0}]).encode()
    allowed, hits = _crawl(tmp_path / "a", Route(rules, ctype="application/json"))
    assert allowed == {"/members/letter.html": False, "/members/open.html": True,   # its meta says 0
                       "/members/notes.txt": False, "/public.html": True}
    assert hits.count("/.well-known/tdmrep.json") == 1                              # once per origin

    allowed, hits = _crawl(tmp_path / "b", Route(rules, ctype="application/json"), tdm_file=False)
    assert set(allowed.values()) == {True} and "/.well-known/tdmrep.json" not in hits
    # robots.txt disallows the file's URL to the crawler: not requested, nothing reserved
    allowed, hits = _crawl(tmp_path / "e", Route(rules, ctype="application/json"),
                           robots="User-agent: *\nDisallow: /.well-known/\n")
    assert set(allowed.values()) == {True} and "/.well-known/tdmrep.json" not in hits

    allowed, _ = _crawl(tmp_path / "c", Route(b"<html><body>Page not found</body></html>"))  # a soft 404
    assert set(allowed.values()) == {True}
    allowed, _ = _crawl(tmp_path / "d", Route(b"oops", 500, "text/plain"))
    assert set(allowed.values()) == {True}


def test_image_fetches_read_the_sites_tdmrep_file():
    buf = io.BytesIO()
    Image.new("RGB", (32, 32), (9, 8, 7)).save(buf, format="PNG")
    png = buf.getvalue()
    rules = json.dumps([{"location": "/photos/*.png$", "tdm-reservation": 1}]).encode()
    routes = {"/photos/a.png": Route(png, ctype="image/png"), "/photos/a.png.bak": Route(png, ctype="image/png"),
              "/icons/b.png": Route(png, ctype="image/png"),
              "/.well-known/tdmrep.json": Route(rules, ctype="application/json")}
    with LocalSite(routes) as site:
        f = ImageFetcher(ImageFetchConfig(allow_private=True, delay=0.0))
        try:
            got = {p: f.fetch(site.url + p) for p in ("/photos/a.png", "/photos/a.png.bak", "/icons/b.png")}
        finally:
            f.close()
        assert site.hits.count("/.well-known/tdmrep.json") == 1
    assert all(r.reason is None and r.body == png for r in got.values())
    assert {p: r.training_allowed for p, r in got.items()} == {
        "/photos/a.png": False, "/photos/a.png.bak": True, "/icons/b.png": True}
