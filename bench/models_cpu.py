"""CPU figures for the model architectures (reference kernels; run alone for stable numbers).

    python bench/models_cpu.py [--steps 5] [--batch 4] [--seq 256]

Prints: forward+backward tokens/s of `tiny` and `ptmoe-small`; KV cache bytes per token of
`ondevice-3b` vs its dense twin, measured from caches allocated on the meta device; sync points
per forward of `ptmoe-1b` counted with a hook on a width-shrunk copy (same tracks, L and D)
against the 2L of tensor parallelism.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch  # noqa: E402

from training.models import build_model, get_preset  # noqa: E402
from training.models.info import dense_twin  # noqa: E402


def train_tokens_per_s(name: str, steps: int, batch: int, seq: int) -> tuple[float, float, int]:
    """(tokens per wall second, tokens per CPU second of this process, parameters)."""
    torch.manual_seed(0)
    cfg = dataclasses.replace(get_preset(name), kernels="reference")
    model = build_model(cfg)
    x = torch.randint(0, cfg.vocab_size, (batch, seq + 1))

    def step():
        out = model(x[:, :-1], targets=x[:, 1:])
        (out.loss + out.aux_loss).backward()
        model.zero_grad(set_to_none=True)

    step()  # warm-up
    t, c = time.perf_counter(), time.process_time()
    for _ in range(steps):
        step()
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    return steps * batch * seq / wall, steps * batch * seq / cpu, model.num_parameters()


def measured_kv_bytes_per_token(cfg) -> float:
    with torch.device("meta"):
        model = build_model(cfg)
    cache = model.allocate_kv_cache(1, cfg.max_seq_len, dtype=torch.bfloat16, device="meta")
    return cache.nbytes() / cfg.max_seq_len


def counted_sync_points(cfg) -> int:
    small = dataclasses.replace(cfg, d_model=64, n_heads=2, n_kv_heads=1, ffn_hidden=64,
                                expert_ffn_hidden=32, vocab_size=256, sliding_window=16,
                                max_seq_len=64, kernels="reference")
    model = build_model(small)
    calls = []
    model.track_sync.register_forward_hook(lambda m, a, o: calls.append(1))
    with torch.no_grad():
        model(torch.randint(0, 256, (1, 32)))
    return len(calls)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--seq", type=int, default=256)
    a = ap.parse_args()
    from bench.results import save_result, start_conditions
    start = start_conditions()
    rows = {}
    print(f"torch {torch.__version__}, {torch.get_num_threads()} CPU threads, fp32, reference kernels")
    print(f"\nforward+backward, batch {a.batch} x {a.seq} tokens, {a.steps} timed steps")
    for name in ("tiny", "ptmoe-small"):
        tps, tpc, n = train_tokens_per_s(name, a.steps, a.batch, a.seq)
        rows[name] = {"params": n, "tokens_per_s": round(tps), "tokens_per_cpu_s": round(tpc)}
        print(f"  {name:12s} {n / 1e6:6.1f}M params  {tps:10,.0f} tokens/s  "
              f"({tpc:,.0f} tokens per CPU-second; the two differ when the machine is shared)")

    od = get_preset("ondevice-3b")
    kv, kv_twin = measured_kv_bytes_per_token(od), measured_kv_bytes_per_token(dense_twin(od))
    print("\nKV cache, bf16, measured from caches allocated on the meta device")
    print(f"  ondevice-3b     {kv:10,.0f} B/token ({od.block1_layers} of {od.n_layers} layers cache K/V)")
    print(f"  dense twin      {kv_twin:10,.0f} B/token ({od.n_layers} layers)")
    print(f"  ratio           {kv / kv_twin:.3f} ({1 - kv / kv_twin:.1%} less)")

    pt = get_preset("ptmoe-1b")
    counted = counted_sync_points(pt)
    print("\nsynchronisation points per forward")
    print(f"  ptmoe-1b        {counted} counted with a hook (L/D = {pt.n_layers}/{pt.track_block_depth} "
          f"= {pt.sync_points}) vs 2L = {2 * pt.n_layers} tensor-parallel "
          f"({1 - counted / (2 * pt.n_layers):.1%} fewer)")
    save_result("models_cpu", {
        "config": {"steps": a.steps, "batch": a.batch, "seq": a.seq, "threads": torch.get_num_threads()},
        "train": rows, "kv_bytes_per_token": {"ondevice-3b": kv, "dense_twin": kv_twin},
        "sync_points": {"ptmoe-1b": counted, "tensor_parallel": 2 * pt.n_layers},
        "headline": [
            {"what": "ondevice-3b KV cache per token vs its dense twin (bf16, measured on the meta device)",
             "figure": f"{1 - kv / kv_twin:.1%} less ({kv:,.0f} vs {kv_twin:,.0f} B/token)", "target": "37.5% less"},
            {"what": "ptmoe-1b synchronisation points per forward (counted with a hook) vs tensor parallelism",
             "figure": f"{counted} vs {2 * pt.n_layers} ({1 - counted / (2 * pt.n_layers):.1%} fewer)",
             "target": "87.5% fewer (D = 4)"}],
        "not_covered": ["CPU reference kernels only (no Triton, no GPU); presets' shapes, not trained weights",
                        "training throughput ('train') is recorded but not a headline: with several torch threads "
                        "on a loaded machine it measures thread contention more than the model"]},
        packages=["torch"], start=start)
    return 0


if __name__ == "__main__":
    sys.exit(main())
