"""Distillation loss: alpha * tau^2 * KL(teacher || student at temperature tau) + (1 - alpha) * CE.

With `top_k > 0` only the teacher's k largest logits per position are kept (renormalised over
those k), which is what a teacher-logit cache would store; the student is scored on the same ids.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F


def distill_loss(student_logits: torch.Tensor, teacher_logits: torch.Tensor, targets: torch.Tensor,
                 alpha: float, temperature: float, top_k: int = 0, ignore_index: int = -100
                 ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Returns (total, kl, ce); logits [B, T, V], targets [B, T]."""
    V = student_logits.shape[-1]
    if teacher_logits.shape[-1] != V:
        raise ValueError(f"teacher vocabulary {teacher_logits.shape[-1]} != student vocabulary {V}")
    s = student_logits.reshape(-1, V).float()
    t = teacher_logits.reshape(-1, V).float()
    tgt = targets.reshape(-1)
    mask = tgt != ignore_index
    ce = F.cross_entropy(s, tgt, ignore_index=ignore_index)
    s_logp = F.log_softmax(s / temperature, dim=-1)
    if top_k and top_k < V:
        tv, ti = t.topk(top_k, dim=-1)
        t_logp = F.log_softmax(tv / temperature, dim=-1)
        s_sel = s_logp.gather(-1, ti)
        kl_tok = (t_logp.exp() * (t_logp - s_sel)).sum(-1)
    else:
        t_logp = F.log_softmax(t / temperature, dim=-1)
        kl_tok = (t_logp.exp() * (t_logp - s_logp)).sum(-1)
    kl = (kl_tok * mask).sum() / mask.sum().clamp_min(1) * temperature ** 2
    return alpha * kl + (1 - alpha) * ce, kl, ce
