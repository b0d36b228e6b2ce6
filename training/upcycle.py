"""Sparse upcycling: a dense checkpoint becomes an MoE checkpoint that computes the same function.

Every `every`-th layer's SwiGLU is copied into all E experts of a new MoE layer. Because the
router's top-k weights are renormalised to sum to 1 and all experts start identical, the MoE
output equals the dense MLP output for ANY router, so the router gets a small random init (which
breaks the symmetry as soon as training starts) and the upcycled model still equals the dense
one at step 0. This is how the report built its 64-expert distillation teacher.
"""
from __future__ import annotations

import dataclasses

import torch

from corpus.errors import CidermillError
from training import checkpoint as ck
from training.models import build_model
from training.vocab_extension import grow_model_vocab


@torch.no_grad()
def upcycle_model(dense, n_experts: int, every: int = 2, top_k: int = 2, seed: int = 0):
    cfg = dense.config
    if cfg.arch != "dense":
        raise CidermillError(f"upcycling needs a dense checkpoint, got arch={cfg.arch}")
    if cfg.moe_every:
        raise CidermillError("checkpoint already has MoE layers")
    if n_experts < top_k or n_experts < 1:
        raise CidermillError(f"--experts {n_experts} must be >= top-k {top_k}")
    if every < 1:
        raise CidermillError("--every must be >= 1")
    moe_cfg = dataclasses.replace(cfg, moe_every=every, n_experts=n_experts, top_k=top_k,
                                  expert_ffn_hidden=cfg.ffn_hidden, name=f"{cfg.name}-upcycled-{n_experts}e")
    torch.manual_seed(seed)
    moe = build_model(moe_cfg).to(next(dense.parameters()).device)
    src = dense.state_dict()
    dst = moe.state_dict()
    for name, t in dst.items():
        if name in src and src[name].shape == t.shape:
            t.copy_(src[name])
    for i in range(cfg.n_layers):
        if not moe_cfg.is_moe_layer(i):
            continue
        p = f"layers.{i}.mlp."
        gate, up, down = (src[p + f"{w}.weight"] for w in ("w_gate", "w_up", "w_down"))
        dst[p + "experts.w_gate"].copy_(gate.t().unsqueeze(0).expand_as(dst[p + "experts.w_gate"]))
        dst[p + "experts.w_up"].copy_(up.t().unsqueeze(0).expand_as(dst[p + "experts.w_up"]))
        dst[p + "experts.w_down"].copy_(down.t().unsqueeze(0).expand_as(dst[p + "experts.w_down"]))
        g = torch.Generator().manual_seed(seed * 1_000_003 + i)
        dst[p + "router.weight"].copy_(torch.randn(dst[p + "router.weight"].shape, generator=g) * cfg.init_std)
    moe.load_state_dict(dst)
    return moe


def upcycle_checkpoint(dense_dir: str, out_dir: str, n_experts: int, every: int = 2, top_k: int = 2,
                       seed: int = 0) -> str:
    dense = ck.load_model_from_checkpoint(dense_dir)
    moe = upcycle_model(dense, n_experts, every, top_k, seed)
    ck.save_model_weights(moe, out_dir)
    return out_dir


def extend_checkpoint(model_dir: str, out_dir: str, base_tokenizer, new_tokens: list[str]) -> str:
    """Grow a checkpoint's embedding for an extended tokenizer (see training/vocab_extension.py)."""
    model = ck.load_model_from_checkpoint(model_dir)
    grow_model_vocab(model, base_tokenizer, new_tokens)
    ck.save_model_weights(model, out_dir)
    return out_dir
