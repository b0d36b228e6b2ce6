"""The one entry point models call: each op dispatches to its Triton kernel or eager reference.

``impl``: "auto" (Triton when the tensor is on CUDA, reference otherwise), "triton" (forced; on a
CPU tensor this needs TRITON_INTERPRET=1 set before triton is imported), "reference".
``set_default_impl`` / ``use_impl`` change what "auto" means, for tests and benchmarks.
Triton is imported lazily, so CPU-only users never import it. Semantics: see reference.py.

On the reference path, long inputs go to the eager memory-bounded twins with the same semantics:
attention over more than ``LONG_ATTENTION_PAIRS`` query-key pairs to ``long_attention.py`` (no
seq x seq matrix), linear cross-entropy over more than ``CHUNKED_CE_LOGITS`` logits to
``linear_ce_chunked.py`` (no [N, V] logits). Short inputs keep the plain reference.
"""
from __future__ import annotations

import contextlib
import importlib
import os

import torch

from training.kernels import reference as ref

IMPLS = ("auto", "triton", "reference")
_default = "auto"
LONG_ATTENTION_PAIRS = 1 << 20     # 1024 x 1024: a [H, Tq, Tk] float32 score tensor passes 4 MiB a head
CHUNKED_CE_LOGITS = 1 << 24        # 16M logits: 64 MiB, and as much again for their gradient


def set_default_impl(impl: str) -> None:
    """Make "auto" resolve to ``impl`` everywhere (``"auto"`` restores device-based choice)."""
    global _default
    if impl not in IMPLS:
        raise ValueError(f"impl must be one of {IMPLS}, got {impl!r}")
    _default = impl


def get_default_impl() -> str:
    return _default


@contextlib.contextmanager
def use_impl(impl: str):
    old = _default
    set_default_impl(impl)
    try:
        yield
    finally:
        set_default_impl(old)


def resolve_impl(impl: str, x: torch.Tensor) -> str:
    if impl not in IMPLS:
        raise ValueError(f"impl must be one of {IMPLS}, got {impl!r}")
    if impl == "auto":
        impl = _default
    if impl == "auto":
        impl = "triton" if x.is_cuda else "reference"
    if impl == "triton" and not x.is_cuda and os.environ.get("TRITON_INTERPRET") != "1":
        raise RuntimeError("impl='triton' on a CPU tensor needs TRITON_INTERPRET=1 set before "
                           "triton is imported; use impl='reference' on CPU")
    return impl


def _k(name: str):
    return importlib.import_module(f"training.kernels.{name}")


def rms_norm(x, weight, eps: float = 1e-6, impl: str = "auto"):
    if resolve_impl(impl, x) == "reference":
        return ref.rms_norm(x, weight, eps)
    return _k("rms_norm").rms_norm(x, weight, eps)


def apply_rope(q, k, cos, sin, impl: str = "auto"):
    """q/k ``[B,H,T,D]`` (k may be None), cos/sin ``[T,D/2]`` or ``[B|1,T,D/2]`` (rope_cos_sin)."""
    if resolve_impl(impl, q) == "reference":
        return ref.apply_rope(q, k, cos, sin)
    return _k("rope").apply_rope(q, k, cos, sin)


rope_cos_sin = ref.rope_cos_sin


def swiglu(gate, up, impl: str = "auto"):
    if resolve_impl(impl, gate) == "reference":
        return ref.swiglu(gate, up)
    return _k("swiglu").swiglu(gate, up)


def attention(q, k, v, causal: bool = True, window: int | None = None, doc_ids=None,
              scale: float | None = None, impl: str = "auto"):
    """Grouped-query attention; q ``[B,H,Tq,D]``, k/v ``[B,Hkv,Tk,D]``, queries end-aligned."""
    if resolve_impl(impl, q) == "reference":
        if q.shape[2] * k.shape[2] > LONG_ATTENTION_PAIRS:
            return _k("long_attention").attention(q, k, v, causal, window, doc_ids, scale)
        return ref.attention(q, k, v, causal, window, doc_ids, scale)
    return _k("flash_attention").attention(q, k, v, causal, window, doc_ids, scale)


def moe_mlp(x, topk_idx, topk_weight, w_gate, w_up, w_down, impl: str = "auto"):
    """Dropless SwiGLU experts: x ``[N,d]``, topk ``[N,k]``, w_gate/w_up ``[E,d,f]``, w_down ``[E,f,d]``."""
    if resolve_impl(impl, x) == "reference":
        return ref.moe_mlp(x, topk_idx, topk_weight, w_gate, w_up, w_down)
    return _k("moe").moe_mlp(x, topk_idx, topk_weight, w_gate, w_up, w_down)


def linear_cross_entropy(hidden, weight, targets, ignore_index: int = -100, impl: str = "auto"):
    """Mean CE of ``hidden @ weight.T`` without materialising the logits (Triton path)."""
    if resolve_impl(impl, hidden) == "reference":
        if hidden.shape[0] * weight.shape[0] > CHUNKED_CE_LOGITS:
            return _k("linear_ce_chunked").linear_cross_entropy(hidden, weight, targets, ignore_index)
        return ref.linear_cross_entropy(hidden, weight, targets, ignore_index)
    return _k("linear_ce").linear_cross_entropy(hidden, weight, targets, ignore_index)


def quantize_kv_int8(x, impl: str = "auto"):
    """``x [..., D] -> (int8 [..., D], float32 scale [..., 1])``: one scale per head vector."""
    if resolve_impl(impl, x) == "reference":
        return ref.quantize_kv_int8(x)
    return _k("kv_int8").quantize_kv_int8(x)


def dequantize_kv_int8(q, scale, dtype: torch.dtype = torch.float32, impl: str = "auto"):
    if resolve_impl(impl, scale) == "reference":
        return ref.dequantize_kv_int8(q, scale, dtype)
    return _k("kv_int8").dequantize_kv_int8(q, scale, dtype)


def dequant2_matmul(x, codes, scale, group: int, impl: str = "auto"):
    """``x [..., K] @ W.T`` with W 2-bit packed (codes ``[N, K/4]`` uint8, fp16 scale ``[N, K/group]``)."""
    if resolve_impl(impl, x) == "reference":
        return ref.dequant2_matmul(x, codes, scale, group)
    return _k("dequant2_matmul").dequant2_matmul(x, codes, scale, group)
