"""Which base model an adapter belongs to: the preset name plus hashes of the config and weights.

A LoRA adapter is saved in peft's format beside ``cidermill_base.json`` holding this fingerprint;
loading it onto any other base is refused (same shapes are not the same model).
"""
from __future__ import annotations

import hashlib
import json

import torch

BASE_FILE = "cidermill_base.json"


def config_sha256(cfg) -> str:
    d = {k: v for k, v in cfg.to_dict().items() if k != "kernels"}
    return hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()


def base_state(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """The base weights as the model holds them: LoRA tensors skipped, peft's ``.base_layer.``
    wrapping removed from names, so a model with adapters injected looks like its base."""
    return {name.replace(".base_layer.", "."): t for name, t in model.state_dict().items() if "lora_" not in name}


@torch.no_grad()
def weights_sha256(model: torch.nn.Module) -> str:
    """sha256 over the base weights (``base_state``) by sorted name, as float32 bytes."""
    h = hashlib.sha256()
    for name, t in sorted(base_state(model).items()):
        h.update(name.encode())
        h.update(t.detach().float().contiguous().cpu().numpy().tobytes())
    return h.hexdigest()


def base_fingerprint(model) -> dict:
    return {"preset": model.config.name, "config_sha256": config_sha256(model.config),
            "weights_sha256": weights_sha256(model)}
