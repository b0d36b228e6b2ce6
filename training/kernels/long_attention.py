"""Attention for long sequences on CPU that never holds a seq x seq matrix.

Same semantics as ``reference.attention`` (read its docstring), built on torch's
``scaled_dot_product_attention``, whose CPU kernel is a flash-style online softmax over key blocks
when the mask is absent or small:

- ``doc_ids``: attention is block-diagonal over the documents of a packed row, so each document is
  attended on its own (one causal call per run of equal ids). No [T, T] document mask is built and
  no work is spent on pairs that the mask would throw away.
- causal, no window, ``Tq == Tk``: one ``is_causal`` call (no mask at all).
- anything else (a sliding window, or queries end-aligned to a longer key range): queries in
  chunks of ``chunk``; each chunk sees only its visible key range through a [chunk, range] mask.

Memory is O(T * d) plus one chunk's mask; the reference path needs O(H * T^2) floats (16 GiB per
head at 65K tokens). Computation is float32, returned in the input dtype, like the reference.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from training.kernels.reference import check_attention_args

CHUNK = 1024


def _sdpa(q, k, v, mask=None, causal=False, scale=None):
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal, scale=scale,
                                          enable_gqa=q.shape[1] != k.shape[1])


def _attend(q, k, v, causal: bool, window: int | None, scale: float, chunk: int) -> torch.Tensor:
    """One document (or the whole row): q [B,H,Tq,D], k/v [B,Hkv,Tk,D], queries end-aligned."""
    Tq, Tk = q.shape[2], k.shape[2]
    if not causal:
        return _sdpa(q, k, v, scale=scale)
    if window is None and Tq == Tk:
        return _sdpa(q, k, v, causal=True, scale=scale)
    if window is None and Tq == 1:
        return _sdpa(q, k, v, scale=scale)   # the last position sees every key
    outs = []
    for s in range(0, Tq, chunk):
        e = min(Tq, s + chunk)
        p0, p1 = Tk - Tq + s, Tk - Tq + e          # absolute positions of this chunk's queries
        lo = 0 if window is None else max(0, p0 - window + 1)
        qpos = torch.arange(p0, p1, device=q.device)[:, None]
        kpos = torch.arange(lo, p1, device=q.device)[None, :]
        vis = kpos <= qpos
        if window is not None:
            vis &= (qpos - kpos) < window
        outs.append(_sdpa(q[:, :, s:e], k[:, :, lo:p1], v[:, :, lo:p1], mask=vis, scale=scale))
    return torch.cat(outs, dim=2)


def doc_segments(doc_ids_row: torch.Tensor) -> list[tuple[int, int]]:
    """[(start, end)] of the runs of equal consecutive ids in one row."""
    ids = doc_ids_row.tolist()
    cuts = [0] + [i for i in range(1, len(ids)) if ids[i] != ids[i - 1]] + [len(ids)]
    return list(zip(cuts[:-1], cuts[1:]))


def attention(q, k, v, causal: bool = True, window: int | None = None, doc_ids=None,
              scale: float | None = None, chunk: int = CHUNK) -> torch.Tensor:
    check_attention_args(q, k, v, causal, window, doc_ids)
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    qf, kf, vf = q.float(), k.float(), v.float()
    if doc_ids is None:
        return _attend(qf, kf, vf, causal, window, scale, chunk).to(q.dtype)
    if q.shape[2] != k.shape[2]:
        raise ValueError("doc_ids need as many queries as keys")
    rows = []
    for b in range(q.shape[0]):
        parts = [_attend(qf[b:b + 1, :, s:e], kf[b:b + 1, :, s:e], vf[b:b + 1, :, s:e], causal, window,
                         scale, chunk) for s, e in doc_segments(doc_ids[b])]
        rows.append(torch.cat(parts, dim=2))
    return torch.cat(rows, dim=0).to(q.dtype)
