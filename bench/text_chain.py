"""Throughput of cidermill's text filter chain vs datatrove's equivalent, docs/s per core.

    python bench/text_chain.py [--docs 12000] [--scratch /tmp/cidermill-bench]

Chain: language ID (fastText lid.176) -> Gopher quality rules -> fastText quality classifier.
  cidermill: filters.langid.LanguageId (+ per-paragraph labels), filters.gopher.GopherQuality,
             filters.quality_model.QualityModel (the shipped model), two ways:
             "early exit" (stop at the first drop, datatrove's semantics) and "score all"
             (filters.chain.TextChain: every score on every document, cidermill's default).
  datatrove: LanguageFilter (ft176 backend), GopherQualityFilter, FastTextClassifierFilter, installed
             by this script into a separate venv (SCRATCH/dtvenv, `pip install datatrove[processing] spacy`)
             and given the same model files (no downloads: models are injected / local paths).
Documents: 10,000+ real text chunks (~120 words) of Debian documentation pages (python3.11-doc and
debian-reference in 8 languages), fetched with apt-get download + dpkg -x into SCRATCH (not committed).
Both sides run single-threaded in one process on the same documents; docs/s per core = documents /
CPU seconds of that process (time.process_time), which stays meaningful on a shared machine.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

LANGS = ["ar", "da", "de", "en", "es", "fr", "it", "ja", "ko", "nl", "no", "pt", "sv", "tr", "zh"]

DATATROVE_RUNNER = r'''
import json, sys, time
from datatrove.data import Document
from datatrove.pipeline.filters import FastTextClassifierFilter, GopherQualityFilter, LanguageFilter
from fasttext.FastText import _FastText
docs_path, lid_path, quality_path, langs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split(",")
docs = [json.loads(l) for l in open(docs_path, encoding="utf-8")]
lang = LanguageFilter(languages=langs, language_threshold=0.5)
lang.model._model = _FastText(lid_path)               # same lid.176.ftz file, no download
gopher = GopherQualityFilter()
quality = FastTextClassifierFilter(model_url=quality_path, keep_labels=[("hq", 0.25)])
warm = Document(text=docs[0]["text"], id="w")
lang.filter(warm); gopher.filter(warm); quality.filter(warm)   # load models / tokenizers first
kept = 0
c0, w0 = time.process_time(), time.perf_counter()
for d in docs:
    doc = Document(text=d["text"], id=d["id"])
    if lang.filter(doc) and gopher.filter(doc) is True and quality.filter(doc):
        kept += 1
print(json.dumps({"docs": len(docs), "kept": kept, "cpu_s": time.process_time() - c0,
                  "wall_s": time.perf_counter() - w0}))
'''


def ensure_datatrove(scratch: str) -> str:
    venv = os.path.join(scratch, "dtvenv")
    py = os.path.join(venv, "bin", "python")
    probe = [py, "-c", "import datatrove, spacy, fasttext"]
    if not os.path.exists(py) or subprocess.run(probe, capture_output=True).returncode != 0:
        print("installing datatrove into", venv, flush=True)
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        subprocess.run([py, "-m", "pip", "install", "-q", "datatrove[processing]==0.10.1", "spacy"], check=True)
    return py


def make_docs(scratch: str, n: int) -> str:
    from filters import debian_docs

    path = os.path.join(scratch, f"docs-{n}.jsonl")
    if not os.path.exists(path):
        root = debian_docs.fetch(scratch)
        chunks = debian_docs.documents(root, words=120)
        if len(chunks) < n:
            print(f"note: only {len(chunks)} documents available", flush=True)
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            for c in chunks[:n]:
                f.write(json.dumps({"id": f"{c.page}#{c.index}", "text": c.text}, ensure_ascii=False) + "\n")
        os.replace(path + ".tmp", path)
    return path


def run_cidermill(docs: list[dict]) -> dict:
    from filters.base import Doc
    from filters.gopher import GopherQuality
    from filters.langid import LanguageId
    from filters.quality_model import QualityModel

    lid, gopher, quality = LanguageId(languages=LANGS), GopherQuality(), QualityModel(threshold=0.25)
    lid.score(Doc(id="w", text=docs[0]["text"]))
    quality.score(Doc(id="w", text=docs[0]["text"]))
    kept = 0
    c0, w0 = time.process_time(), time.perf_counter()
    for d in docs:
        doc = Doc(id=d["id"], text=d["text"])
        ok = True
        for f in (lid, gopher, quality):
            keep, _ = f.decide(f.score(doc), doc)
            if not keep:
                ok = False
                break
        kept += ok
    return {"docs": len(docs), "kept": kept, "cpu_s": time.process_time() - c0, "wall_s": time.perf_counter() - w0}


def run_cidermill_score_all(docs: list[dict]) -> dict:
    from filters.chain import TextChain, load_config

    chain = TextChain(load_config(overrides={"stages": ["input", "langid", "gopher", "quality"],
                                             "quality": {"threshold": 0.25}}))
    chain.process({"id": "w", "text": docs[0]["text"]})
    kept = 0
    c0, w0 = time.process_time(), time.perf_counter()
    for d in docs:
        kept += chain.process(d)["drop_reason"] is None
    return {"docs": len(docs), "kept": kept, "cpu_s": time.process_time() - c0, "wall_s": time.perf_counter() - w0}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=12000)
    ap.add_argument("--scratch", default="/tmp/cidermill-bench")
    a = ap.parse_args()
    os.makedirs(a.scratch, exist_ok=True)
    from filters.langid import lid_model_path
    from filters.quality_model import DEFAULT_MODEL

    docs_path = make_docs(a.scratch, a.docs)
    with open(docs_path, encoding="utf-8") as f:
        docs = [json.loads(line) for line in f]
    py = ensure_datatrove(a.scratch)
    runner = os.path.join(a.scratch, "datatrove_chain.py")
    with open(runner, "w") as f:
        f.write(DATATROVE_RUNNER)
    results = {}
    results["cidermill (early exit)"] = run_cidermill(docs)
    results["cidermill (score all)"] = run_cidermill_score_all(docs)
    env = dict(os.environ, OMP_NUM_THREADS="1", HF_HUB_OFFLINE="1")
    out = subprocess.run([py, runner, docs_path, lid_model_path(), DEFAULT_MODEL, ",".join(LANGS)],
                         capture_output=True, text=True, env=env)
    if out.returncode != 0:
        print(out.stderr[-2000:], file=sys.stderr)
        return 1
    results["datatrove"] = json.loads(out.stdout.strip().splitlines()[-1])
    print(f"\n{len(docs)} Debian documentation chunks, chain = langid + Gopher quality + fastText quality")
    print(f"{'':<24}{'docs':>7}{'kept':>7}{'cpu s':>9}{'docs/s/core':>13}{'wall s':>9}")
    for name, r in results.items():
        r["docs_per_cpu_s"] = r["docs"] / r["cpu_s"]
        print(f"{name:<24}{r['docs']:>7}{r['kept']:>7}{r['cpu_s']:>9.2f}{r['docs_per_cpu_s']:>13.1f}{r['wall_s']:>9.2f}")
    dt = results["datatrove"]["docs_per_cpu_s"]
    for name in ("cidermill (early exit)", "cidermill (score all)"):
        print(f"ratio {name} / datatrove: {results[name]['docs_per_cpu_s'] / dt:.2f}x (target >= 1.5x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
