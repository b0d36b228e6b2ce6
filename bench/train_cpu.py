"""Training throughput and peak memory on CPU for `tiny` and `ptmoe-small` (reference kernels).

Prints tokens/s of full training steps (forward + backward + AdamW) and the process's peak RSS.
On a CUDA machine `--device cuda` also prints MFU for ptmoe-1b vs a dense model of equal active
parameters (6 * active params * tokens/s over the GPU's bf16 peak, --peak-tflops).
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import resource
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def bench(preset: str, seq: int, batch: int, steps: int, device: str, dtype=None, **over) -> dict:
    from training.models import build_model, get_preset
    cfg = dataclasses.replace(get_preset(preset), kernels="auto", **over)
    torch.manual_seed(0)
    model = build_model(cfg).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=False)
    ids = torch.randint(0, cfg.vocab_size, (batch, seq + 1), device=device)
    ctx = torch.autocast("cuda", dtype=torch.bfloat16) if device == "cuda" else torch.autocast("cpu", enabled=False)

    def step():
        with ctx:
            out = model(ids[:, :-1], targets=ids[:, 1:])
            loss = out.loss + out.aux_loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    step()
    if device == "cuda":
        torch.cuda.synchronize()
    t = time.time()
    for _ in range(steps):
        step()
    if device == "cuda":
        torch.cuda.synchronize()
    dt = time.time() - t
    return {"preset": preset, "params": model.num_parameters(), "active": model.num_parameters(active=True),
            "tokens_per_s": steps * batch * seq / dt, "step_s": dt / steps}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--peak-tflops", type=float, default=989.0, help="GPU bf16 dense peak (H100/H200 SXM: 989)")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    if a.device == "cpu":
        from bench.results import save_result, start_conditions
        start, rows = start_conditions(), []
        for preset, seq, batch in (("tiny", 256, 8), ("ptmoe-small", 256, 8)):
            r = bench(preset, seq, batch, a.steps, "cpu")
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            rows.append({**r, "seq": seq, "batch": batch, "threads": a.threads, "peak_rss_mb": round(rss)})
            print(f"{preset:<12} {r['params'] / 1e6:6.2f}M params ({r['active'] / 1e6:.2f}M active)  "
                  f"{r['tokens_per_s']:8.0f} tokens/s fwd+bwd+AdamW on {a.threads} CPU threads  "
                  f"(seq {seq}, batch {batch}); peak RSS so far {rss:.0f} MB")
        path = save_result("train_cpu", {
            "rows": rows,
            "headline": [{"what": f"{r['preset']} training, fwd+bwd+AdamW, seq {r['seq']} x batch {r['batch']}, "
                                  f"{r['threads']} CPU thread(s), reference kernels",
                          "figure": f"{r['tokens_per_s']:,.0f} tokens/s (peak RSS {r['peak_rss_mb']} MB)",
                          "target": "-"} for r in rows],
            "not_covered": ["CPU reference kernels only (no Triton, no GPU); random tokens, not real data; "
                            "wall time, so a loaded machine lowers the figure"]},
            packages=["torch"], start=start)
        print(f"wrote {path}")
        return
    if not torch.cuda.is_available():
        print("no CUDA device: run with --device cpu")
        return
    moe = bench("ptmoe-1b", 2048, 8, a.steps, "cuda", max_seq_len=2048)
    from training.models import get_preset
    p = get_preset("ptmoe-1b")
    # dense twin with about the same active parameters: same width, more layers
    dense_layers = max(4, round(moe["active"] / moe["params"] * p.n_layers * p.n_tracks))
    dense = bench("dense-3b", 2048, 8, a.steps, "cuda", d_model=1024, n_layers=dense_layers, n_heads=8,
                  head_dim=128, ffn_hidden=4096, max_seq_len=2048)
    for r in (moe, dense):
        mfu = 6 * r["active"] * r["tokens_per_s"] / (a.peak_tflops * 1e12)
        print(f"{r['preset']:<10} active {r['active'] / 1e9:.2f}B  {r['tokens_per_s']:,.0f} tokens/s  MFU {mfu:.1%}")


if __name__ == "__main__":
    main()
