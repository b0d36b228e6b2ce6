"""Do more workers add speed? The text chain and dedup jobs, one worker vs two, in-process vs Dask.

    python bench/scale.py [--docs 10000] [--jobs text,dedup] [--modes inprocess,mp2,dask1,dask2]
                          [--scratch /tmp/cidermill-bench] [--rounds 1]

Documents: real text chunks of Debian documentation (bench/debian_corpus.py, fetched with apt-get
download into SCRATCH, not committed; --words per chunk, default 1,000 as in bench/text_chain.py),
written as a pages dataset of 4 MB shards.
Jobs (each a `cidermill text` run as a subprocess with a stage list):
  text   input, c4_lines, langid, gopher, repetition   (per-document work)
  dedup  input, dedup (exact + MinHash near)            (shuffle-heavy)
Modes: inprocess (FnApiRunner, 1 process), mp2 (--direct_running_mode=multi_processing
--direct_num_workers=2), dask1 / dask2 (--runner dask, a local cluster of 1 / 2 worker processes).
Per run: wall seconds, CPU seconds of the whole process tree (getrusage of reaped children), peak
RSS of the tree and of its largest single process (sampled from /proc every 0.2 s), and whether the
output shards are byte-identical to the in-process run's. Speed-up: wall of the 1-worker run of the
same engine (inprocess for mp2, dask1 for dask2) over the 2-worker run's. On a shared machine, wall
time depends on the load: the start load is recorded, and CPU seconds are the steadier figure.
Not covered: images and crawl jobs, several machines, the 1,000,000-document dedup memory run.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, HERE)

STAGES = {"text": ["input", "c4_lines", "langid", "gopher", "repetition"], "dedup": ["input", "dedup"]}
MODES = {
    "inprocess": ["--runner=FnApiRunner"],
    "mp2": ["--direct_running_mode=multi_processing", "--direct_num_workers=2"],
    "dask1": ["--runner=dask", "--dask_workers=1"],
    "dask2": ["--runner=dask", "--dask_workers=2"],
}
BASELINE = {"mp2": "inprocess", "dask2": "dask1"}


def pages_dataset(scratch: str, n: int, words: int) -> str:
    from debian_corpus import pages_dataset as debian_pages
    return debian_pages(scratch, n, words=words, shard_bytes=4 << 20)


def config(scratch: str, job: str) -> str:
    import yaml
    path = os.path.join(scratch, f"scale-{job}.yaml")
    with open(path, "w") as f:
        yaml.safe_dump({"stages": STAGES[job], "output": {"rejected": "none"}}, f)
    return path


def measure(cmd: list[str]) -> dict:
    """Run `cmd`; wall, CPU of the tree, peak RSS of the tree and of its largest process."""
    from proctree import _descendants, _table

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.time()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1"))
    peak = {"tree": 0.0, "proc": 0.0}

    def sample():
        while p.poll() is None:
            t = _table()
            rss = [t[q][2] / 2**20 for q in [p.pid, *_descendants(p.pid, t)] if q in t]
            if rss:
                peak["tree"] = max(peak["tree"], sum(rss))
                peak["proc"] = max(peak["proc"], max(rss))
            time.sleep(0.2)
    th = threading.Thread(target=sample, daemon=True)
    th.start()
    out, err = p.communicate()
    wall = time.time() - t0
    th.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if p.returncode != 0:
        raise SystemExit(f"failed ({p.returncode}): {' '.join(cmd)}\n{err[-3000:]}")
    return {"wall_s": round(wall, 1), "cpu_s": round(cpu, 1), "peak_tree_mb": round(peak["tree"]),
            "peak_proc_mb": round(peak["proc"])}


def _git() -> str:
    r = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return r.stdout.strip()


def digests(d: str) -> list:
    from corpus.manifest import read_manifest
    return [s.sha256 for s in read_manifest(d).shards]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--docs", type=int, default=10_000)
    ap.add_argument("--words", type=int, default=1000, help="words per document chunk")
    ap.add_argument("--jobs", default="text,dedup")
    ap.add_argument("--modes", default="inprocess,mp2,dask1,dask2")
    ap.add_argument("--scratch", default="/tmp/cidermill-bench")
    ap.add_argument("--rounds", type=int, default=1, help="runs per cell; the median wall is kept")
    ap.add_argument("--summary-only", action="store_true", help="recompute the headline of the saved table")
    ap.add_argument("--merge", action="store_true",
                    help="keep the other cells of bench/results/scale.json (same --docs) and replace the ones run now")
    args = ap.parse_args()
    from results import start_conditions

    if args.summary_only:
        old = json.load(open(os.path.join(HERE, "results", "scale.json"), encoding="utf-8"))
        summarise(old["rows"], old["documents"], old["start"])
        return 0
    os.makedirs(args.scratch, exist_ok=True)
    start = start_conditions()
    pages = pages_dataset(args.scratch, args.docs, args.words)
    from corpus.reader import ShardDataset
    n_docs = len(ShardDataset(pages))
    rows = []
    if args.merge:
        old = json.load(open(os.path.join(HERE, "results", "scale.json"), encoding="utf-8"))
        if old.get("documents") == n_docs:
            rows = [r for r in old["rows"] if not (r["job"] in args.jobs.split(",") and r["mode"] in args.modes.split(","))]
    for job in args.jobs.split(","):
        cfg = config(args.scratch, job)
        ref = None
        ref_dir = os.path.join(args.scratch, f"scale-out-{job}-inprocess")
        if os.path.exists(os.path.join(ref_dir, "_manifest.json")):
            ref = digests(ref_dir)
        for mode in args.modes.split(","):
            out = os.path.join(args.scratch, f"scale-out-{job}-{mode}")
            runs = []
            for _ in range(args.rounds):
                cmd = [sys.executable, "-m", "pipelines.cli", "text", "--in", pages, "--out", out, "--config", cfg,
                       "--no-rejected", "--overwrite", *MODES[mode]]
                runs.append(measure(cmd))
                print(f"  {job:<6} {mode:<10} {runs[-1]}", flush=True)
            r = sorted(runs, key=lambda x: x["wall_s"])[len(runs) // 2]
            d = digests(out)
            ref = ref if ref is not None else d
            rows.append({"job": job, "mode": mode, **r, "same_bytes": d == ref,
                         "loadavg_after": [round(x, 1) for x in os.getloadavg()], "git": _git()})
            rows.sort(key=lambda x: (x["job"], list(MODES).index(x["mode"])))
            summarise(rows, n_docs, start)  # saved after every cell: a partial run still records its figures
    return 0


def summarise(rows: list[dict], n_docs: int, start: dict) -> None:
    from results import save_result

    by = {(r["job"], r["mode"]): r for r in rows}
    for r in rows:
        base = by.get((r["job"], BASELINE.get(r["mode"], "")))
        r["speedup"] = round(base["wall_s"] / r["wall_s"], 2) if base else None
    print(f"\n{n_docs} documents, load at start {start['loadavg']}")
    print(f"{'job':<6} {'mode':<10} {'wall s':>7} {'CPU s':>7} {'tree RSS MB':>12} {'max proc MB':>12} "
          f"{'speed-up':>9} {'same bytes':>10}")
    for r in rows:
        sp = f"{r['speedup']:.2f}x" if r["speedup"] else "-"
        print(f"{r['job']:<6} {r['mode']:<10} {r['wall_s']:>7} {r['cpu_s']:>7} {r['peak_tree_mb']:>12} "
              f"{r['peak_proc_mb']:>12} {sp:>9} {str(r['same_bytes']):>10}")
    headline = []
    for job, target in (("text", ">= 1.7x"), ("dedup", ">= 1.6x")):
        for mode in ("mp2", "dask2"):
            if (job, mode) in by and by[(job, mode)]["speedup"]:
                headline.append({"what": f"{job} job, 2 workers vs 1 ({mode})",
                                 "figure": f"{by[(job, mode)]['speedup']:.2f}x", "target": target})
        if (job, "dask2") in by and (job, "inprocess") in by:
            ip, d2 = by[(job, "inprocess")], by[(job, "dask2")]
            headline.append({"what": f"{job} job, Dask 2 workers vs in-process (wall; cells run minutes apart "
                                     "on a loaded machine)", "figure": f"{ip['wall_s'] / d2['wall_s']:.2f}x",
                             "target": "(context)"})
            headline.append({"what": f"{job} job, CPU seconds of Dask 2 workers / in-process",
                             "figure": f"{d2['cpu_s'] / ip['cpu_s']:.2f}", "target": "(overhead; 1.0 = none)"})
    worst = max((r["peak_proc_mb"] for r in rows if r["mode"] in ("mp2", "dask2")), default=None)
    if worst is not None:
        headline.append({"what": "peak RSS of the largest process, 2-worker runs", "figure": f"{worst} MB",
                         "target": "<= 1536 MB per worker"})
    path = save_result("scale", {"documents": n_docs, "rows": rows, "headline": headline,
                                 "not_covered": "images and crawl jobs; several machines; 1M-document dedup memory"},
                       packages=["apache-beam", "dask", "distributed", "pyarrow"], start=start)
    print("wrote", path)


if __name__ == "__main__":
    sys.exit(main())
