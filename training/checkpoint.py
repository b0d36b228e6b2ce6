"""Checkpoints: model weights in safetensors, optimiser/RNG in a weights-only torch file, the
loader state and configs in JSON. Written to a temporary directory and renamed: a checkpoint
either exists whole or not at all. Loading never unpickles code (`weights_only=True`).

Layout: RUN/checkpoints/step-00000100/{model.safetensors, trainer.pt, state.json, model_config.json}
and RUN/checkpoints/latest (the name of the newest complete one).
"""
from __future__ import annotations

import dataclasses
import json
import os
import shutil
import uuid
from typing import Any

import torch
from safetensors.torch import load_file, save_file, save_model

from corpus.errors import CidermillError
from training.models import build_model, config_from_dict

MODEL_FILE = "model.safetensors"
TRAINER_FILE = "trainer.pt"
STATE_FILE = "state.json"
CONFIG_FILE = "model_config.json"


def ckpt_root(run_dir: str) -> str:
    return os.path.join(run_dir, "checkpoints")


def save_model_weights(model: torch.nn.Module, directory: str) -> None:
    os.makedirs(directory, exist_ok=True)
    save_model(model, os.path.join(directory, MODEL_FILE))
    with open(os.path.join(directory, CONFIG_FILE), "w") as f:
        json.dump(model.config.to_dict(), f, indent=1)


def save_checkpoint(run_dir: str, step: int, model_state: dict[str, torch.Tensor], model_config: dict,
                    optimizer_states: list[dict], loader_state: dict, extra: dict, keep: int = 2) -> str:
    """`optimizer_states`: one per rank (a single entry without distributed training)."""
    root = ckpt_root(run_dir)
    os.makedirs(root, exist_ok=True)
    name = f"step-{step:08d}"
    final = os.path.join(root, name)
    tmp = os.path.join(root, f".{name}.tmp-{uuid.uuid4().hex[:8]}")
    os.makedirs(tmp)
    save_file({k: v.contiguous() for k, v in model_state.items()}, os.path.join(tmp, MODEL_FILE))
    with open(os.path.join(tmp, CONFIG_FILE), "w") as f:
        json.dump(model_config, f, indent=1)
    torch.save({"optimizer_per_rank": optimizer_states, "torch_rng": torch.get_rng_state(),
                "cuda_rng": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else []},
               os.path.join(tmp, TRAINER_FILE))
    with open(os.path.join(tmp, STATE_FILE), "w") as f:
        json.dump({"step": step, "loader": loader_state, **extra}, f, indent=1)
    if os.path.exists(final):
        shutil.rmtree(final)
    os.replace(tmp, final)
    latest_tmp = os.path.join(root, f".latest.tmp-{uuid.uuid4().hex[:8]}")
    with open(latest_tmp, "w") as f:
        f.write(name)
    os.replace(latest_tmp, os.path.join(root, "latest"))
    olds = sorted(d for d in os.listdir(root) if d.startswith("step-"))
    for d in olds[:-keep]:
        shutil.rmtree(os.path.join(root, d), ignore_errors=True)
    return final


def latest_checkpoint(run_dir: str) -> str | None:
    p = os.path.join(ckpt_root(run_dir), "latest")
    if not os.path.exists(p):
        return None
    name = open(p).read().strip()
    d = os.path.join(ckpt_root(run_dir), name)
    return d if os.path.isdir(d) else None


def checkpoint_dir(path: str) -> str:
    """A checkpoint step directory as given, or a training run directory's newest checkpoint."""
    if not os.path.exists(path):
        raise CidermillError(f"{path}: no such checkpoint")
    if os.path.exists(os.path.join(path, CONFIG_FILE)):
        return path
    latest = latest_checkpoint(path)
    if latest is None:
        raise CidermillError(f"{path}: not a checkpoint (no {CONFIG_FILE}) nor a run directory with checkpoints")
    return latest


def read_model_config(ckpt_dir: str) -> dict:
    p = os.path.join(ckpt_dir, CONFIG_FILE)
    if not os.path.exists(p):
        raise CidermillError(f"{ckpt_dir}: not a cidermill checkpoint (no {CONFIG_FILE})")
    with open(p) as f:
        return json.load(f)


def describe(cfg: dict) -> str:
    keys = ("arch", "name", "vocab_size", "d_model", "n_layers", "n_heads", "n_kv_heads", "n_experts", "n_tracks")
    return ", ".join(f"{k}={cfg.get(k)}" for k in keys if k in cfg)


# what a continued-training stage may change on top of its starting checkpoint: the same weights
# read with a longer context and another RoPE base (context extension)
CONTEXT_FIELDS = ("max_seq_len", "rope_theta")


def check_compatible(ckpt_dir: str, model, context_change_ok: bool = False) -> None:
    """Refuse a checkpoint from a different architecture with a message, not a shape traceback."""
    saved = read_model_config(ckpt_dir)
    want = model.config.to_dict()
    free = ("kernels", "name") + (CONTEXT_FIELDS if context_change_ok else ())
    diff = [k for k in want if k not in free and saved.get(k) != want[k]]
    if diff:
        raise CidermillError(
            f"{ckpt_dir}: checkpoint is for a different model ({describe(saved)}); this run builds "
            f"({describe(want)}); differing fields: {', '.join(diff[:6])}")


def load_model_weights(ckpt_dir: str, model, context_change_ok: bool = False) -> None:
    """Load weights; a model holding a subset of PT-MoE tracks takes just its own tracks.
    ``context_change_ok``: the model may differ in CONTEXT_FIELDS (a stage starting from the last)."""
    check_compatible(ckpt_dir, model, context_change_ok)
    try:
        saved = load_file(os.path.join(ckpt_dir, MODEL_FILE), device=str(next(model.parameters()).device))
        own = model.state_dict()
        missing = sorted(set(own) - set(saved))
        if missing:
            raise ValueError(f"missing tensors {missing[:3]}")
        model.load_state_dict({k: saved[k] for k in own}, strict=True)
    except (OSError, RuntimeError, ValueError) as e:
        raise CidermillError(f"{ckpt_dir}/{MODEL_FILE}: cannot load weights ({str(e).splitlines()[0]})") from None


def load_trainer_state(ckpt_dir: str) -> tuple[dict, dict[str, Any]]:
    trainer = torch.load(os.path.join(ckpt_dir, TRAINER_FILE), map_location="cpu", weights_only=True)
    with open(os.path.join(ckpt_dir, STATE_FILE)) as f:
        state = json.load(f)
    return trainer, state


def load_model_from_checkpoint(ckpt_dir: str, device: str = "cpu", **overrides):
    """Build the model a checkpoint describes and load its weights (e.g. a distillation teacher)."""
    cfg = config_from_dict(read_model_config(ckpt_dir))
    if overrides:
        cfg = dataclasses.replace(cfg, **overrides)
    model = build_model(cfg).to(device)
    load_model_weights(ckpt_dir, model)
    return model
