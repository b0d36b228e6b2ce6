"""Text chain per CPU: `cidermill text` against datatrove with the same four filters, same run.

    python bench/text_chain.py [--docs 12000] [--chunk-words 2000] [--rounds 3] [--scratch /tmp/cidermill-speed-bench]
                               [--workers-args "--direct_running_mode=multi_processing --direct_num_workers=2"]

Chain: language ID (fastText lid.176, English kept) -> C4 line cleaning -> Gopher quality ->
Gopher repetition.
  cidermill: `cidermill text` with `stages: [input, langid, c4_lines, gopher, repetition]`, one
             process (the command's default local engine, pipelines/text_local.py): pages shards
             in, sanitising, every score on every row, kept and rejected shards and the report out.
             In the same rounds, the same job on Beam's in-process FnApiRunner (the default
             before the local engine; same shards).
  datatrove 0.10.1: JsonlReader -> LanguageFilter(en, ft176) -> C4QualityFilter -> GopherQualityFilter
             -> GopherRepetitionFilter -> JsonlWriter, LocalPipelineExecutor with 2 tasks, 1 worker,
             given the same lid.176 model file (no download); in a bench venv under --scratch.
The rules differ in detail (thresholds, C4's sentence rules, the per-paragraph language labels
cidermill adds), so kept counts differ: this compares the cost of running each tool's chain.
Documents: bench/debian_corpus.py (10,000+ real Debian documentation chunks of up to 2,000 words). CPU-seconds of each
whole process tree, medians of rounds; decisions of the fast scoring paths are checked against the
reference implementations (filters/repetition.py *_reference) on every document.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections import Counter, defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, REPO)  # first: bench/crawl.py must not hide the crawl package
from proctree import compile_bytecode, median_row  # noqa: E402  (bench/ is on sys.path)

STAGES = ["input", "langid", "c4_lines", "gopher", "repetition"]
CONFIG = "stages: [input, langid, c4_lines, gopher, repetition]\nlangid:\n  languages: [en]\n"

DATATROVE_RUNNER = r'''
import sys
from datatrove.executor import LocalPipelineExecutor
from datatrove.pipeline.filters import C4QualityFilter, GopherQualityFilter, GopherRepetitionFilter, LanguageFilter
from datatrove.pipeline.readers import JsonlReader
from datatrove.pipeline.writers import JsonlWriter
import datatrove.utils.lid
inp, out, lid_path = sys.argv[1], sys.argv[2], sys.argv[3]
datatrove.utils.lid.cached_asset_path_or_download = lambda *a, **k: lid_path  # same lid.176 file, no download
lang = LanguageFilter(languages=["en"], language_threshold=0.5)
LocalPipelineExecutor(pipeline=[JsonlReader(inp), lang, C4QualityFilter(), GopherQualityFilter(),
                                GopherRepetitionFilter(), JsonlWriter(f"{out}/kept")],
                      tasks=2, workers=1, logging_dir=f"{out}/logs").run()
'''


def ensure_peers(scratch: str) -> str:
    venv = os.path.join(scratch, "peers-venv")
    py = os.path.join(venv, "bin", "python")
    probe = [py, "-c", "import datatrove, spacy, fasttext, orjson"]
    if not os.path.exists(py) or subprocess.run(probe, capture_output=True).returncode != 0:
        print("installing datatrove into", venv, flush=True)
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        subprocess.run([py, "-m", "pip", "install", "-q", "datatrove[processing]==0.10.1", "spacy", "rensa==0.5.*",
                        "orjson", "regex", "xxhash<4", "tokenizers"], check=True)
    return py


OURS = "cidermill text (1 process)"
OURS_BEAM = "cidermill text, Beam in-process (before)"


def run_ours(pages: str, scratch: str, beam_args=()) -> dict:
    from proctree import timed_child

    cfg = os.path.join(scratch, "chain.yaml")
    with open(cfg, "w") as f:
        f.write(CONFIG)
    out = os.path.join(scratch, "chain-out")
    one = [] if beam_args else ["--workers=1"]  # the local engine in one process (its default, auto, may start more)
    res = timed_child([sys.executable, "-m", "pipelines.cli", "text", "--in", pages, "--out", out, "--config", cfg,
                       "--overwrite", *one, *beam_args], env={"PYTHONPATH": REPO})
    res["summary"] = json.loads(res["stdout"].strip().splitlines()[-1])
    res["kept"] = res["summary"]["kept"]
    res["shards"] = [json.load(open(os.path.join(d, "_manifest.json")))["shards"] for d in (out, out + ".rejected")]
    return res


def run_datatrove(py: str, jsonl: str, scratch: str) -> dict:
    from proctree import timed_child

    from filters.langid import lid_model_path

    work = os.path.join(scratch, "dt-chain")
    subprocess.run(["rm", "-rf", work], check=True)
    os.makedirs(os.path.join(work, "in"))
    os.symlink(jsonl, os.path.join(work, "in", "docs.jsonl"))
    runner = os.path.join(work, "runner.py")
    with open(runner, "w") as f:
        f.write(DATATROVE_RUNNER)
    res = timed_child([py, runner, os.path.join(work, "in"), os.path.join(work, "out"), lid_model_path()],
                      env={"HF_HUB_OFFLINE": "1"})
    kept = 0
    for root, _, files in os.walk(os.path.join(work, "out", "kept")):
        for name in files:
            import gzip
            with gzip.open(os.path.join(root, name), "rt") as f:
                kept += sum(1 for _ in f)
    res["kept"] = kept
    return res


def decisions_match_reference(pages: str) -> dict:
    """Drop reasons of every document with the fast repetition scoring and with the reference
    (tuple-walking) functions: the fast path must not change a decision."""
    import filters.repetition as rep
    from filters.chain import TextChain, load_config
    from filters.repetition import NgramIds

    from corpus.reader import ShardDataset

    chain = TextChain(load_config(overrides={"stages": STAGES, "langid": {"languages": ["en"]}}))
    rows = [r for b in ShardDataset(pages).iter_batches(["id", "text"]) for r in b.to_pylist()]
    fast = {r["id"]: chain.process(r)["drop_reason"] for r in rows}

    class _Reference(NgramIds):
        def top_fraction(self, n, total):
            return rep.top_ngram_fraction_reference(self.words, n, total)

        def dup_fraction(self, n, total):
            return rep.dup_ngram_fraction_reference(self.words, n, total)

    saved = rep.NgramIds
    rep.NgramIds = _Reference
    try:
        ref = {r["id"]: chain.process(r)["drop_reason"] for r in rows}
    finally:
        rep.NgramIds = saved
    diff = [k for k in fast if fast[k] != ref[k]]
    return {"docs": len(fast), "different": len(diff), "examples": diff[:10],
            "reasons": dict(Counter(v or "kept" for v in fast.values()).most_common())}


def main() -> int:
    from debian_corpus import add_chunk_words_flag, documents_jsonl, pages_dataset

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=12000)
    add_chunk_words_flag(ap)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--scratch", default="/tmp/cidermill-speed-bench")
    ap.add_argument("--workers-args", default="", help="also run ours with these Beam flags")
    ap.add_argument("--no-check", action="store_true", help="skip the fast-vs-reference decision check")
    a = ap.parse_args()
    os.makedirs(a.scratch, exist_ok=True)
    from results import save_result, start_conditions

    start = start_conditions()
    compile_bytecode(REPO)
    jsonl = documents_jsonl(a.scratch, a.docs, a.chunk_words)
    pages = pages_dataset(a.scratch, a.docs, a.chunk_words)
    n = sum(1 for _ in open(jsonl, encoding="utf-8"))
    py = ensure_peers(a.scratch)
    runs = defaultdict(list)
    extra = a.workers_args.split()
    for r in range(a.rounds):
        runs[OURS].append(run_ours(pages, a.scratch))
        runs[OURS_BEAM].append(run_ours(pages, a.scratch, ["--runner=FnApiRunner"]))
        if extra:
            runs["cidermill text, " + " ".join(extra)].append(run_ours(pages, a.scratch, extra))
        runs["datatrove 0.10.1 (2 tasks)"].append(run_datatrove(py, jsonl, a.scratch))
        print(f"  round {r + 1}/{a.rounds} (load {os.getloadavg()[0]:.1f}): "
              + ", ".join(f"{k} {v[-1]['cpu_s']:.1f} CPU-s" for k, v in runs.items()), flush=True)
    table = {}
    print(f"\n{n} Debian documentation documents; chain = langid(en) + C4 lines + Gopher quality + Gopher "
          f"repetition; medians of {a.rounds} round(s), CPU-s of each process tree")
    print(f"{'':<44}{'kept':>7}{'CPU-s':>9}{'docs/CPU-s':>12}{'wall s':>9}{'peak RSS MB':>13}")
    for name, rs in runs.items():
        t = table[name] = {"kept": rs[0]["kept"], **median_row(rs, n)}
        cpu = t["cpu_s"]
        print(f"{name:<44}{t['kept']:>7}{cpu:>9.1f}{t['docs_per_cpu_s']:>12.1f}{t['wall_s']:>9.1f}"
              f"{t['peak_rss_mb']:>13.0f}")
    dt = table["datatrove 0.10.1 (2 tasks)"]["docs_per_cpu_s"]
    ratio = table[OURS]["docs_per_cpu_s"] / dt
    beam_ratio = table[OURS_BEAM]["docs_per_cpu_s"] / dt
    same = runs[OURS][0]["shards"] == runs[OURS_BEAM][0]["shards"]
    print(f"ratio cidermill / datatrove: {ratio:.2f}x (target >= 3x); on Beam in-process {beam_ratio:.2f}x; "
          f"same shard bytes on both engines: {same}")
    payload = {"docs": n, "rounds": a.rounds, "tools": table,
               "headline": [{"what": f"text chain (langid, C4 lines, Gopher quality, Gopher repetition) vs "
                                     f"datatrove 0.10.1, docs per CPU-s, {n} docs",
                             "figure": f"{ratio:.2f}x ({table[OURS]['docs_per_cpu_s']:.0f} "
                                       f"vs {dt:.0f})", "target": ">= 3x"},
                            {"what": f"the same on Beam's in-process runner (before); same shard bytes: {same}",
                             "figure": f"{beam_ratio:.2f}x ({table[OURS_BEAM]['docs_per_cpu_s']:.0f} vs {dt:.0f})",
                             "target": "(context)"}]}
    if not a.no_check:
        check = decisions_match_reference(pages)
        print(f"decisions, fast vs reference scoring: {check['different']} of {check['docs']} differ; "
              f"reasons {check['reasons']}")
        payload["decisions_vs_reference"] = check
    path = save_result("text_chain", payload, packages=["apache-beam", "numpy", "fasttext"], start=start)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
