"""OCR read-back of synthetic images (real tesseract, one thread): clipped text drops, intact stays."""
import io
import json
import struct
import zlib

import pytest
from PIL import Image

from filters.ocr import available, ocr, tesseract_lang
from filters.ocr_readback import DEFAULT_MIN_RECALL
from pipelines.synth_ocr import check_row
from synth.charts import make_chart

pytestmark = pytest.mark.skipif(not available(), reason="tesseract not installed (make system-deps)")


def _png(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


def test_clipped_chart_dropped_intact_kept():
    row = make_chart(0, 5, languages=["en"])   # a line chart: title, x label, legend
    kept, drop = check_row(row)
    assert drop is None and json.loads(kept["meta_json"])["ocr"]["ocr_text_recall"] >= 0.8
    img = Image.open(io.BytesIO(row["image"])).convert("RGB")
    w, h = img.size
    # the same chart drawn off its canvas: title and upper-left legend cut at the border
    clipped = Image.new("RGB", (w, h), img.getpixel((1, 1)))
    clipped.paste(img, (-w // 4, -h // 8))
    kept, drop = check_row({**row, "image": _png(clipped)})
    assert kept is None and drop[0] == "ocr:unreadable_text" and drop[2]["ocr_missing"]
    # text too small to read: the chart drawn at a fifth of its size
    tiny = Image.new("RGB", (w, h), img.getpixel((1, 1)))
    tiny.paste(img.resize((w // 5, h // 5)), (0, 0))
    assert check_row({**row, "image": _png(tiny)})[1][0] == "ocr:unreadable_text"


def _huge_png_header() -> bytes:
    def chunk(tag: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + tag + body + struct.pack(">I", zlib.crc32(tag + body))
    ihdr = struct.pack(">IIBBBBB", 100_000, 100_000, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0" * 64))
            + chunk(b"IEND", b""))


def test_bad_images_have_reasons_and_language_switch():
    assert ocr(b"not an image").error == "ocr:undecodable_image"
    assert ocr(_huge_png_header()).error == "ocr:image_too_large"
    page = Image.new("RGB", (1200, 400), "white")
    assert ocr(_png(page), timeout_s=0.0001).error == "ocr:timeout"
    assert tesseract_lang("ja") == "jpn+eng" and tesseract_lang("en") == "eng"
    assert tesseract_lang("xx") == "eng"   # no pack for the language: English


def test_synth_ocr_check_records_scores(tmp_path):
    from corpus.report import read_report
    from pipelines.synth_pipeline import run_synth
    out = str(tmp_path / "tables")
    s = run_synth("tables", 2, out, seed=0, languages=["en"], ocr_check=True, contact_sheets=False)
    st = read_report(out)
    assert st.info["ocr_min_recall"] == DEFAULT_MIN_RECALL and s["rows"] + sum(s["dropped"].values()) == 2
    assert st.stages["synth_tables"].histograms["ocr_text_recall"].counts
