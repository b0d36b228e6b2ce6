"""The GRPO-style objective: group-relative advantages, a clipped importance ratio, and a KL
penalty to the frozen SFT model. Each term is written once, here.

For one prompt the actor samples a group of n completions and scores them r_1..r_n.

- **Advantage** ``A_i = (r_i - mean(r)) / (std(r) + eps)``: how much better completion i did
  than its siblings. No value network: the group is its own baseline. When every reward in a
  group is equal (the prompt is always or never solved) every advantage is exactly 0 and the
  group teaches nothing, which is what reward-variance prompt selection avoids.
- **Clipped ratio** ``rho_t = pi(y_t | ...) / pi_old(y_t | ...)`` per completion token, where
  ``pi_old`` is the policy version that sampled the completion (its log-probs travel with the
  sample). The surrogate ``min(rho A, clip(rho, 1-eps, 1+eps) A)`` is PPO's: it importance-corrects
  samples from an older policy (asynchronous actors) and stops one batch from moving the policy
  far from the one that sampled it.
- **KL to the SFT model** ``k3 = exp(q - p) - (q - p) - 1`` with ``p = log pi``, ``q = log pi_ref``:
  a non-negative, unbiased per-token estimate of KL(pi || pi_ref) that keeps the policy near
  the SFT model, weighted by ``beta``.

The loss is the mean over completion tokens of ``-surrogate + beta * k3``.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F


def group_advantages(rewards: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """``rewards [groups, n]`` -> advantages of the same shape (zero for a constant group)."""
    centred = rewards - rewards.mean(dim=1, keepdim=True)
    return centred / (rewards.std(dim=1, keepdim=True, unbiased=False) + eps)


def token_logprobs(model, ids: torch.Tensor) -> torch.Tensor:
    """``ids [B, T]`` -> log-prob of each next token ``[B, T-1]`` under ``model``."""
    logits = model(ids[:, :-1]).logits
    return torch.gather(F.log_softmax(logits.float(), dim=-1), 2, ids[:, 1:, None]).squeeze(2)


def grpo_loss(logp: torch.Tensor, old_logp: torch.Tensor, ref_logp: torch.Tensor, advantages: torch.Tensor,
              mask: torch.Tensor, clip_eps: float = 0.2, kl_beta: float = 0.05) -> tuple[torch.Tensor, dict]:
    """All log-prob tensors ``[B, T-1]`` over the sequence's next tokens; ``advantages [B]``;
    ``mask [B, T-1]`` True on completion tokens."""
    ratio = torch.exp(logp - old_logp)
    A = advantages[:, None]
    surrogate = torch.minimum(ratio * A, ratio.clamp(1 - clip_eps, 1 + clip_eps) * A)
    d = ref_logp - logp
    kl = torch.exp(d) - d - 1
    m = mask.float()
    n = m.sum().clamp_min(1)
    loss = ((-surrogate + kl_beta * kl) * m).sum() / n
    with torch.no_grad():
        stats = {"kl": float((kl * m).sum() / n), "ratio": float((ratio * m).sum() / n),
                 "clipped": float((((ratio - 1).abs() > clip_eps).float() * m).sum() / n)}
    return loss, stats
