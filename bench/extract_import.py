"""The extraction figures by the route a user takes: saved pages in a WARC, `cidermill crawl --warc`.

bench/extract_f1.py scores `crawl/extract.py` called on each page's HTML. A user (and the issue's own
measurement) imports pages with `cidermill crawl --warc`, which adds URL canonicalisation, charset
decoding from the HTTP header, page-level robots directives and the import's record checks. This
bench builds one WARC (one response record per page, its real URL, `text/html; charset=utf-8`)
from both parts of wcxb-dev and from devdata/aeb, runs the import as a subprocess, and scores the
`text` column of the pages dataset with the benchmark's metric (word F1, crawl/extract_train.py),
per set and page type. In the same run it calls `extract_page` on every page and lists the pages
whose text differs between the two routes, with the reason the import logged.

    .venv/bin/python bench/extract_import.py --wcxb /tmp/wcxb/wcxb-dev [--aeb DIR] [--limit N]

Also printed: the import's wall time and pages per second (one run, 2 cores; the import's default
workers). Not covered: live fetching and rendering (the pages are saved files).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, HERE)


def main() -> int:
    from extract_f1 import DEFAULT_AEB, DEFAULT_SCRATCH, load_aeb  # noqa: PLC0415
    from warc_import import write_html_warc  # noqa: PLC0415
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--wcxb", default=os.environ.get("WCXB_DIR", os.path.join(DEFAULT_SCRATCH, "wcxb", "wcxb-dev")))
    ap.add_argument("--aeb", default=os.environ.get("AEB_DIR", DEFAULT_AEB))
    ap.add_argument("--limit", type=int, default=None, help="pages per data set (quick look)")
    ap.add_argument("--no-save", action="store_true")
    args = ap.parse_args()
    from bench.results import save_result, start_conditions  # noqa: PLC0415
    from corpus.reader import ShardDataset  # noqa: PLC0415
    from crawl.extract import extract_page  # noqa: PLC0415
    from crawl.extract_train import load_dev, read_html, word_prf  # noqa: PLC0415
    from crawl.urls import try_canonicalize  # noqa: PLC0415
    start = start_conditions()
    tmp = tempfile.mkdtemp(prefix="extract_import-")
    sets: dict[str, list[dict]] = {}
    if os.path.exists(os.path.join(args.wcxb, "metadata-dev.json")):
        for part in ("tune", "held"):
            sets[f"wcxb-{part}"] = [{"key": f"wcxb/{p.id}", "path": p.path, "type": p.page_type, "truth": p.truth,
                                     "url": p.url} for p in load_dev(args.wcxb, part=part, limit=args.limit)]
    if os.path.exists(os.path.join(args.aeb, "ground-truth.json")):
        sets["aeb"] = load_aeb(args.aeb, tmp, args.limit)
    if not sets:
        print("skipped: no data (unpack devdata/wcxb-dev.tar.xz; --wcxb DIR)")
        return 0
    items = [it for v in sets.values() for it in v]
    for it in items:
        it["html"] = read_html(it["path"])
        it["canonical"] = try_canonicalize(it["url"])[0] or it["url"]
    warc, out = os.path.join(tmp, "pages.warc.gz"), os.path.join(tmp, "import")
    write_html_warc(((it["url"], it["html"].encode("utf-8")) for it in items), warc)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pipelines.cli", "crawl", "--warc", warc, "--out", out, "--quiet"],
                   check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    rows = {r["url"]: r for r in ShardDataset(os.path.join(out, "pages")).iter_rows(
        ["url", "text", "robots_noindex"])}
    result: dict[str, dict] = {}
    differ = []
    for name, its in sets.items():
        per = {"import": defaultdict(list), "direct": defaultdict(list)}
        for it in its:
            row = rows.get(it["canonical"])
            imported = (row or {}).get("text") or ""
            direct = extract_page(it["html"], it["url"]).text or ""
            for route, text in (("import", imported), ("direct", direct)):
                f = word_prf(text, it["truth"])[2]
                per[route][it["type"]].append(f)
                per[route]["all"].append(f)
            if imported != direct:
                why = "no row" if row is None else ("robots noindex" if row["robots_noindex"] else "text differs")
                differ.append({"set": name, "key": it["key"], "url": it["url"], "why": why})
        result[name] = {route: {t: {"pages": len(v), "f1": sum(v) / len(v)} for t, v in sorted(d.items())}
                        for route, d in per.items()}
    print(f"import: {len(items)} pages in {wall:.1f} s ({len(items) / wall:.0f} pages/s), {len(rows)} rows")
    for name, r in result.items():
        types = [t for t in r["import"] if t != "all"]
        print(f"\n== {name} ==\n{'route':10s} {'F1':>6s} " + " ".join(f"{t[:8]:>8s}" for t in types))
        for route in ("import", "direct"):
            print(f"{route:10s} {r[route]['all']['f1']:6.3f} " + " ".join(f"{r[route][t]['f1']:8.3f}" for t in types))
    print(f"\npages whose text differs between the routes: {len(differ)}")
    for d in differ:
        print(f"  {d['set']} {d['key']} ({d['why']}) {d['url'][:90]}")
    if not args.no_save and args.limit is None:
        held = result.get("wcxb-held", {}).get("import", {}).get("all")
        path = save_result("extract_import", {
            "sets": result, "differ": differ, "import_wall_s": round(wall, 1), "pages": len(items),
            "headline": [{"what": "extraction word F1 through `cidermill crawl --warc`, wcxb-dev held-out domains",
                          "figure": f"{held['f1']:.3f}" if held else "-", "target": "as bench/extract_f1.py"}],
            "not_covered": "live fetching and rendering; one import run (the wall time is not a median)"},
            packages=["trafilatura", "warcio"], start=start)
        print("wrote", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
