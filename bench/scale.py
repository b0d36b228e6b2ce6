"""Do more workers add speed? Text chain, dedup, images and crawl jobs, one worker vs two, in-process vs Dask.

    python bench/scale.py [--docs 12000] [--jobs cores,text,dedup,images,crawl,dedup1m] [--name scale]
                          [--modes inprocess,mp2,dask1,dask2] [--scratch /tmp/cidermill-bench] [--rounds 1]

With the defaults every job runs (about a quarter of an hour on a quiet 2-core machine, plus the
first download of the Debian documents and the first training of the default CLIP scorer).

Documents: real text chunks of Debian documentation (bench/debian_corpus.py, fetched with apt-get
download into SCRATCH, not committed; --docs chunks of up to --words words, default 12,000 of up to
2,000, the corpus of bench/dedup.py and bench/text_chain.py and the issue's measurements),
written as a pages dataset of 4 MB shards. Past 13,117 documents (up to 28,534) the corpus adds more
manuals (datatools/debian_docs.py SCALE_PACKAGES) after the same first 13,117: `--docs 28534 --name
scale-28k` measures where a larger input moves the speed-ups.
Jobs (each a `cidermill text` run as a subprocess with a stage list):
  text   input, c4_lines, langid, gopher, repetition   (per-document work)
  dedup  input, dedup (exact + MinHash near)            (shuffle-heavy)
Modes: inprocess (FnApiRunner, 1 process), mp2 (--direct_running_mode=multi_processing
--direct_num_workers=2), dask1 / dask2 (--runner dask, a local cluster of 1 / 2 worker processes
that the command starts and stops); for text and dedup also local / local2 (`cidermill text`'s own
engine without Beam, the default with no Beam option, in one process or with --workers 2: `--modes
local,local2 --merge`) and cluster1 / cluster2 (a `dask scheduler` and `dask worker --nworkers 1 / 2
--nthreads 1` on 127.0.0.1, started fresh and ready before each timed command, which is sent to it
with --dask_client_address, as jobs reach a standing cluster; the cluster's processes' CPU during
the command and their memory count in the run's figures).
Per run: wall seconds, CPU seconds of the whole process tree (getrusage of reaped children), peak
RSS of the tree and of its largest single process (sampled from /proc every 0.2 s), and whether the
output shards are byte-identical to the in-process run's; where the CPU went: the driver process
(FnApiRunner's controller, or Dask's scheduler and client) and each worker process; cores busy
(CPU-s / wall) and the share of 0.2 s samples in which the tree used 1.5 cores or more; on Dask,
the tasks run and the MB of task outputs fetched between workers (--dask_traffic_json). Speed-up: wall of the 1-worker run of the
same engine (inprocess for mp2, dask1 for dask2, local for local2) over the 2-worker run's; with --rounds N the text and
dedup rounds are interleaved (each round runs every mode once, forwards then backwards) and the speed-up is the
median over rounds of the two runs' ratio within a round. On a shared machine, wall
time depends on the load: the start load is recorded, and CPU seconds are the steadier figure.
crawl: `cidermill crawl` of bench/crawl.py's generated site (--crawl-pages over 8 loopback hosts served by
`python -m http.server`, delay 0, no rendering) in one process, with 2 extraction processes (extract2),
multi_processing 2 and Dask 1/2 (--crawl-modes); pages/s and CPU ms per page (crawler tree only).
images: `cidermill images` over a crawl of the same kind of site with one distinct JPEG per article
(--images-pages), servers up for the whole job, default CLIP scorer.
dedup1m: the dedup stage over --short-docs generated short documents (12-40 words, a tenth exact
copies, a tenth one-word edits) on Dask with 2 workers: peak RSS of all processes (default 200,000
to keep the run short; the issue's 4 GB target is at --short-docs 1000000).
cores: the same fixed pure-Python work alone and in two processes at once: what two processes can
get from this machine at all (below 2x when the two CPUs share a physical core or the host is busy);
and the text job's own per-document work (its stages on the first 3,000 documents, no engine) alone
and split over two processes at once: the ceiling of the text job's 2-worker speed-up here.
Not covered: several machines.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
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
MODES["extract2"] = ["--runner=FnApiRunner"]  # crawl only: in-process runner, 2 extraction processes
# text and dedup only: `cidermill text`'s local engine (no Beam), one process or two (its default,
# --workers auto, would pick by itself)
MODES["local"] = ["--workers=1"]
MODES["local2"] = ["--workers=2"]
# text and dedup only: a Dask cluster started before the timed command (`dask scheduler` + `dask
# worker --nworkers N --nthreads 1` on 127.0.0.1, as the issue measured it and as a cluster runs:
# up before the jobs), the job sent to it with --dask_client_address; a fresh cluster per run
CLUSTER = {"cluster1": 1, "cluster2": 2}
MODES.update({m: ["--runner=dask"] for m in CLUSTER})
BASELINE = {"mp2": "inprocess", "dask2": "dask1", "extract2": "inprocess", "local2": "local", "cluster2": "cluster1"}
CRAWL_HOSTS = 8


def crawl_site(scratch: str, n_pages: int, images: bool = False) -> str:
    """bench/crawl.py's generated site (articles of ~300 words, hubs, links), written as files, one
    folder per host; served by `python -m http.server` processes (not counted in the CPU figures).
    With `images`, every article's <img> exists: a distinct 320x240 JPEG (gradient and noise)."""
    import importlib.util
    import re
    import zlib
    spec = importlib.util.spec_from_file_location("crawl_bench_site", os.path.join(HERE, "crawl.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    root = os.path.join(scratch, f"scale-{'img' if images else ''}site-{n_pages}")
    if not os.path.exists(os.path.join(root, "done")):
        for h in range(CRAWL_HOSTS):
            for path, body in mod.make_site(n_pages // CRAWL_HOSTS, seed=h).items():
                f = os.path.join(root, str(h), path.lstrip("/") or "index.html")
                os.makedirs(os.path.dirname(f), exist_ok=True)
                with open(f, "wb") as fh:
                    fh.write(body)
                for src in re.findall(rb"<img src='([^']+)'", body) if images else []:
                    img = os.path.join(root, str(h), src.decode().lstrip("/"))
                    os.makedirs(os.path.dirname(img), exist_ok=True)
                    with open(img, "wb") as fh:
                        fh.write(_jpeg(zlib.crc32(b"%d" % h + src)))
            with open(os.path.join(root, str(h), "robots.txt"), "w") as fh:
                fh.write("User-agent: *\nAllow: /\n")
        open(os.path.join(root, "done"), "w").close()
    return root


def _jpeg(seed: int) -> bytes:
    import io

    import numpy as np
    from PIL import Image
    rng = np.random.default_rng(seed)
    base = np.linspace(0, 255, 320)[None, :, None] * rng.uniform(0.2, 1.0, size=(1, 1, 3))
    arr = np.clip(base + rng.normal(0, 25, size=(240, 320, 3)), 0, 255).astype("uint8")
    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, "JPEG", quality=85)
    return buf.getvalue()


class Servers:
    def __init__(self, root: str):
        import socket
        self.procs, self.seeds = [], []
        for h in range(CRAWL_HOSTS):
            with socket.socket() as so:
                so.bind(("127.0.0.1", 0))
                port = so.getsockname()[1]
            self.procs.append(subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1",
                                                "--directory", os.path.join(root, str(h))],
                                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            self.seeds.append(f"http://127.0.0.1:{port}/")
        time.sleep(1.0)

    def close(self) -> None:
        for p in self.procs:
            p.terminate()
            p.wait()


def dedup_pages(scratch: str, n: int) -> str:
    """n generated short documents (12-40 words from a 5,000-word vocabulary; every 10th an exact
    copy, every 10th a one-word edit of an earlier one): a memory test, not a quality test."""
    import random

    import pyarrow as pa

    from corpus.schemas import PAGES
    from corpus.writer import DatasetWriter

    out = os.path.join(scratch, f"short-pages-{n}")
    if os.path.exists(os.path.join(out, "_manifest.json")):
        return out
    rng = random.Random(0)
    vocab = [f"w{i}x{rng.randrange(10**6)}" for i in range(5000)]
    texts: list[str] = []
    with DatasetWriter(out, "pages", PAGES, overwrite=True) as w:
        for s in range(0, n, 10000):
            rows = []
            for i in range(s, min(n, s + 10000)):
                if i % 10 == 3 and texts:
                    t = texts[rng.randrange(len(texts))]
                elif i % 10 == 7 and texts:
                    words = texts[rng.randrange(len(texts))].split()
                    words[rng.randrange(len(words))] = rng.choice(vocab)
                    t = " ".join(words)
                else:
                    t = " ".join(rng.choice(vocab) for _ in range(rng.randint(12, 40)))
                texts.append(t) if len(texts) < 50000 else None
                rows.append({"id": f"d{i:08d}", "url": f"https://short.example/{i}", "text": t,
                             "training_allowed": True})
            w.write_table(pa.Table.from_pylist(rows, schema=PAGES))
    return out


def pages_dataset(scratch: str, n: int, words: int) -> str:
    from debian_corpus import pages_dataset as debian_pages
    return debian_pages(scratch, n, words=words, shard_bytes=4 << 20)


def config(scratch: str, job: str) -> str:
    import yaml
    path = os.path.join(scratch, f"scale-{job}.yaml")
    with open(path, "w") as f:
        yaml.safe_dump({"stages": STAGES[job], "output": {"rejected": "none"}}, f)
    return path


def _own_cpu(pid: int, default: float) -> float:
    """CPU seconds of one process itself (user + system), without the children it reaped."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return default


def _env() -> dict:
    return dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1")


class Cluster:
    """`dask scheduler` and `dask worker --nworkers n --nthreads 1` on 127.0.0.1, started and ready
    (every worker registered) before a timed run, stopped after it. Its processes' CPU during the
    run counts in the run's CPU, and their memory in its peaks (measure's `also`)."""

    def __init__(self, scratch: str, n: int):
        import socket
        with socket.socket() as sock:  # a free loopback port
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        dask = os.path.join(os.path.dirname(sys.executable), "dask")
        self.address = f"127.0.0.1:{port}"
        env = dict(_env(), MALLOC_ARENA_MAX="2")  # as `cidermill` sets it for the workers it starts
        self.log = open(os.path.join(scratch, "cluster.log"), "ab")
        host = "127.0.0.1"
        self.procs = [subprocess.Popen([dask, "scheduler", "--host", host, "--port", str(port), "--no-dashboard"],
                                       env=env, cwd=scratch, stdout=self.log, stderr=self.log, start_new_session=True)]
        self.procs.append(subprocess.Popen(
            [dask, "worker", f"tcp://{self.address}", "--nworkers", str(n), "--nthreads", "1", "--host", host,
             "--no-dashboard", "--local-directory", scratch],
            env=env, cwd=scratch, stdout=self.log, stderr=self.log, start_new_session=True))
        from dask.distributed import Client
        with Client(f"tcp://{self.address}", timeout=60) as c:
            c.wait_for_workers(n, timeout=120)

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.procs]

    def close(self) -> None:
        import signal
        for p in reversed(self.procs):
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for p in reversed(self.procs):
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        self.log.close()


def measure(cmd: list[str], also: list[int] = ()) -> dict:
    """Run `cmd`; wall, CPU of the tree, peak RSS of the tree and of its largest process, and where
    the CPU went: the driver process (the runner, Dask's scheduler and client) against the others
    (Beam's SDK workers, Dask's workers), and how many cores the tree kept busy (CPU-s over wall,
    and the share of 0.2 s samples in which it used 1.5 cores or more). `also`: processes started
    before (a Dask cluster's), whose trees count with the command's: their CPU from the command's
    start to its end, their memory in the peaks."""
    from proctree import _descendants, _table, pss_bytes

    t = _table()
    outside = {q for a in also for q in [a, *_descendants(a, t)] if q in t}
    cpu_at_start = {q: _own_cpu(q, 0.0) for q in outside}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.time()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
    peak = {"tree": 0.0, "proc": 0.0, "pss": 0.0}
    cpu_of: dict[int, float] = {}  # pid -> last CPU seconds seen (the tree's processes)
    busy = {"samples": 0, "two": 0}

    def sample():
        last_t, last_cpu = time.time(), 0.0
        while p.poll() is None:
            t = _table()
            pids = [q for q in [p.pid, *_descendants(p.pid, t), *(d for a in also for d in [a, *_descendants(a, t)])]
                    if q in t]
            rss = [t[q][2] / 2**20 for q in pids]
            if rss:
                peak["tree"] = max(peak["tree"], sum(rss))
                peak["proc"] = max(peak["proc"], max(rss))
            if rss and busy["samples"] % 5 == 0:  # once a second: reading smaps costs the kernel a page walk
                pss = [pss_bytes(q) for q in pids]
                peak["pss"] = max(peak["pss"], sum(x if x is not None else t[q][2] for x, q in zip(pss, pids)) / 2**20)
            for q in pids:
                start_cpu = cpu_at_start.get(q, 0.0)  # a cluster process's CPU before the command
                cpu_of[q] = _own_cpu(q, cpu_of.get(q, 0.0) + start_cpu) - start_cpu
            now, cpu = time.time(), sum(cpu_of.values())
            if now > last_t and cpu_of:
                busy["samples"] += 1
                busy["two"] += (cpu - last_cpu) / (now - last_t) >= 1.5
            last_t, last_cpu = now, cpu
            time.sleep(0.2)
    th = threading.Thread(target=sample, daemon=True)
    th.start()
    out, err = p.communicate()
    wall = time.time() - t0
    th.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    for q in outside:  # the cluster's processes, which outlive the command: their CPU at its end
        cpu_of[q] = _own_cpu(q, cpu_of.get(q, 0.0) + cpu_at_start[q]) - cpu_at_start[q]
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    cpu += sum(cpu_of.get(q, 0.0) for q in outside)
    if p.returncode != 0:
        raise SystemExit(f"failed ({p.returncode}): {' '.join(cmd)}\n{err[-3000:]}")
    others = sorted((c for q, c in cpu_of.items() if q != p.pid and c >= 0.5), reverse=True)
    return {"wall_s": round(wall, 1), "cpu_s": round(cpu, 1), "peak_tree_mb": round(peak["tree"]),
            "peak_tree_pss_mb": round(peak["pss"]), "peak_proc_mb": round(peak["proc"]),
            "cpu_driver_s": round(cpu_of.get(p.pid, 0.0), 1),
            "cpu_workers_s": [round(c, 1) for c in others[:4]], "cores_busy": round(cpu / max(wall, 1e-9), 2),
            "two_busy_share": round(busy["two"] / max(1, busy["samples"]), 2)}


def moved_between_workers(path: str) -> dict:
    """The runner's --dask_traffic_json: tasks run, and task outputs fetched across workers (MB)."""
    with open(path, encoding="utf-8") as f:
        per_worker = json.load(f)
    return {"dask_tasks": sum(w["executed"] for w in per_worker.values()),
            "dask_moved_mb": round(sum(b for w in per_worker.values() for _, b in w["fetched"].values()) / 1e6, 1)}


def _git() -> str:
    r = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return r.stdout.strip()


def digests(d: str) -> list:
    from corpus.manifest import read_manifest
    return [s.sha256 for s in read_manifest(d).shards]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--docs", type=int, default=12_000)
    ap.add_argument("--words", type=int, default=2000, help="words per document chunk (at most)")
    ap.add_argument("--jobs", default="cores,text,dedup,images,crawl,dedup1m")
    ap.add_argument("--modes", default="inprocess,mp2,dask1,dask2")
    ap.add_argument("--scratch", default="/tmp/cidermill-bench")
    ap.add_argument("--crawl-pages", type=int, default=1000, help="pages of the crawl job's site")
    ap.add_argument("--images-pages", type=int, default=300, help="pages (one image each) of the images job's site")
    ap.add_argument("--crawl-modes", default="inprocess,extract2,mp2,dask1,dask2")
    ap.add_argument("--short-docs", type=int, default=200_000,
                    help="documents of the dedup1m job (the issue's memory target is at 1,000,000: pass it for that run)")
    ap.add_argument("--rounds", type=int, default=1,
                    help="runs per cell, interleaved over modes for text and dedup; the median wall is kept")
    ap.add_argument("--summary-only", action="store_true", help="recompute the headline of the saved table")
    ap.add_argument("--merge", action="store_true",
                    help="keep the other cells of bench/results/NAME.json (same --docs) and replace the ones run now; "
                         "each mode runs with its 1-/2-worker partner, so no ratio pairs rounds of two runs")
    ap.add_argument("--name", default="scale",
                    help="results file bench/results/NAME.json (a run at another --docs keeps its own: scale-28k)")
    args = ap.parse_args()
    if args.merge:
        args.modes = ",".join(with_partners(args.modes.split(",")))
    from results import start_conditions

    if args.summary_only:
        old = json.load(open(os.path.join(HERE, "results", f"{args.name}.json"), encoding="utf-8"))
        summarise(old["rows"], old["documents"], old["start"], args.name)
        return 0
    os.makedirs(args.scratch, exist_ok=True)
    start = start_conditions()
    pages = pages_dataset(args.scratch, args.docs, args.words)
    from corpus.reader import ShardDataset
    n_docs = len(ShardDataset(pages))
    rows = []
    if args.merge:
        old = json.load(open(os.path.join(HERE, "results", f"{args.name}.json"), encoding="utf-8"))
        if old.get("documents") == n_docs:
            rows = [r for r in old["rows"] if not (r["job"] in args.jobs.split(",") and (
                r["mode"] in args.modes.split(",") or r["job"] in ("crawl", "dedup1m", "images", "cores")))]
    own_rows = {"crawl": crawl_rows, "dedup1m": dedup1m_rows, "images": images_rows, "cores": cores_rows}
    for job in args.jobs.split(","):
        if job in own_rows:
            rows += own_rows[job](args, rows, n_docs, start)
            continue
        rows += text_job_rows(args, job, pages, n_docs, start, rows)
    return 0


def text_job_rows(args, job: str, pages: str, n_docs: int, start: dict, other_rows: list) -> list:
    """One `cidermill text` job in every mode, rounds interleaved: each round runs every mode once
    (forwards in even rounds, backwards in odd ones), so a drift of the host over the run falls on
    every mode alike and each 2-worker run has its 1-worker run beside it. A row keeps its median
    round (by wall) and every round's wall; the speed-up is the median over rounds of the ratio of
    the two runs of the same round (summarise)."""
    cfg = config(args.scratch, job)
    modes = args.modes.split(",")
    runs: dict[str, list] = {m: [] for m in modes}
    outs = {m: os.path.join(args.scratch, f"scale-out-{job}-{n_docs}-{m}") for m in modes}  # per input size
    rows: list = []
    for k in range(args.rounds):
        for mode in modes if k % 2 == 0 else modes[::-1]:
            cmd = [sys.executable, "-m", "pipelines.cli", "text", "--in", pages, "--out", outs[mode], "--config", cfg,
                   "--no-rejected", "--overwrite", *MODES[mode]]
            traffic = os.path.join(args.scratch, f"traffic-{job}-{mode}.json")
            dask = mode.startswith("dask") or mode in CLUSTER
            cluster = Cluster(args.scratch, CLUSTER[mode]) if mode in CLUSTER else None
            try:
                run = measure(cmd + ([f"--dask_traffic_json={traffic}"] if dask else [])
                              + ([f"--dask_client_address={cluster.address}"] if cluster else []),
                              also=cluster.pids if cluster else [])
            finally:
                if cluster:
                    cluster.close()
            if dask:
                run.update(moved_between_workers(traffic))
            runs[mode].append(run)
            print(f"  {job:<6} {mode:<10} round {k + 1} {run}", flush=True)
        ref_dir = os.path.join(args.scratch, f"scale-out-{job}-{n_docs}-inprocess")  # a --merge run may not rerun it
        ref = digests(ref_dir if os.path.exists(os.path.join(ref_dir, "_manifest.json")) else outs[modes[0]])
        rows = []
        for mode in modes:
            r = sorted(runs[mode], key=lambda x: x["wall_s"])[(len(runs[mode]) - 1) // 2]
            rows.append({"job": job, "mode": mode, **r, "walls_s": [x["wall_s"] for x in runs[mode]],
                         "same_bytes": digests(outs[mode]) == ref,
                         "loadavg_after": [round(x, 1) for x in os.getloadavg()], "git": _git()})
        summarise(sorted([*other_rows, *rows], key=_order), n_docs, start, args.name)  # saved after every round
    return rows


def crawl_rows(args, rows: list, n_docs: int, start: dict) -> list:
    """`cidermill crawl` of the generated site (--crawl-pages, 8 hosts, delay 0, render never):
    inprocess (1 extraction process), extract2 (2 extraction processes), mp2, dask1, dask2."""
    site = crawl_site(args.scratch, args.crawl_pages)
    new = []
    for mode in args.crawl_modes.split(","):
        srv = Servers(site)
        out = os.path.join(args.scratch, f"scale-out-crawl-{mode}")
        try:
            ew = "2" if mode == "extract2" else "1"
            cmd = [sys.executable, "-m", "pipelines.cli", "crawl", "--seeds", *srv.seeds, "--out", out,
                   "--allow-private", "--delay", "0", "--render", "never", "--max-pages", str(args.crawl_pages),
                   "--max-depth", "5", "--wave-size", str(args.crawl_pages), "--no-sitemaps",
                   "--extract-workers", ew, "--quiet", *MODES[mode]]
            if os.path.exists(out):
                import shutil
                shutil.rmtree(out)
            r = measure(cmd)
        finally:
            srv.close()
        from corpus.reader import ShardDataset
        r["pages"] = len(ShardDataset(os.path.join(out, "pages")))
        print(f"  crawl  {mode:<10} {r}", flush=True)
        new.append({"job": "crawl", "mode": mode, **r, "same_bytes": None,
                    "loadavg_after": [round(x, 1) for x in os.getloadavg()], "git": _git()})
        summarise(sorted([*rows, *new], key=_order), n_docs, start, args.name)
    return new


def images_rows(args, rows: list, n_docs: int, start: dict) -> list:
    """`cidermill images` over the pages of a crawl of the generated site with one JPEG per article
    (--images-pages pages, 8 loopback hosts kept up for the whole job, delay 0, default CLIP model,
    trained and cached before the first timed run): in-process, multi_processing 2, Dask 1 and 2."""
    import shutil
    site = crawl_site(args.scratch, args.images_pages, images=True)
    subprocess.run([sys.executable, "-c", "from pipelines.commands.images import synth_caption_pairs as s; "
                    "from training.clip.default_checkpoint import default_clip_checkpoint as d; d(s)"],
                   check=True, env=dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1"))
    srv = Servers(site)
    new = []
    try:
        crawled = os.path.join(args.scratch, "scale-images-crawl")
        shutil.rmtree(crawled, ignore_errors=True)
        measure([sys.executable, "-m", "pipelines.cli", "crawl", "--seeds", *srv.seeds, "--out", crawled,
                 "--allow-private", "--delay", "0", "--render", "never", "--max-pages", str(args.images_pages),
                 "--max-depth", "5", "--wave-size", str(args.images_pages), "--no-sitemaps", "--quiet"])
        ref = None
        for mode in [m for m in args.modes.split(",") if m not in ("local", "local2")]:  # text's own engine
            out = os.path.join(args.scratch, f"scale-out-images-{mode}")
            r = measure([sys.executable, "-m", "pipelines.cli", "images", "--pages", os.path.join(crawled, "pages"),
                         "--out", out, "--allow-private", "--delay", "0", "--overwrite", *MODES[mode]])
            d = digests(os.path.join(out, "pairs")) + digests(os.path.join(out, "interleaved"))
            ref = ref if ref is not None else d
            from corpus.reader import ShardDataset
            r["pairs"] = len(ShardDataset(os.path.join(out, "pairs")))
            print(f"  images {mode:<10} {r}", flush=True)
            new.append({"job": "images", "mode": mode, **r, "same_bytes": d == ref,
                        "loadavg_after": [round(x, 1) for x in os.getloadavg()], "git": _git()})
            summarise(sorted([*rows, *new], key=_order), n_docs, start, args.name)
    finally:
        srv.close()
    return new


def dedup1m_rows(args, rows: list, n_docs: int, start: dict) -> list:
    """The dedup stage (exact + near) over --short-docs generated short documents on Dask, 2 workers."""
    pages = dedup_pages(args.scratch, args.short_docs)
    cfg = config(args.scratch, "dedup")
    out = os.path.join(args.scratch, "scale-out-dedup1m-dask2")
    cmd = [sys.executable, "-m", "pipelines.cli", "text", "--in", pages, "--out", out, "--config", cfg,
           "--no-rejected", "--overwrite", *MODES["dask2"]]
    r = measure(cmd)
    from corpus.reader import ShardDataset
    r["documents"], r["kept"] = args.short_docs, len(ShardDataset(out))
    print(f"  dedup1m dask2 {r}", flush=True)
    new = [{"job": "dedup1m", "mode": "dask2", **r, "same_bytes": None,
            "loadavg_after": [round(x, 1) for x in os.getloadavg()], "git": _git()}]
    summarise(sorted([*rows, *new], key=_order), n_docs, start, args.name)
    return new


def _spin(n: int) -> float:
    """Fixed pure-Python work; returns the CPU seconds it took this process."""
    t0, s = time.process_time(), 0
    for i in range(n):
        s += (i * 7) % 13
    return time.process_time() - t0


def _chain_work(cfg_path: str, docs_path: str, part: int, parts: int, limit: int, barrier) -> tuple[float, float]:
    """The text job's own per-document work (filters.chain.TextChain.process, no engine) on every
    `parts`-th of the first `limit` documents, from `part`; -> (CPU s, wall s) of that work alone, timed
    after the chain, its models and the documents are loaded and every process has reached `barrier`."""
    import yaml

    if sys.path[0] != ROOT:   # the repository's `crawl` package before bench/crawl.py
        sys.path.insert(0, ROOT)
    from filters.chain import TextChain
    with open(cfg_path, encoding="utf-8") as f:
        chain = TextChain(yaml.safe_load(f))
    docs = []
    with open(docs_path, encoding="utf-8") as f:
        for i, line in zip(range(limit), f):
            if i % parts == part:
                d = json.loads(line)
                docs.append({"id": d["id"], "url": f"file:///{d['id']}", "text": d["text"]})
    for d in docs[:20]:
        chain.process(dict(d))
    barrier.wait()
    t0, w0 = time.process_time(), time.time()
    for d in docs:
        chain.process(dict(d))
    return time.process_time() - t0, time.time() - w0


def chain_ceiling(args, limit: int = 3000, rounds: int = 3) -> dict:
    """What two processes get on this machine for the text job's own work (the `text` stages on the
    bench's first `limit` documents): the work alone in one process, then split (alternate documents)
    over two processes at once; medians of `rounds`. The fixed loop of `cores` fits in a core's cache;
    this one reads real documents and the models, as the 2-worker text runs do."""
    import multiprocessing

    from debian_corpus import documents_jsonl
    cfg, docs = config(args.scratch, "text"), documents_jsonl(args.scratch, args.docs, args.words)
    ctx = multiprocessing.get_context("spawn")
    alone, two = [], []
    with ctx.Manager() as mgr, ctx.Pool(2) as pool:
        for _ in range(rounds):
            alone.append(pool.apply(_chain_work, (cfg, docs, 0, 1, limit, mgr.Barrier(1))))
            b = mgr.Barrier(2)
            two.append(pool.starmap(_chain_work, [(cfg, docs, k, 2, limit, b) for k in range(2)]))
    w1 = statistics.median(a[1] for a in alone)
    w2 = statistics.median(max(x[1] for x in t) for t in two)
    return {"chain_docs": limit, "chain_alone_wall_s": round(w1, 2), "chain_two_wall_s": round(w2, 2),
            "chain_alone_cpu_s": round(statistics.median(a[0] for a in alone), 2),
            "chain_two_cpu_s": round(statistics.median(sum(x[0] for x in t) for t in two), 2),
            "chain_two_vs_one": round(w1 / w2, 2)}


def cores_rows(args, rows: list, n_docs: int, start: dict) -> list:
    """What two processes can get from this machine, whatever the engine: the same fixed work run
    alone, then twice at once in two processes (3 rounds, medians). If the two CPUs share one physical
    core (vCPUs are often hyperthreads), each process needs more CPU-seconds for the same work when
    both run, and no runner's 2 workers can beat `throughput` x one worker."""
    import multiprocessing
    import statistics

    n = 40_000_000
    alone, both, walls1, walls2 = [], [], [], []
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(2) as pool:
        pool.map(_spin, [1000, 1000])  # workers started and warm
        for _ in range(3):
            t0 = time.time()
            alone.append(pool.apply(_spin, (n,)))
            walls1.append(time.time() - t0)
            t0 = time.time()
            both.extend(pool.map(_spin, [n, n]))
            walls2.append(time.time() - t0)
    a, b = statistics.median(alone), statistics.median(both)
    w1, w2 = statistics.median(walls1), statistics.median(walls2)
    r = {"wall_s": round(w2, 2), "cpu_s": round(2 * b, 2), "peak_tree_mb": 0, "peak_proc_mb": 0,
         "cpu_alone_s": round(a, 2), "cpu_each_of_two_s": round(b, 2), "wall_alone_s": round(w1, 2),
         "throughput_two_vs_one": round(2 * w1 / w2, 2)}
    print(f"  cores  alone {a:.2f} CPU-s, each of two at once {b:.2f} CPU-s; two processes do "
          f"{r['throughput_two_vs_one']:.2f}x the work of one per second", flush=True)
    r.update(chain_ceiling(args))
    print(f"  cores  text chain's own work on {r['chain_docs']} documents: alone {r['chain_alone_wall_s']} s "
          f"({r['chain_alone_cpu_s']} CPU-s), split over two processes at once {r['chain_two_wall_s']} s "
          f"({r['chain_two_cpu_s']} CPU-s): {r['chain_two_vs_one']:.2f}x", flush=True)
    new = [{"job": "cores", "mode": "two", **r, "same_bytes": None,
            "loadavg_after": [round(x, 1) for x in os.getloadavg()], "git": _git()}]
    summarise(sorted([*rows, *new], key=_order), n_docs, start, args.name)
    return new


def with_partners(modes: list[str]) -> list[str]:
    """For --merge: each requested mode with its partner (1-worker baseline or 2-worker mode), so
    that no kept row's rounds are paired with rounds of another invocation. A speed-up is the
    median of ratios within rounds; rerunning only `inprocess` once paired its new rounds with the
    old `mp2` rounds and moved mp2's text ratio from 1.64x to 1.79x with no mp2 run at all."""
    out = list(modes)
    for two, one in BASELINE.items():
        if two == "extract2":  # the crawl's modes are --crawl-modes
            continue
        if two in out and one not in out:
            out.insert(out.index(two), one)
        if one in out and two not in out:
            out.insert(out.index(one) + 1, two)
    return out


def _order(r: dict):
    return (r["job"], list(MODES).index(r["mode"]) if r["mode"] in MODES else -1)


def _speedup(r: dict, base: dict) -> float:
    """Median over rounds of the base run's wall over this run's, when both rows hold the same rounds
    (interleaved: the two runs of a round ran minutes apart at most); else the ratio of the rows' walls."""
    a, b = base.get("walls_s"), r.get("walls_s")
    if a and b and len(a) == len(b):
        return round(statistics.median(x / y for x, y in zip(a, b)), 2)
    return round(base["wall_s"] / r["wall_s"], 2)


def summarise(rows: list[dict], n_docs: int, start: dict, name: str = "scale") -> None:
    from results import save_result

    by = {(r["job"], r["mode"]): r for r in rows}
    for r in rows:
        base = by.get((r["job"], BASELINE.get(r["mode"], "")))
        r["speedup"] = _speedup(r, base) if base else None
    print(f"\n{n_docs} documents, load at start {start['loadavg']}")
    print(f"{'job':<7} {'mode':<10} {'wall s':>7} {'CPU s':>7} {'tree RSS MB':>12} {'max proc MB':>12} "
          f"{'speed-up':>9} {'same bytes':>10} {'driver CPU':>10}  {'workers CPU':<18} {'cores busy':>10} {'>=1.5 busy':>10}")
    for r in rows:
        sp = f"{r['speedup']:.2f}x" if r["speedup"] else "-"
        workers = "/".join(str(c) for c in r.get("cpu_workers_s", [])) or "-"
        if r["job"] == "cores":
            workers = f"alone {r['cpu_alone_s']}, each of 2 {r['cpu_each_of_two_s']}; {r['throughput_two_vs_one']}x"
        print(f"{r['job']:<7} {r['mode']:<10} {r['wall_s']:>7} {r['cpu_s']:>7} {r['peak_tree_mb']:>12} "
              f"{r['peak_proc_mb']:>12} {sp:>9} {str(r['same_bytes']):>10} {r.get('cpu_driver_s', '-'):>10}  "
              f"{workers:<18} {r.get('cores_busy', '-'):>10} {r.get('two_busy_share', '-'):>10}")
    headline = []
    if ("cores", "two") in by:
        c = by[("cores", "two")]
        headline.append({"what": "this machine: fixed pure-Python work, two processes at once vs one alone "
                                 f"(CPU-s each {c['cpu_each_of_two_s']} vs {c['cpu_alone_s']})",
                         "figure": f"{c['throughput_two_vs_one']:.2f}x", "target": "(ceiling for any 2-worker run)"})
        if "chain_two_vs_one" in c:
            headline.append({"what": f"this machine: the text chain's own work ({c['chain_docs']} documents, no engine), "
                                     f"split over two processes at once vs one alone (CPU-s {c['chain_two_cpu_s']} vs "
                                     f"{c['chain_alone_cpu_s']})",
                             "figure": f"{c['chain_two_vs_one']:.2f}x", "target": "(ceiling for the text job)"})
    for job, target in (("text", ">= 1.7x"), ("dedup", ">= 1.6x"), ("images", "(context)")):
        for mode in ("mp2", "dask2", "cluster2", "local2"):
            if (job, mode) in by and by[(job, mode)]["speedup"]:
                headline.append({"what": f"{job} job, 2 workers vs 1 ({mode})",
                                 "figure": f"{by[(job, mode)]['speedup']:.2f}x", "target": target})
        if (job, "dask2") in by and (job, "inprocess") in by:
            ip, d2 = by[(job, "inprocess")], by[(job, "dask2")]
            headline.append({"what": f"{job} job, Dask 2 workers vs in-process (wall, median rounds; "
                                     "shared host)", "figure": f"{ip['wall_s'] / d2['wall_s']:.2f}x",
                             "target": "(context)"})
            headline.append({"what": f"{job} job, CPU seconds of Dask 2 workers / in-process",
                             "figure": f"{d2['cpu_s'] / ip['cpu_s']:.2f}", "target": "(overhead; 1.0 = none)"})
    for mode in ("extract2", "mp2", "dask2"):
        r, base = by.get(("crawl", mode)), by.get(("crawl", BASELINE[mode]))
        if r and base:
            headline.append({"what": f"crawl job ({r['pages']} pages, 8 hosts), 2 workers vs 1 ({mode}): pages/s, CPU ms/page",
                             "figure": f"{r['pages'] / r['wall_s']:.0f} vs {base['pages'] / base['wall_s']:.0f} pages/s "
                                       f"({r['speedup']:.2f}x); {1000 * r['cpu_s'] / r['pages']:.1f} vs "
                                       f"{1000 * base['cpu_s'] / base['pages']:.1f} ms/page",
                             "target": "(context; the Scrapy peer is in bench/crawl.py)"})
    if ("dedup1m", "dask2") in by:
        r = by[("dedup1m", "dask2")]
        headline.append({"what": f"dedup of {r['documents']:,} generated short documents on Dask (2 workers): "
                                 "peak RSS of all processes",
                         "figure": f"{r['peak_tree_mb'] / 1024:.2f} GB ({r['wall_s']:.0f} s, {r['cpu_s']:.0f} CPU-s"
                                   + (f"; PSS, shared pages once: {r['peak_tree_pss_mb'] / 1024:.2f} GB)"
                                      if r.get("peak_tree_pss_mb") else ")"),
                         "target": "<= 4 GB at 1,000,000 documents"})
    worst = max((r["peak_proc_mb"] for r in rows if r["mode"] in ("mp2", "dask2", "cluster2")
                 and r["job"] in ("text", "dedup")),
                default=None)
    if worst is not None:
        headline.append({"what": "peak RSS of the largest process, 2-worker runs", "figure": f"{worst} MB",
                         "target": "<= 1536 MB per worker"})
    absent = [j for j in ("cores", "text", "dedup", "images", "crawl", "dedup1m") if j not in {r["job"] for r in rows}]
    missing = f"jobs not run in this file's runs: {', '.join(absent)}; " if absent else ""
    path = save_result(name, {"documents": n_docs, "rows": rows, "headline": headline,
                                 "not_covered": missing + "several machines; crawl and images rows: a generated static "
                                                "site on loopback, delay 0, no rendering; the dedup1m row uses generated "
                                                "short documents (--short-docs of them)"},
                       packages=["apache-beam", "dask", "distributed", "pyarrow"], start=start)
    print("wrote", path)


if __name__ == "__main__":
    sys.exit(main())
