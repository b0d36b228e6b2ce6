"""``build_model(cfg)``: the one constructor every caller uses (picks the class from ``cfg.arch``)."""
from __future__ import annotations

from training.models.base import LanguageModel
from training.models.config import ModelConfig
from training.models.dense import DenseTransformer
from training.models.ondevice import OnDeviceTransformer
from training.models.ptmoe import PTMoETransformer


def build_model(cfg: ModelConfig, **kwargs) -> LanguageModel:
    """Build the model for ``cfg``; ``model.config is cfg``.

    PT-MoE only: ``local_tracks=(...)`` and ``group=ProcessGroup`` build a track-parallel shard.
    Build under ``with torch.device("meta"):`` to count parameters without allocating them.
    """
    classes = {"dense": DenseTransformer, "ondevice": OnDeviceTransformer, "ptmoe": PTMoETransformer}
    if kwargs and cfg.arch != "ptmoe":
        raise ValueError(f"arch {cfg.arch!r} takes no build options, got {sorted(kwargs)}")
    return classes[cfg.arch](cfg, **kwargs)
