"""Untrained micro models for decoding tests."""
import dataclasses

import torch

from training.models import build_model, get_preset


def micro_model(seed: int, arch: str = "tiny", init_std: float = 0.5, **over):
    """An untrained model small enough for thousands of decoding steps per second."""
    cfg = dataclasses.replace(get_preset(arch), **{"vocab_size": 512, "init_std": init_std, **over})
    torch.manual_seed(seed)
    return build_model(cfg).eval()
