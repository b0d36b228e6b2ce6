"""Dedup benchmark: held-out pair quality against two truths, end-to-end speed against a rensa
loop and datatrove in the same run, and peak memory.

    python bench/dedup.py [--scratch /tmp/cidermill-speed-bench] [--docs 12000] [--chunk-words 2000] [--rounds 3]
                          [--workers-args "--direct_running_mode=multi_processing --direct_num_workers=2"]
                          [--no-quality] [--no-speed] [--no-django] [--no-peers]
                          [--memory-mode beam|library|none] [--memory-docs 1000000] [--only-memory]

Peers live in a bench venv under --scratch (never project dependencies): datatrove 0.10.1 (+ spaCy,
its word tokenizer) and rensa 0.5 (Rust R-MinHash).

Quality (held out: nothing was tuned on these): SPDX licence texts (`npm pack spdx-license-list`)
and the docs/*.txt of two Django sdists (`pip download --no-binary`). Truth = pairs whose exact
Jaccard of word 5-gram sets is >= 0.8, computed twice: with our normalisation ("normalised") and
with an independent tokenisation, `\\w+` of the lowercased text ("independent"). Every tool is
compared like with like: pair F1 (ours: every LSH pair that passes verification; rensa: its query
hits) and drop F1 up to the choice of survivor (each tool keeps another member of a cluster).
The Beam transform's batched fast path must give the same marks as the per-document reference.

Speed, end to end: ours = `cidermill text` with `stages: [input, dedup]` (reads pages shards,
sanitises, exact + near dedup with verification, writes kept and rejected shards and the report;
one process: the command's default local engine, pipelines/text_local.py). rensa loop = read JSONL, `\\w+` 5-grams of lowercased text
in Python, R-MinHash 128, LSH 16x8, query-then-insert (no exact pass, no verification, no shard
output). datatrove = its 4 stages (signatures, buckets, clusters, filter) reading and writing JSONL.
Same documents (bench/debian_corpus.py), CPU-seconds of each whole process tree, medians of rounds,
peak RSS of the tree sampled from /proc. In the same rounds: ours before (the same job on Beam's
in-process FnApiRunner, the default until the local engine; its shards are compared with ours), ours
without the dedup stage, and ours and the rensa loop on 100 documents (each side's fixed start-up),
from which the per-document work without start-up and the dedup stage's own cost are derived.
Memory (--memory-mode): peak RSS of a child running the dedup on 1M generated short documents.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import re
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
from proctree import compile_bytecode, median_row, timed_child, tree_rss_mb  # noqa: E402  (bench/ is on sys.path: the script's folder)

THRESHOLD, NGRAM, NUM_PERM = 0.8, 5, 128
WORD_RE = re.compile(r"\w+")
TRUTHS = ("normalised", "independent")  # our words_of vs plain \w+ of lowercased text


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


def independent_words(text: str) -> list[str]:
    """The truth's own tokenisation, shared with no tool: `\\w+` of the lowercased text."""
    return WORD_RE.findall((text or "").lower())


def exact_truth(docs, words_fn=None):
    """All pairs with exact Jaccard >= THRESHOLD of word 5-gram sets (size-ratio pruning keeps this
    quick); words from `words_fn` (default: our normalisation, filters/dedup_text.words_of)."""
    from filters.dedup_text import word_ngrams, words_of

    words_fn = words_fn or words_of
    sets = {k: {hash(g) for g in word_ngrams(words_fn(t), NGRAM)} for k, t in docs}
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


def _truth_labels(docs, truth_pairs):
    from filters.dedup_cluster import UnionFind

    uf = UnionFind()
    for a, b in truth_pairs:
        uf.union(a, b)
    return {k: uf.find(k) for k, _ in docs}


def quality(docs, name, bands, rows, dt_removed=None, verify="exact", rensa=None):
    """Pair, cluster and drop F1 of ours (reference per-document path and the batched path the
    Beam transform runs, which must agree), against both truths; peers' drop F1 beside ours
    (up to the choice of survivor, as peers keep another member) and the rensa loop's pair F1."""
    from filters.dedup_cluster import near_dedup_in_memory

    marks, edges = near_dedup_in_memory(docs, NUM_PERM, bands, rows, THRESHOLD, NGRAM, verify=verify)
    pair_set = lsh_pairs(docs, bands, rows, verify)
    pred_label = {k: m.cluster for k, m in marks.items()}
    pred_drop = {k for k, m in marks.items() if not m.keep}
    out = {"docs": len(docs)}
    print(f"\n== quality on {name}: {len(docs)} docs; bands x rows = {bands} x {rows}, verify = {verify}")
    for truth in TRUTHS:
        truth_pairs, _ = exact_truth(docs, independent_words if truth == "independent" else None)
        true_label = _truth_labels(docs, truth_pairs)
        ep, er, ef = prf(len(pair_set & truth_pairs), len(pair_set), len(truth_pairs))
        joint = defaultdict(int)
        for k in true_label:
            joint[(true_label[k], pred_label[k])] += 1
        tp_c = sum(s * (s - 1) // 2 for s in joint.values())
        cp, cr, cf = prf(tp_c, cluster_pairs(pred_label), cluster_pairs(true_label))
        oq = _drop_f1_up_to_survivor(true_label, pred_drop)
        row = {"truth_pairs": len(truth_pairs), "pair_f1": ef, "pair_p": ep, "pair_r": er, "cluster_f1": cf,
               "drop_f1": oq[2], "drop_p": oq[0], "drop_r": oq[1]}
        print(f"  truth = {truth} tokens: {len(truth_pairs)} pairs with exact Jaccard >= {THRESHOLD}, "
              f"{sum(k != r for k, r in true_label.items())} docs to drop")
        print(f"    ours pairs (LSH + verified): P={ep:.3f} R={er:.3f} F1={ef:.3f} ({len(pair_set)} pairs)")
        print(f"    ours same-cluster pairs:     P={cp:.3f} R={cr:.3f} F1={cf:.3f}")
        print(f"    drop F1 (up to survivor):    ours {oq[2]:.3f} (P={oq[0]:.3f} R={oq[1]:.3f}, {len(pred_drop)} dropped)")
        if dt_removed is not None:
            dq = _drop_f1_up_to_survivor(true_label, dt_removed)
            row["datatrove_drop_f1"] = dq[2]
            print(f"                                 datatrove {dq[2]:.3f} (P={dq[0]:.3f} R={dq[1]:.3f}, "
                  f"{len(dt_removed)} dropped)")
        if rensa is not None:
            rq = _drop_f1_up_to_survivor(true_label, rensa["removed"])
            rp = prf(len(rensa["pairs"] & truth_pairs), len(rensa["pairs"]), len(truth_pairs))
            row["rensa_drop_f1"], row["rensa_pair_f1"] = rq[2], rp[2]
            print(f"                                 rensa loop {rq[2]:.3f} (P={rq[0]:.3f} R={rq[1]:.3f}, "
                  f"{len(rensa['removed'])} dropped)")
            print(f"    rensa pairs (query hits):    P={rp[0]:.3f} R={rp[1]:.3f} F1={rp[2]:.3f} "
                  f"({len(rensa['pairs'])} pairs; unverified LSH hits against kept docs only)")
        out[truth] = row
    return out


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
if len(sys.argv) > 6 and sys.argv[6] == "filter":
    from datatrove.pipeline.dedup.minhash import MinhashDedupFilter
    from datatrove.pipeline.writers import JsonlWriter
    times["filter"] = run([JsonlReader(inp), MinhashDedupFilter(input_folder=f"{out}/remove"),
                           JsonlWriter(f"{out}/deduped")], "s4")
removed = []
for f in glob.glob(f"{out}/remove/*.remove"):
    data = open(f, "rb").read()
    removed += [x[0] for x in struct.iter_unpack("<I", data)]
print(json.dumps({"times": times, "removed": sorted(removed)}))
'''


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


RENSA_DRIVER = r'''
import json, re, sys
from rensa import RMinHash, RMinHashLSH
path, out, want_pairs = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
word = re.compile(r"\w+")
lsh = RMinHashLSH(threshold=0.8, num_perm=128, num_bands=16)
ids, removed, pairs = [], [], []
with open(path, encoding="utf-8") as f:
    for i, line in enumerate(f):
        d = json.loads(line)
        ids.append(d["id"])
        toks = word.findall(d["text"].lower())
        sh = [" ".join(toks[j:j + 5]) for j in range(max(len(toks) - 4, 1))] if toks else []
        m = RMinHash(num_perm=128, seed=42)
        m.update(sh)
        hits = lsh.query(m)
        if hits:
            removed.append(i)
            if want_pairs:
                pairs += [(h, i) for h in hits]
        else:
            lsh.insert(i, m)
with open(out, "w") as f:
    json.dump({"removed": [ids[i] for i in removed], "pairs": [(ids[a], ids[b]) for a, b in pairs]}, f)
'''


def peers_python(scratch: Path) -> str:
    """A bench venv with the peers (never in the project's dependencies): datatrove 0.10.1 with
    spaCy (its word tokenizer) and rensa 0.5 (Rust MinHash)."""
    venv = scratch / "peers-venv"
    py = venv / "bin" / "python"
    if not py.exists() or subprocess.run([str(py), "-c", "import datatrove, spacy, rensa, orjson"],
                                         capture_output=True).returncode:
        print(f"installing datatrove + spaCy + rensa into {venv} ...", flush=True)
        sh([sys.executable, "-m", "venv", str(venv)])
        sh([str(py), "-m", "pip", "install", "-q", "datatrove[processing]==0.10.1", "spacy", "rensa==0.5.*", "orjson",
            "regex", "xxhash<4", "tokenizers"])
    return str(py)


def run_rensa(py: str, jsonl: str, scratch: Path, want_pairs: bool = False) -> dict:
    driver, out = scratch / "rensa_loop.py", scratch / "rensa_out.json"
    driver.write_text(RENSA_DRIVER)
    res = timed_child([py, str(driver), jsonl, str(out), "1" if want_pairs else "0"])
    got = json.loads(out.read_text())
    res["removed"] = set(got["removed"])
    res["pairs"] = {(min(a, b), max(a, b)) for a, b in got["pairs"]}
    return res


NOT_COVERED = [
    "one corpus of 12,000 Debian documentation chunks of up to ~2,000 words (~9.7M words; ~20% exact or near "
    "duplicates, mostly untranslated pages of translated manuals); web crawls with huge duplicate clusters are "
    "not measured here, nor a cluster runner (bench/scale.py has the scale-out rows)",
    "the rensa loop does less (no exact pass, no verification, no shard output); ratios are of whole process "
    "trees, so ours includes its fixed start-up (interpreter, imports); the per-document and dedup-stage rows "
    "subtract it",
    "ours runs in one process here; with Beam workers or Dask (bench/scale.py) the fixed cost is Beam's again",
    "measured on a shared, loaded 2-core machine: CPU-s, not wall time, and medians of rounds",
    "the compiled kernel is built with this machine's cc (GCC, -O3, AVX2 clone picked at load); without a "
    "compiler dedup runs the numpy path (the 'numpy path' row)",
    "the bench writes our modules' bytecode caches before the rounds (pip compiled the peers' at install); a "
    "process that must compile them (PYTHONDONTWRITEBYTECODE and no cache) pays ~0.07 CPU-s more",
]
OURS = "cidermill text [input, dedup] (local engine)"
OURS_BEAM = "cidermill text [input, dedup], --runner FnApiRunner (Beam in-process, before)"
OURS_NUMPY = "cidermill text [input, dedup] (local engine, numpy path: CIDERMILL_NATIVE=0, before)"
OURS_INPUT = "cidermill text [input] (no dedup: read, sanitise, write, report)"
OURS_SMALL = "cidermill text [input, dedup], 100 docs (fixed start-up)"
RENSA = "rensa 0.5 loop (R-MinHash 128, LSH 16x8)"
RENSA_SMALL = "rensa 0.5 loop, 100 docs (fixed start-up)"


def run_ours_pipeline(pages: str, scratch: Path, beam_args=(), stages: str = "[input, dedup]", mode: str = "fused",
                      tag: str = "ours", env: dict | None = None) -> dict:
    """`cidermill text` with `stages` (default [input, dedup]: shards in, exact + near dedup +
    verification, kept and rejected shards and the report out); no Beam flags = the one-process
    local engine, the command's default."""
    cfg = scratch / f"{tag}.yaml"
    cfg.write_text(f"stages: {stages}\ndedup: {{mode: {mode}}}\n")
    out = scratch / f"{tag}-out"
    res = timed_child([sys.executable, "-m", "pipelines.cli", "text", "--in", pages, "--out", str(out),
                       "--config", str(cfg), "--overwrite", *(beam_args or ["--workers=1"])],
                      env={"PYTHONPATH": str(REPO), **(env or {})})
    res["summary"] = json.loads(res["stdout"].strip().splitlines()[-1])
    res["shards"] = [json.loads((Path(d) / "_manifest.json").read_text())["shards"] for d in (out, f"{out}.rejected")]
    return res


def run_datatrove4(py: str, jsonl: str, scratch: Path, bands: int, rows: int) -> dict:
    """datatrove's 4-stage MinHash (signatures, buckets, clusters, filter), reading and writing jsonl."""
    work = scratch / "dt-e2e"
    subprocess.run(["rm", "-rf", str(work)], check=True)
    (work / "in").mkdir(parents=True)
    os.symlink(jsonl, work / "in" / "docs.jsonl")
    (work / "driver.py").write_text(DT_DRIVER)
    res = timed_child([py, str(work / "driver.py"), str(work / "in"), str(work / "out"), str(bands), str(rows),
                       str(NGRAM), "filter"])
    res["removed"] = len(json.loads(res["stdout"].strip().splitlines()[-1])["removed"])
    return res


def speed(pages: str, jsonl: str, n_docs: int, bands, rows, peers_py, scratch, rounds: int, beam_args=(),
          small_pages: str | None = None, small_jsonl: str | None = None, small_n: int = 100):
    """End to end, medians of `rounds`: ours = the pipeline on shards; peers read the same
    documents as JSONL. Rounds interleave the tools so load drifts hit all of them alike.

    Besides the end-to-end runs: ours before (the same job on Beam's in-process runner, which
    was the default, and on the numpy path instead of the compiled kernel), the same job without the dedup stage (what reading, sanitising and writing
    cost), and ours and the rensa loop on `small_n` documents (each side's fixed start-up:
    interpreter, imports), so that the work per document can be reported without the fixed part."""
    runs = defaultdict(list)
    for r in range(rounds):
        runs[OURS].append(run_ours_pipeline(pages, scratch))
        runs[OURS_BEAM].append(run_ours_pipeline(pages, scratch, ["--runner=FnApiRunner"], tag="beam"))
        runs[OURS_NUMPY].append(run_ours_pipeline(pages, scratch, tag="numpy", env={"CIDERMILL_NATIVE": "0"}))
        runs[OURS_INPUT].append(run_ours_pipeline(pages, scratch, stages="[input]", tag="input"))
        if small_pages:
            runs[OURS_SMALL].append(run_ours_pipeline(small_pages, scratch, tag="small"))
        if beam_args:
            runs["cidermill, " + " ".join(beam_args)].append(run_ours_pipeline(pages, scratch, beam_args, tag="w"))
        if peers_py:
            runs[RENSA].append(run_rensa(peers_py, jsonl, scratch))
            if small_jsonl:
                runs[RENSA_SMALL].append(run_rensa(peers_py, small_jsonl, scratch))
            runs["datatrove 0.10.1 4-stage MinHash"].append(run_datatrove4(peers_py, jsonl, scratch, bands, rows))
        print(f"  round {r + 1}/{rounds} (load {os.getloadavg()[0]:.1f}): "
              + ", ".join(f"{k} {v[-1]['cpu_s']:.1f} CPU-s" for k, v in runs.items()), flush=True)
    table = {}
    print(f"\n== speed end to end: {n_docs} Debian documentation documents, medians of {rounds} round(s), "
          f"CPU-s of each process tree")
    print(f"  {'':<66}{'CPU-s':>8}{'docs/CPU-s':>12}{'wall s':>8}{'peak RSS MB':>13}")
    for name, rs in runs.items():
        row = median_row(rs, small_n if name in (OURS_SMALL, RENSA_SMALL) else n_docs)
        cpu = row["cpu_s"]
        if "summary" in rs[0]:
            row["dropped"] = rs[0]["summary"]["dropped"]
        elif "removed" in rs[0]:
            row["dropped"] = len(rs[0]["removed"]) if isinstance(rs[0]["removed"], set) else rs[0]["removed"]
        table[name] = row
        print(f"  {name:<66}{cpu:>8.1f}{row['docs_per_cpu_s']:>12.0f}{row['wall_s']:>8.1f}{row['peak_rss_mb']:>13.0f}"
              f"  dropped {row.get('dropped')}")
    ours = table[OURS]["docs_per_cpu_s"]
    for name, row in table.items():
        if name.startswith(("rensa", "datatrove")) and name != RENSA_SMALL:
            row["ours_ratio"] = ours / row["docs_per_cpu_s"]
            print(f"  ours / {name}: {row['ours_ratio']:.2f}x")
    derived = {}
    if OURS_SMALL in table and RENSA_SMALL in table and RENSA in table:
        # per-document work: the full run less the same tool's small run (its fixed start-up and
        # the small run's few documents), per document beyond the small run's
        ours_work = table[OURS]["cpu_s"] - table[OURS_SMALL]["cpu_s"]
        rensa_work = table[RENSA]["cpu_s"] - table[RENSA_SMALL]["cpu_s"]
        extra = n_docs - small_n
        derived["ours_fixed_cpu_s"] = table[OURS_SMALL]["cpu_s"]
        derived["rensa_fixed_cpu_s"] = table[RENSA_SMALL]["cpu_s"]
        derived["ours_work_docs_per_cpu_s"] = extra / ours_work if ours_work > 0 else None
        derived["rensa_work_docs_per_cpu_s"] = extra / rensa_work if rensa_work > 0 else None
    if OURS_INPUT in table:
        stage = table[OURS]["cpu_s"] - table[OURS_INPUT]["cpu_s"]
        derived["dedup_stage_cpu_s"] = stage
        derived["dedup_stage_docs_per_cpu_s"] = n_docs / stage if stage > 0 else None
        derived["input_pipeline_cpu_s"] = table[OURS_INPUT]["cpu_s"]
    if OURS_BEAM in table:
        derived["local_vs_beam"] = table[OURS_BEAM]["cpu_s"] / table[OURS]["cpu_s"]
        same = ([r["summary"]["dropped"] for r in runs[OURS]] == [r["summary"]["dropped"] for r in runs[OURS_BEAM]]
                and runs[OURS][0]["shards"] == runs[OURS_BEAM][0]["shards"])
        derived["local_same_bytes_as_beam"] = same
    if OURS_NUMPY in table:
        derived["native_vs_numpy"] = table[OURS_NUMPY]["cpu_s"] / table[OURS]["cpu_s"]
        derived["native_same_bytes_as_numpy"] = runs[OURS][0]["shards"] == runs[OURS_NUMPY][0]["shards"]
    if derived:
        print("  derived: " + ", ".join(f"{k} {v:.2f}" if isinstance(v, float) else f"{k} {v}" for k, v in derived.items()))
    return table, derived


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
    from debian_corpus import add_chunk_words_flag, documents_jsonl, load_jsonl, pages_dataset

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scratch", default="/tmp/cidermill-speed-bench")
    ap.add_argument("--docs", type=int, default=12000, help="speed corpus: first N Debian documentation chunks")
    add_chunk_words_flag(ap)
    ap.add_argument("--rounds", type=int, default=3, help="speed rounds (medians)")
    ap.add_argument("--workers-args", default="", help="also run ours with these Beam flags, e.g. "
                    "'--direct_running_mode=multi_processing --direct_num_workers=2'")
    ap.add_argument("--memory-docs", type=int, default=1_000_000)
    ap.add_argument("--memory-mode", choices=("beam", "library", "none"), default="none")
    ap.add_argument("--memory-beam-args", default="", help="Beam flags for the memory child")
    ap.add_argument("--verify", choices=("exact", "signature"), default="exact",
                    help="how candidate pairs are verified (NearDedup's verify=)")
    ap.add_argument("--only-memory", action="store_true", help="skip quality and speed")
    ap.add_argument("--no-quality", action="store_true")
    ap.add_argument("--no-speed", action="store_true")
    ap.add_argument("--no-django", action="store_true")
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--bands", type=int, default=None)
    ap.add_argument("--rows", type=int, default=None)
    args = ap.parse_args()
    scratch = Path(args.scratch)
    scratch.mkdir(parents=True, exist_ok=True)
    from results import save_result, start_conditions

    from filters.minhash_signature import resolve_bands_rows

    start = start_conditions()
    compile_bytecode(REPO)
    bands, rows = resolve_bands_rows(NUM_PERM, args.bands, args.rows, THRESHOLD)
    if args.only_memory:
        memory(args.memory_docs, args.memory_mode, scratch, args.memory_beam_args.split())
        return
    peers_py = None if args.no_peers else peers_python(scratch)
    payload: dict = {"threshold": THRESHOLD, "ngram": NGRAM, "num_perm": NUM_PERM, "bands": bands, "rows": rows}
    if not args.no_quality:
        sets = [("spdx", "SPDX licence texts", spdx_docs(scratch))]
        if not args.no_django:
            sets.append(("django", "Django docs, two versions", django_docs(scratch)))
        payload["quality"] = {}
        for tag, title, docs in sets:
            dt = run_datatrove(peers_py, docs, scratch, tag, bands, rows)["removed_keys"] if peers_py else None
            rq = None
            if peers_py:
                jl = scratch / f"{tag}.jsonl"
                with open(jl, "w", encoding="utf-8") as f:
                    for k, t in docs:
                        f.write(json.dumps({"id": k, "text": t}) + "\n")
                rq = run_rensa(peers_py, str(jl), scratch, want_pairs=True)
            q = quality(docs, title, bands, rows, dt, args.verify, rq)
            _, beam_marks = run_beam_near(docs, bands, rows, verify=args.verify)
            from filters.dedup_cluster import near_dedup_in_memory
            ref, _ = near_dedup_in_memory(docs, NUM_PERM, bands, rows, THRESHOLD, NGRAM, verify=args.verify)
            q["batched_equals_reference"] = all(beam_marks[k] == (m.cluster, m.cluster_size, m.keep)
                                                for k, m in ref.items())
            print(f"  Beam NearDedup (batched fast path) gives the same marks as the per-document reference: "
                  f"{q['batched_equals_reference']}")
            payload["quality"][tag] = q
    headline = []
    if not args.no_speed:
        cw = args.chunk_words
        jsonl = documents_jsonl(str(scratch), args.docs, cw)
        pages = pages_dataset(str(scratch), args.docs, cw)
        n = sum(1 for _ in open(jsonl, encoding="utf-8"))
        small_n = 100
        small_jsonl = documents_jsonl(str(scratch), small_n, cw)
        small_pages = pages_dataset(str(scratch), small_n, cw)
        table, derived = speed(pages, jsonl, n, bands, rows, peers_py, scratch, args.rounds, args.workers_args.split(),
                               small_pages, small_jsonl, small_n)
        payload["speed"] = {"docs": n, "chunk_words": cw, "words": sum(len(d["text"].split()) for d in load_jsonl(jsonl)),
                            "rounds": args.rounds, "tools": table, "derived": derived}
        ours = table[OURS]
        for name, target in (("rensa", ">= 1.5x"), ("datatrove", ">= 10x")):
            peer = next((k for k in table if k.startswith(name) and k != RENSA_SMALL), None)
            if peer:
                headline.append({"what": f"dedup end to end (shards in/out, exact + near + verify) vs {peer}, "
                                         f"docs per CPU-s, {n} docs of up to {cw} words, medians of {args.rounds}",
                                 "figure": f"{table[peer]['ours_ratio']:.2f}x ({ours['docs_per_cpu_s']:.0f} vs "
                                           f"{table[peer]['docs_per_cpu_s']:.0f}; rounds "
                                           + "/".join(f"{p / o:.2f}" for o, p in zip(ours["rounds_cpu_s"],
                                                                                  table[peer]["rounds_cpu_s"])) + ")",
                                 "target": target})
        if derived.get("ours_work_docs_per_cpu_s") and derived.get("rensa_work_docs_per_cpu_s"):
            ow, rw = derived["ours_work_docs_per_cpu_s"], derived["rensa_work_docs_per_cpu_s"]
            headline.append({"what": f"dedup per-document work, fixed start-up excluded (each tool's {small_n}-doc run "
                                     f"subtracted: ours {derived['ours_fixed_cpu_s']:.1f} CPU-s, rensa "
                                     f"{derived['rensa_fixed_cpu_s']:.2f}), vs rensa loop, docs per CPU-s",
                             "figure": f"{ow / rw:.2f}x ({ow:.0f} vs {rw:.0f})", "target": "(second figure)"})
        if derived.get("dedup_stage_docs_per_cpu_s"):
            headline.append({"what": "dedup stage alone (end to end less the same job without dedup, "
                                     f"{derived['input_pipeline_cpu_s']:.1f} CPU-s), docs per CPU-s",
                             "figure": f"{derived['dedup_stage_docs_per_cpu_s']:.0f}", "target": "(context)"})
        if derived.get("local_vs_beam"):
            headline.append({"what": "dedup end to end, local engine (now, the default) vs Beam in-process (before), "
                                     "CPU-s ratio; same shard bytes: " + str(derived["local_same_bytes_as_beam"]),
                             "figure": f"{derived['local_vs_beam']:.2f}x", "target": "(context)"})
        if derived.get("native_vs_numpy"):
            headline.append({"what": "dedup end to end, compiled kernel (now) vs the numpy path (before), CPU-s "
                                     "ratio; same shard bytes: " + str(derived["native_same_bytes_as_numpy"]),
                             "figure": f"{derived['native_vs_numpy']:.2f}x", "target": "(context)"})
        rensa = RENSA if RENSA in table else None
        if rensa:
            headline.append({"what": "dedup peak RSS, ours vs rensa loop", "figure":
                             f"{ours['peak_rss_mb']:.0f} MB vs {table[rensa]['peak_rss_mb']:.0f} MB (ours without "
                             f"dedup: {table[OURS_INPUT]['peak_rss_mb']:.0f} MB)", "target": "<= rensa loop"})
    for tag, q in (payload.get("quality") or {}).items():
        headline.append({"what": f"dedup held-out {tag}: pair F1 / drop F1, independent \\w+ truth",
                         "figure": f"{q['independent']['pair_f1']:.3f} / {q['independent']['drop_f1']:.3f}",
                         "target": "not below before"})
    payload["headline"] = headline
    payload["not_covered"] = NOT_COVERED
    if args.memory_mode != "none" and args.memory_docs:
        memory(args.memory_docs, args.memory_mode, scratch, args.memory_beam_args.split())
    path = save_result("dedup", payload, packages=["apache-beam", "numpy", "xxhash", "datasketch"], start=start)
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
