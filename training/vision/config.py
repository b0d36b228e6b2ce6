"""Vision encoder configs and presets (``get_vision_preset(name)``), checked when built.

A ``VisionConfig`` describes a ViT/ViTDet image encoder (see ``training/vision/encoder.py``):

- ``image_size``/``patch_size``: square input, ``(image_size / patch_size) ** 2`` patch tokens.
- ``window``: window side in patches (0: one window over the whole grid, i.e. a plain ViT).
- ``global_blocks``: indices of the blocks where windows exchange information.
- ``registers``: Register-Window registers per window (0: RW off).
- ``full_global``: with RW off, the global blocks attend over all patches (ViTDet's own design);
  False leaves every window on its own (the "RW off" ablation: no exchange at all).

Presets:
- ``vitdet-tiny``  96 px, 8 px patches (144 tokens), width 96, 6 blocks, 3x3 windows of 4x4
                   patches, global blocks 2 and 5 with 2 registers per window: CPU tests and demo.
- ``vit-tiny``     the same size as a plain ViT (global attention everywhere, no registers).
- ``vitdet-l``     ViTDet-L shape: width 1024, 24 blocks, 16 heads, SwiGLU 2736 (~300M), 448 px
                   with 14 px patches (1024 tokens), 4x4 windows of 8x8 patches, global blocks
                   5, 11, 17, 23, 4 registers per window.
- ``vit-g``        ViT-g/14 shape: width 1408, 40 blocks, 16 heads, SwiGLU 4096 (~1B), 448 px,
                   plain global attention.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, fields

from corpus.errors import ConfigError


@dataclass(frozen=True)
class VisionConfig:
    name: str = "custom"
    image_size: int = 96
    patch_size: int = 8
    width: int = 96
    depth: int = 6
    heads: int = 3
    mlp_hidden: int = 256           # SwiGLU hidden size
    window: int = 4                 # window side in patches; 0 = plain ViT (one global window)
    global_blocks: tuple = (2, 5)
    registers: int = 2              # Register-Window registers per window; 0 = RW off
    full_global: bool = False       # RW off only: ViTDet global attention at the global blocks
    norm_eps: float = 1e-6
    init_std: float = 0.02
    kernels: str = "auto"           # impl= for training.kernels.ops

    def __post_init__(self) -> None:
        object.__setattr__(self, "global_blocks", tuple(int(b) for b in self.global_blocks))
        g = self.image_size // self.patch_size if self.patch_size > 0 else 0
        if self.patch_size < 1 or self.image_size % self.patch_size:
            raise ConfigError(f"VisionConfig: patch_size {self.patch_size} must divide image_size {self.image_size}")
        if self.width % self.heads or (self.width // self.heads) % 2:
            raise ConfigError(f"VisionConfig: {self.heads} heads must divide width {self.width} into even head sizes")
        if self.window < 0 or (self.window and g % self.window):
            raise ConfigError(f"VisionConfig: window {self.window} must divide the {g}x{g} patch grid")
        if any(not 0 <= b < self.depth for b in self.global_blocks):
            raise ConfigError(f"VisionConfig: global_blocks {self.global_blocks} outside 0..{self.depth - 1}")
        if self.registers < 0:
            raise ConfigError("VisionConfig: registers must be >= 0")
        if self.registers and self.full_global:
            raise ConfigError("VisionConfig: full_global is the RW-off ViTDet design; use registers=0 with it")
        if min(self.depth, self.width, self.mlp_hidden) < 1:
            raise ConfigError("VisionConfig: depth, width and mlp_hidden must be >= 1")

    @property
    def grid(self) -> int:
        return self.image_size // self.patch_size

    @property
    def window_side(self) -> int:
        return self.window or self.grid

    @property
    def n_windows(self) -> int:
        return (self.grid // self.window_side) ** 2

    @property
    def patch_tokens(self) -> int:
        return self.grid ** 2

    @property
    def tokens_per_image(self) -> int:
        """Tokens the encoder carries: patches plus every window's registers."""
        return self.patch_tokens + self.n_windows * self.registers

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["global_blocks"] = list(self.global_blocks)
        return d


def vision_config_from_dict(d: dict) -> VisionConfig:
    known = {f.name for f in fields(VisionConfig)}
    unknown = sorted(set(d) - known)
    if unknown:
        raise ConfigError(f"unknown vision config key(s): {', '.join(unknown)}")
    return VisionConfig(**d)


VISION_PRESETS: dict[str, VisionConfig] = {
    "vitdet-tiny": VisionConfig(name="vitdet-tiny"),
    "vit-tiny": VisionConfig(name="vit-tiny", window=0, global_blocks=(), registers=0),
    "vitdet-l": VisionConfig(name="vitdet-l", image_size=448, patch_size=14, width=1024, depth=24, heads=16,
                             mlp_hidden=2736, window=8, global_blocks=(5, 11, 17, 23), registers=4),
    "vit-g": VisionConfig(name="vit-g", image_size=448, patch_size=14, width=1408, depth=40, heads=16,
                          mlp_hidden=4096, window=0, global_blocks=(), registers=0),
}


def list_vision_presets() -> list[str]:
    return list(VISION_PRESETS)


def get_vision_preset(name: str, **overrides) -> VisionConfig:
    try:
        cfg = VISION_PRESETS[name]
    except KeyError:
        raise ConfigError(f"unknown vision preset {name!r} (known: {', '.join(VISION_PRESETS)})") from None
    return dataclasses.replace(cfg, **overrides) if overrides else cfg


def ablation(cfg: VisionConfig, variant: str) -> VisionConfig:
    """The same-size variants compared in bench/vision.py: ``rw`` (as given), ``rw-off`` (no
    registers, windows isolated), ``vitdet`` (no registers, full global blocks), ``plain`` (plain ViT)."""
    if variant == "rw":
        return cfg
    if variant == "rw-off":
        return dataclasses.replace(cfg, name=f"{cfg.name}-rw-off", registers=0, full_global=False)
    if variant == "vitdet":
        return dataclasses.replace(cfg, name=f"{cfg.name}-vitdet", registers=0, full_global=True)
    if variant == "plain":
        return dataclasses.replace(cfg, name=f"{cfg.name}-plain", window=0, global_blocks=(), registers=0,
                                   full_global=False)
    raise ConfigError(f"unknown ablation {variant!r} (rw, rw-off, vitdet, plain)")
