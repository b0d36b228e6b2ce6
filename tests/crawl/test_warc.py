"""WARC import (`cidermill crawl --warc`) into the pages dataset, and WARC writing round trip."""
import io
import os
from collections import Counter

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from corpus.reader import ShardDataset
from corpus.verify import verify_dataset
from crawl.warc import iter_warc_pages, write_warc
from pipelines.cli import main as cli_main

BODY = "<html lang='en'><head><title>Cider press</title></head><body><article><p>{}</p></article></body></html>"
TEXT = "The old cider press in the village square still works every October, and everybody brings apples."
LEGACY = "Le cidre bouché coûte environ six euros la bouteille ; le pommeau un peu plus, c'est l'été."


def _make_warc(path):
    with open(path, "wb") as f:
        w = WARCWriter(f, gzip=True)

        def resp(url, body: bytes, ctype, status="200 OK", extra=()):
            hdrs = StatusAndHeaders(status, [("Content-Type", ctype), *extra], protocol="HTTP/1.1")
            w.write_record(w.create_warc_record(url, "response", payload=io.BytesIO(body), http_headers=hdrs))

        resp("http://a.test/press.html", BODY.format(TEXT).encode(), "text/html; charset=utf-8",
             extra=[("X-Robots-Tag", "otherbot: noindex"), ("X-Robots-Tag", "thirdbot: nofollow")])
        resp("http://a.test/legacy.html", BODY.format(LEGACY).encode("cp1252"), "text/html")
        resp("http://a.test/img.png", b"\x89PNG\r\n\x1a\n" + bytes(64), "image/png")
        # two X-Robots-Tag headers: the first's noindex is ours, the second aims at another crawler
        resp("http://a.test/secret.html", BODY.format(TEXT).encode(), "text/html",
             extra=[("X-Robots-Tag", "noindex"), ("X-Robots-Tag", "otherbot: nofollow")])
        resp("http://a.test/bin.html", bytes(range(256)) * 4, "text/html")
        w.write_record(w.create_warc_record("http://a.test/press.html", "request", payload=io.BytesIO(b"GET /")))


def test_warc_import_cli_and_roundtrip(tmp_path, capsys):
    src = str(tmp_path / "in.warc.gz")
    _make_warc(src)
    out = str(tmp_path / "out")
    assert cli_main(["crawl", "--warc", src, "--out", out, "--quiet"]) == 0
    capsys.readouterr()
    pages_dir = os.path.join(out, "pages")
    assert verify_dataset(pages_dir) == []
    rows = {r["url"]: r for r in ShardDataset(pages_dir).iter_rows()}
    assert set(rows) == {"http://a.test/press.html", "http://a.test/legacy.html", "http://a.test/secret.html"}
    assert TEXT in rows["http://a.test/press.html"]["text"] and rows["http://a.test/press.html"]["source"] == "warc"
    assert LEGACY in rows["http://a.test/legacy.html"]["text"]
    secret = rows["http://a.test/secret.html"]
    assert secret["robots_noindex"] and secret["text"] is None and not secret["training_allowed"]
    # what a crawl keeps can be written back out as WARC and read again unchanged
    again = str(tmp_path / "again.warc.gz")
    assert write_warc(again, iter(rows.values())) == 2  # noindex pages keep no HTML
    back = {r["url"]: r for r in iter_warc_pages(again)}
    assert back["http://a.test/legacy.html"]["text"] == rows["http://a.test/legacy.html"]["text"]
    press = rows["http://a.test/press.html"]
    assert not press["robots_noindex"] and not press["robots_nofollow"]
    assert back["http://a.test/press.html"]["headers"] == press["headers"]   # both X-Robots-Tag lines, again
    assert {"name": "x-robots-tag", "value": "otherbot: noindex\nthirdbot: nofollow"} in press["headers"]


def test_bad_warc_paths_are_one_line_errors(tmp_path, capsys):
    assert cli_main(["crawl", "--warc", str(tmp_path / "missing.warc"), "--out", str(tmp_path / "o")]) == 1
    assert "not found" in capsys.readouterr().err
    junk = tmp_path / "junk.warc"
    junk.write_bytes(b"this is not a warc file at all")
    c = Counter()
    assert list(iter_warc_pages(str(junk), skipped=c)) == [] and sum(c.values()) >= 1


def test_cli_bad_arguments(tmp_path, capsys):
    assert cli_main(["crawl", "--seeds", "javascript:alert(1)", "--out", str(tmp_path / "x")]) == 1
    err = capsys.readouterr().err
    assert "no valid seed URL" in err and "Traceback" not in err
    assert cli_main(["crawl", "--seeds", "http://a.test/", "--out", str(tmp_path / "y"), "--max-pages", "0"]) == 1
    assert cli_main(["crawl", "--out", str(tmp_path / "z")]) == 1


def _arc_file(gz: bool) -> bytes:
    """An ARC v1 file, the Internet Archive's format before WARC: a filedesc header, one page."""
    html = BODY.format(TEXT).encode()
    http = b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n" % len(html) + html
    desc = b"1 0 Internet Archive\nURL IP-address Archive-date Content-type Archive-length\n"
    parts = [b"filedesc://old.arc 0.0.0.0 20050614070159 text/plain %d\n" % len(desc) + desc + b"\n",
             b"http://old.test/press.html 192.0.2.1 20050614070144 text/html %d\n" % len(http) + http + b"\n"]
    import gzip  # noqa: PLC0415
    return b"".join(gzip.compress(p) for p in parts) if gz else b"".join(parts)


def test_arc_files_read_like_warc(tmp_path):
    for gz in (True, False):
        path = tmp_path / ("old.arc.gz" if gz else "old.arc")
        path.write_bytes(_arc_file(gz))
        skipped: Counter = Counter()
        rows = list(iter_warc_pages(str(path), skipped=skipped))
        assert [(r["url"], r["fetched_at"][:10]) for r in rows] == [("http://old.test/press.html", "2005-06-14")]
        assert TEXT in rows[0]["text"] and skipped == Counter({"warc_warcinfo": 1})


def test_a_corrupt_record_in_a_plain_arc_costs_that_record_only(tmp_path):
    """Reading resumes at the next ARC header line (there is no WARC/ line to find in an ARC file)."""
    desc = b"1 0 Internet Archive\nURL IP-address Archive-date Content-type Archive-length\n"
    parts = [b"filedesc://old.arc 0.0.0.0 20050614070159 text/plain %d\n" % len(desc) + desc + b"\n"]
    for i in range(4):
        html = BODY.format(f"{TEXT} Page {i}.").encode()
        http = b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n" % len(html) + html
        parts.append(b"http://old.test/%d.html 192.0.2.1 20050614070144 text/html %d\n" % (i, len(http)) + http + b"\n")
    parts[2] = b"\x00\x01 garbage where a header line was" + parts[2][parts[2].index(b"\n"):]
    path = tmp_path / "damaged.arc"
    path.write_bytes(b"".join(parts))
    skipped: Counter = Counter()
    urls = [r["url"] for r in iter_warc_pages(str(path), skipped=skipped)]
    assert urls == ["http://old.test/0.html", "http://old.test/2.html", "http://old.test/3.html"]
    assert sum(n for k, n in skipped.items() if k.startswith("warc_corrupt:")) == 1


def test_untyped_bodies_are_sniffed_and_error_pages_skipped(tmp_path):
    """What a live crawl would keep: HTML served without a type (or as octet-stream, typed by the
    archive's own detection) is a page; redirects and error pages are not documents."""
    path = tmp_path / "mixed.warc.gz"
    page = BODY.format(TEXT).encode()
    with open(path, "wb") as f:
        w = WARCWriter(f, gzip=True)

        def resp(name, body, headers, status="200 OK", warc_headers=None):
            sh = StatusAndHeaders(status, headers, protocol="HTTP/1.1")
            w.write_record(w.create_warc_record(f"http://a.test/{name}", "response", payload=io.BytesIO(body),
                                                http_headers=sh, warc_headers_dict=warc_headers or {}))

        resp("untyped", b"\xef\xbb\xbf\n  <!DOCTYPE html>" + page, [])
        resp("octet", page, [("Content-Type", "application/octet-stream")],
             warc_headers={"WARC-Identified-Payload-Type": "text/html"})
        resp("untyped-text", TEXT.encode(), [])
        resp("untyped-png", b"\x89PNG\r\n\x1a\n" + bytes(64), [])
        resp("moved", b"<html><body>Moved</body></html>", [("Content-Type", "text/html"), ("Location", "/x")],
             status="301 Moved Permanently")
        resp("missing", b"<html><body><p>Sorry, that page is gone.</p></body></html>", [("Content-Type", "text/html")],
             status="404 Not Found")
    skipped: Counter = Counter()
    rows = list(iter_warc_pages(str(path), skipped=skipped))
    assert [r["url"] for r in rows] == ["http://a.test/untyped", "http://a.test/octet"]
    assert all(TEXT in r["text"] for r in rows)
    assert skipped == Counter({"wrong_type": 2, "redirect": 1, "http_404": 1})


def test_warc_import_report_says_why_each_record_gave_no_page(tmp_path, capsys):
    """A reviewer reads where every record went: the drops of each file, by reason, and the same
    URL met again in a second file."""
    from corpus.report import read_report  # noqa: PLC0415
    first, second = str(tmp_path / "a.warc.gz"), str(tmp_path / "b.warc.gz")
    _make_warc(first)
    _make_warc(second)
    out = str(tmp_path / "out")
    assert cli_main(["crawl", "--warc", first, second, "--out", out, "--quiet"]) == 0
    capsys.readouterr()
    report = read_report(os.path.join(out, "pages"))
    crawl = report.info["crawl"]
    assert crawl["pages"] == 3
    assert crawl["skipped_by_reason"] == {"binary_content": 2, "duplicate_url": 3, "warc_request": 2,
                                          "wrong_type": 2}
    stage = report.stages["crawl"]
    assert (stage.rows_in, stage.kept) == (3 + 9, 3)
