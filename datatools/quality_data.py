"""Rebuild the default quality model (filters/models/quality.ftz) from data anyone can fetch.

    python -m datatools.quality_data [--scratch /tmp/cidermill-quality] [--out filters/models/quality.ftz]

1. `apt-get download` + `dpkg -x` Debian documentation packages into the scratch dir (not committed):
   python3.11-doc and debian-reference in 8 languages (datatools/debian_docs.py).
2. Positives: prose chunks (~250 words) of the documentation pages. Negatives: generated web
   boilerplate/spam (datatools/boilerplate_gen.py), word salad made from the positives' own words,
   and real index pages (genindex, module index, tables of contents).
3. Split by page (hash of the page path): 80% train, 20% held out. Salad and generated negatives
   for the held-out set come from held-out pages and a different seed: training never sees them.
4. Train with `filters.quality_model.train_quality_model` (what `cidermill train-quality` calls), then report precision and
   recall of the hq class on the held-out set, and on the demo site's labelled pages (good vs low,
   another distribution); written to filters/models/quality.eval.json.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import xxhash

from datatools import boilerplate_gen, debian_docs
from filters.langid import load_fasttext
from filters.quality_model import hq_probability, read_texts, train_quality_model

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(ROOT, "filters", "models", "quality.ftz")


def _write(path: str, texts: list[str]) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write("\f".join(t.replace("\f", " ") for t in texts))


def held_out(page: str, percent: int = 20) -> bool:
    return xxhash.xxh64_intdigest(page.encode()) % 100 < percent


def build_sets(root: str, seed: int = 0) -> dict[str, list[str]]:
    prose = debian_docs.documents(root, words=250)
    index = [c for p in debian_docs.html_pages(root) if debian_docs.is_index_page(p)
             for c in debian_docs.page_chunks(p, root, words=250)]
    sets: dict[str, list[str]] = {}
    for split, flag in (("train", False), ("test", True)):
        pos = [c.text for c in prose if held_out(c.page) == flag]
        idx = [c.text for c in index if held_out(c.page) == flag]
        gen = boilerplate_gen.negatives(len(pos) // 2, seed=seed + (1000 if flag else 0), salad_source=pos)
        sets[f"{split}_pos"] = pos
        sets[f"{split}_neg"] = gen + idx
    return sets


def evaluate(model_path: str, pos: list[str], neg: list[str], thresholds=(0.25, 0.5)) -> dict:
    m = load_fasttext(model_path)
    sp = [hq_probability(m, t) for t in pos]
    sn = [hq_probability(m, t) for t in neg]
    out = {"held_out_positive": len(pos), "held_out_negative": len(neg), "thresholds": {}}
    for t in thresholds:
        tp = sum(s >= t for s in sp)
        fp = sum(s >= t for s in sn)
        fn = len(sp) - tp
        prec = tp / (tp + fp) if tp + fp else 0.0
        rec = tp / (tp + fn) if tp + fn else 0.0
        out["thresholds"][str(t)] = {"precision": round(prec, 4), "recall": round(rec, 4),
                                     "f1": round(2 * prec * rec / (prec + rec), 4) if prec + rec else 0.0}
    return out


DEMO_GT = os.path.join(ROOT, "pipelines", "demo_site", "ground_truth.json")


def demo_site_eval(model_path: str) -> dict | None:
    """A second held-out set from another distribution: the demo site's pages labelled good vs low
    (written for the project, never used in training). Low pages include ones other stages catch
    (PII directory, profanity, lorem ipsum), so this is a lower bound for the model alone."""
    if not os.path.exists(DEMO_GT):
        return None
    with open(DEMO_GT, encoding="utf-8") as f:
        paths = json.load(f)["paths"]
    pages = [e for e in paths.values() if e.get("kind") == "html" and e.get("main_text")]
    pos = [e["main_text"] for e in pages if e.get("quality") == "good"]
    neg = [e["main_text"] for e in pages if e.get("quality") == "low"]
    return evaluate(model_path, pos, neg)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scratch", default="/tmp/cidermill-quality")
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--root", help="already unpacked packages (skips apt-get)")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    t0 = time.time()
    root = a.root or debian_docs.fetch(a.scratch)
    sets = build_sets(root, a.seed)
    os.makedirs(a.scratch, exist_ok=True)
    paths = {}
    for k, v in sets.items():
        paths[k] = os.path.join(a.scratch, f"{k}.txt")
        _write(paths[k], v)
        print(f"{k}: {len(v)} documents", flush=True)
    # the same library call `cidermill train-quality` makes, with that verb's defaults
    train_quality_model(read_texts(paths["train_pos"]), read_texts(paths["train_neg"]), a.out, seed=a.seed)
    ev = evaluate(a.out, sets["test_pos"], sets["test_neg"])
    ev["data"] = "python3.11-doc + debian-reference-{en,de,fr,es,it,pt,ja,zh-cn}; split by page, 20% held out"
    ev["demo_site_good_vs_low"] = demo_site_eval(a.out)
    ev["seconds"] = round(time.time() - t0, 1)
    with open(os.path.splitext(a.out)[0] + ".eval.json", "w") as f:
        json.dump(ev, f, indent=1)
    print(json.dumps(ev, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
