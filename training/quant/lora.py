"""LoRA recovery adapters on the frozen, quantised base (peft), saved apart from the base.

The report trains rank-32 (alpha 16) low-rank adapters on additional data to win back what
compression costs. peft does the LoRA part on the project's own nn.Modules
(``inject_adapter_in_model``: no transformers model needed); the base weights are the dequantised
grid values (a packed file loaded, or ``fake_quant.plain_state_dict`` of a QAT model), frozen, so
training sees exactly the quantised model.

An adapter directory is peft's format plus one file naming its base::

    adapter_config.json         peft LoraConfig
    adapter_model.safetensors   the A/B matrices (peft's key names)
    cidermill_base.json         {"preset": ..., "config_sha256": ..., "weights_sha256": ...}

``load_adapter`` refuses an adapter whose base fingerprint differs from the model it is given:
an adapter trained on one quantised base is meaningless on another.
"""
from __future__ import annotations

import json
import os
import shutil
import warnings

import torch
import torch.nn as nn
from safetensors.torch import load_file, save_file

from corpus.errors import CidermillError
from training.models import build_model
from training.models.fingerprint import BASE_FILE, base_fingerprint, base_state
from training.quant.fake_quant import DECODER_LINEARS

ADAPTER_NAME = "default"


def lora_config(rank: int = 32, alpha: int = 16, targets=DECODER_LINEARS, dropout: float = 0.0):
    from peft import LoraConfig  # noqa: PLC0415  (lazy: heavy, LoRA only)
    return LoraConfig(r=rank, lora_alpha=alpha, lora_dropout=dropout, bias="none",
                      target_modules=[t.split(".")[-1] for t in targets])


def add_lora(model: nn.Module, rank: int = 32, alpha: int = 16, targets=DECODER_LINEARS) -> nn.Module:
    """Freeze the base and inject trainable LoRA A/B into the targeted Linears (in place)."""
    from peft import inject_adapter_in_model  # noqa: PLC0415  (lazy: heavy, LoRA only)

    fingerprint = base_fingerprint(model)
    for p in model.parameters():
        p.requires_grad_(False)
    model = inject_adapter_in_model(lora_config(rank, alpha, targets), model, adapter_name=ADAPTER_NAME)
    model.cidermill_base = fingerprint
    return model


class AdapterError(CidermillError):
    pass


PEFT_PREFIX = "base_model.model."  # peft's save_pretrained writes keys under this prefix


def save_adapter(model: nn.Module, out_dir: str, adapter_name: str = ADAPTER_NAME,
                 base: dict | None = None) -> str:
    """Write one adapter of ``model`` in the agreed format, atomically (a temporary directory renamed
    into place). ``base``: the base's fingerprint (default: the one ``add_lora`` recorded)."""
    from peft import get_peft_model_state_dict  # noqa: PLC0415  (lazy: heavy, LoRA only)

    base = base if base is not None else model.cidermill_base
    tmp = out_dir.rstrip("/") + ".tmp"
    os.makedirs(tmp, exist_ok=True)
    model.peft_config[adapter_name].save_pretrained(tmp)
    state = get_peft_model_state_dict(model, adapter_name=adapter_name)
    save_file({PEFT_PREFIX + k: v.detach().contiguous() for k, v in state.items()},
              os.path.join(tmp, "adapter_model.safetensors"))
    with open(os.path.join(tmp, BASE_FILE), "w") as f:
        json.dump(base, f, indent=1)
    if os.path.exists(out_dir):
        shutil.rmtree(out_dir)
    os.replace(tmp, out_dir)
    return out_dir


def read_adapter(adapter_dir: str, have: dict):
    """The adapter's peft config and tensors (keys as peft's state-dict setter wants them), after
    checking that it was trained for the base whose fingerprint is ``have``."""
    from peft import LoraConfig  # noqa: PLC0415  (lazy: heavy, LoRA only)

    base_file = os.path.join(adapter_dir, BASE_FILE)
    if not all(os.path.exists(os.path.join(adapter_dir, f))
               for f in ("adapter_config.json", "adapter_model.safetensors", BASE_FILE)):
        raise AdapterError(f"{adapter_dir}: not an adapter directory (needs adapter_config.json, "
                           f"adapter_model.safetensors, {BASE_FILE})")
    with open(base_file) as f:
        want = json.load(f)
    for key, what in (("preset", "preset"), ("config_sha256", "config"), ("weights_sha256", "weights")):
        if want.get(key) != have[key]:
            raise AdapterError(f"{adapter_dir}: adapter was trained for another base ({what} differs: "
                               f"adapter {want.get('preset')!r} vs model {have['preset']!r})")
    state = load_file(os.path.join(adapter_dir, "adapter_model.safetensors"))
    state = {k[len(PEFT_PREFIX):] if k.startswith(PEFT_PREFIX) else k: v for k, v in state.items()}
    return LoraConfig.from_pretrained(adapter_dir), state


def inject_saved(model: nn.Module, cfg, state: dict, adapter_name: str, where: str) -> nn.Module:
    """Add one read adapter to ``model`` under ``adapter_name``; refuse tensors with no place."""
    from peft import inject_adapter_in_model, set_peft_model_state_dict  # noqa: PLC0415  (lazy: heavy)

    with warnings.catch_warnings():  # "already found a peft_config": several adapters on one base is fine
        warnings.filterwarnings("ignore", message="Already found a `peft_config`")
        model = inject_adapter_in_model(cfg, model, adapter_name=adapter_name)
    result = set_peft_model_state_dict(model, state, adapter_name=adapter_name)
    unexpected = [k for k in getattr(result, "unexpected_keys", None) or [] if "lora_" in k]
    if unexpected:
        raise AdapterError(f"{where}: adapter tensors the model has no place for: {unexpected[:3]}")
    return model


def load_adapter(model: nn.Module, adapter_dir: str) -> nn.Module:
    """Inject the saved adapter into ``model`` (its base must match the adapter's fingerprint)."""
    have = base_fingerprint(model)
    cfg, state = read_adapter(adapter_dir, have)
    for p in model.parameters():
        p.requires_grad_(False)
    model = inject_saved(model, cfg, state, ADAPTER_NAME, adapter_dir)
    model.cidermill_base = have
    return model


@torch.no_grad()
def merged_copy(model: nn.Module) -> nn.Module:
    """A plain float model (same class and config) with every adapter folded into its weights."""
    plain = build_model(model.config)
    base = base_state(model)
    mods = dict(model.named_modules())
    for name, m in mods.items():
        if hasattr(m, "lora_A") and ADAPTER_NAME in m.lora_A:
            key = f"{name}.weight"
            delta = m.get_delta_weight(ADAPTER_NAME)
            base[key] = base[key] + delta.to(base[key].dtype)
    plain.load_state_dict(base, strict=True)
    return plain
