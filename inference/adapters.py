"""LoRA adapters at inference: load peft-format adapters onto a base model and pick one per request.

An adapter directory holds peft's ``adapter_config.json`` + ``adapter_model.safetensors`` and
``cidermill_base.json`` (the base's preset and config/weight hashes, ``training.models.fingerprint``);
an adapter made for another base is refused. Several adapters can sit on one base; ``active(name)``
switches to one for the duration of a request (``None``: the plain base).
"""
from __future__ import annotations

import contextlib
import json
import os
import warnings

from safetensors.torch import load_file, save_file

from corpus.errors import CidermillError
from training.models.fingerprint import BASE_FILE, base_fingerprint

PEFT_PREFIX = "base_model.model."


class AdapterError(CidermillError):
    pass


def save_adapter(model, adapter_name: str, out_dir: str, base: dict) -> None:
    """Write one adapter of ``model`` in the agreed format (``base``: the base's fingerprint)."""
    from peft import get_peft_model_state_dict  # noqa: PLC0415  (lazy: heavy, adapters only)
    os.makedirs(out_dir, exist_ok=True)
    model.peft_config[adapter_name].save_pretrained(out_dir)
    state = get_peft_model_state_dict(model, adapter_name=adapter_name)
    save_file({PEFT_PREFIX + k: v.contiguous() for k, v in state.items()},
              os.path.join(out_dir, "adapter_model.safetensors"))
    with open(os.path.join(out_dir, BASE_FILE), "w") as f:
        json.dump(base, f, indent=1)


class Adapters:
    """The adapters loaded on one base model."""

    def __init__(self, model):
        self.model = model
        self.base = base_fingerprint(model)  # before any LoRA layer changes the state dict
        self.names: list[str] = []

    def load(self, path: str, name: str | None = None) -> str:
        from peft import LoraConfig, inject_adapter_in_model, set_peft_model_state_dict  # noqa: PLC0415  (lazy: heavy)
        name = name or os.path.basename(os.path.normpath(path))
        base_file = os.path.join(path, BASE_FILE)
        if not os.path.exists(os.path.join(path, "adapter_config.json")) or not os.path.exists(base_file):
            raise AdapterError(f"{path}: not an adapter directory (needs adapter_config.json, "
                               f"adapter_model.safetensors, {BASE_FILE})")
        with open(base_file) as f:
            want = json.load(f)
        for key in ("config_sha256", "weights_sha256"):
            if want.get(key) != self.base[key]:
                raise AdapterError(f"{path}: adapter was trained for another base (preset "
                                   f"{want.get('preset')!r}, {key} differs from this model's "
                                   f"{self.base['preset']!r})")
        if name in self.names:
            raise AdapterError(f"adapter name {name!r} is already loaded")
        cfg = LoraConfig.from_pretrained(path)
        with warnings.catch_warnings():  # "already found a peft_config": several adapters is the point
            warnings.filterwarnings("ignore", message="Already found a `peft_config`")
            inject_adapter_in_model(cfg, self.model, adapter_name=name)
        state = load_file(os.path.join(path, "adapter_model.safetensors"))
        state = {k[len(PEFT_PREFIX):] if k.startswith(PEFT_PREFIX) else k: v for k, v in state.items()}
        result = set_peft_model_state_dict(self.model, state, adapter_name=name)
        unexpected = [k for k in getattr(result, "unexpected_keys", []) if "lora_" in k]
        if unexpected:
            raise AdapterError(f"{path}: adapter tensors do not match this model ({unexpected[0]})")
        self.names.append(name)
        self._select(None)
        return name

    def _layers(self):
        from peft.tuners.tuners_utils import BaseTunerLayer  # noqa: PLC0415  (lazy: heavy, adapters only)
        return [m for m in self.model.modules() if isinstance(m, BaseTunerLayer)]

    def _select(self, name: str | None) -> None:
        for layer in self._layers():
            if name is None:
                layer.enable_adapters(False)
            else:
                layer.enable_adapters(True)
                layer.set_adapter(name)

    @contextlib.contextmanager
    def active(self, name: str | None):
        if name is not None and name not in self.names:
            raise AdapterError(f"no adapter named {name!r} (loaded: {', '.join(self.names) or 'none'})")
        self._select(name)
        try:
            yield
        finally:
            self._select(None)
