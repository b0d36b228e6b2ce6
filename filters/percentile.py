"""Global top-p% threshold from a fixed-bin score histogram (mergeable, deterministic).

First pass: every document adds its score to a 10,000-bin histogram over [0, 1] (merged across
workers by adding counts). Second pass: keep scores >= the threshold, chosen as the lower edge of
the bin where the count from the top first reaches p% of the documents, so at least p% are kept
and ties inside a bin are all kept together whatever the worker count.
"""
from __future__ import annotations

import math

BINS = 10_000


def empty() -> list[int]:
    return [0] * BINS


def add(counts: list[int], score: float) -> list[int]:
    if score is None or math.isnan(score):
        return counts
    counts[min(max(int(score * BINS), 0), BINS - 1)] += 1
    return counts


def merge(parts) -> list[int]:
    out = empty()
    for p in parts:
        for i, c in enumerate(p):
            if c:
                out[i] += c
    return out


def top_percent_threshold(counts: list[int], percent: float) -> float:
    total = sum(counts)
    if total == 0:
        return 0.0
    need = math.ceil(total * percent / 100.0)
    acc = 0
    for i in range(BINS - 1, -1, -1):
        acc += counts[i]
        if acc >= need:
            return i / BINS
    return 0.0
