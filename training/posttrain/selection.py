"""Reward-variance prompt selection: keep the prompts whose sampled completions disagree most.

A prompt the policy always solves or never solves gives every completion the same reward, so
every group-relative advantage is zero and its gradient is nothing but the KL term. Sampling a
few completions per candidate with the current policy and keeping the highest reward variance
spends the RL budget where the policy is uncertain. The selection goes stale as the policy
learns, so the RL loop refreshes it every K steps.
"""
from __future__ import annotations

import torch


def reward_variance(rewards: list[list[float]]) -> list[float]:
    return [float(torch.tensor(r, dtype=torch.float64).var(unbiased=False)) if r else 0.0 for r in rewards]


def select_by_variance(candidates: list[int], rewards: list[list[float]], keep: int) -> list[int]:
    """The ``keep`` candidates with the highest reward variance (ties: earlier candidate first)."""
    var = reward_variance(rewards)
    order = sorted(range(len(candidates)), key=lambda i: (-var[i], i))
    return [candidates[i] for i in order[:keep]]


def select_random(candidates: list[int], keep: int, seed: int) -> list[int]:
    g = torch.Generator().manual_seed(seed)
    return [candidates[int(i)] for i in torch.randperm(len(candidates), generator=g)[:keep]]
