"""Vision benchmark: encoder speed per preset, then RW on / RW off / plain ViT after the same training.

Part 1 (speed): forward tokens/s (patch + register tokens through the encoder, no grad, fp32,
batch --batch, reference kernels on CPU) for every preset, with parameter counts; --skip-large
leaves out vitdet-l and vit-g.

Part 2 (quality): one synthetic corpus (charts, tables, scenes from synth/, written as PAIRS
shards; a BPE tokenizer and token shards from their captions and paragraphs), then the same staged
run for each encoder variant of vitdet-tiny's size: text-only (target LM), align (encoder +
adapter + small decoder), adapt (fresh adapter into the target LM, text kept). Same data, seed and
steps; only the encoder's attention pattern differs. Reported: held-out QA exact-answer accuracy
(charts, tables, scenes), grounding accuracy (box IoU >= 0.5, held-out scenes) and the target LM's
held-out text loss before and after the adapt stage. Small step counts: absolute accuracies are low.

    python bench/vision.py [--skip-large] [--steps-text 60 --steps-align 160 --steps-adapt 120]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch  # noqa: E402

from bench.results import save_result, start_conditions  # noqa: E402

VARIANTS = {"rw": "ViTDet + Register-Window (RW on)", "rw-off": "ViTDet windows, RW off",
            "plain": "plain ViT, same size"}


def encoder_speed(name: str, batch: int, rounds: int) -> dict:
    from training.vision.config import get_vision_preset
    from training.vision.encoder import VisionEncoder
    cfg = get_vision_preset(name)
    torch.manual_seed(0)
    enc = VisionEncoder(cfg).eval()
    x = torch.randn(batch, 3, cfg.image_size, cfg.image_size)
    times = []
    with torch.no_grad():
        enc(x[:1])
        for _ in range(rounds):
            t0 = time.process_time()
            w0 = time.perf_counter()
            enc(x)
            times.append((time.perf_counter() - w0, time.process_time() - t0))
    times.sort()
    wall, cpu = times[len(times) // 2]
    tok = batch * cfg.tokens_per_image
    return {"preset": name, "params": enc.num_parameters(), "tokens_per_image": cfg.tokens_per_image,
            "batch": batch, "rounds": rounds, "wall_s": wall, "cpu_s": cpu, "tokens_per_s": tok / wall,
            "tokens_per_cpu_s": tok / cpu}


def build_corpus(root: str, charts: int, tables: int, scenes: int) -> dict:
    import pyarrow as pa

    from corpus.schemas import PAIRS, TOKENS
    from corpus.writer import write_dataset
    from synth.captions import make_captioned_scene
    from synth.charts import make_chart
    from synth.tables import make_generated_table
    from training.tokenizer import save_tokenizer, train_tokenizer
    rows = {"charts": [make_chart(7, i, width=192, height=192, languages=["en"], max_qa=6) for i in range(charts)],
            "tables": [make_generated_table(7, i, languages=["en"]) for i in range(tables)],
            "scenes": [make_captioned_scene(7, i, 128, 128) for i in range(scenes)]}
    texts = []
    for rs in rows.values():
        for r in rs:
            meta = json.loads(r["meta_json"])
            texts.append(r["text"])
            texts += [v for k, v in (meta.get("captions") or {}).items() if isinstance(v, str) and k != "grounded"]
            texts += [f"Question: {q['question']} Answer: {q['answer']}" for q in r["qa"]]
    texts += [f"Box: {a} {b} {a + c} {b + c}" for a in range(0, 60, 7) for b in range(0, 60, 9) for c in (10, 25, 40)]
    tok = train_tokenizer(texts, vocab_size=1024)
    paths = {"tokenizer": os.path.join(root, "tokenizer")}
    save_tokenizer(tok, paths["tokenizer"])
    eos = tok.token_to_id("<|endoftext|>")
    trows = [{"doc_id": f"t{i}", "tokens": tok.encode(t).ids + [eos], "source": "synth", "mixture": "text"}
             for i, t in enumerate(texts)]
    paths["tokens"] = os.path.join(root, "tokens")
    write_dataset(paths["tokens"], "tokens", pa.Table.from_pylist(trows, schema=TOKENS))
    for k, rs in rows.items():
        paths[k] = os.path.join(root, k)
        write_dataset(paths[k], "pairs", pa.Table.from_pylist(rs, schema=PAIRS))
    return paths


def run_variant(paths: dict, root: str, variant: str, args) -> dict:
    from training.train_config import parse_config
    from training.vision.config import ablation, get_vision_preset
    from training.vision.stages import VisionTrainer
    v = ablation(get_vision_preset("vitdet-tiny"), variant)
    over = {k: v.to_dict()[k] for k in ("window", "global_blocks", "registers", "full_global")}
    raw = {"model": {"preset": "tiny", "overrides": {"vocab_size": "auto", "max_seq_len": 128}},
           "data": {"seq_len": args.seq_len, "batch_size": args.batch_size, "tokenizer": paths["tokenizer"],
                    "mixture": [{"name": "text", "path": paths["tokens"], "weight": 1.0}],
                    "eval": {"holdout_permille": 100}},
           "optim": {"lr": 2e-3}, "schedule": {"warmup_steps": 10, "decay": "cosine"},
           "train": {"out": os.path.join(root, f"run-{variant}"), "ckpt_every": 0, "seed": 0},
           "vision": {"encoder": "vitdet-tiny", "encoder_overrides": over, "adapter_tokens": 16,
                      "pairs": [{"name": k, "path": paths[k], "weight": 1.0} for k in ("charts", "tables", "scenes")],
                      "heldout": 0.15, "max_eval": args.max_eval, "eval_text_batches": 4,
                      "stages": [{"name": "text", "steps": args.steps_text},
                                 {"name": "align", "steps": args.steps_align, "text_weight": 0.2},
                                 {"name": "adapt", "steps": args.steps_adapt, "text_weight": 0.3}]}}
    t0 = time.process_time()
    res = VisionTrainer(parse_config(raw), resume=False).run()
    ev = res["evals"]
    adapt = [s for s in ev["stages"] if s["name"] == "adapt"][-1]
    align = [s for s in ev["stages"] if s["name"] == "align"][-1]
    return {"variant": variant, "what": VARIANTS[variant], "encoder_params": res["params"]["encoder"],
            "cpu_s": time.process_time() - t0, "qa": adapt.get("qa"), "qa_n": adapt.get("qa_n"),
            "qa_by_kind": adapt.get("qa_by_kind"), "grounding": adapt.get("grounding"),
            "grounding_n": adapt.get("grounding_n"), "align_qa_small_decoder": align.get("qa"),
            "text_loss_before": ev.get("text_loss_before_adapt"), "text_loss_after": ev.get("text_loss_after_adapt"),
            "data_report": res["data_report"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--skip-large", action="store_true", help="speed of the tiny presets only")
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--charts", type=int, default=120)
    ap.add_argument("--tables", type=int, default=60)
    ap.add_argument("--scenes", type=int, default=240)
    ap.add_argument("--steps-text", type=int, default=60)
    ap.add_argument("--steps-align", type=int, default=160)
    ap.add_argument("--steps-adapt", type=int, default=120)
    ap.add_argument("--seq-len", type=int, default=80)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--max-eval", type=int, default=100)
    ap.add_argument("--variants", default="rw,rw-off,plain")
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads (1: figures per core)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    start = start_conditions()
    speed = []
    for name in ["vitdet-tiny", "vit-tiny"] + ([] if args.skip_large else ["vitdet-l", "vit-g"]):
        big = name in ("vitdet-l", "vit-g")
        r = encoder_speed(name, 1 if big else args.batch, 1 if big else args.rounds)
        speed.append(r)
        print(f"{name:12s} {r['params'] / 1e6:9.1f}M params  {r['tokens_per_image']:5d} tokens/image  "
              f"{r['tokens_per_s']:10.0f} tokens/s wall  {r['tokens_per_cpu_s']:10.0f} tokens/CPU-s", flush=True)
    with tempfile.TemporaryDirectory(prefix="cidermill-bench-vision-") as root:
        t0 = time.process_time()
        paths = build_corpus(root, args.charts, args.tables, args.scenes)
        print(f"corpus: {args.charts} charts, {args.tables} tables, {args.scenes} scenes "
              f"({time.process_time() - t0:.0f} CPU-s)", flush=True)
        quality = []
        for v in args.variants.split(","):
            q = run_variant(paths, root, v, args)
            quality.append(q)
    print(f"\n{'encoder (same size, same steps)':36s} {'QA acc':>7s} {'ground':>7s} {'align QA':>8s} "
          f"{'text loss before -> after':>26s} {'CPU-s':>6s}")
    for q in quality:
        f = lambda x: "  n/a" if x is None else f"{x:7.3f}"  # noqa: E731
        print(f"{q['what']:36s} {f(q['qa'])} {f(q['grounding'])} {f(q['align_qa_small_decoder']):>8s} "
              f"{q['text_loss_before']:12.3f} -> {q['text_loss_after']:.3f} {q['cpu_s']:6.0f}")
    print(f"(held out: {quality[0]['qa_n']} QA, {quality[0]['grounding_n']} grounding questions; "
          f"steps text/align/adapt = {args.steps_text}/{args.steps_align}/{args.steps_adapt})")
    headline = [{"what": f"{r['preset']} encoder forward, CPU ({r['params'] / 1e6:.1f}M params, "
                         f"{r['tokens_per_image']} tokens/image)",
                 "figure": f"{r['tokens_per_s']:.0f} tokens/s", "target": "measured (no target)"} for r in speed]
    for q in quality:
        headline.append({"what": f"held-out chart/table/scene QA exact accuracy, {q['what']}",
                         "figure": f"{q['qa']:.3f}" if q["qa"] is not None else "n/a",
                         "target": "RW >= RW off and plain ViT"})
        headline.append({"what": f"held-out grounding accuracy (IoU >= 0.5), {q['what']}",
                         "figure": f"{q['grounding']:.3f}" if q["grounding"] is not None else "n/a",
                         "target": "RW >= RW off and plain ViT"})
        headline.append({"what": f"text held-out loss before -> after adapt, {q['what']}",
                         "figure": f"{q['text_loss_before']:.3f} -> {q['text_loss_after']:.3f}",
                         "target": "after <= before (text not damaged)"})
    path = save_result("vision", {"speed": speed, "quality": quality, "config": vars(args), "headline": headline,
                                  "not_covered": "tiny models and step counts; synthetic data only; CPU reference "
                                                 "kernels; large presets timed with one forward of one image"},
                       packages=["torch"], start=start)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
