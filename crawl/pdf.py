"""PDF documents as a source: text layer, OCR for pages without one, page images, interleaved order.

pypdfium2 (PDFium, the engine Chromium uses) reads the text layer and renders pages. Everything a
hostile file could blow up is capped before it costs anything: bytes, page count (a document with
millions of pages is refused; a long one is cut at `max_pages` and says so), page size in points
(a 100,000 x 100,000 pt page is refused before rendering), pixels per rendered page, and total
render time (checked between pages; a page is rendered at `dpi` but never beyond `max_page_pixels`).
Encrypted files (any security handler, even with an empty user password) and broken files are
refused with a reason. PDFium is not thread-safe: parallelise across processes.
OCR is passed in (`ocr=callable(image) -> (text, error)`): crawl/ sits below filters/, where the
engine lives; pipelines/ wires them together.
"""
from __future__ import annotations

import hashlib
import io
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

from PIL import Image

OcrFn = Callable[[Image.Image], "tuple[str, Optional[str]]"]

PDF_MAGIC = b"%PDF-"


@dataclass(frozen=True)
class PdfLimits:
    max_bytes: int = 64 * 1024 * 1024
    refuse_pages: int = 5000          # more pages than this: the file is refused (page bombs)
    max_pages: int = 300              # pages read from a longer document (the rest noted as cut)
    max_page_points: float = 14400.0  # longest page side in points (200 in, the PDF spec's limit)
    dpi: float = 150.0                # page images
    max_page_pixels: int = 12_000_000  # a page image is scaled down to stay under this
    max_render_s: float = 120.0       # total render + OCR time per document
    min_text_chars: int = 32          # a page with fewer text-layer characters is OCR'd
    render: bool = True               # page images (off: text layer only)


@dataclass
class PdfPage:
    number: int                        # 1-based
    text: str
    text_source: str                   # text_layer | ocr | none
    width_pt: float
    height_pt: float
    image_png: bytes | None = None
    image_size: tuple[int, int] | None = None
    image_sha256: str | None = None
    ocr_error: str | None = None


@dataclass
class PdfDocument:
    sha256: str
    pages: list[PdfPage]
    page_count: int                    # pages in the file (may exceed len(pages))
    title: str = ""
    author: str = ""
    notes: list[str] = field(default_factory=list)   # cut_pages, render_time_cap, ...

    @property
    def text(self) -> str:
        return "\n\n".join(p.text for p in self.pages if p.text.strip())

    def interleaved(self) -> list[dict]:
        """Page image then page text, page by page (INTERLEAVED items)."""
        items = []
        for p in self.pages:
            if p.image_sha256:
                items.append({"type": "image", "text": None, "image_sha256": p.image_sha256,
                              "image_src": f"page:{p.number}", "clip_score": None})
            if p.text.strip():
                items.append({"type": "text", "text": p.text, "image_sha256": None, "image_src": None,
                              "clip_score": None})
        return items


class PdfRefused(Exception):
    """A PDF that is not read; `reason` is the recorded drop reason (pdf:<why>)."""

    def __init__(self, reason: str, detail: str = ""):
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason, self.detail = reason, detail


def _open(data: bytes):
    import pypdfium2 as pdfium  # noqa: PLC0415
    import pypdfium2.raw as raw  # noqa: PLC0415
    try:
        pdf = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as e:
        msg = str(e).lower()
        raise PdfRefused("pdf:encrypted" if "password" in msg or "security" in msg else "pdf:broken",
                         str(e)) from None
    if raw.FPDF_GetSecurityHandlerRevision(pdf.raw) != -1:
        pdf.close()
        raise PdfRefused("pdf:encrypted", "document has a security handler")
    return pdf


def _clean(text: str) -> str:
    lines = [" ".join(ln.split()) for ln in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    return "\n".join(ln for ln in lines if ln).strip()


def check_bytes(data: bytes, limits: PdfLimits) -> None:
    if len(data) > limits.max_bytes:
        raise PdfRefused("pdf:too_large", f"{len(data)} bytes > {limits.max_bytes}")
    if PDF_MAGIC not in data[:1024]:
        raise PdfRefused("pdf:not_pdf", "no %PDF- header")


# PDFium is not thread-safe, and the crawler reads live PDFs from its host threads: one PDF at a time
# per process (parallelism comes from processes, e.g. `crawl --pdf-dir --workers N`).
_PDFIUM = threading.Lock()


def read_pdf(data: bytes, limits: PdfLimits = PdfLimits(), ocr: OcrFn | None = None) -> PdfDocument:
    """Read one PDF within `limits`; raises PdfRefused(reason) for files that are not read."""
    check_bytes(data, limits)
    with _PDFIUM:
        return _read_pdf_locked(data, limits, ocr)


def _read_pdf_locked(data: bytes, limits: PdfLimits, ocr: OcrFn | None) -> PdfDocument:
    pdf = _open(data)
    try:
        n = len(pdf)
        if n == 0:
            raise PdfRefused("pdf:no_pages")
        if n > limits.refuse_pages:
            raise PdfRefused("pdf:too_many_pages", f"{n} pages > {limits.refuse_pages}")
        meta = {}
        try:
            meta = pdf.get_metadata_dict(skip_empty=True)
        except Exception:  # noqa: BLE001
            pass
        doc = PdfDocument(sha256=hashlib.sha256(data).hexdigest(), pages=[], page_count=n,
                          title=str(meta.get("Title", "")), author=str(meta.get("Author", "")))
        if n > limits.max_pages:
            doc.notes.append(f"cut_pages:{limits.max_pages}/{n}")
        t0 = time.monotonic()
        for i in range(min(n, limits.max_pages)):
            if time.monotonic() - t0 > limits.max_render_s:
                doc.notes.append(f"render_time_cap:{i}/{n}")
                break
            doc.pages.append(_read_page(pdf, i, limits, ocr))
        return doc
    except PdfRefused:
        raise
    except Exception as e:  # noqa: BLE001  (PDFium errors on a damaged page, etc.)
        raise PdfRefused("pdf:broken", f"{type(e).__name__}: {e}") from None
    finally:
        pdf.close()


def _read_page(pdf, i: int, limits: PdfLimits, ocr: OcrFn | None) -> PdfPage:
    page = pdf[i]
    try:
        w, h = page.get_size()
        if max(w, h) > limits.max_page_points or min(w, h) <= 0:
            raise PdfRefused("pdf:page_too_large", f"page {i + 1} is {w:.0f} x {h:.0f} pt")
        tp = page.get_textpage()
        try:
            text = _clean(tp.get_text_range())
        finally:
            tp.close()
        out = PdfPage(number=i + 1, text=text, text_source="text_layer" if text else "none",
                      width_pt=float(w), height_pt=float(h))
        need_ocr = ocr is not None and len(text) < limits.min_text_chars
        if limits.render or need_ocr:
            scale = limits.dpi / 72.0
            px = w * h * scale * scale
            if px > limits.max_page_pixels:
                scale *= (limits.max_page_pixels / px) ** 0.5
            bitmap = page.render(scale=scale)
            img = bitmap.to_pil().convert("RGB")
            bitmap.close()
            if limits.render:
                buf = io.BytesIO()
                img.save(buf, format="PNG", optimize=False)
                out.image_png = buf.getvalue()
                out.image_size = img.size
                out.image_sha256 = hashlib.sha256(out.image_png).hexdigest()
            if need_ocr:
                ocr_text, err = ocr(img)
                if err:
                    out.ocr_error = err
                elif len(ocr_text.strip()) > len(text):
                    out.text, out.text_source = _clean(ocr_text), "ocr"
        return out
    finally:
        page.close()




def pdf_document_row(doc: PdfDocument, *, id: str, url: str, host: str, source: str, status: int = 200,
                     content_type: str = "application/pdf", fetched_at: str | None = None,
                     title: str | None = None, language_hint: str | None = None) -> dict:
    """The PAGES row of one read PDF (text = its pages' text): the one shape every PDF route writes
    (live fetches, WARC records, `crawl --pdf-dir`)."""
    return {"id": id, "url": url, "final_url": url, "host": host, "depth": 0, "status": status,
            "fetched_at": fetched_at, "fetch_ms": None, "content_type": content_type, "encoding": None,
            "headers": [], "raw_html_zstd": None, "rendered_html_zstd": None, "rendered": False,
            "robots_noindex": False, "robots_nofollow": False, "training_allowed": True,
            "title": doc.title or title or None, "text": doc.text, "language_hint": language_hint,
            "author": doc.author or None, "date": None, "canonical_url": None, "images": [], "tables": [],
            "outlinks": [], "source": source}


def pdf_page_row(url: str, body: bytes, status: int, content_type: str, fetched_at: str, source: str,
                 limits: PdfLimits = PdfLimits(render=False, max_pages=300)) -> tuple[dict | None, str | None]:
    """A PAGES row (text layer only, no page images) for a PDF fetched from the web or a WARC,
    or (None, reason). Page images and OCR come with the `--pdf-dir` route."""
    from crawl.urls import authority_of, url_id  # noqa: PLC0415
    try:
        doc = read_pdf(body, limits)
    except PdfRefused as e:
        return None, e.reason
    return pdf_document_row(doc, id=url_id(url), url=url, host=authority_of(url), source=source, status=status,
                            content_type=content_type, fetched_at=fetched_at), None
