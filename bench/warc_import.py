"""Import of one large archive: one work item (the file) against fixed byte ranges read by
parallel workers (crawl/warc_records.py warc_ranges, crawl/mbox.py mbox_ranges), same Beam runner
and worker count for both.

The WARC is built from real saved pages (wcxb-dev HTML, ../shared/devdata), one response record
each, as Common Crawl writes them (one gzip member per record). With `--mbox JSONL` the archive is
instead a plain mbox of one message per document of a JSONL file of real text (`{"id", "text"}`
lines, e.g. the Debian documentation corpus of bench/debian_corpus.py), and the import is
`cidermill crawl --mbox`. Both sides run the same import
(`run_warc_import`) with `--direct_num_workers=W --direct_running_mode=multi_processing`; only the
split differs. Each round runs both, in alternating order; the figure is the median. Outputs are
compared page by page (URL and text) and must be equal.

    python bench/warc_import.py --pages /tmp/wcxb/wcxb-dev/html --rounds 3
    python bench/warc_import.py --mbox /tmp/cidermill-bench/debian-2000w-12000.jsonl --rounds 3
"""
from __future__ import annotations

import argparse
import glob
import io
import os
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def write_html_warc(records, path: str) -> int:
    """(url, HTML bytes) pairs -> one gzipped WARC of `text/html; charset=utf-8` response records
    with fixed dates and record ids (the same bytes every run); returns the record count."""
    from warcio.statusandheaders import StatusAndHeaders  # noqa: PLC0415
    from warcio.warcwriter import WARCWriter  # noqa: PLC0415
    n = 0
    with open(path, "wb") as fh:
        w = WARCWriter(fh, gzip=True)
        for n, (url, body) in enumerate(records, 1):
            sh = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8")], protocol="HTTP/1.1")
            fixed = {"WARC-Date": "2026-01-01T00:00:00Z",
                     "WARC-Record-ID": f"<urn:uuid:00000000-0000-0000-0000-{n - 1:012d}>"}
            w.write_record(w.create_warc_record(url, "response", payload=io.BytesIO(body), http_headers=sh,
                                                warc_headers_dict=fixed))
    return n


def build_warc(pages_dir: str, path: str) -> int:
    def records():
        for i, p in enumerate(sorted(glob.glob(os.path.join(pages_dir, "*.html")))):
            with open(p, "rb") as f:
                yield f"http://page{i}.bench.test/{os.path.basename(p)}", f.read()
    return write_html_warc(records(), path)


def build_mbox(jsonl: str, path: str) -> int:
    """One message per document: an envelope line, headers, the text as a plain body ("From " at
    a line's start escaped as mboxrd does)."""
    import json  # noqa: PLC0415
    n = 0
    with open(jsonl, encoding="utf-8") as src, open(path, "wb") as out:
        for n, line in enumerate(src, 1):
            doc = json.loads(line)
            body = "\n".join(">" + x if x.startswith("From ") else x for x in doc["text"].split("\n"))
            out.write((f"From list@bench.test Tue Mar  3 14:02:11 2020\nFrom: Author {n} <a{n}@bench.test>\n"
                       f"Subject: {doc['id'][:120]}\nMessage-ID: <{n}@bench.test>\n"
                       "Date: Tue, 03 Mar 2020 14:02:11 +0000\nMIME-Version: 1.0\n"
                       "Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: 8bit\n\n"
                       f"{body}\n\n").encode("utf-8"))
    return n


def run_once(archive: str, out: str, workers: int, split: int) -> tuple[float, list]:
    from corpus.reader import ShardDataset  # noqa: PLC0415
    from pipelines.archive_import import run_mbox_import, run_warc_import  # noqa: PLC0415
    shutil.rmtree(out, ignore_errors=True)
    args = [f"--direct_num_workers={workers}", "--direct_running_mode=multi_processing"]
    run = run_mbox_import if archive.endswith(".mbox") else run_warc_import
    t = time.perf_counter()
    pages, _ = run([archive], out, args, progress=False, split_bytes=split)
    dt = time.perf_counter() - t
    return dt, sorted((r["url"], r["text"]) for r in ShardDataset(pages).iter_rows(["url", "text"]))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", default="/tmp/wcxb/wcxb-dev/html", help="folder of saved .html pages")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--split-mib", type=int, default=8, help="range size (the import's default is 64 MiB)")
    ap.add_argument("--mbox", metavar="JSONL", help="bench an mbox built from this JSONL's texts instead")
    ap.add_argument("--no-save", action="store_true")
    args = ap.parse_args(argv)
    if args.mbox and not os.path.isfile(args.mbox):
        print(f"{args.mbox}: no such JSONL (bench/debian_corpus.py writes one)", file=sys.stderr)
        return 2
    if not args.mbox and not os.path.isdir(args.pages):
        print(f"{args.pages}: no pages folder (unpack ../shared/devdata/wcxb-dev.tar.xz)", file=sys.stderr)
        return 2
    from bench.results import save_result, start_conditions  # noqa: PLC0415
    from crawl.mbox import mbox_ranges  # noqa: PLC0415
    from crawl.warc_records import warc_ranges  # noqa: PLC0415
    start = start_conditions()
    tmp = tempfile.mkdtemp(prefix="cidermill-warc-bench-")
    try:
        if args.mbox:
            warc, kind, what = os.path.join(tmp, "docs.mbox"), "mbox", "messages"
            n = build_mbox(args.mbox, warc)
        else:
            warc, kind, what = os.path.join(tmp, "pages.warc.gz"), "warc", "pages"
            n = build_warc(args.pages, warc)
        mib = os.path.getsize(warc) / 2 ** 20
        split = args.split_mib << 20
        n_ranges = len((mbox_ranges if args.mbox else warc_ranges)(warc, split))
        times: dict[str, list[float]] = {"whole": [], "ranges": []}
        outputs = {}
        for r in range(args.rounds):
            order = ("whole", "ranges") if r % 2 == 0 else ("ranges", "whole")
            for side in order:
                dt, rows = run_once(warc, os.path.join(tmp, side), args.workers, 1 << 62 if side == "whole" else split)
                times[side].append(dt)
                outputs.setdefault(side, rows)
                print(f"round {r + 1} {side:>6}: {dt:.1f} s, {len(rows)} pages", flush=True)
        same = outputs["whole"] == outputs["ranges"]
        whole, ranges = statistics.median(times["whole"]), statistics.median(times["ranges"])
        label = "plain mbox" if args.mbox else ".warc.gz"
        print(f"{n} {what}, {mib:.0f} MiB {label}, {args.workers} workers: whole file {whole:.1f} s, "
              f"{n_ranges} ranges of {args.split_mib} MiB {ranges:.1f} s, {whole / ranges:.2f}x; same {what}: {same}")
        source = ("messages built from a JSONL of real documentation text, not a list's own archive"
                  if args.mbox else "saved pages, not a Common Crawl file")
        if not args.no_save:
            save_result(f"{kind}_import", {
                what: n, f"{kind}_mib": round(mib, 1), "workers": args.workers, "split_mib": args.split_mib,
                "ranges": n_ranges, "seconds": times, "same_output": same,
                "headline": [{"what": f"{kind.upper() if kind == 'warc' else kind} import of one {mib:.0f} MiB "
                                      f"{label} ({n} real {what}), {args.workers} workers: {n_ranges} byte ranges vs "
                                      f"the file as one work item (median of {args.rounds})",
                              "figure": f"{whole / ranges:.2f}x ({whole:.0f} s to {ranges:.0f} s), same {what}: {same}",
                              "target": f"near {args.workers}x"}],
                "not_covered": f"one machine (2 cores); {source}; no peer: the figure compares the import with "
                               "itself; many-file imports were already one item per file"},
                start=start)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
