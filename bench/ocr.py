"""OCR engines on real pages: character error rate and word F1 against each PDF page's text layer.

Dev pages: the Debian installation guide (HTML, apt package installation-guide-amd64, install with
`make bench-deps`) in 13 of the report's languages, printed to PDF by Chromium, so each page has a
true text layer; each page is rendered at 150 dpi and OCR'd. Scoring strips dot leaders (tables of
contents) and folds whitespace; Chinese, Japanese and Korean get CER only (on characters without
spaces), the others CER and word F1 (bag of words). Speed: pages per CPU-second of the engine's
processes (one thread each: tesseract with OMP_THREAD_LIMIT=1, onnxruntime with 1 intra-op thread).

Engines: tesseract 5 (Debian packages, through filters.ocr) on every language; rapidocr (ONNX
models inside its wheel; Chinese+English models) on the languages those models cover, in a
separate venv this script builds (SCRATCH/ocrvenv) so the project does not depend on it.
Norwegian and Turkish have no guide translation: not covered here.

    python bench/ocr.py [--pages-per-lang 1] [--rapid-langs en,de,zh] [--scratch .cache/bench]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench.results import save_result, start_conditions  # noqa: E402

GUIDE = "/usr/share/doc/installation-guide-amd64"
LANGS = ("en", "fr", "de", "es", "it", "pt", "nl", "da", "sv", "vi", "ja", "ko", "zh")
GUIDE_DIRS = {"zh": "zh_CN"}
CJK = {"ja", "ko", "zh"}
PAGE_HTML = "ch01s01.html"   # "What is Debian?": prose, lists, links; in every translation
DPI = 150
_LEADERS = re.compile(r"(?:\s*\.){3,}|…+|(?:\s*·){3,}")

RAPID_RUNNER = r'''
import json, sys, time
from rapidocr import RapidOCR
eng = RapidOCR(params={"EngineConfig.onnxruntime.intra_op_num_threads": 1,
                       "EngineConfig.onnxruntime.inter_op_num_threads": 1})
out = []
for path in sys.argv[1:]:
    t = time.process_time()
    r = eng(path)
    txt = "\n".join(r.txts) if r.txts else ""
    out.append({"path": path, "text": txt, "cpu_s": time.process_time() - t})
print(json.dumps(out))
'''


def levenshtein(a: str, b: str) -> int:
    """Edit distance, one numpy row at a time (insertions folded in with a running minimum)."""
    if not a:
        return len(b)
    if not b:
        return len(a)
    bb = np.frombuffer(b.encode("utf-32-le"), dtype=np.uint32)
    prev = np.arange(len(b) + 1, dtype=np.int64)
    idx = np.arange(len(b) + 1, dtype=np.int64)
    for i, ch in enumerate(a, 1):
        cost = (bb != ord(ch)).astype(np.int64)
        tmp = np.empty_like(prev)
        tmp[0] = i
        tmp[1:] = np.minimum(prev[1:] + 1, prev[:-1] + cost)
        prev = np.minimum.accumulate(tmp - idx) + idx
    return int(prev[-1])


def normalise(text: str, cjk: bool) -> str:
    t = _LEADERS.sub(" ", text)
    t = " ".join(t.split())
    return t.replace(" ", "") if cjk else t


def word_f1(ref: str, hyp: str) -> float:
    from collections import Counter
    r, h = Counter(re.findall(r"\w+", ref.lower())), Counter(re.findall(r"\w+", hyp.lower()))
    tp = sum((r & h).values())
    if not tp:
        return 0.0
    p, q = tp / sum(h.values()), tp / sum(r.values())
    return 2 * p * q / (p + q)


def make_pdfs(scratch: str) -> dict[str, str]:
    from playwright.sync_api import sync_playwright
    out = {}
    os.makedirs(os.path.join(scratch, "pdfs"), exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True)
        page = browser.new_page()
        for lang in LANGS:
            src = os.path.join(GUIDE, GUIDE_DIRS.get(lang, lang), PAGE_HTML)
            dst = os.path.join(scratch, "pdfs", f"{lang}.pdf")
            if not os.path.exists(src):
                continue
            if not os.path.exists(dst):
                page.goto("file://" + src)
                page.pdf(path=dst, format="A4", print_background=False)
            out[lang] = dst
        browser.close()
    return out


def ensure_rapidocr(scratch: str) -> str:
    venv = os.path.join(scratch, "ocrvenv")
    py = os.path.join(venv, "bin", "python")
    if not os.path.exists(py) or subprocess.run([py, "-c", "import rapidocr, onnxruntime"],
                                                capture_output=True).returncode != 0:
        print("installing rapidocr into", venv, flush=True)
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        subprocess.run([py, "-m", "pip", "install", "-q", "rapidocr==3.*", "onnxruntime"], check=True)
    return py


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pages-per-lang", type=int, default=1)
    ap.add_argument("--rapid-langs", default="en,de,zh", help="languages also run through rapidocr ('' = none)")
    ap.add_argument("--scratch", default=os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                                       ".cache", "bench"))
    args = ap.parse_args(argv)
    from crawl.pdf import PdfLimits, read_pdf
    from filters.ocr import ocr

    start = start_conditions()
    pdfs = make_pdfs(args.scratch)
    pages = []   # (lang, page number, ref text, png path)
    for lang, path in pdfs.items():
        with open(path, "rb") as f:
            doc = read_pdf(f.read(), PdfLimits(dpi=DPI, max_pages=args.pages_per_lang))
        for p in doc.pages:
            png = os.path.join(args.scratch, "pdfs", f"{lang}-{p.number}.png")
            with open(png, "wb") as f:
                f.write(p.image_png)
            pages.append((lang, p.number, p.text, png))
    rows = []
    for lang, num, ref, png in pages:
        from PIL import Image
        c0, w0 = children_cpu(), time.monotonic()
        res = ocr(Image.open(png), lang, timeout_s=120, psm=3)
        rows.append({"engine": "tesseract", "lang": lang, "page": num, "hyp": res.text, "ref": ref,
                     "cpu_s": children_cpu() - c0, "wall_s": time.monotonic() - w0, "error": res.error})
    rapid = [p for p in pages if p[0] in set(filter(None, args.rapid_langs.split(",")))]
    if rapid:
        py = ensure_rapidocr(args.scratch)
        runner = os.path.join(args.scratch, "rapid_runner.py")
        with open(runner, "w") as f:
            f.write(RAPID_RUNNER)
        env = {**os.environ, "OMP_NUM_THREADS": "1"}
        out = subprocess.run([py, runner, *[p[3] for p in rapid]], capture_output=True, text=True, env=env)
        if out.returncode != 0:
            print("rapidocr failed:", out.stderr[-2000:])
        else:
            got = json.loads(out.stdout.strip().splitlines()[-1])
            for (lang, num, ref, _), g in zip(rapid, got):
                rows.append({"engine": "rapidocr", "lang": lang, "page": num, "hyp": g["text"], "ref": ref,
                             "cpu_s": g["cpu_s"], "wall_s": None, "error": None})
    for r in rows:
        cjk = r["lang"] in CJK
        ref, hyp = normalise(r["ref"], cjk), normalise(r["hyp"], cjk)
        r["ref_chars"] = len(ref)
        r["cer"] = levenshtein(ref, hyp) / max(1, len(ref))
        r["word_f1"] = None if cjk else word_f1(ref, hyp)
    print(f"{'engine':10} {'lang':4} {'page':>4} {'chars':>6} {'CER':>6} {'wordF1':>6} {'CPU-s':>6}")
    for r in rows:
        f1 = "  -   " if r["word_f1"] is None else f"{r['word_f1']:.3f}"
        print(f"{r['engine']:10} {r['lang']:4} {r['page']:4d} {r['ref_chars']:6d} {r['cer']:6.3f} {f1:>6} {r['cpu_s']:6.2f}")
    summary = {}
    for eng in sorted({r["engine"] for r in rows}):
        rs = [r for r in rows if r["engine"] == eng]
        both = [r for r in rs if r["lang"] in {x["lang"] for x in rows if x["engine"] == "rapidocr"}]
        lat = [r for r in rs if r["word_f1"] is not None]
        summary[eng] = {"pages": len(rs), "median_cer": float(np.median([r["cer"] for r in rs])),
                        "median_cer_shared_langs": float(np.median([r["cer"] for r in both])) if both else None,
                        "mean_word_f1_latin": float(np.mean([r["word_f1"] for r in lat])) if lat else None,
                        "pages_per_cpu_s": len(rs) / max(1e-9, sum(r["cpu_s"] for r in rs))}
    print("\nside by side (shared languages: " + args.rapid_langs + ")")
    for eng, s in summary.items():
        print(f"{eng:10} pages {s['pages']:3d}  median CER {s['median_cer']:.3f}  shared-lang CER "
              f"{(s['median_cer_shared_langs'] or float('nan')):.3f}  word F1 (latin) "
              f"{(s['mean_word_f1_latin'] or float('nan')):.3f}  pages/CPU-s {s['pages_per_cpu_s']:.3f}")
    t = summary.get("tesseract", {})
    headline = [{"what": f"OCR tesseract, median CER over {t.get('pages')} guide pages in 13 languages at 150 dpi",
                 "figure": f"{t.get('median_cer', float('nan')):.3f}", "target": "lower is better"},
                {"what": "OCR tesseract, pages per CPU-second (one thread)",
                 "figure": f"{t.get('pages_per_cpu_s', float('nan')):.3f}", "target": "-"}]
    if "rapidocr" in summary:
        for lang in [x for x in args.rapid_langs.split(",") if x]:
            cer = {r["engine"]: r["cer"] for r in rows if r["lang"] == lang}
            if len(cer) == 2:
                headline.append({"what": f"OCR CER on the {lang} page: rapidocr vs tesseract",
                                 "figure": f"{cer['rapidocr']:.3f} vs {cer['tesseract']:.3f}",
                                 "target": "lower is better"})
        headline.append({"what": "OCR pages per CPU-second: rapidocr vs tesseract",
                         "figure": f"{summary['rapidocr']['pages_per_cpu_s']:.2f} vs {t['pages_per_cpu_s']:.2f}",
                         "target": "higher is better"})
    for r in rows:
        r.pop("hyp"), r.pop("ref")
    save_result("ocr", {"dpi": DPI, "rows": rows, "summary": summary, "headline": headline},
                packages=["pytesseract", "pypdfium2", "playwright"], start=start)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
