"""Size figures of a vision preset without allocating it (meta device): parameters, tokens per image."""
from __future__ import annotations

import torch

from training.vision.config import VisionConfig
from training.vision.encoder import VisionEncoder


def describe_vision(cfg: VisionConfig, adapter_tokens: int = 16) -> dict:
    with torch.device("meta"):
        params = VisionEncoder(cfg).num_parameters()
    kind = "plain ViT" if cfg.n_windows == 1 else ("ViTDet + Register-Window" if cfg.registers else
                                                   "ViTDet" if cfg.full_global else "ViTDet, isolated windows")
    return {"preset": cfg.name, "arch": "vision", "kind": kind, "params_total": params,
            "patch_tokens": cfg.patch_tokens, "register_tokens": cfg.n_windows * cfg.registers,
            "tokens_per_image": cfg.tokens_per_image, "windows": cfg.n_windows,
            "lm_tokens_per_image": adapter_tokens, "config": cfg.to_dict()}
