"""Supervised fine-tuning on chat conversations: a small loop of its own (packing, assistant-only
loss, AdamW), checkpointed through training/checkpoint.py so a resumed run is exact.

Batch ``k`` is a pure function of (seed, k): conversations are shuffled once per epoch with a
seeded permutation and taken ``batch`` at a time, so a resumed run sees the batches the
uninterrupted run would have seen. A step whose loss or gradient is not finite is skipped (no
update, the optimiser state untouched) and recorded in the checkpoint state and the log.
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass
from typing import Callable

import torch

from training.checkpoint import latest_checkpoint, load_model_weights, load_trainer_state, save_checkpoint
from training.posttrain.chat import Encoded
from training.posttrain.packing import PackedBatch, pack
from training.schedule import lr_at

LOG_FILE = "posttrain_log.jsonl"


@dataclass
class SFTConfig:
    steps: int = 100
    batch: int = 8             # conversations per step
    seq_len: int = 256
    lr: float = 3e-4
    weight_decay: float = 0.0
    grad_clip: float = 1.0
    seed: int = 0
    checkpoint_every: int = 50
    decay: str = "constant"    # or "cosine" (to 10% of lr, after a 5% warmup): a function of the step,
                               # so resume stays exact


def batch_at(convs: list[Encoded], cfg: SFTConfig, step: int, pad_id: int) -> PackedBatch:
    n = len(convs)
    picked = []
    for k in range(step * cfg.batch, (step + 1) * cfg.batch):
        epoch, at = divmod(k, n)
        g = torch.Generator().manual_seed(cfg.seed * 1_000_003 + epoch)
        picked.append(convs[int(torch.randperm(n, generator=g)[at])])
    return pack(picked, cfg.seq_len, pad_id)


def append_log(run_dir: str, rec: dict) -> None:
    with open(os.path.join(run_dir, LOG_FILE), "a", encoding="utf-8") as f:
        f.write(json.dumps(rec) + "\n")


def trim_log(run_dir: str, step: int) -> None:
    """Drop log lines of steps at or after ``step`` (written after the checkpoint a run resumes from)."""
    path = os.path.join(run_dir, LOG_FILE)
    if not os.path.exists(path):
        return
    lines = [ln for ln in open(path, encoding="utf-8") if ln.strip() and json.loads(ln).get("step", -1) < step]
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.writelines(lines)
    os.replace(path + ".tmp", path)


def resume(run_dir: str, model, opt) -> tuple[int, dict]:
    """Load the newest checkpoint of ``run_dir`` into model and optimiser: (next step, saved state)."""
    ck = latest_checkpoint(run_dir)
    if ck is None:
        return 0, {}
    load_model_weights(ck, model)
    trainer, state = load_trainer_state(ck)
    opt.load_state_dict(trainer["optimizer_per_rank"][0])
    torch.set_rng_state(trainer["torch_rng"])
    trim_log(run_dir, state["step"])
    return state["step"], state


def finite_step(model, opt, loss: torch.Tensor, grad_clip: float) -> bool:
    """Backward and update unless the loss or the gradient norm is not finite (then no update)."""
    if not torch.isfinite(loss):
        opt.zero_grad(set_to_none=True)
        return False
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip if grad_clip > 0 else math.inf)
    if not torch.isfinite(norm):
        opt.zero_grad(set_to_none=True)
        return False
    opt.step()
    opt.zero_grad(set_to_none=True)
    return True


def run_sft(model, convs: list[Encoded], cfg: SFTConfig, run_dir: str, pad_id: int,
            stop_after: int | None = None, log: Callable[[str], None] | None = None) -> dict:
    """Train to ``cfg.steps`` (resuming from ``run_dir``'s newest checkpoint); ``stop_after`` ends
    the call early after that many steps (what an interrupted run looks like, for tests)."""
    if not convs:
        raise ValueError("no conversations to train on")
    if cfg.decay not in ("constant", "cosine", "linear"):
        raise ValueError(f"unknown decay {cfg.decay!r} (constant, cosine, linear)")
    os.makedirs(run_dir, exist_ok=True)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay, foreach=False)
    step, state = resume(run_dir, model, opt)
    skipped = list(state.get("nan_steps", []))
    model.train()
    done = 0
    while step < cfg.steps and (stop_after is None or done < stop_after):
        for group in opt.param_groups:
            group["lr"] = lr_at(step, cfg.lr, cfg.steps, 0 if cfg.decay == "constant" else cfg.steps // 20, cfg.decay, 0.1)
        b = batch_at(convs, cfg, step, pad_id)
        loss = model(b.input_ids, targets=b.targets, doc_ids=b.doc_ids).loss
        ok = finite_step(model, opt, loss, cfg.grad_clip)
        if not ok:
            skipped.append(step)
        append_log(run_dir, {"stage": "sft", "step": step, "loss": float(loss.detach()) if ok else None,
                             "skipped": None if ok else "non_finite_loss"})
        if log and (step % 10 == 0 or not ok):
            log(f"sft step {step}: loss {float(loss.detach()):.4f}" + ("" if ok else " (skipped: not finite)"))
        step += 1
        done += 1
        if step % cfg.checkpoint_every == 0 or step == cfg.steps:
            save_checkpoint(run_dir, step, model.state_dict(), model.config.to_dict(), [opt.state_dict()],
                            {"step": step}, {"stage": "sft", "nan_steps": skipped, "config": asdict(cfg)})
    return {"step": step, "nan_steps": skipped}
