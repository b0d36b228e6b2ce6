"""Named model configs. ``get_preset(name)`` returns a ``ModelConfig``; derive variants with
``dataclasses.replace``.

- ``tiny``          dense, ~1.3M parameters: CPU tests and smoke runs.
- ``ondevice-tiny`` / ``ptmoe-tiny``: the same ideas at test size.
- ``ondevice-3b``   the published on-device shape: 56 layers = 35 + 21, hidden 2048, 16 query heads
                    x 128, 2 KV heads, SwiGLU 6656, QK-norm, RoPE theta 500k, vocab 153,600, tied.
- ``dense-3b``      its dense twin (every layer keeps its own KV): the KV-memory baseline.
- ``ptmoe-small``   CPU-trainable PT-MoE: 2 tracks x 8 layers, D = 4, 4 experts top-2 every other
                    layer, window 128 of 512.
- ``ptmoe-1b``      4 tracks x 16 layers of width 1024, D = 4 (4 sync points per forward vs 2L = 32),
                    SwiGLU 2048 on dense layers, 8 experts top-2 (hidden 768) on every other
                    layer, 3 sliding-window (4096) RoPE layers then 1 global NoPE layer, context
                    8192, vocab 153,600: 1.13B total, 0.68B active parameters per token.
"""
from __future__ import annotations

from corpus.errors import ConfigError
from training.models.config import ModelConfig

PRESETS: dict[str, ModelConfig] = {
    "tiny": ModelConfig(
        arch="dense", name="tiny", vocab_size=4096, d_model=128, n_layers=4, n_heads=4,
        n_kv_heads=2, ffn_hidden=384, max_seq_len=256),
    "ondevice-tiny": ModelConfig(
        arch="ondevice", name="ondevice-tiny", vocab_size=4096, d_model=128, n_layers=8,
        block1_layers=5, n_heads=4, n_kv_heads=2, ffn_hidden=384, max_seq_len=256),
    "ptmoe-tiny": ModelConfig(
        arch="ptmoe", name="ptmoe-tiny", vocab_size=4096, d_model=128, n_layers=8, n_tracks=2,
        track_block_depth=4, n_heads=4, n_kv_heads=2, ffn_hidden=256, moe_every=2, n_experts=4,
        top_k=2, expert_ffn_hidden=128, sliding_window=64, global_every=4, max_seq_len=256),
    "ondevice-3b": ModelConfig(
        arch="ondevice", name="ondevice-3b", vocab_size=153_600, d_model=2048, n_layers=56,
        block1_layers=35, n_heads=16, n_kv_heads=2, head_dim=128, ffn_hidden=6656, qk_norm=True,
        rope_theta=500_000.0, tie_embeddings=True, max_seq_len=8192),
    "dense-3b": ModelConfig(
        arch="dense", name="dense-3b", vocab_size=153_600, d_model=2048, n_layers=56, n_heads=16,
        n_kv_heads=2, head_dim=128, ffn_hidden=6656, qk_norm=True, rope_theta=500_000.0,
        tie_embeddings=True, max_seq_len=8192),
    "ptmoe-small": ModelConfig(
        arch="ptmoe", name="ptmoe-small", vocab_size=8192, d_model=256, n_layers=8, n_tracks=2,
        track_block_depth=4, n_heads=4, n_kv_heads=2, ffn_hidden=512, moe_every=2, n_experts=4,
        top_k=2, expert_ffn_hidden=256, sliding_window=128, global_every=4, max_seq_len=512),
    "ptmoe-1b": ModelConfig(
        arch="ptmoe", name="ptmoe-1b", vocab_size=153_600, d_model=1024, n_layers=16, n_tracks=4,
        track_block_depth=4, n_heads=8, n_kv_heads=2, ffn_hidden=2048, moe_every=2, n_experts=8,
        top_k=2, expert_ffn_hidden=768, sliding_window=4096, global_every=4,
        rope_theta=500_000.0, max_seq_len=8192),
}


def list_presets() -> list[str]:
    return list(PRESETS)


def get_preset(name: str) -> ModelConfig:
    try:
        return PRESETS[name]
    except KeyError:
        raise ConfigError(f"unknown model preset {name!r} (known: {', '.join(PRESETS)})") from None
