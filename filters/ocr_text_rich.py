"""Text-rich web images: OCR an image that passed its checks, and keep the text when there is a lot of it.

Charts, tables, infographics, screenshots and scanned manuals carry their content as text drawn in
the image; alt text rarely says it. Such an image gets its OCR text as a column of its own on its
pairs (`ocr_text`), beside the OCR score (mean word confidence, 0-1) and the count of confidently
read characters (`ocr_chars`). A photo with a stray word or two (a shop sign, a licence plate) is
not text-rich: only words read with confidence >= `min_word_confidence` count, and the image needs
`min_chars` of them. Both thresholds were set on dev images by bench/ocr_text_rich.py and are
recorded in the images report's config. The tesseract model follows the page's language ID
(filters.ocr.tesseract_lang: a missing pack falls back to English). One image is bounded in time
(`timeout_s`) and size (filters.ocr.MAX_PIXELS); a failure is a reason (ocr:timeout, ...), never a crash.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from filters.ocr import ocr


@dataclass(frozen=True)
class TextRichConfig:
    min_chars: int = 13                 # confidently read characters to count as text-rich (bench/ocr_text_rich.py)
    min_word_confidence: float = 70.0   # tesseract word confidence (0-100) for a word to count
    timeout_s: float = 10.0             # per image

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def read_text(image: bytes, language: str | None, cfg: TextRichConfig = TextRichConfig()) -> dict[str, Any]:
    """{ocr_text (None unless text-rich), ocr_score, ocr_chars, ocr_reason (None when text-rich)}."""
    r = ocr(image, language, timeout_s=cfg.timeout_s, psm=11)
    if r.error:
        return {"ocr_text": None, "ocr_score": None, "ocr_chars": None, "ocr_reason": r.error}
    good = [w for w, c in r.words if c >= cfg.min_word_confidence]
    chars = sum(len(w) for w in good)
    score = round(r.mean_confidence / 100.0, 4)
    if chars < cfg.min_chars:
        return {"ocr_text": None, "ocr_score": score, "ocr_chars": chars,
                "ocr_reason": "ocr_no_text" if not r.words else "ocr_text_short"}
    return {"ocr_text": r.text, "ocr_score": score, "ocr_chars": chars, "ocr_reason": None}
