"""open_clip models for cidermill: the small registered config, building, saving and loading.

No pretrained weights can be downloaded here, so every model starts from `pretrained=None`.
`cidermill-tiny-clip` (cidermill-tiny-clip.json beside this file) is small enough to train a few hundred steps on a CPU in minutes.
Any other open_clip architecture works the same way given a local checkpoint:

    load_clip("ViT-B-32", "/path/open_clip_vit_b_32.safetensors")   # or a .pt/.bin state dict

Our checkpoints are safetensors with the architecture in the metadata (`model_name`, `model_cfg`),
so they load without naming the model. Other files load with torch.load(weights_only=True) through
open_clip's own `load_checkpoint` (which also converts OpenAI / timm / big_vision layouts).
"""
from __future__ import annotations

import json
import logging
import os
import tempfile
import threading
from typing import Any

import torch
from safetensors import safe_open
from safetensors.torch import save_file

from corpus.errors import ConfigError
from training.clip.vision_tower import attach
from training.vision.config import vision_config_from_dict

CONFIG_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cidermill-tiny-clip.json")
DEFAULT_MODEL = "cidermill-tiny-clip"
CHECKPOINT_FORMAT = "cidermill.clip/1"
_LOCK = threading.Lock()
_REGISTERED = False


def register_configs() -> None:
    """Register cidermill's model configs with open_clip (idempotent, thread-safe)."""
    global _REGISTERED
    with _LOCK:
        if not _REGISTERED:
            import open_clip  # noqa: PLC0415  (lazy: seconds to import)

            open_clip.add_model_config(CONFIG_FILE)
            _REGISTERED = True


def register_config(name: str, cfg: dict[str, Any]) -> None:
    """Register one architecture from a dict (a checkpoint's embedded config) under `name`."""
    import open_clip  # noqa: PLC0415  (lazy: seconds to import)

    register_configs()
    if open_clip.get_model_config(name) == cfg:
        return
    d = tempfile.mkdtemp(prefix="cidermill-clipcfg-")
    with open(os.path.join(d, f"{name}.json"), "w") as f:
        json.dump(cfg, f)
    with _LOCK:
        open_clip.add_model_config(d)


def model_config(name: str) -> dict[str, Any]:
    import open_clip  # noqa: PLC0415  (lazy: seconds to import)

    register_configs()
    cfg = open_clip.get_model_config(name)
    if cfg is None:
        raise ConfigError(f"unknown open_clip model {name!r}; known: {', '.join(open_clip.list_models()[:12])}, ...")
    return cfg


def build(name: str = DEFAULT_MODEL, device: str = "cpu"):
    """(model, preprocess, tokenizer) with random weights; preprocess is open_clip's eval transform."""
    import open_clip  # noqa: PLC0415  (lazy: seconds to import)

    model_config(name)
    logging.getLogger().setLevel(max(logging.getLogger().level, logging.ERROR))  # "no pretrained weights"
    model, _, preprocess = open_clip.create_model_and_transforms(name, pretrained=None, device=device)
    tokenizer = open_clip.get_tokenizer(name)
    return model, preprocess, tokenizer


def read_metadata(path: str) -> dict[str, str]:
    """The safetensors metadata of a checkpoint ({} for other formats)."""
    if not str(path).endswith(".safetensors"):
        return {}

    try:
        with safe_open(path, framework="pt") as f:
            return dict(f.metadata() or {})
    except Exception as e:  # noqa: BLE001  (safetensors raises its own error types on bad files)
        raise ConfigError(f"{path}: not a readable safetensors checkpoint ({e})") from None


def checkpoint_threshold(path: str | None) -> float | None:
    """The CLIP cut calibrated on the held-out split when the checkpoint was trained (or None)."""
    if not path:
        return None
    try:
        extra = json.loads(read_metadata(path).get("extra") or "{}")
    except ValueError:
        return None
    t = (extra.get("after") or {}).get("suggested_threshold")
    return float(t) if isinstance(t, (int, float)) and t == t else None


def save_checkpoint(model, path: str, name: str, extra: dict[str, Any] | None = None, half: bool = True) -> str:
    """Write the model as safetensors (fp16 by default: the tiny model stays under 20 MB)."""
    state = {}
    for k, v in model.state_dict().items():
        v = v.detach().to("cpu")
        if half and v.is_floating_point():
            v = v.to(torch.float16)
        state[k] = v.contiguous().clone()
    meta = {"format": CHECKPOINT_FORMAT, "model_name": name, "model_cfg": json.dumps(model_config(name)),
            "extra": json.dumps(extra or {}, sort_keys=True)}
    os.makedirs(os.path.dirname(os.path.abspath(path)) or ".", exist_ok=True)
    tmp = f"{path}.tmp-{os.getpid()}"
    save_file(state, tmp, metadata=meta)
    os.replace(tmp, path)
    return path


def load_clip(name: str | None = None, checkpoint: str | None = None, device: str = "cpu"):
    """(model in eval mode, preprocess, tokenizer, model_name).

    `name` may be omitted for cidermill checkpoints (the architecture is in their metadata).
    Without a checkpoint the model keeps its random init (benchmarks only)."""
    meta: dict[str, str] = {}
    if checkpoint is not None:
        if not os.path.isfile(checkpoint):
            raise ConfigError(f"{checkpoint}: CLIP checkpoint not found")
        meta = read_metadata(checkpoint)
        if meta.get("format") == CHECKPOINT_FORMAT:
            ck_name = meta["model_name"]
            if name not in (None, ck_name):
                raise ConfigError(f"{checkpoint}: holds a {ck_name!r} model, not {name!r} (drop --clip-model "
                                  "or pass the matching one)")
            register_config(ck_name, json.loads(meta["model_cfg"]))
            name = ck_name
    if name is None:
        if checkpoint is not None:
            raise ConfigError(f"{checkpoint}: not a cidermill checkpoint; name its architecture with "
                              "--clip-model (e.g. ViT-B-32)")
        name = DEFAULT_MODEL
    model, preprocess, tokenizer = build(name, device="cpu")
    vision = json.loads(meta.get("extra") or "{}").get("vision_encoder") if meta else None
    if vision:  # trained with `train-clip --vision`: a training.vision encoder as the image tower
        model, preprocess = attach(model, vision_config_from_dict(vision))
    if checkpoint is not None:
        try:
            if meta.get("format") == CHECKPOINT_FORMAT:
                from safetensors.torch import load_file  # noqa: PLC0415

                state = {k: (v.float() if v.is_floating_point() else v) for k, v in load_file(checkpoint).items()}
                model.load_state_dict(state, strict=True)
            else:
                import open_clip  # noqa: PLC0415  (lazy: seconds to import)

                open_clip.load_checkpoint(model, checkpoint, strict=True, weights_only=True)
        except (RuntimeError, KeyError, ValueError, OSError, EOFError, AssertionError) as e:
            first = str(e).strip().splitlines()[0][:200] if str(e).strip() else type(e).__name__
            raise ConfigError(f"{checkpoint}: does not fit open_clip model {name!r} ({first})") from None
        except Exception as e:  # noqa: BLE001  (pickle.UnpicklingError from weights_only on hostile files)
            raise ConfigError(f"{checkpoint}: cannot load as a weights-only checkpoint ({type(e).__name__})") from None
    model = model.to(device).eval()
    torch.set_grad_enabled(True)
    return model, preprocess, tokenizer, name


__all__ = ["DEFAULT_MODEL", "checkpoint_threshold", "register_configs", "build", "save_checkpoint", "load_clip", "read_metadata",
           "model_config"]
