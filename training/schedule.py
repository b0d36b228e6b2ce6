"""Learning-rate schedule: linear warmup, then cosine or linear decay to min_lr_ratio * lr."""
from __future__ import annotations

import math


def lr_at(step: int, base_lr: float, total: int, warmup: int, decay: str, min_ratio: float) -> float:
    if warmup and step < warmup:
        return base_lr * (step + 1) / warmup
    if decay == "constant" or total <= warmup:
        return base_lr
    frac = min(1.0, (step - warmup) / max(1, total - warmup))
    if decay == "cosine":
        mult = min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * frac))
    else:
        mult = 1 - (1 - min_ratio) * frac
    return base_lr * mult
