"""Generation speed on CPU: plain, constrained, speculative, constrained + speculative.

A target (`ptmoe-small` by default) and a draft (a 2-layer dense model of width 64, trained on the
same data or with --distill on the target's logits) are trained on the demo's token shards (run `cidermill demo` first) and cached under --work; then, for the same
prompts in one run, the bench decodes with each mode, median over rounds:

- tokens/s and CPU-seconds per token, batch 1;
- the draft's acceptance rate, and whether speculative greedy output equals plain greedy output;
- the grammar mask's CPU time per token as a share of one target forward (batch 1, KV cached).

Targets: speculative >= 1.5x plain tokens/s at temperature 0; mask <= 10% of a target forward.
Not covered: batched serving, GPUs, long contexts (prompts are a few dozen tokens), quality of the
text (the models train for minutes: greedy text of such a target degenerates into a repeated token,
which any draft predicts, so the T=0 acceptance is an upper bound; the T=1 rows show sampled text).

    python bench/generate.py --demo out/demo --work /work/scratch/gen/bench
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("OMP_NUM_THREADS", "1")


def train(work: str, name: str, demo: str, model: dict, steps: int, teacher: str | None = None) -> str:
    from pipelines.cli import main
    from training.checkpoint import latest_checkpoint
    run = os.path.join(work, name)
    if latest_checkpoint(run):
        return run
    os.makedirs(run, exist_ok=True)
    cfg = {"model": model,
           "data": {"seq_len": 64, "batch_size": 8, "tokenizer": os.path.join(demo, "tokenizer"),
                    "mixture": [{"name": "web", "path": os.path.join(demo, "tokens"), "weight": 1.0}],
                    "eval": {"holdout_permille": 50}},
           "optim": {"lr": 3e-3, "weight_decay": 0.1, "grad_clip": 1.0},
           "schedule": {"warmup_steps": 20, "decay": "cosine", "min_lr_ratio": 0.1},
           "train": {"steps": steps, "seed": 0, "out": run, "log_every": 50, "eval_every": steps,
                     "eval_batches": 2, "ckpt_every": steps}}
    if teacher:
        cfg["distill"] = {"teacher": latest_checkpoint(teacher), "alpha": 0.9, "temperature": 1.0}
    path = os.path.join(run, "train.yaml")
    with open(path, "w") as f:
        json.dump(cfg, f)
    if main(["train", "--config", path, "--no-resume"]) != 0:
        raise SystemExit(f"training {name} failed")
    return run


@dataclasses.dataclass
class Note:
    """The constrained mode's answer type: long enough to decode for a while."""
    title: str
    points: list[str]
    score: int


def prompts_from(demo: str, n: int) -> list[str]:
    import pyarrow.dataset as ds
    t = ds.dataset(os.path.join(demo, "text"), format="ipc").to_table(columns=["text"]).to_pylist()
    texts = [r["text"] for r in t if len(r["text"]) > 200]
    return [" ".join(x.split()[:24]) for x in texts[:n]]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--demo", default="out/demo")
    ap.add_argument("--work", default="/work/scratch/gen/bench")
    ap.add_argument("--target", default="ptmoe-small", help="target preset (ptmoe-small; ptmoe-tiny on a loaded machine)")
    ap.add_argument("--distill", action="store_true", help="train the draft on the target's logits (slower)")
    ap.add_argument("--target-steps", type=int, default=300)
    ap.add_argument("--draft-steps", type=int, default=300)
    ap.add_argument("--prompts", type=int, default=4)
    ap.add_argument("--new", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--k", type=int, default=4)
    args = ap.parse_args()

    import torch
    torch.set_num_threads(1)
    from bench.results import save_result, start_conditions
    from inference.generator import Generator, load_checkpoint_model
    from inference.schema import generation_schema
    from inference.prompting import with_response_format
    from training.tokenizer import load_tokenizer

    target_run = train(args.work, "target", args.demo, {"preset": args.target,
                       "overrides": {"vocab_size": "auto", "max_seq_len": 512}}, args.target_steps)
    draft_run = train(args.work, "draft-distilled" if args.distill else "draft", args.demo, {"preset": "tiny", "overrides": {
        "vocab_size": "auto", "max_seq_len": 512, "d_model": 64, "n_layers": 2, "n_heads": 2, "n_kv_heads": 1,
        "ffn_hidden": 192}}, args.draft_steps, teacher=target_run if args.distill else None)
    tok = load_tokenizer(os.path.join(args.demo, "tokenizer"))
    target, draft = load_checkpoint_model(target_run), load_checkpoint_model(draft_run)
    gen = Generator(target, tok, draft=draft, draft_tokenizer=tok, speculative_k=args.k)
    prompts = prompts_from(args.demo, args.prompts)
    schema = generation_schema(Note)
    start = start_conditions()

    def run_mode(constrained: bool, speculative: bool, temperature: float = 0.0):
        walls, cpus, toks, acc, masks, texts = [], [], [], [], [], []
        for _ in range(args.rounds):
            w0, c0 = time.perf_counter(), time.process_time()
            n = a = d = 0
            m = 0.0
            texts = []
            for p in prompts:
                if constrained:
                    out = gen.generate(with_response_format(p, schema), schema=schema, max_new_tokens=args.new,
                                       speculative=speculative, temperature=temperature, seed=0)
                else:
                    out = gen.generate(p, max_new_tokens=args.new, speculative=speculative,
                                       temperature=temperature, seed=0)
                n += out.stats.tokens
                a += out.stats.accepted
                d += out.stats.drafted
                m += out.stats.mask_seconds
                texts.append(out.tokens)
            walls.append(time.perf_counter() - w0)
            cpus.append(time.process_time() - c0)
            toks.append(n)
            acc.append(a / d if d else 0.0)
            masks.append(m / max(n, 1))
        i = walls.index(statistics.median(walls))
        return {"tokens": toks[i], "tokens_per_s": toks[i] / walls[i], "cpu_ms_per_token": 1000 * cpus[i] / toks[i],
                "acceptance": acc[i], "mask_ms_per_token": 1000 * masks[i], "outputs": texts}

    modes = {}
    for name, c, s, temp in [("plain", False, False, 0.0), ("constrained", True, False, 0.0),
                             ("speculative", False, True, 0.0), ("constrained+speculative", True, True, 0.0),
                             ("plain T=1", False, False, 1.0), ("speculative T=1", False, True, 1.0)]:
        modes[name] = run_mode(c, s, temp)
        print(f"{name:<24} {modes[name]['tokens_per_s']:7.1f} tokens/s  {modes[name]['cpu_ms_per_token']:6.2f} "
              f"CPU ms/token  acceptance {modes[name]['acceptance']:.2f}  mask {modes[name]['mask_ms_per_token']:.3f} ms/token",
              flush=True)

    # one target forward at batch 1 with a KV cache, in CPU time like the mask (the unit it is compared to)
    cache = target.allocate_kv_cache(1, 200)
    with torch.no_grad():
        target(torch.tensor([tok.encode(prompts[0]).ids[:32]]), cache=cache)
        x = torch.tensor([[5]])
        fw = []
        for _ in range(60):
            t = time.process_time()
            target(x, cache=cache)
            fw.append(time.process_time() - t)
    forward_ms = 1000 * statistics.median(fw)
    mask_share = modes["constrained"]["mask_ms_per_token"] / forward_ms
    # CPU time per token is the figure a loaded shared machine does not distort; wall ratios beside it
    speedup = modes["plain"]["cpu_ms_per_token"] / modes["speculative"]["cpu_ms_per_token"]
    both = modes["constrained"]["cpu_ms_per_token"] / modes["constrained+speculative"]["cpu_ms_per_token"]
    speedup_wall = modes["speculative"]["tokens_per_s"] / modes["plain"]["tokens_per_s"]
    both_wall = modes["constrained+speculative"]["tokens_per_s"] / modes["constrained"]["tokens_per_s"]
    sampled = modes["plain T=1"]["cpu_ms_per_token"] / modes["speculative T=1"]["cpu_ms_per_token"]
    distinct = len(set(modes["plain"]["outputs"][0])) if modes["plain"]["outputs"] else 0
    equal = modes["speculative"]["outputs"] == modes["plain"]["outputs"]
    equal_c = modes["constrained+speculative"]["outputs"] == modes["constrained"]["outputs"]
    print(f"target forward (batch 1, cached) {forward_ms:.2f} ms; mask = {mask_share:.1%} of it")
    print(f"speculative / plain {speedup:.2f}x per CPU-second, {speedup_wall:.2f}x wall (greedy outputs equal: {equal}); "
          f"constrained+speculative / constrained {both:.2f}x CPU, {both_wall:.2f}x wall (equal: {equal_c})")
    print(f"speculative / plain at T=1: {sampled:.2f}x per CPU-second (acceptance "
          f"{modes['speculative T=1']['acceptance']:.2f}); distinct tokens in the first greedy output: {distinct}")
    for m in modes.values():
        m.pop("outputs")
    save_result("generate", {
        "modes": modes, "target_forward_ms": forward_ms, "mask_share_of_forward": mask_share,
        "speculative_speedup_cpu": speedup, "constrained_speculative_speedup_cpu": both,
        "speculative_speedup_wall": speedup_wall, "constrained_speculative_speedup_wall": both_wall,
        "speculative_speedup_cpu_t1": sampled, "distinct_tokens_first_greedy_output": distinct,
        "greedy_equal": equal, "constrained_greedy_equal": equal_c,
        "setup": {"target": args.target, "target_steps": args.target_steps, "draft": "dense 2 layers x 64" + (", distilled" if args.distill else ", trained on the same data"),
                  "draft_steps": args.draft_steps, "k": args.k, "prompts": len(prompts), "new_tokens": args.new,
                  "rounds": args.rounds, "temperature": 0, "threads": 1},
        "headline": [
            {"what": f"speculative vs plain tokens per CPU-second, T=0, {args.target} + 2x64 draft, batch 1",
             "figure": f"{speedup:.2f}x ({modes['speculative']['cpu_ms_per_token']:.1f} vs {modes['plain']['cpu_ms_per_token']:.1f} "
                       f"CPU ms/token, acceptance {modes['speculative']['acceptance']:.2f}; wall {speedup_wall:.2f}x)",
             "target": ">= 1.5x"},
            {"what": "speculative vs plain tokens per CPU-second, sampled at T=1 (greedy text of this briefly "
                     "trained target repeats a token, which flatters the T=0 acceptance)",
             "figure": f"{sampled:.2f}x (acceptance {modes['speculative T=1']['acceptance']:.2f})", "target": ""},
            {"what": "grammar mask per token vs one target forward (batch 1)",
             "figure": f"{mask_share:.1%} ({modes['constrained']['mask_ms_per_token']:.3f} vs {forward_ms:.2f} ms)",
             "target": "<= 10%"},
            {"what": "constrained + speculative vs constrained, tokens per CPU-second",
             "figure": f"{both:.2f}x (wall {both_wall:.2f}x, acceptance {modes['constrained+speculative']['acceptance']:.2f})", "target": ""},
        ]}, packages=["torch", "llguidance"], start=start)
    return 0


if __name__ == "__main__":
    sys.exit(main())
