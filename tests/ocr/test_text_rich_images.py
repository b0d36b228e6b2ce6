"""Text-rich web images: OCR text as its own column on pairs, behind ImagesConfig.ocr (images --ocr)."""
import io

import pytest
from PIL import Image, ImageDraw, ImageFont

from filters.ocr import available
from filters.ocr_text_rich import TextRichConfig, read_text
from imagetext.config import ImagesConfig
from imagetext.pairs import make_pairs
from pipelines.images_pipeline import PAIRS_OUT

pytestmark = pytest.mark.skipif(not available(), reason="tesseract not installed (make system-deps)")
LINES = ["Pressing yield by apple variety", "Dabinett 72% juice", "Kingston Black 68% juice",
         "Yarlington Mill 70% juice"]


def _png(im) -> bytes:
    buf = io.BytesIO()
    im.save(buf, format="PNG")
    return buf.getvalue()


def infographic() -> bytes:
    im = Image.new("RGB", (640, 260), "white")
    d = ImageDraw.Draw(im)
    font = ImageFont.truetype("DejaVuSans.ttf", 26)
    for k, line in enumerate(LINES):
        d.text((30, 30 + 55 * k), line, font=font, fill="black")
    return _png(im)


def photo() -> bytes:
    im = Image.new("RGB", (640, 260), (90, 140, 60))
    d = ImageDraw.Draw(im)
    d.ellipse((200, 40, 380, 220), fill=(200, 30, 30))
    return _png(im)


def _ref(src: str, lang: str = "en") -> dict:
    return {"page_id": "p1", "page_url": "http://127.0.0.1/p", "idx": 0, "src": src, "alt": "a chart of pressing yields",
            "caption": None, "text_before": "", "text_after": "", "position": 0, "page_language": lang,
            "page_training_allowed": True}


def _info(data: bytes) -> dict:
    return {"image": data, "reason": None, "training_allowed": True, "mime": "image/png", "width": 640,
            "height": 260, "sha256": "x", "phash": "0"}


def test_text_rich_image_gets_its_ocr_text_and_a_photo_does_not():
    cfg = ImagesConfig(ocr=TextRichConfig())
    rich = make_pairs(_ref("http://127.0.0.1/a.png"), _info(infographic()), cfg)[0]
    assert "Kingston Black" in rich["ocr_text"] and rich["ocr_chars"] >= cfg.ocr.min_chars
    assert 0.5 < rich["ocr_score"] <= 1.0 and rich["_meta"]["ocr_reason"] is None
    plain = make_pairs(_ref("http://127.0.0.1/b.png"), _info(photo()), cfg)[0]
    assert plain["ocr_text"] is None and plain["_meta"]["ocr_reason"] in ("ocr_no_text", "ocr_text_short")
    assert {"ocr_text", "ocr_score", "ocr_chars", "clip_score"} <= set(PAIRS_OUT.names)


def test_default_images_run_does_not_ocr():
    row = make_pairs(_ref("http://127.0.0.1/a.png"), _info(infographic()), ImagesConfig())[0]
    assert row["ocr_text"] is None and row["ocr_score"] is None and row["ocr_chars"] is None


def test_page_language_picks_the_model_and_bad_images_get_a_reason():
    from filters.ocr import tesseract_lang
    assert tesseract_lang("de") == "deu+eng" and tesseract_lang("xx") == "eng"
    r = read_text(b"\x89PNG\r\n\x1a\n broken", "de")
    assert r["ocr_reason"] == "ocr:undecodable_image" and r["ocr_text"] is None
    german = read_text(infographic(), "de")   # German model (+English): the same text still reads
    assert german["ocr_reason"] is None and "Dabinett" in german["ocr_text"]
