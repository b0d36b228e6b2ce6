"""Fused linear + cross-entropy, chunked over the vocabulary: the [N, V] logits never exist.

Reference: ``reference.linear_cross_entropy``. For each vocabulary chunk the logits
``hidden @ W_c.T`` ([N, c], c sized so N*c stays under ~64M elements) come from one cuBLAS
matmul and a Triton kernel folds them into a running max / sum-exp per row (online
log-sum-exp) and picks out the target logit. When gradients are needed a second pass recomputes
each chunk, a Triton kernel turns it in place into ``(softmax - onehot) / n_valid``, and two
matmuls add ``dlogits @ W_c`` to dhidden (float32) and write ``dlogits.T @ hidden`` as dW's rows.
The gradients are computed in the forward (as Liger-Kernel does) and scaled by the incoming
gradient in backward. Cost: four N*V*d matmuls instead of three, for memory bounded in N and V.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from training.kernels._triton_util import INTERPRET

MAX_CHUNK_ELEMS = 1 << 26
BLOCK_V = 128 if INTERPRET else 1024


@triton.jit
def _lse_update(LOGITS, M, S, TGT, TLOGIT, N, C, v0, stride, BLOCK_V: tl.constexpr):
    row = tl.program_id(0)
    m_old = tl.load(M + row)
    s_old = tl.load(S + row)
    tgt = tl.load(TGT + row)
    m_run = m_old
    s_run = s_old
    for c0 in range(0, C, BLOCK_V):
        cols = c0 + tl.arange(0, BLOCK_V)
        x = tl.load(LOGITS + row * stride + cols, mask=cols < C, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m_run, tl.max(x, 0))
        s_run = s_run * tl.exp(m_run - m_new) + tl.sum(tl.exp(x - m_new), 0)
        m_run = m_new
    tl.store(M + row, m_run)
    tl.store(S + row, s_run)
    t = tgt - v0
    if (t >= 0) & (t < C):
        tl.store(TLOGIT + row, tl.load(LOGITS + row * stride + t).to(tl.float32))


@triton.jit
def _ce_grad(LOGITS, LSE, TGT, SCALE, C, v0, stride, BLOCK_V: tl.constexpr):
    row = tl.program_id(0)
    lse = tl.load(LSE + row)
    tgt = tl.load(TGT + row)
    sc = tl.load(SCALE + row)
    for c0 in range(0, C, BLOCK_V):
        cols = c0 + tl.arange(0, BLOCK_V)
        cm = cols < C
        x = tl.load(LOGITS + row * stride + cols, mask=cm, other=0.0).to(tl.float32)
        g = tl.exp(x - lse) - tl.where(cols + v0 == tgt, 1.0, 0.0)
        tl.store(LOGITS + row * stride + cols, (g * sc).to(LOGITS.dtype.element_ty), mask=cm)


def _chunk(N: int, V: int) -> int:
    c = max(128, MAX_CHUNK_ELEMS // max(N, 1))
    return min(V, c)


class _LinearCE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, hidden, weight, targets, ignore_index, chunk):
        if hidden.dim() != 2 or weight.dim() != 2 or hidden.shape[1] != weight.shape[1]:
            raise ValueError(f"linear_cross_entropy: hidden [N,d] {tuple(hidden.shape)} and "
                             f"weight [V,d] {tuple(weight.shape)} do not match")
        if targets.shape != hidden.shape[:1]:
            raise ValueError(f"targets must be [N]={hidden.shape[0]}, got {tuple(targets.shape)}")
        h = hidden.contiguous()
        N, V = h.shape[0], weight.shape[0]
        dev = h.device
        valid = targets != ignore_index
        n_valid = valid.sum().clamp_min(1).float()
        tgt = torch.where(valid, targets, -1).to(torch.int32).contiguous()
        m = torch.full((N,), float("-inf"), dtype=torch.float32, device=dev)
        s = torch.zeros(N, dtype=torch.float32, device=dev)
        tlogit = torch.zeros(N, dtype=torch.float32, device=dev)
        chunk = chunk or _chunk(N, V)
        for v0 in range(0, V, chunk):
            logits = h @ weight[v0:v0 + chunk].t()
            C = logits.shape[1]
            _lse_update[(N,)](logits, m, s, tgt, tlogit, N, C, v0, logits.stride(0),
                              BLOCK_V=BLOCK_V)
        lse = m + torch.log(s)
        loss = torch.where(valid, lse - tlogit, 0.0).sum() / n_valid
        if ctx.needs_input_grad[0] or ctx.needs_input_grad[1]:
            scale = (valid.float() / n_valid).contiguous()
            dh = torch.zeros(N, h.shape[1], dtype=torch.float32, device=dev)
            dw = torch.empty_like(weight)
            for v0 in range(0, V, chunk):
                wc = weight[v0:v0 + chunk]
                logits = h @ wc.t()
                C = logits.shape[1]
                _ce_grad[(N,)](logits, lse, tgt, scale, C, v0, logits.stride(0), BLOCK_V=BLOCK_V)
                dh += (logits @ wc).float()
                dw[v0:v0 + chunk] = logits.t() @ h
            ctx.save_for_backward(dh, dw)
            ctx.hdtype = hidden.dtype
        return loss

    @staticmethod
    def backward(ctx, g):
        dh, dw = ctx.saved_tensors
        return (dh * g).to(ctx.hdtype), dw * g.to(dw.dtype), None, None, None


def linear_cross_entropy(hidden, weight, targets, ignore_index: int = -100,
                         chunk: int | None = None) -> torch.Tensor:
    return _LinearCE.apply(hidden, weight, targets, ignore_index, chunk)
