"""Continued pre-training: stage switches, a 65K-token stage on CPU, length generalisation of three
attention layouts, and on-device prefill (TTFT) against full prefill and the dense twin.

    python bench/continued.py                       # every section (slow on a loaded machine)
    python bench/continued.py --only ttft,lengthgen # some sections; the others keep their last figures

Each section prints its table; bench/results/continued.json holds every section's last run (a
section records its own start load and date). Torch runs on ``--threads`` threads (default 1: on a
shared 2-core machine two OpenMP threads spin against each other and run several times slower).
The synthetic math/code table comes from bench/continued_synth.py (section `synth`).

Data: synthetic token languages (training/data/retrieval_tasks.py), not real text, so the figures
say how the machinery behaves, not how a real model would score.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import pyarrow as pa
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from bench.results import RESULTS_DIR, save_result, start_conditions  # noqa: E402
from corpus.schemas import TOKENS  # noqa: E402
from corpus.writer import write_dataset  # noqa: E402
from training.data import retrieval_tasks as rt  # noqa: E402

NAME = "continued"
SECTIONS = ("switch", "long65k", "lengthgen", "ttft")


# ---- data ---------------------------------------------------------------------------------------
def token_dataset(path: str, language: int, n_docs: int, lengths: tuple[int, int], seed: int,
                  eos: int = rt.PAD) -> str:
    """Documents of one synthetic filler language (its successor table is ``language``)."""
    rng = np.random.default_rng([seed, language])
    succ = rt._successors(language)
    rows = []
    for i in range(n_docs):
        n = int(rng.integers(*lengths))
        toks = rt.filler(rng, n, succ, 0.2).tolist() + [eos]
        rows.append({"doc_id": f"l{language}-{i}", "tokens": toks, "source": "syn", "mixture": "syn"})
    write_dataset(path, "tokens", pa.Table.from_pylist(rows, schema=TOKENS), target_bytes=2_000_000)
    return path


# ---- section: stage switches ----------------------------------------------------------------------
def section_switch(tmp: str) -> dict:
    """text -> code/math (text kept at half) -> long context, on two synthetic languages."""
    from training.recipe import parse_recipe, run_recipe
    from training.trainer import Trainer, read_log
    from training.train_config import parse_config
    text = token_dataset(os.path.join(tmp, "text"), 0, 600, (40, 400), 0)
    code = token_dataset(os.path.join(tmp, "code"), 1, 600, (40, 400), 1)
    out = os.path.join(tmp, "recipe")
    raw = {"name": "switch", "sources": {"text": text, "code": code},
           "model": {"preset": "tiny", "overrides": {"vocab_size": rt.VOCAB, "n_layers": 2}},
           "data": {"batch_size": 8, "eval": {"holdout_permille": 50}},
           "train": {"seed": 0, "out": out, "log_every": 10, "eval_every": 25, "eval_batches": 2, "ckpt_every": 50},
           "stages": [
               {"name": "text", "mixture": {"text": 1.0}, "seq_len": 64, "rope_theta": 10000,
                "lr": {"peak": 3e-3, "warmup_steps": 10}, "tokens": 150 * 64 * 8},
               {"name": "code-math", "mixture": {"text": 0.5, "code": 0.5}, "seq_len": 64, "rope_theta": 10000,
                "lr": {"peak": 2e-3, "warmup_steps": 5}, "tokens": 100 * 64 * 8},
               {"name": "long", "mixture": {"text": 0.5, "code": 0.5}, "seq_len": 256, "rope_theta": 40000,
                "buckets": [64, 128, 256], "batch_size": 2, "lr": {"peak": 1e-3, "warmup_steps": 5},
                "tokens": 50 * 256 * 2}]}
    t = time.time()
    rep = run_recipe(parse_recipe(raw), resume=False)
    seconds = time.time() - t
    curve, switches = [], []
    offset = 0
    for s in rep["stages"]:
        rows = read_log(s["run_dir"])
        curve += [{"step": r["step"] + offset, "stage": s["name"], "loss": round(r["loss"], 4)} for r in rows]
        offset += len(rows)
        switches.append(offset)

    def text_loss(ckpt: str) -> float:
        cfg = parse_config({"model": {"preset": "tiny", "init_from": ckpt},
                            "data": {"seq_len": 64, "batch_size": 8, "eval": {"holdout_permille": 50},
                                     "mixture": [{"name": "text", "path": text}]},
                            "train": {"eval_batches": 8, "out": os.path.join(tmp, "eval")}})
        from training import checkpoint as ck
        from training.trainer import build_model_config, build_sources
        from training.models import build_model
        tr = Trainer(cfg)
        model = build_model(build_model_config(cfg))
        ck.load_model_weights(ckpt, model)
        return tr._eval_loss(model, build_sources(cfg, model.config.vocab_size)[1])

    from training import checkpoint as ck
    ckpts = [ck.latest_checkpoint(s["run_dir"]) for s in rep["stages"]]
    before, after = text_loss(ckpts[0]), text_loss(ckpts[1])
    around = []
    for sw, s in zip(switches[:-1], rep["stages"][1:]):
        around.append({"into": s["name"], "last_3_before": [c["loss"] for c in curve[sw - 3:sw]],
                       "first_3_after": [c["loss"] for c in curve[sw:sw + 3]]})
    print("\nstage switches (tiny dense, 2 layers; synthetic text and code languages)")
    print(f"{'stage':<10} {'seq':>5} {'steps':>6} {'first loss':>11} {'last loss':>10}  tokens per source")
    for s in rep["stages"]:
        print(f"{s['name']:<10} {s['seq_len']:>5} {s['steps']:>6} {s['first_loss']:>11.3f} {s['last_loss']:>10.3f}  "
              + ", ".join(f"{k} {v:,}" for k, v in s["tokens_by_source"].items()))
    for a in around:
        print(f"switch into {a['into']:<10}: {a['last_3_before']} | {a['first_3_after']}")
    print(f"text-only held-out loss: {before:.3f} after the text stage, {after:.3f} after code/math")
    return {"stages": [{k: s[k] for k in ("name", "seq_len", "rope_theta", "steps", "first_loss", "last_loss",
                                           "last_eval_loss", "tokens_by_source", "packing")} for s in rep["stages"]],
            "curve": curve, "switches": around, "text_loss_before_code_math": before,
            "text_loss_after_code_math": after, "seconds": round(seconds, 1)}


# ---- section: a 65K-token stage -------------------------------------------------------------------
LONG_CHILD = r"""
import json, os, resource, sys, time, torch
sys.path.insert(0, {root!r})
torch.set_num_threads({threads})
from training.train_config import parse_config
from training.trainer import Trainer, read_log
cfg = parse_config(json.loads({cfg!r}))
t = time.time()
res = Trainer(cfg, resume=False).run()
rows = read_log(cfg.train.out)
print(json.dumps({{"peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "seconds": time.time() - t, "steps": res["steps"], "split": res["documents_split"],
                  "losses": [r["loss"] for r in rows], "tokens": res["tokens_by_source"]}}))
"""


def section_long65k(tmp: str, threads: int, steps: int, max_doc: int, ckpt_modes=(True, False)) -> dict:
    """Two steps (default) of a 65,536-token stage: bucket packing, long attention, chunked CE,
    activation checkpointing; peak RSS of the whole process and seconds per step."""
    T = 65536
    books = token_dataset(os.path.join(tmp, "books"), 0, 40, (max_doc // 4, max_doc), 2)
    rng = np.random.default_rng(5)   # one document longer than the largest bucket: split at "sentences"
    succ = rt._successors(0)
    long_doc = rt.filler(rng, T + 5000, succ, 0.2)
    long_doc[::97] = 3   # token 3 plays the sentence end
    write_dataset(os.path.join(tmp, "huge"), "tokens", pa.Table.from_pylist(
        [{"doc_id": "huge", "tokens": long_doc.tolist() + [0], "source": "syn", "mixture": "syn"}], schema=TOKENS))
    rows = []
    for ckpt in ckpt_modes:
        cfg = {"model": {"preset": "tiny", "overrides": {"vocab_size": rt.VOCAB, "d_model": 64, "n_layers": 2,
                                                         "n_heads": 2, "n_kv_heads": 1, "ffn_hidden": 192,
                                                         "max_seq_len": T, "rope_theta": 500000.0}},
               "data": {"seq_len": T, "batch_size": 1, "packing": "buckets", "buckets": [16384, T],
                        "mixture": [{"name": "books", "path": books}], "eval": {"holdout_permille": 0}},
               "optim": {"lr": 1e-3}, "schedule": {"warmup_steps": 1},
               "train": {"steps": steps, "out": os.path.join(tmp, f"long-{int(ckpt)}"), "eval_every": 0,
                         "ckpt_every": 0, "activation_checkpointing": ckpt}}
        code = LONG_CHILD.format(root=ROOT, threads=threads, cfg=json.dumps(cfg))
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        if p.returncode:
            raise RuntimeError(p.stderr[-2000:])
        r = json.loads(p.stdout.strip().splitlines()[-1])
        r.update({"activation_checkpointing": ckpt, "step_s": r["seconds"] / max(1, r["steps"])})
        rows.append(r)
    # the splitter on the document longer than 65K (recorded, cut at sentence ends)
    from training.data.buckets import BucketLoader
    from training.data.token_source import TokenSource
    ld = BucketLoader([("huge", TokenSource(os.path.join(tmp, "huge")), 1.0)], [16384, T], T, sentence_end_ids=[3])
    split = ld.splits[0]
    heads, hd = 2, 32
    print(f"\n65K-token stage on CPU ({threads} thread(s); tiny dense 2 layers, d 64, 2 heads; rows of {T:,} tokens "
          f"packed from documents up to {max_doc:,} tokens)")
    for r in rows:
        print(f"activation checkpointing {'on ' if r['activation_checkpointing'] else 'off'}: {r['steps']} steps, "
              f"{r['step_s']:.0f} s/step, peak RSS {r['peak_rss_mib']:.0f} MiB, losses {[round(x, 3) for x in r['losses']]}")
    print(f"a {split['length']:,}-token document: split into {split['pieces']} at sentence ends ({split['cut']})")
    print(f"for scale: the reference attention's scores alone would be {heads * T * T * 4 / 2**30:.0f} GiB per layer")
    return {"rows": rows, "seq_len": T, "max_doc": max_doc, "threads": threads, "split_example": split,
            "reference_scores_gib_per_layer": heads * T * T * 4 / 2**30, "head_dim": hd}


# ---- section: length generalisation ---------------------------------------------------------------
LAYOUTS = {
    "swa-rope+global-nope": {"sliding_window": 16, "nope_global": True},   # the report's PT-MoE layout
    "all-global-rope": {"sliding_window": 0},
    "swa-rope+global-rope": {"sliding_window": 16, "nope_global": False},
}


def _lengthgen_config(layout: str, max_len: int):
    from training.models import get_preset
    from training.models.config import ModelConfig  # noqa: F401
    base = get_preset("ptmoe-tiny")
    return dataclasses.replace(base, name=f"ptmoe-{layout}", vocab_size=rt.VOCAB, d_model=64, n_layers=4,
                               n_tracks=2, track_block_depth=4, n_heads=2, n_kv_heads=1, ffn_hidden=128,
                               expert_ffn_hidden=64, global_every=4, max_seq_len=max_len, **LAYOUTS[layout])


def section_lengthgen(train_len: int, steps: int, evals: int, pairs: int) -> dict:
    from training.length_eval import evaluate_at
    from training.models import build_model
    from training.models.info import kv_bytes
    mults = (1, 2, 4, 8)
    out = {"train_len": train_len, "steps": steps, "pairs": pairs, "layouts": {}}
    for layout in LAYOUTS:
        cfg = _lengthgen_config(layout, train_len * mults[-1])
        torch.manual_seed(0)
        model = build_model(cfg)
        opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.1, foreach=False)
        t = time.time()
        for step in range(steps):
            lr = 3e-3 * min(1.0, (step + 1) / 20) * (0.1 + 0.9 * 0.5 * (1 + np.cos(np.pi * step / steps)))
            for g in opt.param_groups:
                g["lr"] = lr
            toks, _ = rt.batch(train_len + 1, step * 16, 16, seed=0, pairs=pairs)
            ids = torch.from_numpy(toks)
            o = model(ids[:, :-1], targets=ids[:, 1:])
            (o.loss + o.aux_loss).backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            opt.zero_grad(set_to_none=True)
        train_s = time.time() - t
        res = [evaluate_at(model, train_len * m, evals, pairs=pairs) for m in mults]
        kv = kv_bytes(cfg, dtype_bytes=2)
        ctx = train_len * mults[-1]
        out["layouts"][layout] = {"eval": res, "train_s": round(train_s, 1), "final_train_loss": float(o.loss.detach()),
                                  "kv_bytes_per_token_bf16": kv["per_token"], "kv_fixed_bytes_bf16": kv["fixed"],
                                  f"kv_bytes_per_token_at_{ctx}": (kv["per_token"] * ctx + kv["fixed"]) / ctx}
    print(f"\nlength generalisation (PT-MoE tiny: 2 tracks x 4 layers, d 64; trained {steps} steps at {train_len} "
          f"tokens; {evals} held-out probes with {pairs} key-value pairs per length)")
    print(f"{'layout':<22} " + " ".join(f"{'loss@' + str(m) + 'x':>9}" for m in mults) + "  "
          + " ".join(f"{'kv@' + str(m) + 'x':>7}" for m in mults) + f"  {'KV B/token (bf16)':>18}")
    for layout, r in out["layouts"].items():
        ctx = train_len * mults[-1]
        print(f"{layout:<22} " + " ".join(f"{e['loss']:>9.3f}" for e in r["eval"]) + "  "
              + " ".join(f"{e['retrieval']:>7.2f}" for e in r["eval"])
              + f"  {r['kv_bytes_per_token_bf16']:>6} +{r['kv_fixed_bytes_bf16']:>6} fixed "
              f"({r[f'kv_bytes_per_token_at_{ctx}']:.0f} at {ctx})")
    return out


# ---- section: time to first token -----------------------------------------------------------------
MEM_CHILD = r"""
import sys, torch
sys.path.insert(0, {root!r})
torch.set_num_threads({threads})
from training.models import build_model, get_preset
from training.models.info import dense_twin
import dataclasses
cfg = dataclasses.replace(get_preset("ondevice-tiny"), max_seq_len={T})
torch.manual_seed(0)
m = build_model(cfg if {peer!r} != "dense" else dense_twin(cfg)).eval()
ids = torch.randint(0, cfg.vocab_size, (1, {T}))
cache = m.allocate_kv_cache(1, {T})
def status(key):
    return int(next(l for l in open("/proc/self/status") if l.startswith(key)).split()[1])
open("/proc/self/clear_refs", "w").write("5")   # reset the peak (VmHWM) to the current RSS
base = status("VmRSS:")
with torch.no_grad():
    (m.full_prefill if {peer!r} == "full" else m.prefill)(ids, cache)
print((status("VmHWM:") - base) / 1024)
"""


def prefill_memory(T: int, threads: int) -> dict[str, float | None]:
    """Peak RSS growth (MiB) during one prefill, each peer in a fresh process (model and cache
    already allocated, so this is the prefill's own working memory)."""
    mem = {}
    for peer in ("fast", "full", "dense"):
        code = MEM_CHILD.format(root=ROOT, threads=threads, T=T, peer=peer)
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        mem[peer] = round(float(p.stdout.strip().splitlines()[-1]), 1) if p.returncode == 0 else None
    return mem


def section_ttft(threads: int, rounds: int, lengths: tuple[int, ...]) -> dict:
    from training.models import build_model, get_preset
    from training.models.info import dense_twin
    rows = []
    for T in lengths:
        cfg = dataclasses.replace(get_preset("ondevice-tiny"), max_seq_len=T + 1)
        torch.manual_seed(0)
        od = build_model(cfg).eval()
        dense = build_model(dense_twin(cfg)).eval()
        ids = torch.randint(0, cfg.vocab_size, (1, T), generator=torch.Generator().manual_seed(T))
        peers = {"kv-sharing prefill": lambda c: od.prefill(ids, c),
                 "full prefill": lambda c: od.full_prefill(ids, c),
                 "dense twin": lambda c: dense.prefill(ids, c)}
        models = {"kv-sharing prefill": od, "full prefill": od, "dense twin": dense}
        times: dict[str, list[float]] = {k: [] for k in peers}
        logits = {}
        for r in range(rounds + 1):          # round 0 warms up
            for name, fn in peers.items():
                cache = models[name].allocate_kv_cache(1, T + 1)
                t = time.perf_counter()
                with torch.no_grad():
                    out = fn(cache)
                if r:
                    times[name].append(time.perf_counter() - t)
                logits[name] = out
                if name != "dense twin":   # the first generated token after the prompt, from this cache
                    with torch.no_grad():
                        logits[name + " next"] = models[name](out.argmax(-1)[:, None], cache=cache).logits[:, -1]
        a, b = logits["kv-sharing prefill"], logits["full prefill"]
        mem = prefill_memory(T, threads)
        row = {"prompt": T, **{f"ttft_s_{k}": statistics.median(v) for k, v in times.items()},
               "max_abs_logit_diff": float((a - b).abs().max()),
               "same_first_token": bool(torch.equal(a.argmax(-1), b.argmax(-1))),
               "same_second_token_logits_max_diff": float((logits["kv-sharing prefill next"]
                                                           - logits["full prefill next"]).abs().max()),
               "prefill_peak_rss_delta_mib": mem}
        rows.append(row)
    print_ttft(rows, threads, rounds)
    return {"rows": rows, "threads": threads, "rounds": rounds, "model": "ondevice-tiny"}


def print_ttft(rows: list[dict], threads: int, rounds: int) -> None:
    print(f"\ntime to first token on CPU ({threads} thread(s); ondevice-tiny 5+3 layers, d 128; median of {rounds})")
    print(f"{'prompt':>7} {'kv-sharing':>11} {'full':>8} {'dense twin':>11} {'saved vs full':>14} "
          f"{'max |dlogit|':>13} {'same token':>11}  prefill peak RSS delta MiB (fast/full/dense)")
    for r in rows:
        f, u, d = r["ttft_s_kv-sharing prefill"], r["ttft_s_full prefill"], r["ttft_s_dense twin"]
        m = r["prefill_peak_rss_delta_mib"]
        print(f"{r['prompt']:>7} {f:>10.3f}s {u:>7.3f}s {d:>10.3f}s {1 - f / u:>13.0%} {r['max_abs_logit_diff']:>13.2e} "
              f"{str(r['same_first_token']):>11}  {m['fast']}/{m['full']}/{m['dense']}")


# ---- headline -------------------------------------------------------------------------------------
def headline(res: dict) -> list[dict]:
    rows = []
    t = res.get("ttft")
    if t:
        for r in t["rows"]:
            f, u, d = r["ttft_s_kv-sharing prefill"], r["ttft_s_full prefill"], r["ttft_s_dense twin"]
            m = r["prefill_peak_rss_delta_mib"]
            rows.append({"what": f"on-device prefill skipping block 2, prompt {r['prompt']:,}, tiny model, CPU "
                                 f"{t['threads']} thread",
                         "figure": f"TTFT {f:.3f} s vs {u:.3f} s full ({1 - f / u:.0%} less), dense twin {d:.3f} s; "
                                   f"prefill memory {m['fast']}/{m['full']}/{m['dense']} MiB; "
                                   f"max logit diff {r['max_abs_logit_diff']:.1e}",
                         "target": "lower TTFT, same output"})
    lg = res.get("lengthgen")
    if lg:
        for name, r in lg["layouts"].items():
            e = r["eval"]
            rows.append({"what": f"length generalisation {name}, trained at {lg['train_len']} tokens",
                         "figure": "loss " + " / ".join(f"{x['loss']:.2f}" for x in e) + "; retrieval "
                                   + " / ".join(f"{x['retrieval']:.2f}" for x in e) + " at 1x/2x/4x/8x; KV "
                                   f"{r['kv_bytes_per_token_bf16']} B/token + {r['kv_fixed_bytes_bf16']} B fixed",
                         "target": "NoPE layout flattest past 1x"})
    lc = res.get("long65k")
    if lc:
        for r in lc["rows"]:
            rows.append({"what": f"65,536-token stage, tiny model, CPU {lc['threads']} thread, activation "
                                 f"checkpointing {'on' if r['activation_checkpointing'] else 'off'}",
                         "figure": f"{r['step_s']:.0f} s/step, peak RSS {r['peak_rss_mib']:.0f} MiB",
                         "target": "runs; no seq x seq matrix"})
    sw = res.get("switch")
    if sw:
        rows.append({"what": "text-only held-out loss before / after the code-math stage (synthetic languages)",
                     "figure": f"{sw['text_loss_before_code_math']:.3f} / {sw['text_loss_after_code_math']:.3f}",
                     "target": "-"})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default=",".join(SECTIONS + ("synth",)),
                    help=f"comma-separated sections of {', '.join(SECTIONS + ('synth',))} (synth: the verified "
                         "math/code table, bench/continued_synth.py, which keeps its own results file)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3, help="TTFT rounds (median)")
    ap.add_argument("--ttft-lengths", default="512,2048,8192")
    ap.add_argument("--ttft-memory-only", action="store_true", help="measure prefill memory again, keep timings")
    ap.add_argument("--lengthgen-steps", type=int, default=600)
    ap.add_argument("--lengthgen-train-len", type=int, default=64)
    ap.add_argument("--lengthgen-evals", type=int, default=64)
    ap.add_argument("--pairs", type=int, default=2)
    ap.add_argument("--long-steps", type=int, default=2)
    ap.add_argument("--long-max-doc", type=int, default=4096)
    ap.add_argument("--long-checkpointing", default="on,off", help="activation checkpointing runs: on, off or both")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    only = [s for s in a.only.split(",") if s]
    if "synth" in only:
        from bench.continued_synth import run as synth_table
        only.remove("synth")
        synth_table()
        if not only:
            return
    bad = [s for s in only if s not in SECTIONS]
    if bad:
        sys.exit(f"unknown section {bad[0]} (known: {', '.join(SECTIONS)})")
    path = os.path.join(RESULTS_DIR, f"{NAME}.json")
    old = json.load(open(path)) if os.path.exists(path) else {}
    res = {k: old.get(k) for k in SECTIONS if old.get(k)}
    start = start_conditions()
    with tempfile.TemporaryDirectory() as tmp:
        for s in only:
            st = start_conditions()
            if s == "switch":
                r = section_switch(tmp)
            elif s == "long65k":
                r = section_long65k(tmp, a.threads, a.long_steps, a.long_max_doc,
                                    tuple(m == "on" for m in a.long_checkpointing.split(",")))
            elif s == "lengthgen":
                r = section_lengthgen(a.lengthgen_train_len, a.lengthgen_steps, a.lengthgen_evals, a.pairs)
            elif a.ttft_memory_only and res.get("ttft"):   # keep the timings, measure memory again
                r = {k: v for k, v in res["ttft"].items() if k not in ("start", "end_loadavg")}
                r["timing_start"] = res["ttft"].get("timing_start") or res["ttft"].get("start")
                for row in r["rows"]:
                    row["prefill_peak_rss_delta_mib"] = prefill_memory(row["prompt"], a.threads)
                print_ttft(r["rows"], r["threads"], r["rounds"])
            else:
                r = section_ttft(a.threads, a.rounds, tuple(int(x) for x in a.ttft_lengths.split(",")))
            res[s] = {**r, "start": st, "end_loadavg": list(os.getloadavg())}
            with open(os.path.join(tempfile.gettempdir(), f"{NAME}-{s}.json"), "w") as f:
                json.dump(res[s], f, default=str)   # a copy, in case another section run saves meanwhile
    if os.path.exists(path):   # sections run at the same time by another process keep their figures
        now = json.load(open(path))
        res = {k: res[k] if k in only else now.get(k) or res.get(k) for k in SECTIONS if now.get(k) or res.get(k)}
    p = save_result(NAME, {**res, "headline": headline(res), "not_covered": [
        "synthetic token languages and tiny models on CPU, not real text or a real model: figures show the "
        "machinery (exact switches, memory bounds, prefill savings, layout trends at small scale) only",
        "wall times on a shared, loaded 2-core machine (each section records its load); single thread",
        "the 65K stage packs documents of up to --long-max-doc tokens per row: a row holding one 65K-token "
        "document costs more attention time (quadratic in the document)",
        "synthetic math/code figures: bench/continued_synth.py"]}, packages=["torch"], start=start)
    print(f"wrote {p}")


if __name__ == "__main__":
    main()
