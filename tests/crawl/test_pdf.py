"""PDFs as a source: text layer, OCR for scanned pages, page images, interleaved; bad files refused."""
import io
import json

import pikepdf
import pytest
from PIL import Image, ImageDraw, ImageFont

from crawl.pdf import PdfLimits, PdfRefused, read_pdf

LINE = "Tighten the two wing nuts before pouring the apples into the hopper."


def text_pdf(pages: int = 2, title: str = "Quince press manual") -> bytes:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_pdf import PdfPages
    buf = io.BytesIO()
    with matplotlib.rc_context({"pdf.fonttype": 42}), PdfPages(buf, metadata={"Title": title}) as pp:
        for k in range(pages):
            fig = plt.figure(figsize=(6, 8))
            fig.text(0.1, 0.9, f"Chapter {k + 1}: Installing the quince press", fontsize=14)
            fig.text(0.1, 0.8, LINE, fontsize=9)
            pp.savefig(fig)
            plt.close(fig)
    return buf.getvalue()


def scanned_pdf() -> bytes:
    im = Image.new("RGB", (850, 1100), "white")
    d = ImageDraw.Draw(im)
    font = ImageFont.truetype("DejaVuSans.ttf", 28)
    d.text((60, 100), "Scanned page: the cider mill manual", font=font, fill="black")
    d.text((60, 160), "Clean the press after every batch.", font=font, fill="black")
    buf = io.BytesIO()
    im.save(buf, format="PDF", resolution=100)
    return buf.getvalue()


def test_pdf_round_trips_to_text_and_page_images():
    doc = read_pdf(text_pdf(), PdfLimits(dpi=100))
    assert doc.title == "Quince press manual" and doc.page_count == 2
    assert [p.text_source for p in doc.pages] == ["text_layer", "text_layer"]
    assert "Chapter 2: Installing the quince press" in doc.pages[1].text and LINE in doc.text
    assert doc.pages[0].image_size == (600, 800)   # 6 x 8 in at 100 dpi
    assert Image.open(io.BytesIO(doc.pages[0].image_png)).size == (600, 800)
    items = doc.interleaved()
    assert [i["type"] for i in items] == ["image", "text", "image", "text"]
    assert items[2]["image_sha256"] == doc.pages[1].image_sha256 and items[3]["text"] == doc.pages[1].text


def test_page_without_text_layer_is_ocrd():
    from filters.ocr import available, page_ocr
    if not available():
        pytest.skip("tesseract not installed (make system-deps)")
    doc = read_pdf(scanned_pdf(), PdfLimits(dpi=100), ocr=page_ocr("en"))
    assert doc.pages[0].text_source == "ocr" and "cider mill manual" in doc.pages[0].text
    assert read_pdf(scanned_pdf(), PdfLimits(dpi=100)).pages[0].text_source == "none"


def _refused(data, limits=PdfLimits(dpi=50)):
    with pytest.raises(PdfRefused) as e:
        read_pdf(data, limits)
    return e.value.reason


def _pike(data, **save):
    out = io.BytesIO()
    pikepdf.open(io.BytesIO(data)).save(out, **save)
    return out.getvalue()


def test_bad_pdfs_are_refused_with_reasons():
    good = text_pdf(pages=1)
    assert _refused(_pike(good, encryption=pikepdf.Encryption(owner="o", user="u"))) == "pdf:encrypted"
    assert _refused(_pike(good, encryption=pikepdf.Encryption(owner="o", user=""))) == "pdf:encrypted"
    assert _refused(good[: len(good) // 3]) == "pdf:broken"
    assert _refused(b"<html>not a pdf</html>") == "pdf:not_pdf"
    assert _refused(good, PdfLimits(max_bytes=1000)) == "pdf:too_large"
    # a page of 100,000 x 100,000 points: refused before anything is rendered
    pdf = pikepdf.open(io.BytesIO(good))
    pdf.pages[0].mediabox = pikepdf.Array([0, 0, 100000, 100000])
    big = io.BytesIO()
    pdf.save(big)
    assert _refused(big.getvalue()) == "pdf:page_too_large"
    many = text_pdf(pages=4)
    assert _refused(many, PdfLimits(refuse_pages=3, dpi=50)) == "pdf:too_many_pages"
    cut = read_pdf(many, PdfLimits(max_pages=2, dpi=50, render=False))
    assert len(cut.pages) == 2 and cut.notes == ["cut_pages:2/4"]


def test_pdf_dir_import_writes_three_datasets(tmp_path):
    from corpus.reader import ShardDataset
    from pipelines.pdf_import import run_pdf_import
    src = tmp_path / "pdfs"
    (src / "sub").mkdir(parents=True)
    data = text_pdf()
    (src / "manual.pdf").write_bytes(data)
    (src / "sub" / "same.pdf").write_bytes(data)          # the same document twice
    (src / "broken.pdf").write_bytes(data[:500])
    out = tmp_path / "out"
    s = run_pdf_import(str(src), str(out), limits=PdfLimits(dpi=50), ocr=False)
    assert s["documents"] == 1 and s["page_images"] == 2
    assert s["refused"] == {"pdf:duplicate": 1, "pdf:broken": 1}
    page = ShardDataset(str(out / "pages")).to_table().to_pylist()[0]
    assert page["source"] == "pdf" and page["content_type"] == "application/pdf" and LINE in page["text"]
    pairs = ShardDataset(str(out / "pdf_pages")).to_table().to_pylist()
    assert [json.loads(p["meta_json"])["page"] for p in pairs] == [1, 2]
    assert {p["text_source"] for p in pairs} == {"pdf:text_layer"}
    inter = ShardDataset(str(out / "interleaved")).to_table().to_pylist()[0]
    assert [i["type"] for i in inter["items"]] == ["image", "text", "image", "text"]
    stats = json.loads((out / "pages" / "_report" / "stats.json").read_text())
    assert stats["stages"]["pdf"]["dropped"] == {"pdf:duplicate": 1, "pdf:broken": 1}


def test_pdf_records_in_a_warc_become_pages(tmp_path):
    from collections import Counter

    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    from crawl.warc import iter_warc_pages
    good = text_pdf(pages=1)
    locked = _pike(good, encryption=pikepdf.Encryption(owner="o", user="u"))
    path = tmp_path / "docs.warc.gz"
    with open(path, "wb") as f:
        w = WARCWriter(f, gzip=True)
        for url, body in (("http://a.test/manual.pdf", good), ("http://a.test/locked.pdf", locked)):
            hdrs = StatusAndHeaders("200 OK", [("Content-Type", "application/pdf")], protocol="HTTP/1.1")
            w.write_record(w.create_warc_record(url, "response", payload=io.BytesIO(body), http_headers=hdrs))
    skipped = Counter()
    rows = list(iter_warc_pages(str(path), skipped=skipped))
    assert [r["url"] for r in rows] == ["http://a.test/manual.pdf"] and LINE in rows[0]["text"]
    assert rows[0]["content_type"] == "application/pdf" and rows[0]["title"] == "Quince press manual"
    assert skipped["pdf:encrypted"] == 1


def test_live_crawl_fetches_pdfs_and_refuses_bad_ones(tmp_path):
    """application/pdf from a server on 127.0.0.1: the text layer becomes a page, bad files a reason."""
    from crawl_testsite import LocalSite, Route

    from corpus.reader import ShardDataset
    from pipelines.crawl_pipeline import run_crawl

    good = text_pdf(pages=2)
    pdf = "application/pdf"
    home = ('<html><body><main><p>Manuals for the press.</p><a href="/manual.pdf">manual</a> '
            '<a href="/locked.pdf">locked</a> <a href="/cut.pdf">cut</a> <a href="/fake.pdf">fake</a> '
            '<a href="/private.pdf">private</a></main></body></html>')
    routes = {"/robots.txt": Route("User-agent: *\nAllow: /\n", ctype="text/plain"), "/": Route(home),
              "/manual.pdf": Route(good, ctype=pdf),
              "/locked.pdf": Route(_pike(good, encryption=pikepdf.Encryption(owner="o", user="u")), ctype=pdf),
              "/cut.pdf": Route(good[: len(good) // 3], ctype=pdf),
              "/fake.pdf": Route(b"<html>not a pdf</html>", ctype=pdf),
              # X-Robots-Tag is a PDF's only page-level directive: crawled, never text for training
              "/private.pdf": Route(good, ctype=pdf, headers={"X-Robots-Tag": "noindex"})}
    with LocalSite(routes) as site:
        pages_dir, _ = run_crawl([site.url + "/"], str(tmp_path / "c"), allow_private=True, render="never", delay=0,
                                 max_pages=10, max_depth=1, sitemaps=False, retries=0, progress=False,
                                 order="shape")
    pages = {r["url"].rsplit("/", 1)[1]: r for r in ShardDataset(pages_dir).iter_rows()}
    assert set(pages) == {"", "manual.pdf", "private.pdf"}
    p = pages["private.pdf"]
    assert p["robots_noindex"] and not p["training_allowed"] and p["text"] is None
    m = pages["manual.pdf"]
    assert m["content_type"] == pdf and m["title"] == "Quince press manual" and m["training_allowed"]
    assert LINE in m["text"] and "Chapter 2: Installing the quince press" in m["text"]
    log = {r["url"].rsplit("/", 1)[1]: r for r in ShardDataset(str(tmp_path / "c" / "log")).iter_rows()}
    assert log["manual.pdf"]["decision"] == "fetched"
    assert {k: log[k]["reason"] for k in ("locked.pdf", "cut.pdf", "fake.pdf")} == {
        "locked.pdf": "pdf:encrypted", "cut.pdf": "pdf:broken", "fake.pdf": "pdf:not_pdf"}
