"""Word-level F1 of main-text extraction on devdata/aeb (181 real news pages with true article text).

Compares trafilatura's plain `extract()` with cidermill's extractor (crawl/extract.py; trafilatura
XML plus a structure pass) in fast mode (the crawler's default) and with trafilatura's fallback extractors, and resiliparse when installed. Data is read
from ../shared/devdata/aeb at run time and never copied into the repository.

    .venv/bin/python bench/extract_f1.py [--data DIR] [--limit N]
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import sys
import time
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

DEFAULT_DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "devdata", "aeb")
_WORD = re.compile(r"\w+", re.UNICODE)


def words(text: str | None) -> Counter:
    return Counter(w.lower() for w in _WORD.findall(text or ""))


def f1(pred: str | None, truth: str) -> tuple[float, float, float]:
    p, t = words(pred), words(truth)
    common = sum((p & t).values())
    if not p or not t:
        return (1.0, 1.0, 1.0) if p == t else (0.0, 0.0, 0.0)
    prec, rec = common / sum(p.values()), common / sum(t.values())
    return prec, rec, (2 * prec * rec / (prec + rec) if prec + rec else 0.0)


def load(data_dir: str, limit: int | None):
    with open(os.path.join(data_dir, "ground-truth.json"), encoding="utf-8") as f:
        truth = json.load(f)
    items = []
    for key in sorted(truth)[:limit]:
        path = os.path.join(data_dir, "html", key + ".html.gz")
        if os.path.exists(path):
            with gzip.open(path, "rb") as f:
                raw = f.read()
            items.append((key, raw, truth[key].get("articleBody") or "", truth[key].get("url")))
    return items


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.environ.get("AEB_DIR", DEFAULT_DATA))
    ap.add_argument("--limit", type=int, default=None)
    args = ap.parse_args()
    if not os.path.exists(os.path.join(args.data, "ground-truth.json")):
        print(f"skipped: no devdata at {args.data} (set --data or AEB_DIR)")
        return 0
    import trafilatura

    from crawl.charset import decode_html
    from crawl.extract import extract_page

    items = load(args.data, args.limit)
    systems = {
        "trafilatura.extract": lambda html, url: trafilatura.extract(html, url=url),
        "cidermill(fast, default)": lambda html, url: extract_page(html, url or "http://example.invalid/").text,
        "cidermill(fallbacks)": lambda html, url: extract_page(html, url or "http://example.invalid/", fast=False).text,
    }
    try:
        from resiliparse.extract.html2text import extract_plain_text
        from resiliparse.parse.html import HTMLTree

        systems["resiliparse(main_content)"] = lambda html, url: extract_plain_text(
            HTMLTree.parse(html), main_content=True, alt_texts=False, links=False, noscript=False)
    except ImportError:
        print("resiliparse not installed: skipped")
    print(f"{len(items)} pages from {os.path.abspath(args.data)}")
    results = {}
    for name, fn in systems.items():
        ps, rs, fs = [], [], []
        t0 = time.perf_counter()
        for key, raw, truth, url in items:
            html, _ = decode_html(raw, None)
            try:
                pred = fn(html, url)
            except Exception as e:  # noqa: BLE001
                print(f"  {name} failed on {key}: {type(e).__name__}: {e}")
                pred = ""
            p, r, f = f1(pred, truth)
            ps.append(p), rs.append(r), fs.append(f)
        dt = time.perf_counter() - t0
        n = len(items)
        results[name] = sum(fs) / n
        print(f"{name:28s} F1 {sum(fs)/n:.4f}  P {sum(ps)/n:.4f}  R {sum(rs)/n:.4f}  {n/dt:7.1f} pages/s")
    base = results["trafilatura.extract"]
    for name, v in results.items():
        print(f"  {name:26s} F1 / trafilatura.extract = {v / base:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
