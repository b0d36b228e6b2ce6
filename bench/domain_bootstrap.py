"""How sure a mean page score is when pages come in sites: a bootstrap that resamples whole domains.

Pages of one site share a template, so they fail or succeed together: wcxb-dev's held-out part has
10 product pages from one shop and 11 collection pages from another. Resampling pages as if they
were independent would give intervals that are too narrow; resampling domains (each draw takes all
of a domain's pages) keeps that dependence. Used by bench/extract_f1.py for every mean it prints and
for the paired difference between two extractors on the same pages.
"""
from __future__ import annotations

import numpy as np

ROUNDS = 2000
SEED = 0


def domain_ci(scores, domains, rounds: int = ROUNDS, seed: int = SEED, level: float = 0.95) -> tuple[float, float]:
    """The `level` interval of the page-averaged mean of `scores` over `rounds` draws of domains
    with replacement (percentile bootstrap, fixed seed). One domain: (mean, mean)."""
    scores = np.asarray(scores, dtype=np.float64)
    names, index = np.unique(np.asarray(domains, dtype=object).astype(str), return_inverse=True)
    sums = np.bincount(index, scores, minlength=len(names))
    counts = np.bincount(index, minlength=len(names)).astype(np.float64)
    if len(names) < 2:
        m = float(scores.mean()) if len(scores) else float("nan")
        return m, m
    draw = np.random.default_rng(seed).integers(0, len(names), size=(rounds, len(names)))
    means = sums[draw].sum(axis=1) / counts[draw].sum(axis=1)
    tail = (1 - level) / 2 * 100
    lo, hi = np.percentile(means, [tail, 100 - tail])
    return float(lo), float(hi)


def domain_mean(scores, domains) -> float:
    """The mean over domains of each domain's mean page score: every site counts once."""
    per: dict[str, list[float]] = {}
    for s, d in zip(scores, domains):
        per.setdefault(str(d), []).append(float(s))
    return float(np.mean([np.mean(v) for v in per.values()])) if per else float("nan")
