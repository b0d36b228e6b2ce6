"""A folder of saved HTML pages in (`cidermill crawl --html-dir`): one page per file, as fetched."""
import gzip
import os
from collections import Counter

from corpus.reader import ShardDataset
from corpus.report import read_report
from crawl.html_files import iter_html_file_pages, page_files
from pipelines.cli import main as cli_main

TEXT = ("The cider press manual explains how to set the pressure, clean the barrel and store the juice "
        "through the winter without losing its taste.")
PAGE = "<html><head><title>{title}</title>{head}</head><body><nav><a href='{link}'>next</a></nav>" \
       "<article><h1>{title}</h1><p>{text}</p></article></body></html>"


def _docset(root):
    (root / "guide").mkdir(parents=True)
    (root / "index.html").write_text(PAGE.format(title="Manual", head="", link="guide/press.html", text=TEXT))
    (root / "guide" / "press.html").write_text(PAGE.format(title="Pressure", head="", link="../index.html", text=TEXT))
    latin = PAGE.format(title="Cidre", head="<meta charset='iso-8859-1'>", link="/",
                        text="Le cidre bouché coûte environ six euros la bouteille dans le village.")
    (root / "guide" / "cidre.htm").write_bytes(latin.encode("iso-8859-1"))
    (root / "guide" / "barrel.html.gz").write_bytes(gzip.compress(
        PAGE.format(title="Barrel", head="", link="press.html", text=TEXT).encode()))
    (root / "private.html").write_text(PAGE.format(title="Private", head="<meta name='robots' content='noindex'>",
                                                   link="/", text=TEXT))
    (root / "broken.html").write_bytes(bytes(range(256)) * 8)
    (root / "bad.html.gz").write_bytes(b"\x1f\x8b\x08 not really gzip")
    (root / "style.css").write_text("body { color: red }")
    (root / "guide" / "notes.txt").write_text(TEXT)


def test_pages_get_the_site_urls_and_their_links_resolve(tmp_path):
    root = tmp_path / "docs"
    _docset(root)
    rels = page_files(str(root))
    assert rels == ["bad.html.gz", "broken.html", "guide/barrel.html.gz", "guide/cidre.htm", "guide/press.html",
                    "index.html", "private.html"]
    skipped: Counter = Counter()
    rows = {r["url"]: r for r in iter_html_file_pages(str(root), rels, "https://docs.example.org/v2",
                                                       skipped=skipped)}
    assert sorted(rows) == ["https://docs.example.org/v2/guide/barrel.html", "https://docs.example.org/v2/guide/cidre.htm",
                            "https://docs.example.org/v2/guide/press.html", "https://docs.example.org/v2/index.html",
                            "https://docs.example.org/v2/private.html"]
    assert skipped == Counter({"binary_content": 1, "unreadable:bad_gzip": 1})
    index = rows["https://docs.example.org/v2/index.html"]
    assert TEXT in index["text"] and index["host"] == "docs.example.org" and index["source"] == "files"
    assert [o["url"] for o in index["outlinks"]] == ["https://docs.example.org/v2/guide/press.html"]
    assert "bouché" in rows["https://docs.example.org/v2/guide/cidre.htm"]["text"]
    assert TEXT in rows["https://docs.example.org/v2/guide/barrel.html"]["text"]
    private = rows["https://docs.example.org/v2/private.html"]
    assert private["robots_noindex"] and private["text"] is None and not private["training_allowed"]


def test_without_a_base_url_pages_are_file_urls_named_by_their_folder(tmp_path):
    root = tmp_path / "my docs"
    _docset(root)
    rows = list(iter_html_file_pages(str(root), ["guide/press.html"]))
    assert rows[0]["url"] == "file://" + str(root).replace(" ", "%20") + "/guide/press.html"
    assert rows[0]["host"] == "my docs" and TEXT in rows[0]["text"]


def test_cli_imports_a_folder_and_reports_what_gave_no_page(tmp_path, capsys):
    root = tmp_path / "docs"
    _docset(root)
    out = str(tmp_path / "out")
    assert cli_main(["crawl", "--html-dir", str(root), "--base-url", "https://docs.example.org/v2/", "--out", out,
                     "--quiet"]) == 0
    capsys.readouterr()
    pages = os.path.join(out, "pages")
    assert len(ShardDataset(pages)) == 5
    crawl = read_report(pages).info["crawl"]
    assert crawl["skipped_by_reason"] == {"binary_content": 1, "unreadable:bad_gzip": 1}
    assert cli_main(["crawl", "--html-dir", str(tmp_path / "none"), "--out", out]) == 1
    assert "not found" in capsys.readouterr().err
    assert cli_main(["crawl", "--html-dir", str(root), "--base-url", "ftp://x", "--out", out]) == 1
    assert "--base-url" in capsys.readouterr().err
