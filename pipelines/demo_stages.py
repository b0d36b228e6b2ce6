"""The stages `cidermill demo` runs, in order, each through the same CLI verb a user would run.

Each stage is (name, verb it needs, function(demo, site_url) -> one-line detail).
"""
from __future__ import annotations

import json
import os


def _p(demo, *parts: str) -> str:
    return os.path.join(demo.out, *parts)


def crawl(demo, url: str) -> str:
    out = _p(demo, "crawl")
    demo.verb("crawl", "--seeds", url + "/", "--out", out, "--allow-private", "--render", "auto",
              "--max-pages", "220", "--max-depth", "4", "--timeout", "4", "--delay", "0", "--quiet", beam=True)
    demo.add_dataset(os.path.join(out, "pages"))
    demo.add_dataset(os.path.join(out, "log"))
    from corpus.reader import open_dataset
    pages = open_dataset(os.path.join(out, "pages"))
    rendered = sum(1 for r in pages.iter_rows(["rendered"]) if r["rendered"])
    return f"{len(pages)} pages ({rendered} rendered in Chromium) -> {out}/pages"


def text(demo, url: str) -> str:
    out = _p(demo, "text")
    # the demo site's made-up evaluation set, so decontamination has something to catch
    from pipelines.demo_site import load_ground_truth
    evals = _p(demo, "eval-sets.jsonl")
    with open(evals, "w", encoding="utf-8") as f:
        for e in load_ground_truth()["eval_passages"]:
            f.write(json.dumps({"id": e["id"], "text": e["text"]}, ensure_ascii=False) + "\n")
    demo.verb("text", "--in", _p(demo, "crawl", "pages"), "--out", out, "--eval-sets", evals, beam=True)
    demo.add_dataset(out)
    from corpus.manifest import read_manifest
    kept = read_manifest(out).rows
    rej = out + ".rejected"
    dropped = read_manifest(rej).rows if os.path.exists(os.path.join(rej, "_manifest.json")) else 0
    if dropped:
        demo.add_dataset(rej)
    return f"{kept} documents kept, {dropped} dropped with reasons -> {out}"


def synth(demo, url: str) -> str:
    n = {"charts": 200, "captions": 400}
    for kind, count in n.items():
        demo.verb("synth", kind, "--n", str(count), "--out", _p(demo, "synth", kind), "--seed", "0")
        demo.add_dataset(_p(demo, "synth", kind))
    demo.verb("synth", "tables", "--n", "40", "--pages", _p(demo, "crawl", "pages"), "--out",
              _p(demo, "synth", "tables"), "--seed", "0")
    demo.add_dataset(_p(demo, "synth", "tables"))
    return f"{n['charts']} charts, {n['captions']} captioned scenes, tables with QA -> {demo.out}/synth"


def clip(demo, url: str) -> str:
    out = _p(demo, "clip", "tiny-clip.safetensors")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    demo.verb("train-clip", "--pairs", _p(demo, "synth", "captions"), _p(demo, "synth", "charts"), "--out", out)
    return f"tiny CLIP trained on the synthetic pairs -> {out}"


def images(demo, url: str) -> str:
    out = _p(demo, "images")
    ckpt = _p(demo, "clip", "tiny-clip.safetensors")
    args = ["images", "--pages", _p(demo, "crawl", "pages"), "--out", out, "--allow-private", "--delay", "0"]
    if os.path.exists(ckpt):
        args += ["--clip-checkpoint", ckpt]
    demo.verb(*args, beam=True)
    for sub in ("pairs", "interleaved"):
        if os.path.exists(os.path.join(out, sub, "_manifest.json")):
            demo.add_dataset(os.path.join(out, sub))
    return f"image-text pairs and interleaved documents -> {out}"


def train(demo, url: str) -> str:
    tok, tokens, run = _p(demo, "tokenizer"), _p(demo, "tokens"), _p(demo, "train")
    demo.verb("tokenizer", "train", "--in", _p(demo, "text"), "--vocab", "2048", "--out", tok)
    demo.verb("tokenize", "--in", _p(demo, "text"), "--out", tokens, "--tokenizer", tok, "--mixture", "web", beam=True)
    demo.add_dataset(tokens)
    os.makedirs(run, exist_ok=True)
    cfg = {"model": {"preset": "ptmoe-tiny", "overrides": {"vocab_size": "auto", "max_seq_len": 128}},
           "data": {"seq_len": 64, "batch_size": 8, "tokenizer": tok,
                    "mixture": [{"name": "web", "path": tokens, "weight": 1.0}], "eval": {"holdout_permille": 100}},
           "optim": {"lr": 3e-3, "weight_decay": 0.1, "grad_clip": 1.0},
           "schedule": {"warmup_steps": 20, "decay": "cosine", "min_lr_ratio": 0.1},
           "train": {"steps": 200, "seed": 0, "out": run, "log_every": 10, "eval_every": 50, "eval_batches": 2,
                     "ckpt_every": 50}}
    cfg_path = os.path.join(run, "train.yaml")
    with open(cfg_path, "w") as f:
        json.dump(cfg, f, indent=1)  # JSON is valid YAML
    demo.verb("train", "--config", cfg_path, "--no-resume", "--stop-after", "100")
    print("(stopped at step 100 on purpose; resuming from the checkpoint)")
    demo.verb("train", "--config", cfg_path)
    from training.trainer import read_log
    log = read_log(run)
    first, last = log[0]["loss"], log[-1]["loss"]
    from pipelines.report_page import render_report
    render_report(run)
    return f"tiny PT-MoE: loss {first:.2f} -> {last:.2f} over {log[-1]['step']} steps (resumed at 100); loss curve {run}/_report/index.html"


def recipe(demo, url: str) -> str:
    """training/recipes/demo.yaml on the demo tokens: text at 64 tokens, then whole documents packed
    by length bucket at 256 with a larger RoPE base; stopped inside stage 2 and resumed."""
    import yaml
    from training.recipe import REPORT_FILE
    run = _p(demo, "recipe")
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(here, "training", "recipes", "demo.yaml")) as f:
        raw = yaml.safe_load(f)
    raw["sources"] = {"web": _p(demo, "tokens")}
    raw["data"]["tokenizer"] = _p(demo, "tokenizer")
    raw["train"]["out"] = run
    os.makedirs(run, exist_ok=True)
    path = os.path.join(run, "recipe.yaml")
    with open(path, "w") as f:
        yaml.safe_dump(raw, f, sort_keys=False)
    import torch
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny models: one thread is as fast, and far faster on a busy machine
    try:
        demo.verb("train", "--recipe", path, "--no-resume", "--stop-after", "50")
        print("(stopped inside stage 2 on purpose; resuming)")
        demo.verb("train", "--recipe", path)
    finally:
        torch.set_num_threads(threads)
    with open(os.path.join(run, REPORT_FILE)) as f:
        rep = json.load(f)
    parts = [f"{s['name']} (seq {s['seq_len']}, {s['steps']} steps) loss {s['first_loss']:.2f} -> {s['last_loss']:.2f}"
             for s in rep["stages"]]
    return "; ".join(parts) + f" -> {run}/{REPORT_FILE}"


def generate(demo, url: str) -> str:
    """Guided generation with the model just trained: the answer is a typed PageNote."""
    from inference.generator import Generator
    from pipelines.demo_types import PageNote
    gen = Generator.from_checkpoint(_p(demo, "train"), tokenizer=_p(demo, "tokenizer"))
    note = gen.respond("A note on this page:", PageNote, inject_format=False, max_new_tokens=48,
                       temperature=0.8, seed=0)
    print(f"typed answer: {note!r}")
    return f"guided generation -> {type(note).__name__}(topic={note.topic.value}, rating={note.rating})"


def vision(demo, url: str) -> str:
    """The tiny vision path: text-only, then ViTDet-RW encoder + adapter with a small decoder, then a
    fresh adapter into the target LM, on the synthetic charts, tables and scenes; QA held out."""
    run = _p(demo, "vision")
    os.makedirs(run, exist_ok=True)
    pairs = [{"name": k, "path": _p(demo, "synth", k), "weight": 1.0} for k in ("charts", "tables", "captions")
             if os.path.exists(_p(demo, "synth", k, "_manifest.json"))]
    inter, store = _p(demo, "images", "interleaved"), _p(demo, "images", "pairs")
    interleaved = ([{"name": "web-interleaved", "path": inter, "images": [store], "weight": 0.3}]
                   if os.path.exists(os.path.join(inter, "_manifest.json")) and
                   os.path.exists(os.path.join(store, "_manifest.json")) else [])
    cfg = {"model": {"preset": "tiny", "overrides": {"vocab_size": "auto", "max_seq_len": 96, "n_layers": 2}},
           "data": {"seq_len": 64, "batch_size": 8, "tokenizer": _p(demo, "tokenizer"),
                    "mixture": [{"name": "web", "path": _p(demo, "tokens"), "weight": 1.0}],
                    "eval": {"holdout_permille": 100}},
           "optim": {"lr": 3e-3}, "schedule": {"warmup_steps": 5, "decay": "cosine"},
           "train": {"out": run, "ckpt_every": 0, "seed": 0},
           "vision": {"encoder": "vitdet-tiny", "adapter_tokens": 9, "small_decoder": "tiny",
                      "small_decoder_overrides": {"n_layers": 1}, "pairs": pairs, "interleaved": interleaved,
                      "heldout": 0.1,
                      "max_rows": 150, "max_eval": 30, "eval_text_batches": 2,
                      "stages": [{"name": "text", "steps": 10}, {"name": "align", "steps": 30, "text_weight": 0.2},
                                 {"name": "adapt", "steps": 30, "text_weight": 0.3}]}}
    cfg_path = os.path.join(run, "train.yaml")
    with open(cfg_path, "w") as f:
        json.dump(cfg, f, indent=1)
    import torch
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny models: one thread is as fast, and far faster on a busy machine
    try:
        demo.verb("train", "--config", cfg_path, "--no-resume")
    finally:
        torch.set_num_threads(threads)
    with open(os.path.join(run, "vision_eval.json")) as f:
        ev = json.load(f)
    last = ev["stages"][-1]
    def fmt(x):  # None when the demo's small token set left no held-out text (page ids hash the port)
        return "n/a" if x is None else f"{x:.2f}"
    return (f"ViTDet-RW tiny + adapter into a tiny LM: held-out QA accuracy {fmt(last.get('qa'))} on "
            f"{last.get('qa_n', 0)} questions, text loss {fmt(ev.get('text_loss_before_adapt'))} -> "
            f"{fmt(ev.get('text_loss_after_adapt'))} -> {run}")


def posttrain(demo, url: str) -> str:
    """SFT then one short RL run on the model just trained; held-out QA accuracy before and after."""
    from training.posttrain.data import read_rows
    from training.posttrain.evaluate import evaluate
    from training.posttrain.setup import chat_model
    data, sft, rl = _p(demo, "posttrain", "data"), _p(demo, "posttrain", "sft"), _p(demo, "posttrain", "rl")
    demo.verb("sft", "data", "--tokenizer", _p(demo, "tokenizer"), "--out", data, "--kinds", "qa", "--items", "20",
              "--max-len", "512", "--overwrite")
    demo.add_dataset(data)
    held = read_rows(data, split="heldout")[:6]
    base, tok = chat_model(_p(demo, "train"), _p(demo, "tokenizer"), 512)
    before = evaluate(base, tok, held, ("exact",), max_new_tokens=8)["exact_accuracy"]
    demo.verb("sft", "train", "--init", _p(demo, "train"), "--tokenizer", _p(demo, "tokenizer"), "--data", data,
              "--out", sft, "--max-seq-len", "512", "--steps", "20", "--batch", "4", "--lr", "2e-3",
              "--checkpoint-every", "20")
    demo.verb("rl", "--sft", sft, "--data", data, "--out", rl, "--steps", "1", "--prompts", "2", "--group", "4",
              "--max-new-tokens", "8", "--candidates", "4", "--keep", "2", "--select-samples", "2",
              "--select-every", "2", "--checkpoint-every", "1")
    from training.checkpoint import checkpoint_dir, load_model_from_checkpoint
    after = {name: evaluate(load_model_from_checkpoint(checkpoint_dir(d)), tok, held, ("exact",),
                            max_new_tokens=8)["exact_accuracy"] for name, d in (("sft", sft), ("rl", rl))}
    msg = (f"held-out QA exact accuracy ({len(held)} questions): base {before:.0%} -> SFT {after['sft']:.0%} "
           f"-> SFT+RL {after['rl']:.0%}")
    print(msg)
    return msg


STAGES = [
    ("crawl", "crawl", crawl),
    ("text", "text", text),
    ("synth", "synth", synth),
    ("clip", "train-clip", clip),
    ("images", "images", images),
    ("train", "train", train),
    ("recipe", "train", recipe),
    ("generate", "generate", generate),
    ("posttrain", "sft", posttrain),
    ("vision", "train", vision),
]
