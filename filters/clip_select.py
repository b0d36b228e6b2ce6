"""Which pairs a CLIP score keeps: a fixed cosine threshold, or the top p% of all candidates
(DataComp's "CLIP score top 30%"), decided globally so the result does not depend on sharding.

Ties at the cut are all kept; NaN scores (undecodable images) are never kept.

`cutoff` needs every score in one list. The exact same cut without a gather, in two mergeable
passes (pipelines/images_pipeline.py runs them as Beam combines): (1) counts per coarse bin (the
top 16 bits of an order-preserving 64-bit key of the score) find the bin that holds the k-th best
score and how many scores lie above it; (2) counts per distinct score inside that one bin give the
k-th best score itself. Both accumulators are small dicts whatever the number of pairs.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Iterable

from corpus.errors import ConfigError
from filters.float_order import order_key

R_LOW_CLIP = "clip_low_score"


# LAION-400M's cut for OpenAI ViT-B-32; used when a checkpoint carries no calibrated threshold.
FALLBACK_THRESHOLD = 0.28


@dataclass(frozen=True)
class ClipSelectConfig:
    threshold: float | str | None = "auto"  # cosine cut; "auto": the checkpoint's calibrated cut; None: none
    top_percent: float | None = None        # keep the best p% of candidates (applied after the threshold)

    def __post_init__(self) -> None:
        if isinstance(self.threshold, str) and self.threshold != "auto":
            raise ConfigError(f"--clip-threshold must be a number or 'auto', got {self.threshold!r}")
        if self.top_percent is not None and not 0 < self.top_percent <= 100:
            raise ConfigError(f"--clip-top-percent must be in (0, 100], got {self.top_percent}")

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def resolve_threshold(cfg: ClipSelectConfig, calibrated: float | None) -> ClipSelectConfig:
    """Replace "auto" by the checkpoint's calibrated cut (or FALLBACK_THRESHOLD)."""
    if cfg.threshold != "auto":
        return cfg
    return ClipSelectConfig(calibrated if calibrated is not None else FALLBACK_THRESHOLD, cfg.top_percent)


def cutoff(scores: Iterable[float], cfg: ClipSelectConfig) -> float:
    """The smallest score that is kept (-inf keeps everything that is not NaN)."""
    cut = base_cut(cfg)
    if cfg.top_percent is not None:
        vals = sorted((s for s in scores if s is not None and not math.isnan(s) and s >= cut), reverse=True)
        if vals:
            k = max(1, math.ceil(len(vals) * cfg.top_percent / 100.0))
            cut = max(cut, vals[k - 1])
    return cut


COARSE_SHIFT = 48


def coarse_bin(x: float) -> int:
    return order_key(x) >> COARSE_SHIFT


def base_cut(cfg: ClipSelectConfig) -> float:
    if cfg.threshold == "auto":
        raise ValueError("resolve_threshold() first")
    return -math.inf if cfg.threshold is None else float(cfg.threshold)


def top_candidate(score: float | None, cfg: ClipSelectConfig) -> bool:
    """Whether a score takes part in the top-p ranking (finite and at or above the threshold)."""
    return score is not None and not math.isnan(score) and score >= base_cut(cfg)


def merge_counts(dicts: Iterable[dict]) -> dict:
    out: dict = {}
    for d in dicts:
        for k, v in d.items():
            out[k] = out.get(k, 0) + v
    return out


def locate_rank(coarse: dict[int, int], cfg: ClipSelectConfig) -> tuple[int, int] | None:
    """From pass 1 (coarse bin -> count of candidates): (bin holding the k-th best score, rank of
    that score inside the bin, 1 = its best); None when nothing needs ranking."""
    n = sum(coarse.values())
    if cfg.top_percent is None or n == 0:
        return None
    k = max(1, math.ceil(n * cfg.top_percent / 100.0))
    above = 0
    for b in sorted(coarse, reverse=True):
        if above + coarse[b] >= k:
            return b, k - above
        above += coarse[b]
    raise AssertionError("unreachable: k <= n")


def cut_from_bin(fine: dict[float, int], rank: int, cfg: ClipSelectConfig) -> float:
    """From pass 2 (score -> count inside the located bin): the cut, equal to `cutoff`'s."""
    seen = 0
    for v in sorted(fine, reverse=True):
        seen += fine[v]
        if seen >= rank:
            return max(base_cut(cfg), v)
    raise ValueError("pass-2 counts do not reach the located rank")


def clip_reason(score: float | None, cut: float) -> str | None:
    if score is None or math.isnan(score) or score < cut:
        return R_LOW_CLIP
    return None


__all__ = ["ClipSelectConfig", "cutoff", "order_key", "coarse_bin", "top_candidate", "merge_counts", "locate_rank",
           "cut_from_bin", "base_cut", "resolve_threshold", "FALLBACK_THRESHOLD", "clip_reason", "R_LOW_CLIP"]
