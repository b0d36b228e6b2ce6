"""Size figures of a config without allocating it: parameters (built on the meta device), KV cache
bytes per token, synchronisation points per forward. Used by ``cidermill model info`` and bench/."""
from __future__ import annotations

import dataclasses

import torch

from training.models.config import ModelConfig
from training.models.registry import build_model


def _meta_model(cfg: ModelConfig):
    with torch.device("meta"):
        return build_model(cfg)


def kv_bytes(cfg: ModelConfig, dtype_bytes: int = 2, int8: bool = False, model=None) -> dict:
    """KV cache bytes for one sequence, from the layers that keep a cache (``cache_specs``).

    ``per_token``: bytes every token of context adds (layers with a full cache);
    ``fixed``: bytes of the sliding-window ring buffers (``window`` slots each, at full context).
    int8: 1 byte per value plus one float32 scale per head vector.
    """
    specs = (model or _meta_model(cfg)).cache_specs()
    per_vec = (cfg.attn_head_dim + 4) if int8 else cfg.attn_head_dim * dtype_bytes
    per_layer_token = 2 * cfg.n_kv_heads * per_vec  # keys and values
    full = sum(1 for w in specs.values() if w is None)
    windows = [min(w, cfg.max_seq_len) for w in specs.values() if w is not None]
    return {"per_token": full * per_layer_token,
            "fixed": sum(windows) * per_layer_token,
            "layers_with_cache": len(specs),
            "layers_full": full,
            "layers_window": len(windows)}


def dense_twin(cfg: ModelConfig) -> ModelConfig:
    """The same shape as a plain dense model (every layer owns its K/V): the KV baseline."""
    return dataclasses.replace(cfg, arch="dense", name=f"{cfg.name}-dense-twin", block1_layers=0)


def describe(cfg: ModelConfig) -> dict:
    model = _meta_model(cfg)
    total, active = model.num_parameters(), model.num_parameters(active=True)
    info = {"preset": cfg.name, "arch": cfg.arch, "params_total": total, "params_active": active,
            "kv_bf16": kv_bytes(cfg, model=model), "kv_int8": kv_bytes(cfg, int8=True, model=model),
            "sync_points": cfg.sync_points, "tensor_parallel_sync_points": 2 * cfg.n_layers,
            "config": cfg.to_dict()}
    if cfg.arch == "ondevice":
        info["kv_bf16_dense_twin"] = kv_bytes(dense_twin(cfg))
    return info
