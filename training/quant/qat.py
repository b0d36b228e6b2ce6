"""The short training loop QAT and LoRA recovery share: AdamW, warmup + cosine, clipped gradients.

QAT trains a model prepared by ``fake_quant.prepare_qat``: the float weights at ``lr`` and the
clipping factors at ``clip_lr`` (they live on another scale: a factor near 0.5-1 per group, so
they get a larger step). LoRA recovery trains only the adapter matrices (everything else frozen).
"""
from __future__ import annotations

import time

import torch

from training.schedule import lr_at


def param_groups(model, lr: float, clip_lr: float) -> list[dict]:
    clips, rest = [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        (clips if name.endswith(".clip") else rest).append(p)
    groups = [{"params": rest, "lr": lr, "base_lr": lr}]
    if clips:
        groups.append({"params": clips, "lr": clip_lr, "base_lr": clip_lr})
    return groups


def fit(model, batches, steps: int, lr: float = 5e-4, clip_lr: float = 5e-3, warmup: int = 20,
        log=None, every: int = 50) -> dict:
    """Train ``steps`` steps on ``(inputs, targets)`` batches; returns the last loss and CPU time."""
    groups = param_groups(model, lr, clip_lr)
    opt = torch.optim.AdamW(groups, weight_decay=0.0, betas=(0.9, 0.95))
    params = [p for g in groups for p in g["params"]]
    model.train()
    t0, loss = time.process_time(), None
    for step, (x, y) in zip(range(steps), batches):
        for g in opt.param_groups:
            g["lr"] = lr_at(step, g["base_lr"], steps, warmup, "cosine", 0.1)
        out = model(x, targets=y)
        loss = out.loss + out.aux_loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        if log and (step % every == 0 or step == steps - 1):
            log(f"step {step}/{steps} loss {loss.item():.4f}")
    model.eval()
    return {"steps": steps, "last_loss": None if loss is None else loss.item(),
            "cpu_s": time.process_time() - t0}
