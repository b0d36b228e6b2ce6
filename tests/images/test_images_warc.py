"""Common Crawl style input: pages and their images in one WARC file. `cidermill crawl --warc` imports
the pages, `cidermill images --warc` takes the images from the same archive (no fetch: the archived
host does not even resolve), matched to the pages' <img src>."""
from __future__ import annotations

import io
import os
from collections import Counter

import pytest

from corpus.reader import ShardDataset

BASE = "http://images.archive.invalid"
NAMES = ["good0.png", "good1.png", "good2.png", "good3.png", "good4.png", "dup_exact.png", "truncated.png",
         "html.jpg", "missing.png", "captioned.png"]


def _record(writer, url, body, ctype, status="200 OK", date="2026-01-02T00:00:00Z", extra=()):
    from warcio.statusandheaders import StatusAndHeaders

    http = StatusAndHeaders(status, [("Content-Type", ctype), *extra], protocol="HTTP/1.1")
    writer.write_record(writer.create_warc_record(url, "response", payload=io.BytesIO(body), http_headers=http,
                                                  warc_headers_dict={"WARC-Date": date}))


def _html(cases):
    parts = []
    for j, name in enumerate(NAMES):
        c = cases[name]
        img = f'<img src="/{name}" alt="{c["alt"] or ""}">'
        if c["caption"]:
            img = f"<figure>{img}<figcaption>{c['caption']}</figcaption></figure>"
        parts.append(f"<p>Paragraph {j} of this page talks about the garden and about the picture that "
                     f"follows it, with enough words to count as main content.</p>{img}")
    return (f"<html><head><title>Garden pictures</title></head><body><article><h1>Garden pictures</h1>"
            f"{''.join(parts)}<p>The end of the article about the garden pictures.</p></article></body></html>")


@pytest.fixture(scope="module")
def warc_run(image_site, tiny_clip, tmp_path_factory):
    from warcio.warcwriter import WARCWriter

    from pipelines.cli import main

    _, cases, root = image_site
    d = tmp_path_factory.mktemp("warc")
    warc = str(d / "crawl.warc.gz")
    files = {n: open(os.path.join(root, n), "rb").read() for n in NAMES if n != "missing.png"}
    with open(warc, "wb") as f:
        w = WARCWriter(f, gzip=True)
        _record(w, f"{BASE}/page.html", _html(cases).encode(), "text/html; charset=utf-8")
        for n, blob in sorted(files.items()):
            ctype = "image/jpeg" if n.endswith(".jpg") else "image/png"
            if n == "good3.png":   # archived twice: an older 404, then the image
                _record(w, f"{BASE}/{n}", b"gone", "text/plain", status="404 Not Found", date="2025-01-01T00:00:00Z")
            _record(w, f"{BASE}/{n}", blob, ctype,
                    extra=[("X-Robots-Tag", "noindex")] if n == "good4.png" else ())
        _record(w, f"{BASE}/unreferenced.png", files["good5.png"] if "good5.png" in files else files["good2.png"],
                "image/png")
    out = str(d / "out")
    assert main(["crawl", "--warc", warc, "--out", str(d / "crawl")]) == 0
    pages = str(d / "crawl" / "pages")
    args = ["images", "--pages", pages, "--out", out, "--clip-checkpoint", tiny_clip[0], "--warc", warc,
            "--clip-batch-size", "8", "--clip-threads", "1"]
    assert main(args) == 0
    return pages, out, files


@pytest.mark.slow
def test_images_come_from_the_archive(warc_run):
    from filters.image_check import check_image

    pages, out, files = warc_run
    page = next(ShardDataset(pages).iter_rows())
    assert sorted(im["src"].rsplit("/", 1)[1] for im in page["images"]) == sorted(NAMES)
    rows = list(ShardDataset(os.path.join(out, "pairs")).iter_rows())
    by = {(r["image_url"].rsplit("/", 1)[1], r["text_source"]): r for r in rows}
    assert set(by) == {(n, "alt") for n in NAMES} | {("captioned.png", "caption")}
    assert by[("missing.png", "alt")]["drop_reason"] == "image_not_in_warc"
    assert by[("truncated.png", "alt")]["drop_reason"] == "image_truncated"
    assert by[("html.jpg", "alt")]["drop_reason"] == "image_is_html"
    assert by[("good4.png", "alt")]["drop_reason"] == "image_training_optout"
    a, b = by[("good0.png", "alt")], by[("dup_exact.png", "alt")]
    assert sorted([a["drop_reason"] or "", b["drop_reason"] or ""]) == ["", "duplicate_image_exact"]
    for n in ("good0.png", "good1.png", "good2.png", "good3.png", "captioned.png"):
        r = by[(n, "alt")]
        assert r["sha256"] == check_image(files[n]).sha256 and r["clip_score"] is not None, n
        assert r["drop_reason"] in (None, "clip_low_score", "duplicate_image_exact"), (n, r["drop_reason"])
    reasons = Counter(r["drop_reason"] for r in rows)
    assert not any(k and k.startswith("fetch_") for k in reasons), reasons   # nothing was fetched
    docs = list(ShardDataset(os.path.join(out, "interleaved")).iter_rows())
    assert len(docs) == 1 and docs[0]["images_in"] == len(NAMES)


@pytest.mark.slow
def test_warc_first_then_live_fetch_for_the_rest(image_site, tiny_clip, tmp_path):
    """--warc-missing fetch: archived URLs are read from the WARC (even when the live file differs),
    the others are fetched through the crawl rules."""
    from warcio.warcwriter import WARCWriter

    from images_site import write_pages
    from filters.image_check import check_image
    from pipelines.cli import main

    base, cases, root = image_site
    good2 = open(os.path.join(root, "good2.png"), "rb").read()
    warc = str(tmp_path / "images.warc")
    with open(warc, "wb") as f:
        w = WARCWriter(f, gzip=False)
        _record(w, f"{base}/good5.png", good2, "image/png")     # archived bytes differ from the live file
    pages = write_pages(str(tmp_path / "pages"), base, cases)
    out = str(tmp_path / "out")
    assert main(["images", "--pages", pages, "--out", out, "--clip-checkpoint", tiny_clip[0], "--allow-private",
                 "--delay", "0", "--clip-batch-size", "8", "--clip-threads", "1", "--warc", warc,
                 "--warc-missing", "fetch"]) == 0
    by = {(r["image_url"].rsplit("/", 1)[1], r["text_source"]): r
          for r in ShardDataset(os.path.join(out, "pairs")).iter_rows() if r["page_id"] != "page_optout"}
    assert by[("good5.png", "alt")]["sha256"] == check_image(good2).sha256
    live = open(os.path.join(root, "good1.png"), "rb").read()
    assert by[("good1.png", "alt")]["sha256"] == check_image(live).sha256
    assert by[("missing.png", "alt")]["drop_reason"] == "fetch_http_404"


def test_warc_image_records(tmp_path):
    """Record parsing without Beam: types that are never images are skipped, statuses become reasons,
    a repeated URL resolves to one record whatever the order."""
    from warcio.warcwriter import WARCWriter

    from crawl.image_warc import iter_warc_images, pick_record

    path = str(tmp_path / "a.warc.gz")
    with open(path, "wb") as f:
        w = WARCWriter(f, gzip=True)
        _record(w, "http://h.example/a.png", b"\x89PNG old", "image/png", date="2025-01-01T00:00:00Z")
        _record(w, "http://h.example/a.png", b"\x89PNG new", "image/png", date="2026-01-01T00:00:00Z")
        _record(w, "http://h.example/a.png", b"", "image/png", status="503 Busy", date="2027-01-01T00:00:00Z")
        _record(w, "http://h.example/s.css", b"body{}", "text/css")
        _record(w, "http://h.example/p.html", b"<html></html>", "text/html")
        _record(w, "http://H.example:80/b.jpg", b"\xff\xd8", "image/jpeg", extra=[("X-Robots-Tag", "noindex")])
    skipped = Counter()
    recs = list(iter_warc_images(path, skipped=skipped))
    assert [r["url"] for r in recs] == ["http://h.example/a.png"] * 3 + ["http://h.example/b.jpg"]
    assert skipped["not_an_image_type"] == 2
    assert recs[2]["reason"] == "fetch_http_503" and recs[3]["training_allowed"] is False
    assert pick_record(recs[:3])["body"] == b"\x89PNG new" == pick_record(recs[2::-1])["body"]
    assert pick_record([]) is None
    with open(path, "rb") as f:
        data = f.read()
    with open(tmp_path / "cut.warc.gz", "wb") as f:
        f.write(data[: len(data) // 2])
    assert len(list(iter_warc_images(str(tmp_path / "cut.warc.gz")))) < len(recs)   # truncated: what was read
    (tmp_path / "junk.warc").write_bytes(b"this is not a WARC file\n" * 10)
    skipped = Counter()
    assert list(iter_warc_images(str(tmp_path / "junk.warc"), skipped=skipped)) == []
    assert sum(skipped.values()) > 0        # counted (warcio reads junk leniently), never raised
