"""Text files as pages: text/plain and text/markdown bodies become the text, lines kept; machine files
(robots.txt, /.well-known/) and binary bodies are refused with a reason; live crawl and WARC alike."""
import io
from collections import Counter

from crawl.plain_text import machine_file, markdown_title, plain_text

RFC = ("Network Working Group                                          M. Press\r\n"
       "Request for Comments: 9999                                  Cider Works\r\n\r\n\r\n\r\n"
       "1.  Introduction   \r\n\r\n"
       "   The press holds forty kilograms of apples; the ratchet\r\n"
       "   turns twice per minute.\r\n\f\r\n"
       "   +--------+    +--------+\r\n"
       "   | hopper |--->| press  |\r\n"
       "   +--------+    +--------+\r\n")
README = ("Quince press\n============\n\nTighten the two wing nuts before pouring the apples into the hopper.\n\n"
          "## Cleaning\n\nRinse the basket with cold water after every batch.\n")


def test_the_body_is_the_text_with_its_layout():
    text = plain_text(RFC + "\x00\x07stray controls\x1b")
    lines = text.split("\n")
    assert lines[0] == "Network Working Group                                          M. Press"
    assert "   | hopper |--->| press  |" in lines     # indentation and ASCII art kept
    assert "1.  Introduction" in lines                  # trailing spaces trimmed
    assert "\n\n\n" not in text and "\r" not in text and "\f" not in text
    assert text.endswith("stray controls")
    assert plain_text("\ufeff\n\nHello\n\n") == "Hello"


def test_markdown_titles_and_machine_files():
    assert markdown_title(README) == "Quince press"
    assert markdown_title("Intro line\n\n# Cider presses #\n") == "Cider presses"
    assert markdown_title("\n----\n\nCider\n-----\n") == "Cider"   # a rule after a blank line is no underline
    assert markdown_title("no heading here\n---- not an underline\n") is None
    assert markdown_title("plain words only") is None
    assert markdown_title("---\ntitle: 'Boot Loader Spec'\nSPDX: LGPL\n---\n\n# Intro\n") == "Boot Loader Spec"
    assert markdown_title("---\nSPDX-License-Identifier: LGPL\n---\n\nCider\n=====\n") == "Cider"
    for url in ("http://a.test/robots.txt", "http://a.test/ads.txt", "http://a.test/.well-known/security.txt",
                "http://a.test/ROBOTS.TXT"):
        assert machine_file(url), url
    for url in ("http://a.test/rfc9999.txt", "http://a.test/docs/robots.txt", "http://a.test/README.md"):
        assert not machine_file(url), url


def test_text_records_in_a_warc_become_pages(tmp_path):
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    from crawl.warc import iter_warc_pages
    path = tmp_path / "docs.warc.gz"
    legacy = "Le cidre bouché coûte six euros ; c'est l'été."
    with open(path, "wb") as f:
        w = WARCWriter(f, gzip=True)
        for url, body, ctype in (("http://a.test/rfc9999.txt", RFC.encode(), "text/plain"),
                                 ("http://a.test/README.md", README.encode(), "text/markdown; charset=utf-8"),
                                 ("http://a.test/fr.txt", legacy.encode("cp1252"), "text/plain; charset=windows-1252"),
                                 ("http://a.test/robots.txt", b"User-agent: *\nDisallow: /x\n", "text/plain"),
                                 ("http://a.test/blob.txt", bytes(range(256)) * 4, "text/plain")):
            hdrs = StatusAndHeaders("200 OK", [("Content-Type", ctype), ("Content-Language", "en")],
                                    protocol="HTTP/1.1")
            w.write_record(w.create_warc_record(url, "response", payload=io.BytesIO(body), http_headers=hdrs))
    skipped = Counter()
    rows = {r["url"].rsplit("/", 1)[1]: r for r in iter_warc_pages(str(path), skipped=skipped)}
    assert set(rows) == {"rfc9999.txt", "README.md", "fr.txt"}
    assert skipped == Counter({"plain:machine_file": 1, "binary_content": 1})
    rfc = rows["rfc9999.txt"]
    assert rfc["text"] == plain_text(RFC) and rfc["title"] is None and rfc["raw_html_zstd"] is None
    assert rfc["source"] == "warc" and rfc["language_hint"] == "en" and rfc["training_allowed"]
    assert rows["README.md"]["title"] == "Quince press" and "Rinse the basket" in rows["README.md"]["text"]
    assert rows["fr.txt"]["text"] == legacy and rows["fr.txt"]["encoding"] == "cp1252"


def test_live_crawl_reads_text_files_and_refuses_machine_files(tmp_path):
    """From a server on 127.0.0.1: a text file and a Markdown file become pages, robots.txt (linked
    from the page) is not a document, X-Robots-Tag noindex leaves no text; --no-plain-text skips them."""
    from crawl_testsite import LocalSite, Route

    from corpus.reader import ShardDataset
    from pipelines.crawl_pipeline import run_crawl

    home = ('<html><body><main><p>Specifications for the press.</p><a href="/rfc9999.txt">RFC</a> '
            '<a href="/README.md">readme</a> <a href="/robots.txt">robots</a> <a href="/draft.txt">draft</a> '
            '<a href="/blob.txt">blob</a> <a href="/_sources/index.rst.txt" rel="nofollow">Show source</a>'
            '</main></body></html>')
    plain = "text/plain; charset=utf-8"
    routes = {"/robots.txt": Route("User-agent: *\nAllow: /\n", ctype="text/plain"), "/": Route(home),
              "/rfc9999.txt": Route(RFC, ctype=plain), "/README.md": Route(README, ctype="text/markdown"),
              "/draft.txt": Route(RFC, ctype=plain, headers={"X-Robots-Tag": "noindex"}),
              "/blob.txt": Route(bytes(range(256)) * 4, ctype="text/plain"),
              "/_sources/index.rst.txt": Route("Specifications\n==============\n", ctype="text/plain")}

    def crawl(out, **kw):
        pages_dir, _ = run_crawl([site.url + "/"], str(out), allow_private=True, render="never", delay=0,
                                 max_pages=10, max_depth=1, sitemaps=False, retries=0, progress=False,
                                 order="shape", **kw)
        pages = {r["url"].rsplit("/", 1)[1]: r for r in ShardDataset(pages_dir).iter_rows()}
        log = {r["url"].rsplit("/", 1)[1]: r for r in ShardDataset(str(out / "log")).iter_rows()}
        return pages, log

    with LocalSite(routes) as site:
        pages, log = crawl(tmp_path / "c")
        off_pages, off_log = crawl(tmp_path / "off", plain_text=False)
    assert set(pages) == {"", "rfc9999.txt", "README.md", "draft.txt"}   # rel="nofollow" not followed
    assert "/_sources/index.rst.txt" not in site.hits
    rfc = pages["rfc9999.txt"]
    assert rfc["text"] == plain_text(RFC) and rfc["content_type"] == plain and rfc["training_allowed"]
    assert rfc["depth"] == 1 and rfc["source"] == "crawl" and rfc["outlinks"] == []
    assert pages["README.md"]["title"] == "Quince press"
    draft = pages["draft.txt"]
    assert draft["robots_noindex"] and not draft["training_allowed"] and draft["text"] is None
    assert log["rfc9999.txt"]["decision"] == "fetched"
    assert {k: log[k]["reason"] for k in ("robots.txt", "blob.txt")} == {
        "robots.txt": "plain:machine_file", "blob.txt": "binary_content"}
    assert set(off_pages) == {""}
    assert {off_log[k]["reason"] for k in ("rfc9999.txt", "README.md", "draft.txt")} == {"wrong_type"}
