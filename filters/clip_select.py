"""Which pairs a CLIP score keeps: a fixed cosine threshold, or the top p% of all candidates
(DataComp's "CLIP score top 30%"), decided globally so the result does not depend on sharding.

Ties at the cut are all kept; NaN scores (undecodable images) are never kept.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Iterable

from corpus.errors import ConfigError

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
    if cfg.threshold == "auto":
        raise ValueError("resolve_threshold() first")
    cut = -math.inf if cfg.threshold is None else float(cfg.threshold)
    if cfg.top_percent is not None:
        vals = sorted((s for s in scores if s is not None and not math.isnan(s) and s >= cut), reverse=True)
        if vals:
            k = max(1, math.ceil(len(vals) * cfg.top_percent / 100.0))
            cut = max(cut, vals[k - 1])
    return cut


def clip_reason(score: float | None, cut: float) -> str | None:
    if score is None or math.isnan(score) or score < cut:
        return R_LOW_CLIP
    return None


__all__ = ["ClipSelectConfig", "cutoff", "resolve_threshold", "FALLBACK_THRESHOLD", "clip_reason", "R_LOW_CLIP"]
