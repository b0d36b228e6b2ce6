"""`cidermill crawl --pdf-dir DIR`: a folder of PDF documents into three datasets under OUT/.

  OUT/pages        PAGES rows, one per PDF (text = the pages' text), so the text pipeline reads PDFs
                   the way it reads crawled HTML; source = "pdf"
  OUT/pdf_pages    PAIRS rows, one per page: the page image at --pdf-dpi with its text
                   (text_source pdf:text_layer | pdf:ocr); meta_json has the page number and size
  OUT/interleaved  INTERLEAVED rows, one per PDF: page image, page text, page by page

Pages without a text layer are OCR'd (tesseract) in the language that language ID finds in the
document's text layer (the per-language switch), else `--ocr-lang`. Refused files (encrypted,
broken, too large, page bombs, duplicates) are counted by reason in OUT/pages/_report with samples.
Files are read in worker processes (PDFium is not thread-safe; OCR runs one thread per process).
Output order does not depend on the worker count: rows are sorted by id before writing.
"""
from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import asdict
from typing import Any

import pyarrow as pa

from corpus.errors import ConfigError
from corpus.provenance import make_provenance
from corpus.report import ReportStats, Samples, write_report
from corpus.schemas import INTERLEAVED, PAGES, PAIRS
from corpus.writer import write_dataset
from crawl.pdf import PdfLimits, PdfRefused, pdf_document_row, read_pdf

STAGE = "pdf"


def list_pdfs(pdf_dir: str) -> list[str]:
    """Regular *.pdf files under pdf_dir (recursively, symlinks not followed), sorted."""
    if not os.path.isdir(pdf_dir):
        raise ConfigError(f"{pdf_dir}: not a directory")
    out = []
    for root, dirs, files in os.walk(pdf_dir, followlinks=False):
        dirs.sort()
        for f in sorted(files):
            p = os.path.join(root, f)
            if f.lower().endswith(".pdf") and os.path.isfile(p) and not os.path.islink(p):
                out.append(p)
    return out


def _doc_language(text: str) -> str | None:
    if len(text) < 40:
        return None
    from filters.langid import load_fasttext, lid_model_path, predict  # noqa: PLC0415
    pred = predict(load_fasttext(lid_model_path()), text[:5000])
    return pred[0][0] if pred and pred[0][1] >= 0.5 else None


def read_one(args: tuple[str, str, dict, str, bool]) -> dict[str, Any]:
    """One file -> {"ok": {...rows...}} or {"refused": reason, ...}. Runs in a worker process."""
    path, rel, limits_d, ocr_lang, ocr = args
    limits = PdfLimits(**limits_d)
    try:
        with open(path, "rb") as f:
            data = f.read(limits.max_bytes + 1)  # read_pdf refuses a file over the cap
        doc = read_pdf(data, limits, ocr=None)
    except PdfRefused as e:
        return {"refused": e.reason, "file": rel, "detail": e.detail[:300]}
    except OSError as e:
        return {"refused": "pdf:unreadable_file", "file": rel, "detail": e.strerror or str(e)}
    lang = _doc_language(doc.text)
    if ocr and any(p.text_source == "none" and p.image_png for p in doc.pages):
        from PIL import Image  # noqa: PLC0415
        import io  # noqa: PLC0415
        from filters.ocr import available, ocr as run_ocr  # noqa: PLC0415
        if available():
            use = lang or ocr_lang
            t0 = time.monotonic()
            for p in doc.pages:
                if time.monotonic() - t0 > limits.max_render_s:   # OCR shares the document's time cap
                    doc.notes.append(f"ocr_time_cap:{p.number - 1}/{doc.page_count}")
                    break
                if p.text_source == "none" and p.image_png:
                    r = run_ocr(Image.open(io.BytesIO(p.image_png)), use, timeout_s=60.0, psm=3)
                    if r.error:
                        p.ocr_error = r.error
                    elif r.text.strip():
                        p.text, p.text_source = r.text.strip(), "ocr"
            lang = lang or _doc_language(doc.text) or ocr_lang
    return {"ok": True, "file": rel, "path": path, "doc": doc, "language": lang}


def rows_for(res: dict[str, Any], dpi: float) -> tuple[dict, list[dict], dict]:
    from PIL import Image  # noqa: PLC0415
    import imagehash  # noqa: PLC0415
    import io  # noqa: PLC0415
    doc = res["doc"]
    doc_id = hashlib.sha1(f"pdf:{doc.sha256}".encode()).hexdigest()
    url = "file://" + os.path.abspath(res["path"])
    page = pdf_document_row(doc, id=doc_id, url=url, host="", source="pdf",
                            title=os.path.basename(res["file"]), language_hint=res["language"])
    pairs = []
    for p in doc.pages:
        if not p.image_png:
            continue
        img = Image.open(io.BytesIO(p.image_png))
        meta = {"kind": "pdf_page", "doc_id": doc_id, "file": res["file"], "page": p.number,
                "pages_in_file": doc.page_count, "dpi": dpi, "width_pt": p.width_pt, "height_pt": p.height_pt,
                "ocr_error": p.ocr_error, "notes": doc.notes}
        pairs.append({"id": f"{doc_id}-p{p.number:05d}", "image": p.image_png, "mime": "image/png",
                      "width": img.width, "height": img.height, "sha256": p.image_sha256,
                      "phash": str(imagehash.phash(img)), "text": p.text, "text_source": f"pdf:{p.text_source}",
                      "page_url": f"{url}#page={p.number}", "language": res["language"], "clip_score": None,
                      "drop_reason": None, "qa": [], "meta_json": json.dumps(meta, sort_keys=True)})
    inter = {"id": doc_id, "url": url, "items": doc.interleaved(), "language": res["language"]}
    return page, pairs, inter


def file_sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def screen_files(files: list[str], pdf_dir: str, limits: PdfLimits) -> tuple[list[str], list[dict]]:
    """Files worth decoding, and the refusals decided without decoding: over the size cap (a stat),
    unreadable, or a byte-identical copy of an earlier file (in file order, so the same file is kept
    whatever the worker count)."""
    keep, refused, seen = [], [], set()
    for path in files:
        rel = os.path.relpath(path, pdf_dir)
        try:
            size = os.path.getsize(path)
            if size > limits.max_bytes:
                refused.append({"refused": "pdf:too_large", "file": rel, "detail": f"{size} bytes > {limits.max_bytes}"})
                continue
            digest = file_sha256(path)
        except OSError as e:
            refused.append({"refused": "pdf:unreadable_file", "file": rel, "detail": e.strerror or str(e)})
            continue
        if digest in seen:
            refused.append({"refused": "pdf:duplicate", "file": rel, "detail": ""})
            continue
        seen.add(digest)
        keep.append(path)
    return keep, refused


def run_pdf_import(pdf_dir: str, out_dir: str, *, limits: PdfLimits = PdfLimits(), ocr_lang: str = "en",
                   ocr: bool = True, workers: int = 1, overwrite: bool = False, progress: bool = False) -> dict:
    files = list_pdfs(pdf_dir)
    if workers < 1:
        raise ConfigError(f"--workers must be at least 1, got {workers}")
    to_read, screened = screen_files(files, pdf_dir, limits)
    jobs = [(p, os.path.relpath(p, pdf_dir), asdict(limits), ocr_lang, ocr) for p in to_read]
    stats, samples = ReportStats(), Samples()
    st = stats.stage(STAGE)
    pages, pairs, inter = [], [], []

    def consume(res):
        if "refused" in res:
            st.record(False, res["refused"])
            samples.add(res["refused"], res["file"], {"file": res["file"], "detail": res.get("detail", "")})
            return
        page, prs, it = rows_for(res, limits.dpi)
        doc = res["doc"]
        st.record(True, scores={"pdf_pages": float(doc.page_count), "pdf_text_chars": float(len(doc.text))},
                  ranges={"pdf_pages": (0.0, 500.0), "pdf_text_chars": (0.0, 200000.0)})
        for p in doc.pages:
            st.counters[f"page_text:{p.text_source}"] += 1
            if p.ocr_error:
                st.counters[f"page_ocr_error:{p.ocr_error}"] += 1
        for note in doc.notes:
            st.counters[f"note:{note.split(':')[0]}"] += 1
        st.counters[f"language:{res['language']}"] += 1
        pages.append(page)
        pairs.extend(prs)
        inter.append(it)

    for res in screened:
        consume(res)
    from tqdm import tqdm  # noqa: PLC0415
    bar = tqdm(total=len(jobs), desc="pdf", unit="file", disable=not progress, leave=False)
    if workers > 1 and len(jobs) > 1:
        import multiprocessing as mp  # noqa: PLC0415
        with mp.get_context("forkserver").Pool(min(workers, len(jobs))) as pool:
            for res in pool.imap(read_one, jobs):
                consume(res)
                bar.update(1)
    else:
        for j in jobs:
            consume(read_one(j))
            bar.update(1)
    bar.close()
    config = {"pdf_dir": os.path.abspath(pdf_dir), "limits": asdict(limits), "ocr_lang": ocr_lang, "ocr": ocr}
    outs = {"pages": ("pages", PAGES, pages), "pdf_pages": ("pairs", PAIRS, pairs),
            "interleaved": ("interleaved", INTERLEAVED, inter)}
    for name, (kind, schema, rows) in outs.items():
        rows = sorted(rows, key=lambda r: r["id"])
        table = pa.Table.from_pylist(rows, schema=schema)
        write_dataset(os.path.join(out_dir, name), kind, table,
                      make_provenance(kind, config=config, inputs=[pdf_dir]), overwrite=overwrite)
    stats.info.update({"source": "pdf", "files": len(files), "dpi": limits.dpi, "max_pages": limits.max_pages,
                       "refuse_pages": limits.refuse_pages, "max_bytes": limits.max_bytes})
    write_report(os.path.join(out_dir, "pages"), stats, samples)
    return {"files": len(files), "documents": len(pages), "page_images": len(pairs),
            "refused": dict(st.dropped), "out": out_dir}
