"""CPU per document of each stage of the default text chain, and how it grows on hostile text.

    python bench/chain_stages.py [--docs 3000] [--rounds 3] [--size 4000] [--scratch /tmp/cidermill-bench]

1. Ordinary documents: the first --docs chunks of bench/debian_corpus.py (real Debian
   documentation, up to 2,000 words each; mostly English), through every stage of
   filters/configs/text.yaml one document at a time (sanitiser, then each filter's clean + score,
   as TextChain.process runs them; the corpus-wide decisions of quality, decontam and dedup are not
   included). Thread CPU per stage, median of --rounds rounds, in ms per document.
2. Hostile documents: texts built to hit the slow paths of text filters (long lines of dotted quads
   or parenthesised versions, spelled-out addresses, long whitespace runs, long words, phone- and
   card-like digit runs, CJK without spaces), each at --size repetitions of its unit and at 4x that,
   through the whole chain. The ratio of the two CPU times is about 4 for work linear in the length
   and about 16 for quadratic work; the largest ratio is the headline.
No peer: bench/text_chain.py compares four of these filters with datatrove.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, REPO)

HOSTILE = {
    "addresses on one line": lambda i: f"10.{i % 200}.{i % 250}.{i % 199 + 1} ",
    "versions in parentheses": lambda i: f"({i % 9}.{i % 8}.{i % 7}.{i % 6}) Restorexx ",
    "header lines": lambda i: f"Host: 10.{i % 200}.1.{i % 199 + 1}\n\n",
    "spelled-out addresses": lambda i: f"mail jane{i} at example.com or ",
    "prose 'at' a domain": lambda i: "available at python.org and ",
    "phone-like digit runs": lambda i: "0 12 34 56 78 90 ",
    "card-like digit runs": lambda i: "4111 1111 1111 1111 ",
    "whitespace runs": lambda i: " \t" * 30 + "x\n",
    "one long word": lambda i: "x" * 50,
    "CJK without spaces": lambda i: "中文字符测试" * 3 + "。",
    "quoted mail": lambda i: "> " * 20 + "text\n",
}


def _chain():
    import yaml

    from filters.chain import TextChain
    with open(os.path.join(REPO, "filters", "configs", "text.yaml"), encoding="utf-8") as f:
        return TextChain(yaml.safe_load(f))


def stage_times(chain, text: str, into: dict) -> None:
    """Add each stage's thread CPU for one document to `into` (the sanitiser, then every filter)."""
    from filters.base import Doc
    t0 = time.thread_time()
    san = chain.sanitizer(text)
    into["sanitise"] = into.get("sanitise", 0.0) + time.thread_time() - t0
    doc = Doc(id="d", text=san.text or "", url="http://example.org/d")
    for name in chain.stage_names:
        f = chain.filters.get(name)
        if f is None:
            continue
        t0 = time.thread_time()
        f.clean(doc)
        f.score(doc)
        into[name] = into.get(name, 0.0) + time.thread_time() - t0


def main() -> int:
    from debian_corpus import documents_jsonl, load_jsonl
    from results import save_result

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=3000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--size", type=int, default=4000, help="repetitions of a hostile text's unit (and 4x)")
    ap.add_argument("--scratch", default="/tmp/cidermill-bench")
    args = ap.parse_args()
    start = {"loadavg": list(os.getloadavg()), "time": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    texts = [d["text"] for d in load_jsonl(documents_jsonl(args.scratch, args.docs))][:args.docs]
    chain = _chain()
    stage_times(chain, texts[0], {})  # warm: models and word lists loaded, regexes compiled

    rounds = []
    for _ in range(args.rounds):
        acc: dict = {}
        for t in texts:
            stage_times(chain, t, acc)
        rounds.append(acc)
    per_doc = {k: statistics.median(r[k] for r in rounds) / len(texts) * 1000 for k in rounds[0]}
    total = statistics.median(sum(r.values()) for r in rounds) / len(texts) * 1000
    print(f"{len(texts)} Debian documents, {sum(map(len, texts)) / len(texts):.0f} characters each on average")
    for k, v in sorted(per_doc.items(), key=lambda kv: -kv[1]):
        print(f"  {k:<12} {v:7.3f} ms/doc")
    print(f"  {'total':<12} {total:7.3f} ms/doc")

    hostile = []
    for name, unit in HOSTILE.items():
        cpu = []
        for n in (args.size, 4 * args.size):
            text = "".join(unit(i) for i in range(n))
            acc = {}
            stage_times(chain, text, acc)
            cpu.append((sum(acc.values()), max(acc, key=acc.get), len(text)))
        ratio = cpu[1][0] / max(cpu[0][0], 1e-4)
        hostile.append({"text": name, "chars_4x": cpu[1][2], "cpu_s": round(cpu[0][0], 3),
                        "cpu_s_4x": round(cpu[1][0], 3), "ratio": round(ratio, 1), "slowest_stage_4x": cpu[1][1]})
        print(f"  {name:<26} {cpu[1][2]:>9} chars: {cpu[0][0]:6.2f} -> {cpu[1][0]:6.2f} CPU-s "
              f"(x{ratio:.1f}; slowest stage {cpu[1][1]})", flush=True)
    worst = max(hostile, key=lambda h: h["ratio"])
    slowest = max(hostile, key=lambda h: h["cpu_s_4x"])
    save_result("chain_stages", {
        "argv": sys.argv, "start": start, "documents": len(texts), "per_doc_ms": per_doc, "total_ms": total,
        "hostile": hostile,
        "headline": [
            {"what": f"default text chain, CPU per document, {len(texts)} Debian documents (every stage, "
                     "one document at a time)",
             "figure": f"{total:.2f} ms (" + ", ".join(f"{k} {v:.2f}" for k, v in
                                               sorted(per_doc.items(), key=lambda kv: -kv[1])[:4]) + ")",
             "target": "(context)"},
            {"what": "hostile texts 4x longer: largest growth of chain CPU (linear = 4x, quadratic = 16x)",
             "figure": f"x{worst['ratio']} ({worst['text']}); slowest {slowest['cpu_s_4x']} CPU-s for "
                       f"{slowest['chars_4x']:,} characters ({slowest['text']})",
             "target": "about 4x"},
        ],
        "not_covered": ["corpus-wide steps (quality threshold, decontamination counts, dedup), reading and "
                        "writing shards; one corpus (Debian documentation, mostly English), whose per-stage "
                        "shares differ from web text; hostile texts are a fixed set of shapes, not a proof "
                        "that no input is slow"],
    }, packages=["fasttext", "numpy"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
