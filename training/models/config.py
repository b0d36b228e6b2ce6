"""One config dataclass for every architecture, checked when it is built.

``ModelConfig`` is frozen: derive variants with ``dataclasses.replace(cfg, vocab_size=...)``, which
re-runs the checks. ``cfg.to_dict()`` / ``config_from_dict(d)`` round-trip through JSON/YAML; an
unknown key or an impossible value raises ``corpus.errors.ConfigError`` naming the field.

Which layer does what (layer index ``i`` counts from 0 over the whole depth):
- MoE layer:    ``moe_every > 0 and i % moe_every == moe_every - 1`` (every other layer: 1, 3, 5, ...)
- global layer: every layer when ``sliding_window == 0``; otherwise ``i % global_every ==
  global_every - 1`` (3 local then 1 global for ``global_every = 4``). Local layers use RoPE and
  see the last ``sliding_window`` keys (themselves included); global layers see every earlier
  key and use RoPE only if ``nope_global`` is False (NoPE, the PT-MoE default, when it is True).
- on-device KV sharing (arch "ondevice"): layers ``0 .. block1_layers-1`` own their K/V; the
  layers after them have no K/V projections and attend to layer ``block1_layers-1``'s keys/values.
- PT-MoE (arch "ptmoe"): ``n_tracks`` tracks of ``n_layers`` layers each; tracks meet only after
  layers ``D-1, 2D-1, ...`` with ``D = track_block_depth``, i.e. ``n_layers / D`` times.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, fields

from corpus.errors import CidermillError, ConfigError
from training.kernels.ops import IMPLS as KERNEL_IMPLS

ARCHS = ("dense", "ondevice", "ptmoe")


class SequenceTooLongError(CidermillError, ValueError):
    """An input (or prompt + generated tokens) is longer than the model's ``max_seq_len``."""


@dataclass(frozen=True)
class ModelConfig:
    arch: str = "dense"              # dense | ondevice | ptmoe
    name: str = "custom"             # preset name, for messages and checkpoints
    vocab_size: int = 4096
    d_model: int = 128               # residual stream width (every PT-MoE track has one this wide)
    n_layers: int = 4                # depth (per track for PT-MoE)
    n_heads: int = 4                 # query heads (per track for PT-MoE)
    n_kv_heads: int = 2              # key/value heads (grouped-query attention)
    head_dim: int = 0                # 0: d_model // n_heads
    ffn_hidden: int = 384            # SwiGLU hidden size of dense layers
    max_seq_len: int = 256
    rope_theta: float = 10000.0
    norm_eps: float = 1e-5
    qk_norm: bool = True             # RMSNorm over each head's query and key vector
    tie_embeddings: bool = True      # output projection = token embedding matrix
    init_std: float = 0.02
    # attention pattern
    sliding_window: int = 0          # 0: every layer is global; else local layers see this many keys
    global_every: int = 4            # with a window: every global_every-th layer is global
    nope_global: bool = True         # with a window: global layers use no positional embedding
    # mixture of experts (token choice, top-k, dropless)
    moe_every: int = 0               # 0: no MoE layers
    n_experts: int = 0
    top_k: int = 2
    expert_ffn_hidden: int = 0       # 0: ffn_hidden
    shared_expert: bool = False      # an always-on SwiGLU beside the routed experts
    router_aux_coef: float = 0.01    # weight of the load-balancing loss in out.aux_loss
    router_z_coef: float = 0.001     # weight of the router z-loss in out.aux_loss
    # on-device model
    block1_layers: int = 0           # arch "ondevice": layers with their own K/V (35 of 56)
    # PT-MoE
    n_tracks: int = 1
    track_block_depth: int = 0       # D; arch "ptmoe" needs n_layers % D == 0
    # kernels: passed as impl= to training.kernels.ops ("auto": Triton on CUDA, reference on CPU)
    kernels: str = "auto"

    def __post_init__(self) -> None:
        _check_types(self)
        _check_values(self)

    # ---- derived quantities -------------------------------------------------------------------
    @property
    def attn_head_dim(self) -> int:
        return self.head_dim or self.d_model // self.n_heads

    @property
    def expert_hidden(self) -> int:
        return self.expert_ffn_hidden or self.ffn_hidden

    def is_moe_layer(self, i: int) -> bool:
        return self.moe_every > 0 and i % self.moe_every == self.moe_every - 1

    def is_global_layer(self, i: int) -> bool:
        return self.sliding_window == 0 or i % self.global_every == self.global_every - 1

    def layer_window(self, i: int) -> int | None:
        """Keys a query at layer ``i`` may see (None: all earlier keys)."""
        return None if self.is_global_layer(i) else self.sliding_window

    def layer_uses_rope(self, i: int) -> bool:
        return not (self.sliding_window and self.is_global_layer(i) and self.nope_global)

    @property
    def sync_points(self) -> int:
        """Cross-device synchronisations per forward: L/D for PT-MoE, 2L under tensor parallelism."""
        if self.arch == "ptmoe":
            return self.n_layers // self.track_block_depth
        return 2 * self.n_layers

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def config_from_dict(d: dict) -> ModelConfig:
    """Build a config from a plain dict (JSON/YAML); unknown keys raise ConfigError naming them."""
    if not isinstance(d, dict):
        raise ConfigError(f"model config must be a mapping, got {type(d).__name__}")
    known = {f.name for f in fields(ModelConfig)}
    unknown = sorted(set(d) - known)
    if unknown:
        raise ConfigError(f"unknown model config key(s): {', '.join(unknown)} "
                          f"(known: {', '.join(sorted(known))})")
    return ModelConfig(**d)


def _check_types(c: ModelConfig) -> None:
    for f in fields(c):
        v = getattr(c, f.name)
        t = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
        ok = {"int": isinstance(v, int) and not isinstance(v, bool),
              "float": isinstance(v, (int, float)) and not isinstance(v, bool),
              "bool": isinstance(v, bool),
              "str": isinstance(v, str)}.get(t, True)
        if not ok:
            raise ConfigError(f"ModelConfig.{f.name} must be {t}, got {v!r}")


def _fail(field: str, msg: str) -> None:
    raise ConfigError(f"ModelConfig.{field}: {msg}")


def _check_values(c: ModelConfig) -> None:
    if c.arch not in ARCHS:
        _fail("arch", f"{c.arch!r} is not one of {', '.join(ARCHS)}")
    if c.kernels not in KERNEL_IMPLS:
        _fail("kernels", f"{c.kernels!r} is not one of {', '.join(KERNEL_IMPLS)}")
    for name in ("vocab_size", "d_model", "n_layers", "n_heads", "n_kv_heads", "ffn_hidden",
                 "max_seq_len"):
        if getattr(c, name) < 1:
            _fail(name, f"must be >= 1, got {getattr(c, name)}")
    for name in ("head_dim", "sliding_window", "moe_every", "n_experts", "expert_ffn_hidden",
                 "block1_layers", "track_block_depth"):
        if getattr(c, name) < 0:
            _fail(name, f"must be >= 0, got {getattr(c, name)}")
    if c.head_dim == 0 and c.d_model % c.n_heads:
        _fail("n_heads", f"{c.n_heads} heads do not divide d_model={c.d_model}")
    if c.n_heads % c.n_kv_heads:
        _fail("n_kv_heads", f"{c.n_kv_heads} must divide n_heads={c.n_heads}")
    if c.attn_head_dim % 2:
        _fail("head_dim", f"head size {c.attn_head_dim} must be even for RoPE")
    if c.rope_theta <= 0:
        _fail("rope_theta", f"must be > 0, got {c.rope_theta}")
    if c.norm_eps <= 0:
        _fail("norm_eps", f"must be > 0, got {c.norm_eps}")
    if c.init_std <= 0:
        _fail("init_std", f"must be > 0, got {c.init_std}")
    if c.sliding_window > c.max_seq_len:
        _fail("sliding_window", f"window {c.sliding_window} is larger than the context "
                                f"max_seq_len={c.max_seq_len}")
    if c.global_every < 1:
        _fail("global_every", f"must be >= 1, got {c.global_every}")
    if c.moe_every:
        if c.n_experts < 1:
            _fail("n_experts", f"moe_every={c.moe_every} needs n_experts >= 1")
        if c.top_k < 1:
            _fail("top_k", f"must be >= 1, got {c.top_k}")
        if c.n_experts < c.top_k:
            _fail("n_experts", f"{c.n_experts} experts are fewer than top_k={c.top_k}")
    if c.router_aux_coef < 0 or c.router_z_coef < 0:
        _fail("router_aux_coef" if c.router_aux_coef < 0 else "router_z_coef", "must be >= 0")
    if c.arch == "ondevice":
        if not 0 < c.block1_layers < c.n_layers:
            _fail("block1_layers", f"arch 'ondevice' needs 0 < block1_layers < n_layers={c.n_layers}, "
                                   f"got {c.block1_layers}")
        if c.sliding_window:
            _fail("sliding_window", "arch 'ondevice' shares block 1's full KV cache; use 0")
    if c.arch == "ptmoe":
        if c.n_tracks < 1:
            _fail("n_tracks", f"must be >= 1, got {c.n_tracks}")
        if c.track_block_depth < 1:
            _fail("track_block_depth", "arch 'ptmoe' needs track_block_depth (D) >= 1")
        if c.n_layers % c.track_block_depth:
            _fail("track_block_depth", f"D={c.track_block_depth} does not divide "
                                       f"n_layers={c.n_layers}")
