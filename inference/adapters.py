"""LoRA adapters at inference: load peft-format adapters onto a base model and pick one per request.

The adapter format (peft files + ``cidermill_base.json`` naming the base) is written and read by
``training.quant.lora``, so an adapter made by ``cidermill compress lora`` loads here; an adapter
made for another base is refused. Several adapters can sit on one base; ``active(name)`` switches
to one for the duration of a request (``None``: the plain base).
"""
from __future__ import annotations

import contextlib
import os

from training.models.fingerprint import base_fingerprint
from training.quant.lora import AdapterError, inject_saved, read_adapter

__all__ = ["AdapterError", "Adapters"]


class Adapters:
    """The adapters loaded on one base model."""

    def __init__(self, model):
        self.model = model
        self.base = base_fingerprint(model)  # before any LoRA layer changes the state dict
        self.names: list[str] = []

    def load(self, path: str, name: str | None = None) -> str:
        name = name or os.path.basename(os.path.normpath(path))
        cfg, state = read_adapter(path, self.base)
        if name in self.names:
            raise AdapterError(f"adapter name {name!r} is already loaded")
        inject_saved(self.model, cfg, state, name, path)
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
