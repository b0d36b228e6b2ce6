"""Post-training on a small base that learned something: base vs SFT vs SFT+RL (variance
selection) vs SFT+RL (random selection) on held-out verifiable tasks, three seeds.

Base: `tiny` pretrained on Debian's English documentation (bench/compress_data.py, cached under
--scratch; trained there on first use), its context raised to --seq for the chat prompts. Data:
`cidermill sft data`'s builders (table/chart QA, guided-format records, tool trajectory trees)
on tables of --max-rows body rows, so that tool conversations (the tool list alone is ~300
tokens) fit; held-out rows come from source tables no training row uses. Per seed (SFT data
order, RL sampling): SFT (cosine decay), then RL from that SFT checkpoint twice at equal
generation budget, on QA, schema and tool tasks (tool tasks played out on the tool platform):
variance selection spends part of its completions scoring candidates, so the random arm gets
that many completions back as extra steps. Also: unconstrained schema parse rate and JSON rate
before/after format SFT, tool success + mean calls, sync vs async RL throughput; and, as
diagnosis, whether eval prompts are the training template's prefix, the SFT loss at the start
and end, and a few held-out generations beside their targets.

    python bench/posttrain.py [--scratch /work/scratch/compress] [--seeds 0 1 2] [--quick]
    # seeds as separate processes, then one results file:
    python bench/posttrain.py --seeds 0 --name posttrain-seed0   (1, 2 likewise)
    python bench/posttrain.py --merge posttrain-seed0 posttrain-seed1 posttrain-seed2
    # the QA-only run (short prompts, within the base's pretraining context): bench/posttrain_qa.py
"""
from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import sys
import tempfile
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def build_data(tok, out: str, items: int, max_len: int, max_rows: int, kinds: str = "qa,guided,tools") -> dict:
    from pipelines.sft_data.guided import guided_conversations
    from pipelines.sft_data.instructions import qa_conversations
    from pipelines.sft_data.trajectories import tool_conversations
    from pipelines.sft_data.write import write_conversations
    builders = {"qa": qa_conversations, "guided": guided_conversations, "tools": tool_conversations}
    rows = [r for k in kinds.split(",") for r in builders[k](0, items, max_rows=max_rows)]
    stats = write_conversations(rows, out, tok, max_len, "sft_data", overwrite=True)
    st = stats.stages["sft_data"]
    return {"rows_in": st.rows_in, "kept": st.kept, "dropped": dict(st.dropped)}


def template_check(tok, rows: list[dict]) -> str:
    """How many held-out eval prompts are, token for token, the prefix SFT's encoding gives the
    same conversation (eval and training must share the template)."""
    from training.posttrain.chat import encode, prompt_ids
    from training.posttrain.data import prompt_of
    same = 0
    for r in rows:
        p = prompt_ids(tok, prompt_of(r))
        same += encode(tok, r["messages"], 10 ** 6).ids[:len(p)] == p
    return f"{same}/{len(rows)}"


def generations(model, tok, rows: list[dict], per_task: int = 2) -> list[dict]:
    """A few greedy held-out replies beside their targets (what the model does, not just a score)."""
    from training.posttrain.data import prompt_of
    from training.posttrain.evaluate import reply
    out, seen = [], {}
    for r in rows:
        t = r["task"]["type"]
        if seen.get(t, 0) < per_task:
            seen[t] = seen.get(t, 0) + 1
            p = prompt_of(r)
            out.append({"task": t, "got": reply(model, tok, p, 64), "want": r["messages"][len(p)]["content"]})
    return out


def loss_curve(run_dir: str) -> dict:
    """Mean assistant-token loss over SFT's first and last 10% of steps (does SFT learn at all?)."""
    from training.posttrain.sft import LOG_FILE
    losses = [json.loads(ln)["loss"] for ln in open(os.path.join(run_dir, LOG_FILE), encoding="utf-8")]
    losses = [v for v in losses if v is not None]
    k = max(1, len(losses) // 10)
    return {"sft_loss_first": round(statistics.mean(losses[:k]), 3), "sft_loss_last": round(statistics.mean(losses[-k:]), 3)}


def limited(rows: list[dict], per_type: int) -> list[dict]:
    out, seen = [], {}
    for r in rows:
        t = r["task"]["type"]
        if seen.get(t, 0) < per_type:
            seen[t] = seen.get(t, 0) + 1
            out.append(r)
    return out


NOT_COVERED = ["a base of ~1.3M parameters trained a few CPU-minutes on English docs: far below the "
            "report's scale; figures show the mechanics, not the report's gains",
            "RL runs a few steps (CPU budget): a test of the mechanics, too short to move accuracy",
            "the base was pretrained at context 256; chat rows reach 768 (positions past 256 are "
            "learnt only during SFT)",
            "no reward model on the preference pairs; no human-written demonstrations",
            "async throughput on 2 shared cores: actor and learner compete for the same CPUs"]

NOT_COVERED_QA = ["QA only (--kinds qa), tables of 2 rows, context 256 (the base's pretraining context): the "
                  "task a 1.3M-parameter base can learn; no format or tool rows in this run",
                  "a few RL steps (CPU budget) at a higher lr than the full run",
                  "throughput: wall clock on 2 shared, loaded cores, sync and async run at different moments"]

PARTS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "posttrain-parts")


def save(out_name: str, rows: dict, throughput: dict, done: list[int], info: dict, start: dict) -> None:
    """Print the table and write bench/results/OUT_NAME.json (after every seed, and when merging parts)."""
    from bench.results import save_result

    def agg(name, key):
        vals = [r.get(key) for r in rows[name] if r.get(key) is not None]
        if not vals:
            return None
        return {"mean": statistics.mean(vals), "min": min(vals), "max": max(vals), "n": len(vals)}

    keys = ("exact_accuracy", "schema_parse_rate", "json_parse_rate", "schema_reward", "tool_success",
            "tool_mean_calls")
    table = {name: {k: agg(name, k) for k in keys} for name in rows}
    print("\n%-12s " % "model" + " ".join(f"{k:>22s}" for k in keys))
    for name in rows:
        cells = []
        for k in keys:
            s = table[name][k]
            cells.append(f"{s['mean']:.3f} [{s['min']:.3f},{s['max']:.3f}]" if s else "n/a")
        print("%-12s " % name + " ".join(f"{c:>22s}" for c in cells))
    print("throughput:", json.dumps(throughput))

    def fig(name, key, pct=True):
        s = table[name][key]
        if not s:
            return "n/a"
        f = (lambda v: f"{100 * v:.0f}%") if pct else (lambda v: f"{v:.2f}")
        return f"{f(s['mean'])} ({s['n']} seeds: {f(s['min'])}–{f(s['max'])})"

    headline = [
        {"what": "held-out table/chart QA exact accuracy: base / SFT", "figure":
            f"{fig('base', 'exact_accuracy')} / {fig('sft', 'exact_accuracy')}", "target": "SFT well above base"},
        {"what": "held-out QA exact accuracy: SFT+RL variance / SFT+RL random (equal completions)", "figure":
            f"{fig('rl_variance', 'exact_accuracy')} / {fig('rl_random', 'exact_accuracy')}",
         "target": "RL > SFT beyond seed spread; variance > random"},
        {"what": "unconstrained schema parse rate: base / after format SFT", "figure":
            f"{fig('base', 'schema_parse_rate')} / {fig('sft', 'schema_parse_rate')}", "target": "well above base"},
        {"what": "unconstrained outputs that parse as JSON at all: base / after format SFT", "figure":
            f"{fig('base', 'json_parse_rate')} / {fig('sft', 'json_parse_rate')}", "target": "well above base"},
        {"what": "tool-task success: base / SFT / SFT+RL variance / SFT+RL random", "figure":
            " / ".join(fig(n, 'tool_success') for n in rows), "target": "SFT > base; RL > SFT"},
        {"what": "tool calls per task: base / SFT / SFT+RL variance / SFT+RL random", "figure":
            " / ".join(fig(n, 'tool_mean_calls', pct=False) for n in rows), "target": "1-2 (the scripted plans)"},
        {"what": "RL actor tokens/s, learner steps/s: sync / async (staleness 1)", "figure":
            (f"{throughput['sync']['actor_tokens_per_s']:.0f} / {throughput['async']['actor_tokens_per_s']:.0f} tok/s; "
             f"{throughput['sync']['learner_steps_per_s']:.3f} / {throughput['async']['learner_steps_per_s']:.3f} steps/s")
            if throughput else "n/a", "target": "async >= sync"},
    ]
    parts = PARTS_DIR if "-seed" in out_name else None  # parts stay out of the README table
    if parts:
        os.makedirs(parts, exist_ok=True)
    headline = [h for h in headline if h["figure"].replace("n/a", "").strip(" /")]  # tasks this run has
    save_result(out_name, {"seeds_done": done,
        "headline": headline, "table": table, "rows": rows, "throughput": throughput, **info,
    }, packages=["torch", "tokenizers"], start=start, results_dir=parts)


def merge(parts: list[str], into: str = "posttrain") -> None:
    """Combine per-seed result files (seeds run as separate processes) into bench/results/posttrain.json."""
    loaded = [json.load(open(os.path.join(PARTS_DIR, f"{p}.json"), encoding="utf-8")) for p in parts]
    rows = {k: [r for d in loaded for r in d["rows"][k]] for k in loaded[0]["rows"]}
    throughput = next((d["throughput"] for d in loaded if d["throughput"]), {})
    info = {k: loaded[0][k] for k in INFO_KEYS}
    info["total_cpu_s"] = round(sum(d["total_cpu_s"] for d in loaded), 1)
    info["not_covered"] = NOT_COVERED if into == "posttrain" else NOT_COVERED_QA
    info["parts"] = [{"name": p, "start": d["start"], "seeds": d["seeds_done"]} for p, d in zip(parts, loaded)]
    save(into, rows, throughput, [s for d in loaded for s in d["seeds_done"]], info, loaded[0]["start"])


INFO_KEYS = ("data", "eval_prompt_matches_training_template", "samples", "settings", "rl", "heldout_rows",
             "total_cpu_s", "not_covered")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scratch", default="/work/scratch/compress")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--items", type=int, default=150, help="source items per kind (QA makes 2 rows per item)")
    ap.add_argument("--max-rows", type=int, default=3, help="body rows per source table: shorter prompts")
    ap.add_argument("--seq", type=int, default=768, help="context: tool conversations run 400-700 tokens")
    ap.add_argument("--sft-steps", type=int, default=300)
    ap.add_argument("--sft-lr", type=float, default=2e-3)
    ap.add_argument("--rl-steps", type=int, default=6)
    ap.add_argument("--rl-lr", type=float, default=5e-5)
    ap.add_argument("--kinds", default="qa,guided,tools", help="SFT data builders (qa: a QA-only run)")
    ap.add_argument("--merge-into", default="posttrain", help="with --merge: the results name")
    ap.add_argument("--eval-per-task", type=int, default=12)
    ap.add_argument("--quick", action="store_true", help="tiny settings to smoke-test the script")
    ap.add_argument("--name", default="posttrain", help="results file name (a part, when seeds run as processes)")
    ap.add_argument("--merge", nargs="+", metavar="PART", help="only combine these parts' results into posttrain.json")
    a = ap.parse_args()
    if a.merge:
        return merge(a.merge, a.merge_into)
    if a.quick:
        a.items, a.sft_steps, a.rl_steps, a.eval_per_task, a.seeds = 20, 4, 2, 4, a.seeds[:1]
    torch.set_num_threads(1)
    from bench.compress_data import float_model
    from bench.results import start_conditions
    from training.posttrain.chat import END, add_chat_tokens, prepare_chat_model
    from training.posttrain.data import encode_rows, read_rows, rl_prompts
    from training.posttrain.evaluate import evaluate
    from training.posttrain.rl import RLConfig, run_rl
    from training.posttrain.sft import SFTConfig, run_sft
    from training.tokenizer import load_tokenizer

    start = start_conditions()
    t_all = time.process_time()
    base_tok = load_tokenizer(os.path.join(a.scratch, "tokenizer"))
    pretrained = float_model(a.scratch)
    tok, new = add_chat_tokens(base_tok)
    base = copy.deepcopy(pretrained)
    base.config = __import__("dataclasses").replace(base.config, max_seq_len=a.seq)
    prepare_chat_model(base, base_tok, tok, new)
    work = tempfile.mkdtemp(prefix="posttrain-bench-")
    data_dir = os.path.join(work, "data")
    data_stats = build_data(tok, data_dir, a.items, a.seq, a.max_rows, a.kinds)
    train_rows = read_rows(data_dir, split="train")
    held = limited(read_rows(data_dir, split="heldout"), a.eval_per_task)
    convs, dropped = encode_rows(tok, train_rows, a.seq + 1)
    end = tok.token_to_id(END)
    rl_cfg = dict(steps=a.rl_steps, prompts_per_step=4, group=4, max_new_tokens=16, lr=a.rl_lr, kl_beta=0.05,
                  select_every=3, select_candidates=8, select_keep=4, select_samples=4, checkpoint_every=10 ** 6,
                  tool_max_turns=3, tool_max_new_tokens=64)
    pool, rl_dropped = rl_prompts(tok, train_rows, a.seq, rl_cfg["max_new_tokens"], rl_cfg["tool_max_new_tokens"])
    template = template_check(tok, held)
    print(f"data: {data_stats}; train convs {len(convs)} (dropped {dict(dropped)}); held-out {len(held)}; "
          f"RL pool {len(pool)} (set aside {dict(rl_dropped)}); eval prompts = training template: {template}", flush=True)

    def ev(model, tasks=("exact", "schema", "tool")) -> dict:
        t0 = time.process_time()
        r = evaluate(model, tok, held, tasks, max_new_tokens=96)  # a two-call tool turn runs ~60 tokens
        r["eval_cpu_s"] = round(time.process_time() - t0, 1)
        return r

    rows = {"base": [], "sft": [], "rl_variance": [], "rl_random": []}
    budget = {}
    base_res = ev(base)
    samples = {"base": generations(base, tok, held)}
    print("base", base_res, flush=True)
    throughput = {}
    done: list[int] = []
    for seed in a.seeds:
        torch.manual_seed(seed)
        sft = copy.deepcopy(base)
        t0 = time.process_time()
        run_sft(sft, convs, SFTConfig(steps=a.sft_steps, batch=8, seq_len=a.seq, lr=a.sft_lr, seed=seed,
                                      checkpoint_every=10 ** 6, decay="cosine"), os.path.join(work, f"sft-{seed}"),
                pad_id=end)
        sft_cpu = time.process_time() - t0
        rows["base"].append(base_res)
        rows["sft"].append({**ev(sft), "train_cpu_s": round(sft_cpu, 1),
                            **loss_curve(os.path.join(work, f"sft-{seed}"))})
        if seed == a.seeds[0]:
            samples["sft"] = generations(sft, tok, held)
        print(f"seed {seed} sft", rows["sft"][-1], flush=True)
        arms = {}
        for arm in ("variance", "random"):
            cfg = RLConfig(**rl_cfg, selection=arm, seed=seed)
            if arm == "random":  # equal generation budget: the completions variance spent on scoring
                per_step = cfg.prompts_per_step * cfg.group
                extra = budget[seed] - cfg.steps * per_step
                cfg.steps += max(0, round(extra / per_step))
            pol = copy.deepcopy(sft)
            t0 = time.perf_counter()
            res = run_rl(pol, copy.deepcopy(sft), pool, cfg, os.path.join(work, f"rl-{arm}-{seed}"), end, tok.decode,
                         tokenizer=tok)
            wall = time.perf_counter() - t0
            if arm == "variance":
                budget[seed] = res.generations
            arms[arm] = res
            rows[f"rl_{arm}"].append({**ev(pol), "generations": res.generations, "steps": res.step,
                                      "train_reward_first": res.mean_reward[:3], "train_reward_last": res.mean_reward[-3:],
                                      "wall_s": round(wall, 1)})
            print(f"seed {seed} rl {arm}", rows[f"rl_{arm}"][-1], flush=True)
        if seed == 0:  # sync vs async throughput, same RL config, random selection (no scoring phase)
            for mode, stale in (("sync", 0), ("async", 1)):
                cfg = RLConfig(**{**rl_cfg, "steps": max(a.rl_steps // 2, 2)}, selection="random", seed=seed,
                               asynchronous=mode == "async", max_staleness=stale)
                pol = copy.deepcopy(sft)
                res = run_rl(pol, copy.deepcopy(sft), pool, cfg, os.path.join(work, f"tp-{mode}"), end, tok.decode,
                             tokenizer=tok)
                throughput[mode] = {"actor_tokens_per_s": res.new_tokens / res.wall_seconds,
                                    "learner_steps_per_s": res.step / res.wall_seconds, "wall_s": res.wall_seconds,
                                    "max_staleness": stale, "dropped_stale": res.dropped_stale}
            print("throughput", throughput, flush=True)
        done.append(seed)
        info = {"data": data_stats, "eval_prompt_matches_training_template": template, "samples": samples,
                "settings": dict(vars(a)), "rl": rl_cfg, "heldout_rows": len(held),
                "total_cpu_s": round(time.process_time() - t_all, 1), "not_covered": NOT_COVERED}
        save(a.name, rows, throughput, done, info, start)  # after every seed: an interrupted run keeps its figures

if __name__ == "__main__":
    main()
