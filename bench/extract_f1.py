"""Word-level F1 of main-content extraction: cidermill against its peers, on every page type.

Data (read at run time, never copied into the repository):
  - wcxb-dev (1,355 real pages of 7 types with true main content), split by domain with the fixed
    rule of crawl/extract_train.py: the model is trained on the `tune` part only; `held` is the check;
  - devdata/aeb (181 news pages with true article text).
Extractors, all on the same pages in one run:
  - cidermill: crawl/extract.py (two-stage block model over trafilatura's full vote), the crawler's text column;
  - trafilatura.extract() with its defaults;
  - trafilatura.extract() with cidermill's former flags (include_comments=False, fast=True);
  - resiliparse extract_plain_text(main_content=True), in a bench venv this script builds itself
    (SCRATCH/resiliparse-venv), since nothing else in the project needs it.
Per extractor and data set: mean word F1 (the benchmark's metric: lowercased \\w+ multisets, averaged
over pages), per type, precision and recall, the share of pages with any text found, and CPU ms per
page (process CPU time around the call, HTML already in memory, same process and order for all);
and 95% intervals from a bootstrap over whole domains (bench/domain_bootstrap.py) for every mean and
for cidermill's page-by-page difference from each peer, overall and per page type.

    .venv/bin/python bench/extract_f1.py --wcxb /work/scratch/wcxb/wcxb-dev [--aeb DIR] [--limit N]
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_AEB = os.path.join(HERE, "..", "..", "shared", "devdata", "aeb")
DEFAULT_SCRATCH = os.environ.get("CIDERMILL_SCRATCH", os.path.join(HERE, "..", "..", "scratch"))
RESILIPARSE = "resiliparse==2.0.1"
_RES_RUNNER = r"""
import json, sys, time
from resiliparse.extract.html2text import extract_plain_text
from resiliparse.parse.html import HTMLTree
out = {}
for line in open(sys.argv[1], encoding="utf-8"):
    item = json.loads(line)
    html = open(item["path"], encoding="utf-8").read()
    t0 = time.process_time()
    try:
        text = extract_plain_text(HTMLTree.parse(html), main_content=True, alt_texts=False, links=False,
                                  noscript=False)
    except Exception:
        text = ""
    out[item["key"]] = [text, (time.process_time() - t0) * 1000]
json.dump(out, open(sys.argv[2], "w", encoding="utf-8"))
"""


def resiliparse_python(scratch: str) -> str | None:
    venv = os.path.join(scratch, "resiliparse-venv")
    py = os.path.join(venv, "bin", "python")
    probe = [py, "-c", "import resiliparse.extract.html2text"]
    if os.path.exists(py) and subprocess.run(probe, capture_output=True).returncode == 0:
        return py
    try:
        print("installing", RESILIPARSE, "into", venv, flush=True)
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        subprocess.run([py, "-m", "pip", "install", "-q", RESILIPARSE], check=True)
        return py
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"resiliparse unavailable ({e}): skipped")
        return None


def load_aeb(data_dir: str, tmp: str, limit: int | None):
    with open(os.path.join(data_dir, "ground-truth.json"), encoding="utf-8") as f:
        truth = json.load(f)
    from crawl.charset import decode_html
    items = []
    for key in sorted(truth)[:limit]:
        path = os.path.join(data_dir, "html", key + ".html.gz")
        if os.path.exists(path):
            with gzip.open(path, "rb") as f:
                html, _ = decode_html(f.read(), None)
            plain = os.path.join(tmp, f"aeb-{key}.html")  # decoded once, so every extractor reads the same text
            with open(plain, "w", encoding="utf-8") as f:
                f.write(html)
            url = truth[key].get("url") or "http://example.invalid/"
            items.append({"key": f"aeb/{key}", "path": plain, "type": "article", "truth": truth[key].get("articleBody") or "",
                          "url": url, "domain": host_of(url) or key})
    return items



def host_of(url: str) -> str:
    """A page's site for the domain bootstrap: the URL's host without "www."."""
    from urllib.parse import urlsplit
    host = (urlsplit(url).hostname or "").lower()
    return host.removeprefix("www.")


def uncertainty(items: list[dict], f1: dict[str, list[float]], names: list[str]) -> dict:
    """Domain-bootstrap 95% intervals (bench/domain_bootstrap.py) from each extractor's page F1s
    (`f1`, in `items` order): each extractor's mean F1 and its mean over domains; cidermill minus
    each peer, page by page, overall and per page type."""
    from bench.domain_bootstrap import domain_ci, domain_mean
    domains = [it["domain"] for it in items]
    out: dict = {"domains": len(set(domains)), "systems": {}, "cidermill_minus": {}}
    for name in names:
        out["systems"][name] = {"f1_ci95": domain_ci(f1[name], domains), "domain_mean_f1": domain_mean(f1[name], domains)}
    for name in names:
        if name == "cidermill":
            continue
        diff = [a - b for a, b in zip(f1["cidermill"], f1[name])]
        row = {"all": [sum(diff) / len(diff), *domain_ci(diff, domains)]}
        for t in sorted({it["type"] for it in items}):
            idx = [i for i, it in enumerate(items) if it["type"] == t]
            d = [diff[i] for i in idx]
            row[t] = [sum(d) / len(d), *domain_ci(d, [domains[i] for i in idx])]
        out["cidermill_minus"][name] = row
    return out


def print_uncertainty(set_name: str, u: dict) -> None:
    print(f"  {set_name}: 95% intervals from a bootstrap over its {u['domains']} domains (whole sites resampled):")
    for name, r in u["systems"].items():
        lo, hi = r["f1_ci95"]
        print(f"    {name:28s} F1 in [{lo:.3f}, {hi:.3f}]; mean over domains {r['domain_mean_f1']:.3f}")
    for name, row in u["cidermill_minus"].items():
        cells = "  ".join(f"{t[:8]} {m:+.3f} [{lo:+.3f}, {hi:+.3f}]" for t, (m, lo, hi) in row.items())
        print(f"    cidermill minus {name}: {cells}")


def run_extractors(items: list[dict], systems: dict, progress: bool = False) -> dict[str, dict[str, tuple[str, float]]]:
    """{extractor: {item key: (text, CPU ms)}}: every extractor on every item's `html`, in one
    process, item by item (the same order and warm state for all), after one warm-up call each."""
    outputs: dict[str, dict[str, tuple[str, float]]] = {name: {} for name in systems}
    for fn in systems.values():  # warm-up: imports and lazy loads outside the timed calls
        fn(items[0]["html"], items[0]["url"])
    t_start = time.time()
    for k, it in enumerate(items):
        for name, fn in systems.items():
            t0 = time.process_time()
            try:
                text = fn(it["html"], it["url"]) or ""
            except Exception as e:  # noqa: BLE001
                print(f"  {name} failed on {it['key']}: {type(e).__name__}: {e}")
                text = ""
            outputs[name][it["key"]] = (text, (time.process_time() - t0) * 1000)
        if progress and (k + 1) % 200 == 0:
            print(f"  {k + 1}/{len(items)} pages, {time.time() - t_start:.0f}s", flush=True)
    return outputs


def run_resiliparse(items: list[dict], scratch: str, tmp: str) -> dict[str, tuple[str, float]] | None:
    """{item key: (text, CPU ms)} from resiliparse in its bench venv (items read from their `path`),
    or None when it cannot be installed."""
    py = resiliparse_python(scratch)
    if not py:
        return None
    listing, res_out, runner = (os.path.join(tmp, n) for n in ("pages.jsonl", "resiliparse.json", "runner.py"))
    with open(listing, "w", encoding="utf-8") as f:
        for it in items:
            f.write(json.dumps({"key": it["key"], "path": it["path"]}) + "\n")
    with open(runner, "w", encoding="utf-8") as f:
        f.write(_RES_RUNNER)
    subprocess.run([py, runner, listing, res_out], check=True)
    with open(res_out, encoding="utf-8") as f:
        return {k: (v[0], v[1]) for k, v in json.load(f).items()}

TYPES = ("article", "documentation", "service", "forum", "listing", "product", "collection")


def markdown_table(rec: dict) -> str:
    """The README's per-set, per-extractor table from a results file (no figure typed by hand)."""
    start = (rec.get("start") or {}).get("loadavg") or [0.0]
    out = [f"Word F1 from `bench/results/extract_f1.json` ({rec['date'][:10]}; load average {start[0]:.1f} on "
           f"{rec.get('machine', {}).get('cores', '?')} cores at start, so CPU figures are process CPU time):", "",
           "| set | extractor | F1 | P | R | found | CPU ms/page | " + " | ".join(TYPES) + " |",
           "|---|---|---|---|---|---|---|" + "---|" * len(TYPES)]
    for set_name in ("wcxb-held", "wcxb-tune", "aeb"):
        for name, r in (rec["sets"].get(set_name) or {}).items():
            cells = [f"{r['per_type'][t]['f1']:.3f}" if t in r["per_type"] else "" for t in TYPES]
            out.append(f"| {set_name} ({r['pages']}) | {name} | {r['f1']:.3f} | {r['precision']:.3f} | "
                       f"{r['recall']:.3f} | {r['found']:.3f} | {r['cpu_ms_per_page']:.0f} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--wcxb", default=os.environ.get("WCXB_DIR", os.path.join(DEFAULT_SCRATCH, "wcxb", "wcxb-dev")))
    ap.add_argument("--aeb", default=os.environ.get("AEB_DIR", DEFAULT_AEB))
    ap.add_argument("--limit", type=int, default=None, help="pages per data set (quick look)")
    ap.add_argument("--scratch", default=DEFAULT_SCRATCH, help="where the resiliparse venv lives")
    ap.add_argument("--no-save", action="store_true")
    ap.add_argument("--table", metavar="JSON", help="only print the README table of a saved results file")
    args = ap.parse_args()
    if args.table:
        with open(args.table, encoding="utf-8") as f:
            print(markdown_table(json.load(f)))
        return 0
    from bench.results import save_result, start_conditions
    start = start_conditions()
    import trafilatura

    from crawl.extract import extract_page
    from crawl.extract_train import load_dev, read_html, word_prf

    tmp = tempfile.mkdtemp(prefix="extract_f1-")
    sets: dict[str, list[dict]] = {}
    if os.path.exists(os.path.join(args.wcxb, "metadata-dev.json")):
        for part in ("tune", "held"):
            pages = load_dev(args.wcxb, part=part, limit=args.limit)
            sets[f"wcxb-{part}"] = [{"key": f"wcxb/{p.id}", "path": p.path, "type": p.page_type, "truth": p.truth,
                                     "url": p.url, "domain": p.domain or p.id} for p in pages]
    else:
        print(f"no wcxb-dev at {args.wcxb} (unpack devdata/wcxb-dev.tar.xz; --wcxb DIR)")
    if os.path.exists(os.path.join(args.aeb, "ground-truth.json")):
        sets["aeb"] = load_aeb(args.aeb, tmp, args.limit)
    if not sets:
        print("skipped: no data")
        return 0
    systems = {
        "cidermill": lambda html, url: extract_page(html, url).text,
        "trafilatura default": lambda html, url: trafilatura.extract(html, url=url),
        "trafilatura cidermill-flags": lambda html, url: trafilatura.extract(html, url=url, include_comments=False,
                                                                             fast=True),
    }
    every = [it for items in sets.values() for it in items]
    for it in every:
        it["html"] = read_html(it["path"])
    outputs = run_extractors(every, systems, progress=True)
    res = run_resiliparse(every, args.scratch, tmp)
    if res is not None:
        outputs["resiliparse"] = res
    names = list(outputs)
    table: dict[str, dict] = {}
    page_f1: dict[str, dict[str, list[float]]] = {}   # set -> extractor -> F1 per page, in the set's order
    types_all = sorted({it["type"] for it in every})
    for set_name, items in sets.items():
        table[set_name], page_f1[set_name] = {}, {}
        for name in names:
            per_type = defaultdict(list)
            P, R, F, found, cpu = [], [], [], 0, []
            for it in items:
                text, ms = outputs[name][it["key"]]
                p, r, f = word_prf(text, it["truth"])
                P.append(p), R.append(r), F.append(f), cpu.append(ms)
                per_type[it["type"]].append(f)
                found += bool(text.strip())
            n = len(items)
            table[set_name][name] = {
                "pages": n, "f1": sum(F) / n, "precision": sum(P) / n, "recall": sum(R) / n, "found": found / n,
                "cpu_ms_per_page": sum(cpu) / n,
                "per_type": {t: {"pages": len(v), "f1": sum(v) / len(v)} for t, v in sorted(per_type.items())}}
            page_f1[set_name][name] = F
    spread = {set_name: uncertainty(items, page_f1[set_name], names) for set_name, items in sets.items()}
    for set_name, rows in table.items():
        types = [t for t in types_all if any(t in r["per_type"] for r in rows.values())]
        print(f"\n== {set_name}: {next(iter(rows.values()))['pages']} pages ==")
        head = f"{'extractor':28s} {'F1':>6s} {'P':>6s} {'R':>6s} {'found':>6s} {'cpu ms':>7s} " + " ".join(
            f"{t[:8]:>8s}" for t in types)
        print(head)
        for name, r in rows.items():
            print(f"{name:28s} {r['f1']:6.3f} {r['precision']:6.3f} {r['recall']:6.3f} {r['found']:6.3f} "
                  f"{r['cpu_ms_per_page']:7.1f} " + " ".join(
                      f"{r['per_type'][t]['f1']:8.3f}" if t in r["per_type"] else f"{'-':>8s}" for t in types))
        ours = rows["cidermill"]
        base = rows["trafilatura default"]
        print(f"  cidermill CPU / trafilatura default CPU: {ours['cpu_ms_per_page'] / base['cpu_ms_per_page']:.2f}")
        print_uncertainty(set_name, spread[set_name])
    headline = []
    held = table.get("wcxb-held")
    if held:
        ours = held["cidermill"]
        peers = {k: v for k, v in held.items() if k != "cidermill"}
        headline.append({"what": "extraction word F1, wcxb-dev held-out domains (cidermill)",
                         "figure": f"{ours['f1']:.3f} ({ours['pages']} pages)", "target": ">= 0.88"})
        lo, hi = spread["wcxb-held"]["systems"]["cidermill"]["f1_ci95"]
        headline.append({"what": "extraction word F1, held-out, 95% interval (bootstrap over domains)",
                         "figure": f"{lo:.3f}-{hi:.3f} ({spread['wcxb-held']['domains']} domains)", "target": "report"})
        best_peer = max(peers, key=lambda k: peers[k]["f1"])
        headline.append({"what": f"extraction word F1, held-out, best peer ({best_peer})",
                         "figure": f"{peers[best_peer]['f1']:.3f}", "target": "below cidermill"})
        worse = [t for t in ours["per_type"] if ours["per_type"][t]["f1"] + 1e-9 <
                 max(p["per_type"][t]["f1"] for p in peers.values() if t in p["per_type"])]
        headline.append({"what": "page types where cidermill is below the best peer (held-out)",
                         "figure": ", ".join(worse) if worse else "none", "target": "none"})
        ratio = ours["cpu_ms_per_page"] / held["trafilatura default"]["cpu_ms_per_page"]
        headline.append({"what": "extraction CPU per page vs trafilatura default (held-out)",
                         "figure": f"{ratio:.2f}x ({ours['cpu_ms_per_page']:.0f} ms)", "target": "<= 2x"})
    if "wcxb-tune" in table:
        headline.append({"what": "extraction word F1, wcxb-dev tuning domains (cidermill, trained on these)",
                         "figure": f"{table['wcxb-tune']['cidermill']['f1']:.3f}", "target": "report"})
    if "aeb" in table:
        headline.append({"what": "extraction word F1, devdata/aeb news (cidermill / trafilatura default)",
                         "figure": f"{table['aeb']['cidermill']['f1']:.3f} / "
                                   f"{table['aeb']['trafilatura default']['f1']:.3f}", "target": "report"})
    if not args.no_save and args.limit is None:
        path = save_result("extract_f1", {"sets": table, "headline": headline, "domain_bootstrap": spread,
                                          "not_covered": "the benchmark's test split (kept apart); pages as saved "
                                                         "files (no fetch or render time); CPU per page excludes "
                                                         "HTML decoding"},
                           packages=["trafilatura", "lxml", "numpy"], start=start)
        print("wrote", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
