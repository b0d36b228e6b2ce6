"""OCR with Debian's tesseract (through pytesseract): one image in, its words and confidences out.

Tesseract's own OpenMP threads make it several times slower per page on a small machine, so every
call runs with OMP_THREAD_LIMIT=1 and callers parallelise across processes. Images are prepared
the way tesseract reads best: grey, dark themes inverted, contrast stretched, small renders scaled
up (its models want text about 20-30 px tall). A time limit per image kills a hung tesseract.
Bad input never raises: `OcrResult.error` names what went wrong (a recorded drop reason).
"""
from __future__ import annotations

import io
import os
import shutil
from dataclasses import dataclass, field

from PIL import Image, ImageOps, ImageStat

os.environ.setdefault("OMP_THREAD_LIMIT", "1")

# ISO 639-1 -> tesseract traineddata (Debian packages tesseract-ocr-<name with - for _>)
TESSERACT_LANGS = {"en": "eng", "fr": "fra", "de": "deu", "it": "ita", "pt": "por", "es": "spa", "ja": "jpn",
                   "ko": "kor", "zh": "chi_sim", "da": "dan", "nl": "nld", "no": "nor", "nb": "nor", "sv": "swe",
                   "tr": "tur", "vi": "vie"}
MAX_PIXELS = 40_000_000     # beyond this an image is refused, not decoded (decompression bombs)
DEFAULT_TIMEOUT_S = 20.0


@dataclass
class OcrResult:
    text: str = ""
    words: list[tuple[str, float]] = field(default_factory=list)   # (word, confidence 0-100)
    lang: str = ""
    error: str | None = None      # ocr:<reason> when the image could not be read

    @property
    def mean_confidence(self) -> float:
        return sum(c for _, c in self.words) / len(self.words) if self.words else 0.0


def available() -> bool:
    return shutil.which("tesseract") is not None


def installed_langs() -> frozenset[str]:
    import pytesseract  # noqa: PLC0415  (lazy: optional, needs the tesseract binary)
    try:
        return frozenset(pytesseract.get_languages(config=""))
    except Exception:  # noqa: BLE001
        return frozenset()


_LANGS: frozenset[str] | None = None


def tesseract_lang(lang: str | None) -> str:
    """The language switch: the page's language ID picks the model; English rides along (numbers,
    units and product names); a language whose pack is not installed falls back to English."""
    global _LANGS
    if _LANGS is None:
        _LANGS = installed_langs()
    code = TESSERACT_LANGS.get((lang or "en").split("-")[0].lower(), "eng")
    if code not in _LANGS:
        code = "eng"
    return code if code == "eng" else f"{code}+eng"


def prepare(img: Image.Image, min_side: int = 900, max_scale: float = 3.0) -> Image.Image:
    """Grey, light background, stretched contrast, small images scaled up (at most max_scale)."""
    g = ImageOps.grayscale(img.convert("RGB") if img.mode in ("P", "RGBA", "LA", "CMYK", "I;16") else img)
    if ImageStat.Stat(g).mean[0] < 110:   # dark theme: tesseract expects dark text on light ground
        g = ImageOps.invert(g)
    g = ImageOps.autocontrast(g)  # no cutoff: on a sparse page the text is under 1% of pixels
    scale = min(max_scale, max(1.0, min_side / max(1, min(g.size))))
    if scale > 1.01:
        g = g.resize((round(g.width * scale), round(g.height * scale)), Image.LANCZOS)
    return g


def open_image(data: bytes | Image.Image) -> tuple[Image.Image | None, str | None]:
    if isinstance(data, Image.Image):
        img = data
    else:
        try:
            img = Image.open(io.BytesIO(data))
        except Image.DecompressionBombError:
            return None, "ocr:image_too_large"
        except Exception:  # noqa: BLE001
            return None, "ocr:undecodable_image"
    if img.width * img.height > MAX_PIXELS:
        return None, "ocr:image_too_large"
    try:
        img.load()
    except Exception:  # noqa: BLE001
        return None, "ocr:undecodable_image"
    return img, None


def ocr(data: bytes | Image.Image, lang: str | None = "en", timeout_s: float = DEFAULT_TIMEOUT_S,
        psm: int = 11, prepared: bool = False) -> OcrResult:
    """Words of one image. psm 11 (sparse text) suits charts and scenes; 3 or 6 suit pages."""
    import pytesseract  # noqa: PLC0415  (lazy: optional, needs the tesseract binary)
    img, err = open_image(data)
    if err:
        return OcrResult(error=err)
    code = tesseract_lang(lang)
    g = img if prepared else prepare(img)
    try:
        d = pytesseract.image_to_data(g, lang=code, config=f"--psm {psm}", timeout=timeout_s,
                                      output_type=pytesseract.Output.DICT)
    except RuntimeError as e:   # pytesseract raises RuntimeError on its timeout
        return OcrResult(lang=code, error="ocr:timeout" if "timeout" in str(e).lower() else "ocr:engine_error")
    except pytesseract.TesseractError:
        return OcrResult(lang=code, error="ocr:engine_error")
    words, lines, key = [], [], None
    for w, c, b, p, ln in zip(d["text"], d["conf"], d["block_num"], d["par_num"], d["line_num"]):
        w = w.strip()
        if not w or float(c) < 0:
            continue
        words.append((w, float(c)))
        if (b, p, ln) != key:
            lines.append([])
            key = (b, p, ln)
        lines[-1].append(w)
    return OcrResult(text="\n".join(" ".join(x) for x in lines), words=words, lang=code)


def page_ocr(lang: str | None = "en", timeout_s: float = 60.0):
    """An `image -> (text, error)` callable for whole document pages (crawl.pdf's OCR hook)."""
    def run(img: Image.Image) -> tuple[str, str | None]:
        r = ocr(img, lang, timeout_s=timeout_s, psm=3)
        return r.text, r.error
    return run
