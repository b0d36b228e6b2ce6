"""Pages and images reserved from AI training while still open to crawling: the `noai` and
`noimageai` robots directives and the W3C TDM Reservation Protocol (TDMRep), read from a real
crawl of a local site and from real image fetches."""
import io
from urllib.parse import urlsplit

from crawl_testsite import LocalSite, Route
from PIL import Image

from corpus.reader import ShardDataset
from crawl.image_fetch import ImageFetchConfig, ImageFetcher
from crawl.robots_meta import page_signals
from pipelines.crawl_pipeline import run_crawl

PROSE = "".join(f"<p>Paragraph {i} of a plain article about orchards, pressing apples and storing the cider in "
                f"oak barrels over the long winter months, written out in full sentences.</p>" for i in range(8))


def _page(title: str, head: str = "") -> str:
    return (f"<html><head><title>{title}</title>{head}</head><body><article><h1>{title}</h1>"
            f'<img src="/pic.png" alt="An orchard in spring with blossom on every tree">{PROSE}</article></body></html>')


def test_reservation_signals_parsed():
    def ai_reservations(html, xrt, tdm):  # (page reserved, images reserved)
        return page_signals(html, xrt, tdm)[2:]

    assert ai_reservations('<meta name="robots" content="noindex, noai">', None, None) == (True, True)
    assert ai_reservations('<meta name="robots" content="noimageai">', None, None) == (False, True)
    assert ai_reservations('<meta name="CiderBot" content="noai">', None, None) == (True, True)
    assert ai_reservations('<meta name="otherbot" content="noai">', None, None) == (False, False)
    assert ai_reservations("<p>x</p>", "otherbot: noai", None) == (False, False)
    assert ai_reservations("<p>x</p>", "noimageai", None) == (False, True)
    assert ai_reservations("<p>x</p>", None, " 1 ") == (True, True)
    assert ai_reservations("<p>x</p>", None, "0") == (False, False)
    assert ai_reservations('<meta name="tdm-reservation" content="1">', None, None) == (True, True)
    assert ai_reservations("<meta name='tdm-reservation' content='0'>", None, None) == (False, False)


def test_crawl_marks_reserved_pages_and_drops_reserved_images(tmp_path):
    buf = io.BytesIO()
    Image.new("RGB", (64, 64), (200, 30, 30)).save(buf, format="PNG")
    names = ["noai", "tdm-header", "tdm-meta", "noimageai", "plain", "other-bot", "tdm-zero"]
    links = "".join(f'<a href="/{n}.html">{n}</a> ' for n in names)
    routes = {
        "/": Route(f"<html><body><p>Index of the orchard notes.</p>{links}</body></html>"),
        "/noai.html": Route(_page("No AI", '<meta name="robots" content="noai">')),
        "/tdm-header.html": Route(_page("TDM header"), headers={"tdm-reservation": "1"}),
        "/tdm-meta.html": Route(_page("TDM meta", '<meta name="tdm-reservation" content="1">')),
        "/noimageai.html": Route(_page("No image AI", '<meta name="robots" content="noimageai">')),
        "/plain.html": Route(_page("Plain")),
        "/other-bot.html": Route(_page("Other bot", '<meta name="otherbot" content="noai">')),
        "/tdm-zero.html": Route(_page("TDM zero"), headers={"tdm-reservation": "0"}),
        "/pic.png": Route(buf.getvalue(), ctype="image/png"),
    }
    with LocalSite(routes) as site:
        pages_dir, _ = run_crawl([site.url + "/"], str(tmp_path / "crawl"), allow_private=True, render="never",
                                 delay=0, max_pages=20, max_depth=2, progress=False)
    pages = {urlsplit(r["url"]).path: r for r in ShardDataset(pages_dir).iter_rows()}
    for name in names:
        row = pages[f"/{name}.html"]
        assert row["text"] and "oak barrels" in row["text"], name   # crawled and kept either way
    reserved = {"noai", "tdm-header", "tdm-meta"}
    assert {n for n in names if pages[f"/{n}.html"]["training_allowed"] is False} == reserved
    assert pages["/noimageai.html"]["images"] == []
    assert [i["src"].rsplit("/", 1)[-1] for i in pages["/plain.html"]["images"]] == ["pic.png"]
    assert {h["name"]: h["value"] for h in pages["/tdm-header.html"]["headers"]}.get("tdm-reservation") == "1"


def test_image_responses_that_reserve_themselves_are_not_for_training():
    buf = io.BytesIO()
    Image.new("RGB", (32, 32), (1, 2, 3)).save(buf, format="PNG")
    png = buf.getvalue()
    routes = {"/ok.png": Route(png, ctype="image/png"),
              "/noimageai.png": Route(png, ctype="image/png", headers={"X-Robots-Tag": "noimageai"}),
              "/noindex.png": Route(png, ctype="image/png", headers={"X-Robots-Tag": "noindex"}),
              "/tdm.png": Route(png, ctype="image/png", headers={"TDM-Reservation": "1"}),
              "/otherbot.png": Route(png, ctype="image/png", headers={"X-Robots-Tag": "otherbot: noai"})}
    with LocalSite(routes) as site:
        f = ImageFetcher(ImageFetchConfig(allow_private=True, delay=0.0))
        try:
            got = {p: f.fetch(site.url + p) for p in routes}
        finally:
            f.close()
    assert all(r.reason is None and r.body == png for r in got.values())
    assert {p for p, r in got.items() if r.training_allowed} == {"/ok.png", "/otherbot.png"}


def test_pages_read_from_an_archive_honour_the_same_reservations():
    """A WARC or HTML-file import (crawl/stored_page.py) reads the stored headers and the page."""
    from crawl.stored_page import stored_page_row
    rows = {}
    for name, head, headers in [("plain", "", []), ("noai", '<meta name="robots" content="noai">', []),
                                ("tdm", "", [("TDM-Reservation", "1")]),
                                ("noimageai", "", [("X-Robots-Tag", "noimageai")])]:
        body = _page(name, head).encode()
        row, why = stored_page_row(f"http://archive.test/{name}.html", body, "text/html; charset=utf-8",
                                   [("Content-Type", "text/html; charset=utf-8"), *headers], 200,
                                   "2026-01-01T00:00:00Z", "warc", "CiderBot", None)
        assert why is None and "oak barrels" in row["text"], name
        rows[name] = row
    assert {n for n, r in rows.items() if not r["training_allowed"]} == {"noai", "tdm"}
    assert rows["noimageai"]["images"] == [] and len(rows["plain"]["images"]) == 1
